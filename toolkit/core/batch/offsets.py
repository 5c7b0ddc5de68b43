"""Kafka offset ranges as batch ids: what makes a Kafka micro-batch land exactly once.

A micro-batch read from a topic is named by what it read: the topic and, for each
partition, the offsets from ``start`` (included) to ``end`` (excluded). That name is the
batch id ``ingest`` commits with the rows, in the same Iceberg commit (the ingest ledger,
``toolkit.iceberg.ledger``), so the table itself says how far each partition was read:
a consumer restarted after a crash resumes at the ends of the batches the table holds,
whatever the consumer group had committed (that is committed after the table, as a hint
for other tools), and no message is written twice or skipped.

>>> bid = range_batch_id("events", [OffsetRange(0, 0, 5), OffsetRange(1, 3, 3)])
>>> bid
'kafka:events:0=0-5,1=3-3'
>>> parse_batch_id(bid)
('events', (OffsetRange(partition=0, start=0, end=5), OffsetRange(partition=1, start=3, end=3)))
>>> resume_offsets([bid, "kafka:events:0=5-9", "kafka:other:0=0-99", "day1"], "events")
{0: 9, 1: 3}
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

__all__ = ["PREFIX", "OffsetRange", "parse_batch_id", "range_batch_id", "resume_offsets"]

#: what every Kafka batch id starts with
PREFIX: Final = "kafka:"
#: Kafka's own rule for topic names (so a topic never holds the id's separators)
_TOPIC: Final = re.compile(r"[A-Za-z0-9._-]{1,249}")
_RANGE: Final = re.compile(r"(\d+)=(\d+)-(\d+)")


@dataclass(frozen=True, order=True)
class OffsetRange:
    """The messages of one partition a batch read: offsets ``start`` <= o < ``end``."""

    partition: int
    start: int
    end: int

    @property
    def count(self) -> int:
        """How many offsets the range spans (a compacted topic may hold fewer messages)."""
        return self.end - self.start


def range_batch_id(topic: str, ranges: Iterable[OffsetRange]) -> str:
    """The batch id of the micro-batch that read ``ranges`` of ``topic``: every partition
    the consumer holds is named, an empty range too, so the latest batch alone says where
    each partition stands."""
    if _TOPIC.fullmatch(topic) is None:
        raise ValueError(f"{topic!r} is not a Kafka topic name (letters, digits, . _ -)")
    parts = ",".join(f"{r.partition}={r.start}-{r.end}" for r in sorted(ranges))
    return f"{PREFIX}{topic}:{parts}"


def parse_batch_id(batch_id: str) -> tuple[str, tuple[OffsetRange, ...]] | None:
    """The topic and ranges of a Kafka batch id; None for any other batch id."""
    if not batch_id.startswith(PREFIX):
        return None
    topic, sep, parts = batch_id[len(PREFIX):].rpartition(":")
    if not sep or _TOPIC.fullmatch(topic) is None:
        return None
    ranges = []
    for part in parts.split(",") if parts else ():
        found = _RANGE.fullmatch(part)
        if found is None:
            return None
        p, start, end = map(int, found.groups())
        ranges.append(OffsetRange(p, start, end))
    return topic, tuple(ranges)


def resume_offsets(batch_ids: Iterable[str], topic: str) -> dict[int, int]:
    """Where to resume reading ``topic``, by partition: the furthest end of the ranges the
    batch ids (a table's ledger) hold. Partitions it never read are absent."""
    ends: dict[int, int] = {}
    for bid in batch_ids:
        parsed = parse_batch_id(bid)
        if parsed is None or parsed[0] != topic:
            continue
        for r in parsed[1]:
            ends[r.partition] = max(ends.get(r.partition, 0), r.end)
    return dict(sorted(ends.items()))
