"""A batch's observation reduced to what planning needs, and mergeable.

Spark partitions observe their records apart; each sends back a :class:`Summary` and the
driver merges them, then plans from the merged summary exactly as from a whole
observation: the planner only reads which kinds arrived per key and, for records, the
same at each nested level.

>>> from toolkit.core.batch.observe import observe_struct
>>> from toolkit.core.batch.options import Options
>>> a = summarize(observe_struct([{"d": {"x": 1}}], Options()))
>>> b = summarize(observe_struct([{"d": [{"y": "s"}]}], Options()))
>>> sorted((a + b).fields["d"].nested(1).fields)
['x', 'y']
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import reduce

from toolkit.core.batch.observe import StructObservation
from toolkit.core.values.types import Kind


@dataclass(frozen=True)
class FieldSummary:
    """The kinds one key arrived as, and its records' fields by exact dimension."""

    counts: Mapping[Kind, int]
    records: Mapping[int, Summary] = field(default_factory=dict)

    def nested(self, max_dim: int) -> Summary:
        """RULES 3.4: a record column of dimension ``max_dim`` receives the records of its
        own and every lower dimension."""
        return merge(s for d, s in self.records.items() if d <= max_dim)

    def __add__(self, other: FieldSummary) -> FieldSummary:
        counts = dict(self.counts)
        for k, n in other.counts.items():
            counts[k] = counts.get(k, 0) + n
        records = dict(self.records)
        for d, s in other.records.items():
            records[d] = records[d] + s if d in records else s
        return FieldSummary(counts, records)


@dataclass(frozen=True)
class Summary:
    """One struct level: how many records, and a summary per key."""

    fields: Mapping[str, FieldSummary] = field(default_factory=dict)
    rows: int = 0

    def __add__(self, other: Summary) -> Summary:
        fields = dict(self.fields)
        for key, f in other.fields.items():
            fields[key] = fields[key] + f if key in fields else f
        return Summary(dict(sorted(fields.items())), self.rows + other.rows)


def merge(summaries: Iterable[Summary]) -> Summary:
    return reduce(Summary.__add__, summaries, Summary())


def summarize(obs: StructObservation) -> Summary:
    """The summary of a whole observation."""
    fields = {}
    for key, fobs in obs.fields.items():
        records = {d: summarize(fobs.records_at(d)) for d in fobs.record_dims}
        fields[key] = FieldSummary(dict(fobs.counts), records)
    return Summary(fields, len(obs.rows))


__all__ = ["FieldSummary", "Summary", "merge", "summarize"]
