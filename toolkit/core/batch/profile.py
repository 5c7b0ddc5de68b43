"""Per-field statistics of sample data: which types arrived, how often, and when.

A profile is data (the notebook's plots and tables are renderings of it). Profiles merge
associatively, so partitions of a big data set can be profiled apart and combined.

>>> p = profile([{"a": 1}, {"a": "x"}]) + profile([{"a": 2.5, "b": None}], batch=1)
>>> p.fields[("a",)].counts
{Shape(type='long', dim=0): 1, Shape(type='string', dim=0): 1, Shape(type='double', dim=0): 1}
>>> p.fields[("a",)].first_batch, p.fields[("a",)].last_batch, p.records
(0, 1, 3)

Where each type of a field arrived, by record number (counted from 1 across the batches
of the profile, in order; docs/rules.md, *Where drift starts*):

>>> d = profile([{"price": 1}, {"price": 2}]) + profile([{"price": "n/a"}], batch=1)
>>> d.first_seen("price"), d.first_seen("price", batch=1)
({'long': 1, 'string': 3}, {'string': 1})
>>> print(*d.drift_sentences())
`price` became a string at record 3 (record 1 of batch 2)

Timestamp formats and epoch units per field (:mod:`toolkit.core.values.timestamps`):

>>> t = profile([{"created_at": "2024-06-01T08:00:00Z"}, {"created_at": 1717229009},
...              {"created_at": 1717229009430}, {"created_at": 1717229010430}])
>>> print(t.timestamps("created_at").sentence())
created_at: 1 value is ISO date-time with an offset; 2 whole numbers look like epoch
milliseconds and 1 like epoch seconds: mixed units
"""

from __future__ import annotations

import reprlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import islice, repeat
from operator import is_not
from typing import Any, TypeVar

from toolkit.core.batch.observe import (
    Classifier,
    FieldObservation,
    StructObservation,
    observe_struct,
)
from toolkit.core.batch.options import Options
from toolkit.core.values import timestamps
from toolkit.core.values.jsonlines import UnreadLine
from toolkit.core.values.timestamps import TimestampReport
from toolkit.core.values.types import RECORD, Shape
from toolkit.core.values.wording import a_shape, batch_number, clip, counted
from toolkit.errors import NotARecordError

K = TypeVar("K")
#: sample values kept per field and type
SAMPLES_PER_TYPE = 3


def add_counts(a: Mapping[K, int], b: Mapping[K, int]) -> dict[K, int]:
    """Counts by key, added up.

    >>> add_counts({"long": 2}, {"long": 1, "string": 4})
    {'long': 3, 'string': 4}
    """
    out = dict(a)
    for k, n in b.items():
        out[k] = out.get(k, 0) + n
    return out


#: per batch, per observed shape: the first and last record it arrived at (counted from 0
#: over the whole profile, in order)
Spans = Mapping[int, Mapping[Shape, tuple[int, int]]]


def add_spans(a: Spans, b: Spans, shift: int = 0) -> dict[int, dict[Shape, tuple[int, int]]]:
    """Spans of two parts merged, ``b``'s records coming ``shift`` records after ``a``'s
    first one (a profile's parts are in record order: records are numbered across them).

    >>> s = Shape("long", 0)
    >>> add_spans({0: {s: (0, 4)}}, {0: {s: (1, 2)}, 1: {s: (0, 0)}}, shift=10)
    {0: {Shape(type='long', dim=0): (0, 12)}, 1: {Shape(type='long', dim=0): (10, 10)}}
    """
    out = {batch: dict(shapes) for batch, shapes in a.items()}
    for batch, shapes in b.items():
        mine = out.setdefault(batch, {})
        for shape, (first, last) in shapes.items():
            first, last = first + shift, last + shift
            had = mine.get(shape)
            mine[shape] = (first, last) if had is None else (
                min(had[0], first), max(had[1], last))
    return out


