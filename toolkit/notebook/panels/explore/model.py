"""The explore panel's view-model: per field, the types seen, nulls, batches, samples and
the columns of its family, computed from a profile or a committed table's written data
statistics; filtered and paged.

The HTML (:mod:`toolkit.notebook.panels.explore.html`), the figures
(:mod:`toolkit.notebook.figures`) and the widget only render it (STYLE: "statistics
are data; HTML, widget and plot are renderings of the same model"), so everything the
panel shows can be checked here, in memory, without a browser, a kernel, ipywidgets or
plotly.

>>> from toolkit.core.batch.profile import profile
>>> m = StatisticsModel.from_profile(profile([{"a": 1, "b": "x"}, {"a": "one"}]))
>>> [(r.name, r.drifted) for r in m.rows]
[('a', True), ('b', False)]
>>> [(t.type, t.count) for t in m.field("a").types]
[('long', 1), ('string', 1)]
>>> m.filter("str").page(0, 10).total
2
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from toolkit.core.batch.profile import FieldStats, Profile
from toolkit.core.values.families import families
from toolkit.core.values.types import RECORD, Column, Struct
from toolkit.core.values.wording import batch_number, counted
from toolkit.notebook.common import clip, value_text
from toolkit.notebook.paging import Page, page_of

if TYPE_CHECKING:
    from toolkit.iceberg.statistics import (
        ColumnStatistics,
        SnapshotStatistics,
        WrittenDataStatistics,
    )

__all__ = [
    "BatchCounts",
    "FieldRow",
    "Page",
    "StatisticsData",
    "StatisticsModel",
    "TypeCount",
    "as_statistics_model",
    "batch_label",
    "made_up_short_id",
    "family_columns",
]


# --- statistics of fields: from a profile, or from a committed table -----------------------


@dataclass(frozen=True, slots=True)
class TypeCount:
    """How many values of one field arrived as one type (or, for a committed table, were
    written to one column of the field's family)."""

    type: str
    """``long``, ``string[]``, ``record[]``...: the observed type and array dimension."""
    count: int
    share: float
    """Of the field's values: ``count`` over the sum of the field's counts."""
    samples: tuple[Any, ...] = ()
    """Up to three sample values: a profile's (records and arrays as short texts), or the
    texts a committed table's batches recorded with what arrived (see :attr:`rendered`)."""
    column: str | None = None
    """The column these values were written to (committed tables only)."""
    measured: bool = True
    """False when some data files hold the column without counts (written with metrics
    mode ``none``, as Spark's writer does for list elements): ``count`` is a lower bound."""
    rendered: bool = False
    """True when :attr:`samples` are texts rendered already (a table's metadata records
    them as :func:`toolkit.core.batch.arrivals.sample_text` renders a profile's values)."""

    @property
    def count_text(self) -> str:
        return f"{self.count}" if self.measured else f"{self.count}+"

    @property
    def label(self) -> str:
        return self.type if self.column is None else f"{self.column} ({self.type})"

    @property
    def sample_texts(self) -> tuple[str, ...]:
        """The samples as clipped JSON text, rendered only for the rows shown."""
        if self.rendered:
            return tuple(clip(str(v), 40) for v in self.samples)
        if self.type.startswith(RECORD) or self.type.endswith("[]"):
            # a profile keeps records and arrays as short repr texts already
            return tuple(
                clip(v, 40) if isinstance(v, str) else value_text(v, 40) for v in self.samples
            )
        return tuple(value_text(v, 40) for v in self.samples)


@dataclass(frozen=True, slots=True)
class BatchCounts:
    """The counts per type (label) one batch brought for one field."""

    batch: str
    counts: tuple[tuple[str, int], ...]
    #: per type (label), the first and last record of the batch that held one (counted from
    #: 1 within the batch; a profile's only): where in the batch the type arrived
    records: tuple[tuple[str, int, int], ...] = ()

    def count(self, label: str) -> int:
        return dict(self.counts).get(label, 0)

    def records_text(self, label: str) -> str:
        """Where in the batch the type arrived, in words (``records 1,501-2,000``), or ""."""
        for name, first, last in self.records:
            if name == label:
                return f"record {first:,}" if first == last else f"records {first:,}-{last:,}"
        return ""


@dataclass(frozen=True, slots=True)
class FieldRow:
    """One field path (nested paths too) and what arrived in it."""

    path: tuple[str, ...]
    types: tuple[TypeCount, ...]
    """Most frequent first."""
    nulls: int | None
    """Null or missing where the enclosing record was present (None: unknown)."""
    first_batch: str | None
    last_batch: str | None
    columns: tuple[str, ...]
    """The columns of its family (dotted full names), when a schema is known."""
    evolved: bool
    """Evolution created a column for it (a column of its family is documented
    ``upsolver_evolved_from:...``)."""
    by_batch: tuple[BatchCounts, ...] = ()
    search_text: str = field(default="", compare=False, repr=False)
    """Lower-cased name, types and columns, which :meth:`StatisticsModel.filter` searches."""
    timestamps: str | None = None
    """One sentence when the field's timestamp formats or epoch units are mixed (a
    profile's :class:`~toolkit.core.values.timestamps.TimestampReport`), else None."""
    drift_starts: tuple[str, ...] = ()
    """Where the field changed type (a profile's only): "`price` became a string at
    record 1,201" per type after its first (:meth:`Profile.drift_sentences`)."""
    first_record: int | None = None
    """The first record of :attr:`first_batch` with a value (counted from 1 in it)."""
    last_record: int | None = None
    """The last record of :attr:`last_batch` with a value (counted from 1 in it)."""

    @property
    def name(self) -> str:
        return ".".join(self.path)

    @property
    def present(self) -> int:
        return sum(t.count for t in self.types)

    @property
    def drifted(self) -> bool:
        """More than one type (or, for a table, more than one column) received values."""
        return sum(1 for t in self.types if t.count) > 1

    @property
    def drift(self) -> float:
        """The share of values not of the field's main type: 0 for a field of one type."""
        if not self.present:
            return 0.0
        return 1.0 - max(t.count for t in self.types) / self.present

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(t.label for t in self.types)


def _search_text(path: tuple[str, ...], types: Iterable[TypeCount], columns: Iterable[str]) -> str:
    parts = [".".join(path), *(t.label for t in types), *columns]
    return "\n".join(parts).lower()


@dataclass(frozen=True, slots=True)
class StatisticsModel:
    """Per field: types seen, nulls, batches, samples, family columns; filtered and paged.

    Built from a :class:`~toolkit.core.batch.profile.Profile` (sample data) or from the
    :class:`~toolkit.iceberg.statistics.WrittenDataStatistics` of a committed table. Both
    give one row per source field path, so a panel shows them alike.
    """

    source: str
    """Where the data came from, when it has a name: ``"table db.events"``, a path (with
    how many files), ``"Spark DataFrame"``; empty for records given in Python. The header
    adds the counts (:attr:`counts`) once: never put them here."""
    records: int
    batches: tuple[str, ...]
    all_rows: tuple[FieldRow, ...]
    rows: tuple[FieldRow, ...]
    """The rows that match :attr:`query` (all of them when it is empty)."""
    query: str = ""
    committed: bool = False
    """True for a committed table's statistics (counts are values written per column)."""

    @property
    def total(self) -> int:
        """Fields before filtering."""
        return len(self.all_rows)

    @property
    def counts(self) -> str:
        """``6 records in 2 batches``."""
        return f"{counted(self.records, 'record')} in {counted(len(self.batches), 'batch')}"

    @property
    def what(self) -> str:
        """What the statistics are of, in words: the source when it has a name, else the
        counts (``6 records in 2 batches``)."""
        return self.source or self.counts

    @property
    def drifted(self) -> int:
        return sum(1 for r in self.all_rows if r.drifted)

    @property
    def evolved(self) -> int:
        return sum(1 for r in self.all_rows if r.evolved)

    @classmethod
    def from_profile(
        cls, profile: Profile, schema: Struct | None = None, *, source: str | None = None
    ) -> StatisticsModel:
        """Rows from a profile; with ``schema`` (the table the data would give), each row
        also names the columns of its family and whether evolution created one."""
        index = _FamilyIndex(schema) if schema is not None else None
        # each row's "became" sentences, by dotted name (two paths may spell one name),
        # gathered once: asking the whole profile per row was quadratic in its fields
        starts: dict[str, list[str]] = {}
        for path in sorted(profile.fields):
            starts.setdefault(".".join(path), []).extend(profile.drift_sentences_of(path))
        rows = []
        batches: set[int] = set()
        for path in sorted(profile.fields):
            s = profile.fields[path]
            batches.update(s.by_batch)
            rows.append(_profile_row(s, index, profile, tuple(starts[".".join(path)])))
        return cls(
            source or "",
            profile.records,
            tuple(str(b) for b in sorted(batches)),
            tuple(rows),
            tuple(rows),
        )

    @classmethod
    def from_statistics(cls, stats: WrittenDataStatistics) -> StatisticsModel:
        """Rows from a committed table, from its metadata alone: one per source field.
        Where ingest recorded what arrived (every batch it wrote), a row's types are the
        types that arrived, with nulls and missing apart and the samples the batches
        recorded (latest first), as for a profile; else (a table
        another writer fed) its "types" are the columns of its family and the values each
        received."""
        by_path = {c.path: c for c in stats.columns}
        groups: dict[tuple[str, ...], list[ColumnStatistics]] = {}
        for c in stats.columns:
            if c.kind == "field":
                groups.setdefault(_source_path(c.path, by_path), []).append(c)
        if stats.arrivals.records:
            return cls._from_arrivals(stats, groups)
        history: dict[str, dict[int, int]] = {}
        labels: dict[int, str] = {}
        for i, snap in enumerate(stats.snapshots):
            labels[i] = batch_label(snap)
            for name, n in snap.values:
                history.setdefault(name, {})[i] = n
        order = sorted(labels)
        rows = [
            _statistics_row(path, cols, history, [labels[i] for i in order], order)
            for path, cols in groups.items()
        ]
        rows.sort(key=lambda r: r.path)
        return cls(
            f"table {stats.table}",
            stats.records,
            tuple(labels[i] for i in order),
            tuple(rows),
            tuple(rows),
            committed=True,
        )

    @classmethod
    def _from_arrivals(
        cls, stats: WrittenDataStatistics, groups: Mapping[tuple[str, ...], list[ColumnStatistics]],
    ) -> StatisticsModel:
        recorded = [(batch_label(s), s.arrivals) for s in stats.snapshots
                    if s.arrivals is not None]
        total = stats.arrivals
        expired = stats.expired_arrivals
        rows = []
        for path in total.paths:
            counts = total.arrived(path)
            n = sum(counts.values())
            # the samples the batches recorded, latest first (as stats.samples(path))
            samples = total.samples(path)
            types = tuple(TypeCount(t, c, c / n, samples.get(t, ()), rendered=True)
                          for t, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
            by_batch = tuple(
                BatchCounts(label, tuple((t.type, a.arrived(path).get(t.type, 0)) for t in types))
                for label, a in recorded
            )
            seen = [b.batch for b in by_batch if any(k for _, k in b.counts)]
            first = EXPIRED_LABEL if expired.arrived(path) else seen[0] if seen else None
            cols = groups.get(path, [])
            names = tuple(c.name for c in cols)
            rows.append(FieldRow(
                path, types, total.absent(path), first, seen[-1] if seen else first, names,
                any(c.evolved for c in cols), by_batch, _search_text(path, types, names),
            ))
        rows.sort(key=lambda r: r.path)
        unrecorded = sum(1 for s in stats.snapshots
                         if s.arrivals is None and s.operation == "append")
        note = (f"; {counted(unrecorded, 'appended batch')} that recorded no arrivals "
                f"{'is' if unrecorded == 1 else 'are'} not counted" if unrecorded else "")
        return cls(
            f"table {stats.table} (what arrived{note})",
            total.records,
            tuple(label for label, _ in recorded),
            tuple(rows),
            tuple(rows),
        )

    def filter(
        self, text: str = "", *, evolved_only: bool = False, drifted_only: bool = False
    ) -> StatisticsModel:
        """The rows whose name, types or columns contain every word of ``text`` (case
        does not matter), out of all rows: filters do not stack."""
        words = text.lower().split()
        rows = tuple(
            r
            for r in self.all_rows
            if all(w in r.search_text for w in words)
            and (not evolved_only or r.evolved)
            and (not drifted_only or r.drifted)
        )
        return StatisticsModel(
            self.source, self.records, self.batches, self.all_rows, rows, text, self.committed
        )

    def page(self, number: int, size: int = 25) -> Page[FieldRow]:
        """Rows ``number * size`` onwards (``number`` from 0, clamped)."""
        return page_of(self.rows, number, size)

    def field(self, name: str) -> FieldRow:
        """The row of a dotted field name, or of the family holding column ``name``."""
        for r in self.all_rows:
            if r.name == name:
                return r
        for r in self.all_rows:
            if name in r.columns:
                return r
        raise KeyError(f"no field or column {name!r} in {self.what}")

    def type_mix_title(self, n: int = 20) -> str:
        """The title of the chart of :meth:`top_drifted`: how many of the fields shown drifted.

        >>> from toolkit.core.batch.profile import profile
        >>> m = StatisticsModel.from_profile(profile([{"a": 1, "b": "x"}, {"a": "one"}]))
        >>> m.type_mix_title()
        'Type mix of 2 fields (1 drifted)'
        """
        rows = self.top_drifted(n)
        drifted = sum(1 for r in rows if r.drifted)
        if drifted == len(rows):
            return f"Type mix of the {len(rows)} most drifted fields"
        return f"Type mix of {len(rows)} fields ({drifted} drifted)"

    def top_drifted(self, n: int = 20) -> tuple[FieldRow, ...]:
        """Of the filtered rows, the ``n`` with the most values outside their main type;
        ties go to the field with more values, then by name."""
        ranked = sorted(self.rows, key=lambda r: (-r.drift, -r.present, r.path))
        return tuple(ranked[:n])


#: what a field table or a drift figure can be made of
StatisticsData: TypeAlias = "StatisticsModel | Profile | WrittenDataStatistics"


def as_statistics_model(data: StatisticsData) -> StatisticsModel:
    """A model of a profile (no schema) or of a table's written data statistics."""
    if isinstance(data, StatisticsModel):
        return data
    if isinstance(data, Profile):
        return StatisticsModel.from_profile(data)
    return StatisticsModel.from_statistics(data)


def _profile_row(s: FieldStats, index: _FamilyIndex | None, profile: Profile,
                 starts: tuple[str, ...]) -> FieldRow:
    present = s.present
    ordered = sorted(s.counts.items(), key=lambda kv: (-kv[1], str(kv[0])))
    samples = s.samples
    types = tuple(
        TypeCount(str(shape), n, n / present, samples.get(shape, ())) for shape, n in ordered
    )
    cols: tuple[Column, ...] = ()
    names: tuple[str, ...] = ()
    if index is not None:
        found = index.columns(s.path)
        cols, names = tuple(c for _, c in found), tuple(n for n, _ in found)
    def within(b: int) -> tuple[tuple[str, int, int], ...]:
        start = profile.starts.get(b, 0)
        # in the order the types arrived (a Spark profile's spans come in another order)
        return tuple(sorted(((str(k), first - start + 1, last - start + 1)
                             for k, (first, last) in s.spans.get(b, {}).items()),
                            key=lambda r: (r[1], r[0])))

    by_batch = tuple(
        BatchCounts(
            batch_number(b), tuple((str(k), n) for k, n in sorted(c.items(), key=_by_count)),
            within(b),
        )
        for b, c in sorted(s.by_batch.items())
    )
    first_record = last_record = None
    if s.first_batch is not None and s.last_batch is not None:
        firsts = [r[1] for r in within(s.first_batch)]
        lasts = [r[2] for r in within(s.last_batch)]
        first_record = min(firsts, default=None)
        last_record = max(lasts, default=None)
    return FieldRow(
        s.path,
        types,
        s.nulls,
        None if s.first_batch is None else batch_number(s.first_batch),
        None if s.last_batch is None else batch_number(s.last_batch),
        names,
        any(c.evolved_from is not None for c in cols),
        by_batch,
        _search_text(s.path, types, names),
        _mixed_times(s),
        starts,
        first_record,
        last_record,
    )


def _mixed_times(s: FieldStats) -> str | None:
    """The sentence of a field whose times arrived in mixed formats or epoch units.

    >>> from toolkit.core.batch.profile import profile
    >>> p = profile([{"ts": 1717229009}, {"ts": 1717229009430}, {"ts": "2024-06-01"}])
    >>> print(_mixed_times(p.fields[("ts",)]).partition("; ")[2])
    1 whole number looks like epoch seconds and 1 like epoch milliseconds: mixed units
    """
    r = s.timestamps
    return r.sentence() if r.mixed else None


def _by_count(kv: tuple[Any, int]) -> tuple[int, str]:
    return -kv[1], str(kv[0])


def _source_path(
    path: tuple[str, ...], by_path: Mapping[tuple[str, ...], ColumnStatistics]
) -> tuple[str, ...]:
    """The source field a column holds: each evolved column name along its path becomes
    its source key, and list levels (``element``) are left out, so that
    ``device_array_record.element.os`` belongs to ``device.os``."""
    out: list[str] = []
    for i in range(len(path)):
        c = by_path.get(path[: i + 1])
        if c is None or c.kind != "field":
            continue  # a list level (struct elements are not reported as columns)
        out.append(c.evolved_from if c.evolved_from is not None else path[i])
    return tuple(out)


#: the first batch of a field whose first batches' snapshots were expired
EXPIRED_LABEL = "before the oldest snapshot kept"

#: ids the toolkit makes up: ingest's (uuid4 hex) and the preview's (a content digest)
_GENERATED_ID = re.compile(r"(?:preview-)?[0-9a-f]{20,32}")


def made_up_short_id(batch_id: str) -> str | None:
    """The short id a person reads for a batch id the toolkit made up (ingest's uuid, a
    preview's hash); None for an id the user gave, which is shown as it is.

    >>> made_up_short_id("preview-c0dadcddb24bbb1e991a"), made_up_short_id("day-2")
    ('c0da', None)
    """
    if not _GENERATED_ID.fullmatch(batch_id):
        return None
    return batch_id.removeprefix("preview-")[:4]


def batch_label(snapshot: SnapshotStatistics) -> str:
    """A batch as a person reads it: the batch id the user gave, else (an id the toolkit
    made up, or none) its commit time and a short id.

    >>> import datetime as dt
    >>> from toolkit.iceberg.statistics import SnapshotStatistics
    >>> at = dt.datetime(2026, 11, 24, 9, 30, tzinfo=dt.UTC)
    >>> s = SnapshotStatistics(7, at, "append", "day-3", 0, 1, 10, 0, 0, ())
    >>> batch_label(s), batch_label(s.__class__(7, at, "append", "ab" * 16, 0, 1, 10, 0, 0, ()))
    ('day-3', '2026-11-24 09:30 (abab)')
    """
    given = snapshot.batch_id
    short = str(snapshot.snapshot_id)[-4:] if given is None else made_up_short_id(given)
    if short is None:
        return str(given)
    return f"{snapshot.timestamp:%Y-%m-%d %H:%M} ({short})"


def _statistics_row(
    path: tuple[str, ...],
    cols: list[ColumnStatistics],
    history: Mapping[str, Mapping[int, int]],
    batch_labels: Sequence[str],
    order: Sequence[int],
) -> FieldRow:
    total = sum(c.values for c in cols)
    types = tuple(
        sorted(
            (
                TypeCount(
                    _shape_text(c.type), c.values, c.values / total if total else 0.0,
                    column=c.name, measured=c.files_without_metrics == 0,
                )
                for c in cols
            ),
            key=lambda t: (-t.count, t.label),
        )
    )
    by_batch = tuple(
        BatchCounts(
            label,
            tuple((t.label, history.get(t.column or "", {}).get(i, 0)) for t in types),
        )
        for label, i in zip(batch_labels, order, strict=True)
    )
    written = [b.batch for b in by_batch if any(n for _, n in b.counts)]
    leaves = [c for c in cols if c.leaf]
    names = tuple(c.name for c in cols)
    return FieldRow(
        path,
        types,
        leaves[0].nulls if len(cols) == 1 and leaves else None,
        written[0] if written else None,
        written[-1] if written else None,
        names,
        any(c.evolved for c in cols),
        by_batch,
        _search_text(path, types, names),
    )


_LIST = re.compile(r"^list<(.*)>$")


def _shape_text(iceberg_type: str) -> str:
    """``list<list<long>>`` -> ``long[][]``; ``struct<...>`` -> ``record``; as a profile
    names the same shapes."""
    dim, t = 0, iceberg_type
    while (m := _LIST.match(t)) is not None:
        dim, t = dim + 1, m.group(1)
    if t.startswith("struct<"):
        t = "record"
    elif t in ("timestamptz", "timestamp"):
        t = "timestamp"
    return t + "[]" * dim


class _FamilyIndex:
    """Which columns of a schema hold a source field path (families per struct, built
    once: a schema may have thousands of columns)."""

    def __init__(self, schema: Struct) -> None:
        self.schema = schema
        self._families: dict[int, dict[str, list[Column]]] = {}

    def _of(self, struct: Struct) -> dict[str, list[Column]]:
        key = id(struct)
        if key not in self._families:
            self._families[key] = families(struct)
        return self._families[key]

    def columns(self, path: tuple[str, ...]) -> list[tuple[str, Column]]:
        """(dotted full name, column) of each column holding ``path``, in schema order."""
        levels: list[tuple[tuple[str, ...], Struct]] = [((), self.schema)]
        for key in path[:-1]:
            deeper = []
            for prefix, struct in levels:
                for col in self._of(struct).get(key, []):
                    leaf = col.leaf
                    if isinstance(leaf, Struct):
                        full = (*prefix, col.name, *("element",) * col.shape.dim)
                        deeper.append((full, leaf))
            levels = deeper
        return [
            (".".join((*prefix, col.name)), col)
            for prefix, struct in levels
            for col in self._of(struct).get(path[-1], [])
        ]


def family_columns(schema: Struct, path: tuple[str, ...]) -> tuple[str, ...]:
    """The dotted full names of the columns that hold source field ``path``.

    >>> s = Struct((Column(1, "a", "long"), Column(2, "a_string", "string",
    ...                                            "upsolver_evolved_from:a")))
    >>> family_columns(s, ("a",))
    ('a', 'a_string')
    """
    return tuple(name for name, _ in _FamilyIndex(schema).columns(path))
