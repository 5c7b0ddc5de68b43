"""Kafka as a source, read in the driver with ``confluent-kafka`` (the ``kafka`` extra).

No Spark Kafka connector installs from PyPI, so the toolkit reads a topic itself: one
consumer holds every partition of the topic (assigned by hand: no group join, no
rebalance), reads the offset ranges it is asked for, and hands back the messages' values
as JSON lines, which ``ingest`` then takes on Spark's JVM path. A message whose value is
not a JSON object is set aside (quarantined) with its topic, partition and offset.

A source is named ``kafka://HOST:PORT[,HOST:PORT...]/TOPIC``:

>>> KafkaTopic.parse("kafka://127.0.0.1:9092/events")
KafkaTopic(servers='127.0.0.1:9092', topic='events')

Which ranges a batch reads, and how it lands exactly once, is in ``toolkit.core.batch.offsets``.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from toolkit.core.batch.offsets import OffsetRange, range_batch_id
from toolkit.core.batch.quarantine import Quarantined
from toolkit.core.values.jsonlines import parse_record
from toolkit.errors import (
    KafkaSourceError,
    MalformedLineError,
    NotARecordLineError,
    NotUtf8LineError,
)

__all__ = [
    "PROVENANCE",
    "SCHEME",
    "KafkaTopic",
    "Message",
    "TopicReader",
    "is_kafka_url",
    "plan_ranges",
    "to_lines",
]

SCHEME: Final = "kafka://"
#: the per-message columns a batch can carry on request, each named ``_kafka_<what>``
PROVENANCE: Final = ("topic", "partition", "offset", "timestamp", "key")
#: seconds to wait for the broker's answers (metadata, watermarks) and for messages
TIMEOUT: Final = 30.0


def is_kafka_url(source: object) -> bool:
    """Whether ``source`` names a Kafka topic (``kafka://...``)."""
    return isinstance(source, str) and source.startswith(SCHEME)


@dataclass(frozen=True)
class KafkaTopic:
    """A topic and the brokers to ask for it."""

    servers: str  # bootstrap servers: HOST:PORT[,HOST:PORT...]
    topic: str

    @classmethod
    def parse(cls, url: str) -> KafkaTopic:
        """``kafka://HOST:PORT[,HOST:PORT...]/TOPIC``; anything else is refused."""
        rest = url[len(SCHEME):] if url.startswith(SCHEME) else ""
        servers, _, topic = rest.partition("/")
        if not servers or not topic or "/" in topic or "?" in topic:
            raise KafkaSourceError(
                f"{url!r} is not a Kafka source: write kafka://HOST:PORT/TOPIC "
                "(several brokers: kafka://HOST1:PORT,HOST2:PORT/TOPIC)")
        try:
            range_batch_id(topic, ())  # Kafka's rule for topic names
        except ValueError as exc:
            raise KafkaSourceError(f"{url!r}: {exc}") from None
        return cls(servers, topic)

    @property
    def url(self) -> str:
        return f"{SCHEME}{self.servers}/{self.topic}"


@dataclass(frozen=True)
class Message:
    """One message as the toolkit keeps it."""

    partition: int
    offset: int
    value: bytes | None
    key: bytes | None
    timestamp_ms: int | None


def plan_ranges(
    resume: Mapping[int, int],
    marks: Mapping[int, tuple[int, int]],
    committed: Mapping[int, int],
    max_messages: int | None = None,
    upto: Mapping[int, int] | None = None,
) -> tuple[OffsetRange, ...]:
    """The ranges the next batch reads, one per partition: from where the table's ledger
    says the partition stands (``resume``), else the group's committed offset (a hint,
    for a partition the table never read), else the earliest offset kept; up to the high
    watermark, or ``upto`` (a bounded read), at most ``max_messages`` per partition.
    Offsets the broker no longer keeps (retention) are skipped: they cannot be read.

    >>> plan_ranges({0: 5}, {0: (0, 9), 1: (2, 4)}, {1: 3}, max_messages=2)
    (OffsetRange(partition=0, start=5, end=7), OffsetRange(partition=1, start=3, end=4))
    """
    ranges = []
    for p, (low, high) in sorted(marks.items()):
        start = max(resume.get(p, committed.get(p, low)), low)
        end = high if upto is None else min(high, upto.get(p, high))
        if max_messages is not None:
            end = min(end, start + max_messages)
        ranges.append(OffsetRange(p, start, max(start, end)))
    return tuple(ranges)


def _provenance_text(topic: str, m: Message, fields: Sequence[str]) -> str:
    """The provenance keys of one message as JSON members (``"_kafka_offset":17,...``)."""
    import orjson

    stamp = None if m.timestamp_ms is None else dt.datetime.fromtimestamp(
        m.timestamp_ms / 1000, dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    values: dict[str, Any] = {
        "topic": topic, "partition": m.partition, "offset": m.offset, "timestamp": stamp,
        "key": None if m.key is None else m.key.decode("utf-8", "replace"),
    }
    return orjson.dumps({f"_kafka_{f}": values[f] for f in fields}).decode()[1:-1]


def to_lines(
    topic: str, messages: Sequence[Message], batch_id: str,
    provenance: Sequence[str] = (),
) -> tuple[list[str], list[Quarantined]]:
    """The JSON lines of the messages whose value is a JSON object, and the others set
    aside, each with its topic, partition and offset (RULES 5: nothing is dropped).

    With ``provenance`` (names out of :data:`PROVENANCE`), each line gains the keys
    ``_kafka_<name>``; a message that already has one of those keys is set aside rather
    than lose either value.

    >>> ms = [Message(0, 7, b'{"a": 1}', None, 0), Message(0, 8, b"[1]", None, 0)]
    >>> lines, aside = to_lines("t", ms, "b", ["offset"])
    >>> lines, aside[0].detail
    (['{"_kafka_offset":7,"a": 1}'], 'topic t, partition 0, offset 8: JSON that is not an object')

    Bytes that are not UTF-8, and a key named twice, are set aside as a JSON line's are,
    every byte kept (never read with U+FFFD in their place):

    >>> bad = [Message(0, 9, b'{"v": "\\xff"}', None, 0),
    ...        Message(0, 10, b'{"a": 1, "a": 2}', None, 0)]
    >>> [(q.reason, q.record) for q in to_lines("t", bad, "b")[1]]
    [('not-utf8', b'{"v": "\\xff"}'), ('duplicate-key', '{"a": 1, "a": 2}')]
    """
    lines: list[str] = []
    aside: list[Quarantined] = []
    taken = tuple(f"_kafka_{f}" for f in provenance)

    def set_aside(m: Message, text: str | bytes, reason: Any, why: str) -> None:
        where = f"topic {topic}, partition {m.partition}, offset {m.offset}"
        aside.append(Quarantined(text, reason, None, None, None, batch_id, f"{where}: {why}"))

    for m in messages:
        if m.value is None:
            set_aside(m, "null", "not-a-record", "a message with no value (a tombstone)")
            continue
        try:  # a message is read as a JSON line is, bytes and all (docs/rules.md)
            value = parse_record(m.value)
        except MalformedLineError as exc:
            raw: Any = m.value if isinstance(exc, NotUtf8LineError) else exc.line
            why = "JSON that is not an object" if isinstance(exc, NotARecordLineError) \
                else str(exc)
            set_aside(m, raw, exc.reason_key, why)
            continue
        text = m.value.decode()
        if not taken:
            lines.append(text)
            continue
        clash = [k for k in taken if k in value]
        if clash:
            set_aside(m, text, "invalid-value",
                      f"it has the key {clash[0]}, which the provenance columns use")
            continue
        body = text.strip(" \t\r\n\ufeff")[1:]  # after the object's opening brace
        members = _provenance_text(topic, m, provenance)
        lines.append("{" + members + ("," + body if value else "}"))
    return lines, aside


class TopicReader:
    """One consumer of every partition of one topic (assigned, not subscribed: no group
    join). ``group`` is the consumer group whose offsets :meth:`commit` sets, after the
    table has the batch: a hint for other tools, never where the toolkit resumes."""

    def __init__(self, source: KafkaTopic, group: str,
                 client_options: Mapping[str, Any] | None = None,
                 timeout: float = TIMEOUT) -> None:
        try:
            from confluent_kafka import Consumer
        except ImportError:
            raise KafkaSourceError(
                "reading Kafka needs confluent-kafka: pip install 'toolkit[kafka]'") from None
        self.source, self.group, self.timeout = source, group, timeout
        self._consumer = Consumer({
            "bootstrap.servers": source.servers,
            "group.id": group,
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "auto.offset.reset": "earliest",
            # librdkafka's own log lines ("%3|...|FAIL|...") would reach the terminal raw;
            # a broker that does not answer is reported once, in words, by the error raised
            # (client_options can turn them back on: {"log_level": 7})
            "log_level": 0,
            **dict(client_options or {}),
        })

    def close(self) -> None:
        self._consumer.close()

    def __enter__(self) -> TopicReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _partitions(self) -> list[Any]:
        from confluent_kafka import KafkaException, TopicPartition

        topic = self.source.topic
        try:
            meta = self._consumer.list_topics(topic, timeout=self.timeout)
        except KafkaException as exc:
            raise KafkaSourceError(
                f"the brokers at {self.source.servers} did not answer within "
                f"{self.timeout:g} s: {exc}") from None
        found = meta.topics.get(topic)
        if found is None or found.error is not None or not found.partitions:
            why = "" if found is None or found.error is None else f" ({found.error.str()})"
            raise KafkaSourceError(
                f"the brokers at {self.source.servers} have no topic {topic!r}{why}")
        return [TopicPartition(topic, p) for p in sorted(found.partitions)]

    def watermarks(self) -> dict[int, tuple[int, int]]:
        """Each partition's earliest kept offset and its high watermark (the next offset)."""
        marks: dict[int, tuple[int, int]] = {}
        for tp in self._partitions():
            low, high = self._consumer.get_watermark_offsets(tp, timeout=self.timeout,
                                                              cached=False)
            marks[tp.partition] = (low, high)
        return marks

    def committed(self) -> dict[int, int]:
        """The group's committed offsets (partitions it never committed are absent)."""
        got = self._consumer.committed(self._partitions(), timeout=self.timeout)
        return {tp.partition: tp.offset for tp in got if tp.offset >= 0}

    def read(self, ranges: Sequence[OffsetRange]) -> list[Message]:
        """Every message in ``ranges``, in partition and offset order. Waits for them up to
        the reader's timeout without progress (a compacted topic's gaps are skipped by the
        consumer's position)."""
        from confluent_kafka import KafkaError, TopicPartition

        topic = self.source.topic
        ends = {r.partition: r.end for r in ranges if r.end > r.start}
        if not ends:
            return []
        self._consumer.assign([TopicPartition(topic, r.partition, r.start)
                               for r in ranges if r.end > r.start])
        got: dict[int, list[Message]] = {p: [] for p in ends}
        left = dict(ends)
        quiet_since = time.monotonic()
        try:
            while left:
                batch = self._consumer.consume(num_messages=10_000, timeout=0.5)
                for msg in batch:
                    err = msg.error()
                    if err is not None:
                        if err.code() == KafkaError._PARTITION_EOF:
                            continue
                        raise KafkaSourceError(f"reading {topic}: {err.str()}")
                    p, o = msg.partition(), msg.offset()
                    if p is not None and o is not None and p in left and o < ends[p]:
                        kind, stamp = msg.timestamp()
                        got[p].append(Message(p, o, msg.value(), msg.key(),
                                              stamp if kind else None))
                        if o + 1 >= ends[p]:
                            del left[p]
                if batch:
                    quiet_since = time.monotonic()
                    continue
                for tp in self._consumer.position(
                        [TopicPartition(topic, p) for p in list(left)]):
                    if tp.offset >= left.get(tp.partition, 0):
                        left.pop(tp.partition, None)
                if left and time.monotonic() - quiet_since > self.timeout:
                    missing = ", ".join(f"partition {p} up to {e}" for p, e in left.items())
                    raise KafkaSourceError(
                        f"{topic}: no message came for {self.timeout:g} s while reading "
                        f"{missing}")
        finally:
            self._consumer.unassign()
        return [m for p in sorted(got) for m in got[p]]

    def commit(self, ranges: Sequence[OffsetRange]) -> None:
        """Set the group's offsets to the ends of ``ranges`` (after the table has them)."""
        from confluent_kafka import TopicPartition

        offsets = [TopicPartition(self.source.topic, r.partition, r.end) for r in ranges]
        if offsets:
            self._consumer.commit(offsets=offsets, asynchronous=False)