@dataclass(frozen=True)
class FieldStats:
    """What the data said about one field path."""

    path: tuple[str, ...]
    counts: Mapping[Shape, int]  # non-null values per observed type and dimension
    first_batch: int | None  # first/last batch with a non-null value
    last_batch: int | None
    samples: Mapping[Shape, tuple[Any, ...]]
    by_batch: Mapping[int, Mapping[Shape, int]] = field(default_factory=dict)
    #: records found in this field's values (array elements counted one by one): the
    #: enclosing records of its nested fields
    records_inside: int = 0
    #: null or missing where the enclosing record was present; derived by :class:`Profile`
    nulls: int = 0
    #: timestamp formats and epoch units seen, per label of :mod:`toolkit.core.values.timestamps`
    #: (None: not gathered, as by the JVM tally of JSON lines). A diagnostic the Python
    #: observation adds: not part of a profile's equality, so the JVM tally's profile and
    #: the Python path's stay equal (tests/spark/test_tally.py).
    temporal: Mapping[str, int] | None = field(default=None, compare=False)
    #: where each type arrived: per batch and shape, the first and last record holding a
    #: value of it (counted from 0 over the profile's records, in order; the record around
    #: a nested value is the top-level one)
    spans: Spans = field(default_factory=dict)
    #: per batch, the values a type hint converted before they were observed, per (type
    #: they came as, type written, the hint): how many, and the first as it came and as written
    #: (``counts`` has them as written; the conversion warnings tell the ones across kinds)
    hinted: Mapping[int, Mapping[tuple[str, str, str], tuple[int, Any, Any]]] = field(
        default_factory=dict)
    #: per batch, the leaves of arrays whose primitive leaves are of several types, per
    #: (the array's shape, a leaf's type): RULES 1 writes each as the array's widest type,
    #: so a ``true`` among numbers is written 1.0 (the conversion warnings tell it)
    leaves: Mapping[int, Mapping[tuple[Shape, str], int]] = field(default_factory=dict)

    @property
    def first_at(self) -> dict[Shape, int]:
        """Per shape, the first record (counted from 0 over the profile) holding one."""
        out: dict[Shape, int] = {}
        for shapes in self.spans.values():
            for shape, (first, _) in shapes.items():
                out[shape] = min(out.get(shape, first), first)
        return out

    @property
    def last_at(self) -> dict[Shape, int]:
        """Per shape, the last record (counted from 0 over the profile) holding one."""
        out: dict[Shape, int] = {}
        for shapes in self.spans.values():
            for shape, (_, last) in shapes.items():
                out[shape] = max(out.get(shape, last), last)
        return out

    def shifted(self, n: int) -> FieldStats:
        """These statistics with every record ``n`` further on (a later part's)."""
        return replace(self, spans=add_spans({}, self.spans, n)) if n and self.spans else self

    @property
    def present(self) -> int:
        return sum(self.counts.values())

    @property
    def drifted(self) -> bool:
        """True when more than one type or dimension arrived."""
        return len(self.counts) > 1

    def __add__(self, other: FieldStats) -> FieldStats:
        samples = dict(self.samples)
        for k, vs in other.samples.items():
            samples[k] = (samples.get(k, ()) + vs)[:SAMPLES_PER_TYPE]
        by_batch = dict(self.by_batch)
        for b, c in other.by_batch.items():
            by_batch[b] = add_counts(by_batch.get(b, {}), c)
        firsts = [b for b in (self.first_batch, other.first_batch) if b is not None]
        lasts = [b for b in (self.last_batch, other.last_batch) if b is not None]
        return FieldStats(
            self.path,
            add_counts(self.counts, other.counts),
            min(firsts, default=None),
            max(lasts, default=None),
            samples,
            by_batch,
            self.records_inside + other.records_inside,
            temporal=timestamps.add(self.temporal, other.temporal),
            spans=add_spans(self.spans, other.spans),
            hinted=_add_hinted(self.hinted, other.hinted),
            leaves=add_leaves(self.leaves, other.leaves),
        )

    @property
    def timestamps(self) -> TimestampReport:
        """The timestamp formats and epoch units this field arrived in."""
        return timestamps.report(self.path, self.counts, self.temporal)


@dataclass(frozen=True)
class Profile:
    """Statistics per field path (tuples: keys may contain dots), and the record count."""

    fields: Mapping[tuple[str, ...], FieldStats] = field(default_factory=dict)
    records: int = 0
    #: lines of a file that could not be taken whole (not UTF-8, not JSON, a key twice:
    #: :class:`~toolkit.core.values.jsonlines.UnreadLine`), not profiled; ingest sets them aside
    lines_set_aside: int = field(default=0, compare=False)
    #: per batch, its first record (counted from 0 over the profile's records); bookkeeping
    #: for within-batch numbers, not part of equality (the fields' spans are)
    starts: Mapping[int, int] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        # Nulls are derived, not summed: a field a part never saw was null in all of that
        # part's records, so merging stays exact and associative.
        fixed = {}
        for path, s in self.fields.items():
            parent = self.fields.get(path[:-1]) if len(path) > 1 else None
            enclosing = self.records if len(path) == 1 else (parent.records_inside if parent else 0)
            nulls = max(enclosing - s.present, 0)
            fixed[path] = s if s.nulls == nulls else replace(s, nulls=nulls)
        object.__setattr__(self, "fields", fixed)

    def __add__(self, other: Profile) -> Profile:
        """``other``'s records come after this profile's: records are numbered across
        both (lines set aside are no records, as in :func:`profile`)."""
        shift = self.records
        merged = dict(self.fields)
        for path, stats in other.fields.items():
            moved = stats.shifted(shift)
            merged[path] = merged[path] + moved if path in merged else moved
        starts = dict(self.starts)
        for batch, start in other.starts.items():
            starts[batch] = min(starts.get(batch, start + shift), start + shift)
        return Profile(
            merged, self.records + other.records, self.lines_set_aside + other.lines_set_aside,
            starts,
        )

    merge = __add__

    def timestamps(self, path: str | tuple[str, ...]) -> TimestampReport:
        """The timestamp formats and epoch units field ``path`` arrived in (a string is
        one top-level key; a tuple a nested path)."""
        key = (path,) if isinstance(path, str) else tuple(path)
        stats = self.fields.get(key)
        if stats is None:
            raise KeyError(f"no field {'.'.join(key)!r} in this profile")
        return stats.timestamps

    def stats(self, path: str | Sequence[str]) -> FieldStats:
        """The statistics of field ``path`` (a string is one top-level key; a tuple a
        nested path); KeyError naming it when the profile has none."""
        key = (path,) if isinstance(path, str) else tuple(path)
        found = self.fields.get(key)
        if found is None:
            raise KeyError(f"no field {'.'.join(key)!r} in this profile")
        return found

    def first_seen(self, path: str | Sequence[str], batch: int | None = None) -> dict[str, int]:
        """Per type name (``long``, ``string``, ``record``, ``long[]``), the first record
        that held one in field ``path``, counted from 1 across the profile's batches in
        order; with ``batch``, counted from 1 within that batch (types it did not see are
        left out). Nested values count as their top-level record."""
        return self._seen(path, batch, 0)

    def last_seen(self, path: str | Sequence[str], batch: int | None = None) -> dict[str, int]:
        """As :meth:`first_seen`, the last record that held each type."""
        return self._seen(path, batch, 1)

    def _seen(self, path: str | Sequence[str], batch: int | None, end: int) -> dict[str, int]:
        s = self.stats(path)
        if batch is None:
            at = s.first_at if end == 0 else s.last_at
            return {str(shape): n + 1 for shape, n in sorted(at.items(), key=_by_place)}
        base = self.starts.get(batch, 0)
        spans = s.spans.get(batch, {})
        return {str(shape): span[end] - base + 1
                for shape, span in sorted(spans.items(), key=lambda kv: (kv[1][end], str(kv[0])))}

    def first_records(self, batch: int) -> dict[str, dict[Shape, int]]:
        """Per top-level key and shape, the first record of ``batch`` holding one (counted
        from 1 in the batch): what a plan's reasons say of a new field."""
        start = self.starts.get(batch, 0)
        return {
            path[0]: {shape: first - start + 1 for shape, (first, _) in s.spans[batch].items()}
            for path, s in self.fields.items()
            if len(path) == 1 and batch in s.spans
        }

    def record_words(self, n: int) -> str:
        """Record ``n`` (counted from 0 over the profile) in words: ``record 1,201``, and
        where it is within its batch when the profile has several (``record 1,201 (record
        201 of batch 2)``)."""
        text = f"record {n + 1:,}"
        if len(self.starts) < 2:
            return text
        batch, start = max(((b, s) for b, s in self.starts.items() if s <= n),
                           key=lambda bs: bs[1], default=(None, 0))
        if batch is None:
            return text
        if start == 0:  # the profile's first batch: the same number
            return f"{text} (batch {batch_number(batch)})"
        return f"{text} (record {n - start + 1:,} of batch {batch_number(batch)})"

    def drift_sentences(self) -> list[str]:
        """Where each drifting field changed type, in words, by path: for every type after
        the field's first, "`price` became a string at record 1,201"."""
        return [d for path in sorted(self.fields) for d in self.drift_sentences_of(path)]

    def drift_sentences_of(self, path: tuple[str, ...]) -> list[str]:
        """:meth:`drift_sentences` of the field at ``path`` alone (a panel's row asks per
        field: filtering the whole profile's sentences per row made 5,000 fields
        quadratic)."""
        firsts = sorted(self.fields[path].first_at.items(), key=_by_place)
        name = ".".join(path)
        return [f"`{name}` became {a_shape(shape)} at {self.record_words(n)}"
                for shape, n in firsts[1:]]

    def timestamp_reports(self, *, mixed_only: bool = False) -> list[TimestampReport]:
        """The reports of every field that received times (dates, timestamps, or whole
        numbers that look like epoch times in a time field), by path; ``mixed_only``: only
        those with mixed formats or units."""
        found = (self.fields[p].timestamps for p in sorted(self.fields))
        return [r for r in found if not r.empty and (r.mixed or not mixed_only)]

    def __str__(self) -> str:
        """A text table: one line per field path and observed type."""
        rows = [("field", "type", "count", "share", "nulls", "batches", "records", "samples")]
        for path in sorted(self.fields):
            s = self.fields[path]
            total = s.present + s.nulls
            firsts, lasts = s.first_at, s.last_at
            for shape, n in sorted(s.counts.items(), key=lambda kv: -kv[1]):
                batches = f"{batch_number(s.first_batch)}-{batch_number(s.last_batch)}" \
                    if s.first_batch is not None and s.last_batch is not None else "-"
                sample = ", ".join(repr(v) for v in s.samples.get(shape, ()))
                share = share_text(n, total)
                at = f"{firsts[shape] + 1:,}-{lasts[shape] + 1:,}" if shape in firsts else "-"
                rows.append((".".join(path), str(shape), str(n), share, str(s.nulls), batches,
                             at, sample[:40]))
            if not s.counts:
                rows.append((".".join(path), "null", "0", "-", str(s.nulls), "-", "-", ""))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        head = counted(self.records, "record")
        if self.lines_set_aside:  # a profile of nothing but unreadable lines says why
            head += f"; {counted(self.lines_set_aside, 'line')} set aside, not profiled"
        head += "\n"
        return head + "\n".join(
            "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
        )


def add_leaves(
    a: Mapping[int, Mapping[K, int]], b: Mapping[int, Mapping[K, int]]
) -> dict[int, dict[K, int]]:
    """Leaf counts of two parts, per batch, added up."""
    out = {batch: dict(c) for batch, c in a.items()}
    for batch, c in b.items():
        out[batch] = add_counts(out.get(batch, {}), c)
    return out


def _add_hinted(
    a: Mapping[int, Mapping[K, tuple[int, Any, Any]]],
    b: Mapping[int, Mapping[K, tuple[int, Any, Any]]],
) -> dict[int, dict[K, tuple[int, Any, Any]]]:
    """Hinted conversions of two parts, ``b``'s after ``a``'s: counts add, the first
    example is the earlier part's."""
    out = {batch: dict(c) for batch, c in a.items()}
    for batch, c in b.items():
        mine = out.setdefault(batch, {})
        for key, (n, came, went) in c.items():
            had = mine.get(key)
            mine[key] = (n, came, went) if had is None else (had[0] + n, had[1], had[2])
    return out


def _by_place(kv: tuple[Shape, int]) -> tuple[int, str]:
    return kv[1], str(kv[0])


def share_text(n: int, total: int) -> str:
    """``n`` of ``total`` as a percentage, unless rounding would hide it: a rare type is
    never shown as 0%, nor a nearly total one as 100%.

    >>> share_text(3, 20_000), share_text(19_997, 20_000), share_text(1, 4), share_text(0, 0)
    ('3 of 20,000', '19,997 of 20,000', '25%', '-')
    """
    if total == 0:
        return "-"
    shown = f"{100 * n / total:.0f}"
    if (shown == "0" and n) or (shown == "100" and n != total):
        return f"{n:,} of {total:,}"
    return f"{shown}%"


def profile(
    records: Iterable[dict[str, Any] | UnreadLine],
    *,
    batch: int = 0,
    options: Options | None = None,
) -> Profile:
    """Profile one batch of JSON-like records (RULES 1 types); an item that is not a
    record (a dict) is refused naming its position and value. Lines of a file that could
    not be taken whole (:class:`~toolkit.core.values.jsonlines.UnreadLine`) are counted in
    :attr:`Profile.lines_set_aside`, not profiled."""
    items = list(records)
    rows = [r for r in items if not isinstance(r, UnreadLine)]
    unread = len(items) - len(rows)
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise NotARecordError(batch, i, row)
    # records are numbered among the records, a line set aside not counted: as simulate,
    # the plan and ingest number them (docs/rules.md, Record numbers); the quarantine
    # names such a line by its line
    out = profile_of(observe_struct(rows, Classifier(options or Options())), batch)
    return replace(out, lines_set_aside=unread) if unread else out


def profile_of(
    obs: StructObservation, batch: int, places: Sequence[int] | None = None
) -> Profile:
    """The profile of an observation the engine already made (no second pass).
    ``places``: each row's record number (from 0) when it is not its index."""
    out: dict[tuple[str, ...], FieldStats] = {}
    _walk(obs, batch, out, places)
    return Profile(out, len(obs.rows), starts={batch: 0})


def spans_of(fobs: FieldObservation, places: Sequence[int] | None) -> dict[Shape, tuple[int, int]]:
    """Per shape, the first and last row of ``fobs`` holding a value of it (mapped through
    ``places``, each row's record number, when given). Searched with C-level ``index``
    calls, one pair per kind: no Python step per value."""
    values = fobs.values
    n = len(values)
    found: dict[Shape, tuple[int, int]] = {}
    if fobs.kinds is None:
        if fobs.uniform is None or fobs.nulls == n:
            return found
        if fobs.nulls == 0:
            first, last = 0, n - 1
        else:
            present = list(map(is_not, values, repeat(None)))
            first, last = present.index(True), n - 1 - present[::-1].index(True)
        found[fobs.uniform.shape] = (first, last)
    else:
        kinds, backwards = fobs.kinds, fobs.kinds[::-1]
        for k in fobs.counts:
            first, last = kinds.index(k), n - 1 - backwards.index(k)
            had = found.get(k.shape)
            found[k.shape] = (first, last) if had is None else (
                min(had[0], first), max(had[1], last))
    if places is None:
        return found
    return {shape: (places[a], places[b]) for shape, (a, b) in found.items()}


def _walk(
    obs: StructObservation, batch: int, out: dict[tuple[str, ...], FieldStats],
    places: Sequence[int] | None,
) -> None:
    for fobs in obs.fields.values():
        counts: dict[Shape, int] = {}
        for k, n in fobs.counts.items():
            counts[k.shape] = counts.get(k.shape, 0) + n
        seen = batch if counts else None
        dims = fobs.record_dims
        nested = fobs.nested(dims[-1]) if dims else None
        stats = FieldStats(
            fobs.path, counts, seen, seen, _samples(fobs, counts),
            {batch: counts} if counts else {},
            len(nested.rows) if nested is not None else 0,
            temporal=timestamps.tally(
                fobs.values, fobs.kinds if fobs.kinds is not None else fobs.iter_kinds(),
                fobs.uniform if fobs.kinds is None else None,
            ),
            spans={batch: spans_of(fobs, places)} if counts else {},
            hinted={batch: obs.hinted[fobs.path[-1]]} if fobs.path[-1] in obs.hinted else {},
            leaves=_leaves(fobs, batch),
        )
        out[fobs.path] = out[fobs.path] + stats if fobs.path in out else stats
        if nested is not None:
            # a nested value's record is the top-level record around it
            inner = fobs.record_origins(dims[-1])
            if inner is not None and places is not None:
                inner = [places[i] for i in inner]
            _walk(nested, batch, out, places if inner is None else inner)


def _leaves(fobs: FieldObservation, batch: int) -> dict[int, dict[tuple[Shape, str], int]]:
    """:attr:`FieldStats.leaves` of one field: only arrays the classifier found leaves of
    several types in are walked again (none, in most batches)."""
    several = fobs.classifier.several_leaf_types
    if not several or not any(k in several for k in fobs.counts):
        return {}
    kind_of = fobs.classifier.kind
    found: dict[tuple[Shape, str], int] = {}
    for v, k in zip(fobs.values, fobs.iter_kinds(), strict=True):
        if k is None or k not in several:
            continue
        counted: dict[str, int] = {}
        stack = [v]
        while stack:
            for x in stack.pop():
                if type(x) is list:
                    stack.append(x)
                elif x is not None and type(x) is not dict:
                    leaf = kind_of(x)
                    assert leaf is not None and leaf.type is not None  # (x is no null)
                    counted[leaf.type] = counted.get(leaf.type, 0) + 1
        if len(counted) > 1:
            for t, n in counted.items():
                key = (k.shape, t)
                found[key] = found.get(key, 0) + n
    return {batch: found} if found else {}


def _samples(fobs: FieldObservation, counts: Mapping[Shape, int]) -> dict[Shape, tuple[Any, ...]]:
    """The first few values of each type, stopping as soon as every type has enough."""
    found: dict[Shape, list[Any]] = {}
    want = sum(min(n, SAMPLES_PER_TYPE) for n in counts.values())
    got = 0
    for v, k in zip(fobs.values, fobs.iter_kinds(), strict=True):
        if k is None or got >= want:
            if got >= want:
                break
            continue
        bucket = found.setdefault(k.shape, [])
        if len(bucket) < SAMPLES_PER_TYPE:
            bucket.append(sample_summary(v) if k.type == RECORD or k.dim else v)
            got += 1
    return {s: tuple(vs) for s, vs in found.items()}


class _ShortRepr(reprlib.Repr):
    """``repr`` as far as a 60-character sample shows it: bounded in depth and width, so a
    huge or deeply nested value (refused later, in its nested fields) is never walked whole
    here (plain ``repr`` recurses once per level). Dict keys keep their order."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel = 30
        self.maxdict = self.maxlist = self.maxtuple = self.maxset = 30
        self.maxstring = self.maxlong = self.maxother = 60

    def repr_dict(self, x: dict[Any, Any], level: int) -> str:
        if not x:
            return "{}"
        if level <= 0:
            return "{...}"
        items = [
            f"{self.repr1(k, level - 1)}: {self.repr1(v, level - 1)}"
            for k, v in islice(x.items(), self.maxdict)
        ]
        return "{" + ", ".join(items) + (", ..." if len(x) > self.maxdict else "") + "}"


_SHORT = _ShortRepr()


def sample_summary(v: Any) -> Any:
    """Records and arrays are sampled as short texts, not whole nested values."""
    return clip(_SHORT.repr(v))
