"""Where a batch's values land, for the preview panel's grid: one row per value (record,
key, value, arrived as, column, stored, what happened), over records chosen to cover every
field-and-type pair of the batch, filtered and paged.

Pure: no widget. The preview's model (:mod:`toolkit.notebook.panels.preview.model`) builds the
grid; :mod:`toolkit.notebook.panels.preview.html` draws it.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, get_args

from toolkit.core.batch.observe import Classifier, StructObservation
from toolkit.core.batch.quarantine import Quarantined, detail_text
from toolkit.core.batch.routing import Router, explain_record
from toolkit.core.evolution.batch_plan import Plan
from toolkit.core.policies.widen import primary_columns
from toolkit.core.values.types import RECORD, Column, Kind, Struct
from toolkit.core.values.wording import counted
from toolkit.notebook.common import clip, value_text
from toolkit.notebook.paging import Page, page_of

if TYPE_CHECKING:
    from toolkit.pipeline.preview import Preview


#: What happened to one value, as the grid's last column says it, the most telling first:
#: its record is set aside; it is converted to the column's type; it lands in a column the
#: plan adds; in a column the plan widens; as it arrived; nowhere (a null, RULES 3.5).
Happened: TypeAlias = Literal[
    "quarantined", "converted", "new column", "widened", "as is", "nowhere"
]
HAPPENED: Final[tuple[Happened, ...]] = get_args(Happened)
#: a value drifts when it does not simply land as it arrived
DRIFTING: Final[frozenset[Happened]] = frozenset(
    {"quarantined", "converted", "new column", "widened"}
)
#: which rows the grid shows: every value, the drifting ones, the first value of each way
#: of drifting (a field, its type, a column, what happened), or one kind of happening
Show: TypeAlias = Literal[
    "every value", "drifting", "each drift", "quarantined", "converted", "new column",
    "widened", "as is", "nowhere",
]
SHOW: Final[tuple[Show, ...]] = get_args(Show)


@dataclass(frozen=True, slots=True)
class LandingRow:
    """One value of a sample record (one row of the grid): where it lands, how the column
    holds it, and what happened to it. A record value landing in a record column is shown
    as its nested values, one row each."""

    record: int
    """Its record's number in the batch, counting from 1."""
    key: str
    """The dotted field path."""
    value: Any
    kind: str
    """The observed kind, as text: ``long``, ``string``, ``record[]``; ``null``."""
    column: str | None
    """The dotted column path; None when it lands nowhere."""
    stored: Any
    converted: bool
    """The column's type or dimension is not the value's (RULES 2, 3)."""
    happened: Happened
    new_column: bool = False
    """The column is one the plan adds (the columns of a new table count only when made
    for a second type of their field, RULES 3.2)."""
    detail: str = ""
    """Why its record is set aside (on the row of the field at fault)."""

    @property
    def drifting(self) -> bool:
        return self.happened in DRIFTING

    @property
    def value_text(self) -> str:
        return value_text(self.value)

    @property
    def stored_text(self) -> str:
        return value_text(self.stored)


@dataclass(frozen=True, slots=True)
class RecordLandings:
    """The landings of one sample record."""

    number: int
    """Its number in the batch, counting from 1."""
    record: str
    """The record as clipped JSON text."""
    rows: tuple[LandingRow, ...]
    """Its values in the record's order, nulls and nested values included."""
    quarantined: str | None = None
    """Why the whole record would be set aside instead (the ``widen`` policy, RULES 5; a
    rare type under the ``upsolver`` policy's rare-type threshold)."""

    @property
    def landings(self) -> tuple[LandingRow, ...]:
        """The rows of values that land in a column."""
        return tuple(r for r in self.rows if r.column is not None)

    @property
    def unwritten(self) -> tuple[str, ...]:
        """Keys of the record that land nowhere (null values: RULES 3.5)."""
        return tuple(r.key for r in self.rows if r.happened == "nowhere")


#: one page of the landing grid
LandingPage = Page[LandingRow]


@dataclass(frozen=True, slots=True)
class LandingGrid:
    """Where values land, as one grid: a row per value of the sample records, filtered by
    field and by what happened, and paged.

    >>> row = LandingRow(3, "a", 1, "long", "a_string", "1", True, "converted")
    >>> grid = LandingGrid.of([RecordLandings(3, '{"a": 1}', (row,))], 120)
    >>> str(grid.filter("b").page(0)), str(grid.filter(show="drifting").page(0))
    ('rows 0-0 of 0 (page 1 of 1)', 'rows 1-1 of 1 (page 1 of 1)')
    """

    all_rows: tuple[LandingRow, ...]
    rows: tuple[LandingRow, ...]
    records: int
    """Records in the batch."""
    shown: int
    """Sample records, whose values are the rows."""
    missing: int = 0
    """Field-and-type pairs of the batch that no sample record holds (the cover stopped
    at :data:`COVER_LIMIT` records)."""
    field: str = ""
    show: Show = "every value"

    @classmethod
    def of(
        cls, samples: Iterable[RecordLandings], records: int | None = None, missing: int = 0
    ) -> LandingGrid:
        samples = tuple(samples)
        rows = tuple(r for s in samples for r in s.rows)
        return cls(rows, rows, len(samples) if records is None else records, len(samples),
                   missing)

    @property
    def drifting(self) -> int:
        """How many values of the sample drift (all rows, whatever the filter)."""
        return sum(1 for r in self.all_rows if r.drifting)

    @property
    def happenings(self) -> tuple[Happened, ...]:
        """What happened to some value of the sample, in :data:`HAPPENED` order."""
        seen = {r.happened for r in self.all_rows}
        return tuple(h for h in HAPPENED if h in seen)

    @property
    def first_view(self) -> LandingGrid:
        """What the grid shows first: each kind of drift once when some value drifts (what a
        preview is for, without the same conversion repeated for every record); else every
        value."""
        return self.filter(show="each drift") if self.drifting else self.filter()

    def filter(self, field: str = "", show: Show = "every value") -> LandingGrid:
        """The rows whose key or column contains every word of ``field`` (case does not
        matter) and whose happening ``show`` names, out of all rows: filters do not stack."""
        if show not in SHOW:
            raise ValueError(f"unknown choice {show!r}: choose one of {', '.join(SHOW)}")
        words = field.lower().split()
        rows = tuple(
            r for r in self.all_rows
            if all(w in f"{r.key}\n{r.column or ''}".lower() for w in words)
            and (show == "every value" or (r.drifting if show in ("drifting", "each drift")
                                           else r.happened == show))
        )
        if show == "each drift":
            first = {(r.key, r.kind, r.column, r.happened): r for r in reversed(rows)}
            rows = tuple(r for r in rows if first[(r.key, r.kind, r.column, r.happened)] is r)
        return LandingGrid(
            self.all_rows, rows, self.records, self.shown, self.missing, field, show
        )

    def page(self, number: int, size: int = 25) -> LandingPage:
        """Rows ``number * size`` onwards (``number`` from 0, clamped)."""
        return page_of(self.rows, number, size)

    @property
    def sample_text(self) -> str:
        """Which records the values come from, in words."""
        if self.shown >= self.records:
            head = (f"Every value of the {counted(self.records, 'record')}"
                    if self.records != 1 else "Every value of the one record")
        else:
            head = (
                f"Values of {self.shown:,} of the {self.records:,} records, picked so that "
                "every field shows with every type it arrives as, then the first records"
            )
        if self.missing:
            are = "is" if self.missing == 1 else "are"
            head += (
                f"; {counted(self.missing, 'field-and-type pair')} {are} in no record shown "
                f"(the pick stops at {COVER_LIMIT:,} records)"
            )
        return f"{head}. {self.drifting:,} of {counted(len(self.all_rows), 'value')} drift."


#: at most this many records are picked to cover the field-and-type pairs of a batch
COVER_LIMIT: Final = 50

#: a field's path and a type it arrives as (type and dimension): what the sample must show
#: once
Pattern: TypeAlias = tuple[tuple[str, ...], str | None, int]


def cover_sample(
    candidates: Mapping[int, frozenset[Hashable]],
    count: int,
    *,
    fill: int = 20,
    limit: int = COVER_LIMIT,
) -> tuple[tuple[int, ...], int]:
    """Which of ``count`` records to show (positions from 0, in order), and how many pairs
    none of them holds. ``candidates`` are the pairs of the records worth picking (any
    record holding a pair first; others may be left out).

    Candidates are picked greedily, the one adding the most pairs not yet shown first (the
    earliest on a tie), until every pair shows or ``limit`` records are picked; then the
    first records fill the sample up to ``fill`` records.

    >>> cover_sample({0: frozenset({("a", "long")}), 99: frozenset({("a", "string")})}, 100,
    ...              fill=3)
    ((0, 1, 99), 0)
    """
    missing: set[Hashable] = set().union(*candidates.values())
    picked: set[int] = set()
    while missing and len(picked) < limit:
        gain, at = max((len(ps & missing), -i) for i, ps in candidates.items())
        if not gain:  # (only a caller's inconsistent candidates leave pairs unheld)
            break
        picked.add(-at)
        missing -= candidates[-at]
    filler = (i for i in range(count) if i not in picked)
    while len(picked) < min(fill, count):
        picked.add(next(filler))
    return tuple(sorted(picked)), len(missing)


# --- where values land ----------------------------------------------------------------------


def sample_records(
    preview: Preview, obs: StructObservation, fill: int
) -> tuple[tuple[int, ...], int]:
    """The numbers of the records to show (from 1, in order), and the field-and-type pairs
    none of them holds. ``obs`` is the observation of the planned records: the types the
    plan saw. A record set aside before planning counts as its field and reason, so one
    of each shows."""
    held = _first_pairs(obs, len(preview.records))
    position = [n - 1 for n in preview.numbers]
    candidates = {position[i]: pairs for i, pairs in held.items()}
    for i, q in preview.aside:
        candidates[i] = frozenset({((q.field or "",), f"set aside: {q.reason}", 0)})
    count = len(preview.records) + len(preview.aside)
    picked, missing = cover_sample(candidates, count, fill=fill)
    return tuple(i + 1 for i in picked), missing


#: one struct level of a batch's observation, and the record each of its rows is part of
_Level: TypeAlias = tuple[StructObservation, Sequence[int]]


def _first_pairs(obs: StructObservation, count: int) -> dict[int, frozenset[Pattern]]:
    """The (field path, arrived type) pairs of each record holding some pair first, by
    position: the records worth picking. Nested records count; records inside arrays are
    shown whole, so their fields are not looked into.

    Read a field at a time, as the engine observed them: a long batch costs a few scans
    of each field, never a set of pairs per record."""
    levels: list[_Level] = []
    _levels(obs, range(count), levels)
    first: set[int] = set()
    for level, rows in levels:
        for f in level.fields.values():
            if f.kinds is None:  # one kind: its first non-null value
                j = next((j for j, v in enumerate(f.values) if v is not None), None)
                first |= set() if j is None else {rows[j]}
            else:
                kinds = f.kinds
                first |= {rows[kinds.index(k)] for k in dict.fromkeys(kinds) if k is not None}
    pairs: dict[int, set[Pattern]] = {row: set() for row in first}
    for level, rows in levels:
        at = {row: j for j, row in enumerate(rows) if row in first}
        for row, j in at.items():
            for f in level.fields.values():
                kind = f.kind_at(j)
                if kind is not None:
                    pairs[row].add((f.path, kind.type, kind.dim))
    return {row: frozenset(p) for row, p in pairs.items()}


def _levels(obs: StructObservation, rows: Sequence[int], out: list[_Level]) -> None:
    """``obs`` and the struct levels of its records (not of records inside arrays)."""
    out.append((obs, rows))
    for f in obs.fields.values():
        if any(k.type == RECORD and k.dim == 0 for k in f.counts):
            inside = [
                row for row, k in zip(rows, f.iter_kinds(), strict=True)
                if k is not None and k.type == RECORD and k.dim == 0
            ]
            _levels(f.records_at(0), inside, out)


@dataclass(frozen=True, slots=True)
class Look:
    """What telling what happened to a value needs from the plan."""

    added: frozenset[str]
    """Dotted paths of the columns the plan adds."""
    widened: frozenset[str]
    new_table: bool
    classifier: Classifier

    @classmethod
    def of(cls, plan: Plan, new_table: bool, classifier: Classifier) -> Look:
        return cls(
            frozenset(".".join(c.path) for c in plan.changes),
            frozenset(r.name for r in plan.retypes),
            new_table,
            classifier,
        )

    def is_new(self, path: tuple[str, ...], column: Column) -> bool:
        """Whether ``column`` (at ``path``) is one the plan adds. In a new table every
        column is, so only those made for a field's second type count (RULES 3.2)."""
        if self.new_table:
            return column.evolved_from is not None
        return any(".".join(path[:i]) in self.added for i in range(1, len(path) + 1))

    def rows(
        self, number: int, path: tuple[str, ...], value: Any, kind: Kind | None,
        column: Column, at: tuple[str, ...], stored: Any,
    ) -> list[LandingRow]:
        """The rows of one value landing in ``column`` (at ``at``): a record landing in a
        record column as its nested values, any other value as one row."""
        if (
            isinstance(value, Mapping) and isinstance(column.type, Struct)
            and isinstance(stored, Mapping) and value
        ):
            return self._record_rows(number, path, value, column.type, at, stored)
        converted = kind is None or (kind.type, kind.dim) != _shape_of(column)
        new = self.is_new(at, column)
        happened: Happened = (
            "converted" if converted else "new column" if new
            else "widened" if ".".join(at) in self.widened else "as is"
        )
        return [LandingRow(
            number, ".".join(path), value, _kind_text(kind), ".".join(at), stored, converted,
            happened, new,
        )]

    def _record_rows(
        self, number: int, path: tuple[str, ...], value: Mapping[str, Any], struct: Struct,
        at: tuple[str, ...], stored: Mapping[str, Any],
    ) -> list[LandingRow]:
        out: list[LandingRow] = []
        for key, v in value.items():
            sub = (*path, key)
            columns = [
                c for c in struct.fields if c.family == key and stored.get(c.name) is not None
            ]
            if v is None or not columns:
                out.append(_nowhere(number, sub, v, self.classifier))
                continue
            kind = self.classifier.kind(v, sub)
            for c in columns:
                out += self.rows(number, sub, v, kind, c, (*at, c.name), stored[c.name])
        return out


def _shape_of(column: Column) -> tuple[str | None, int]:
    """The type and dimension of a column as a value's kind names them: the lattice's
    types, and also the typed sources' own (int, float, any decimal) that the widening
    policy keeps (RULES 1)."""
    shape = column.shape
    leaf = column.leaf
    if shape.type is None and isinstance(leaf, str):
        return ("decimal" if leaf.startswith("decimal") else leaf), shape.dim
    return shape.type, shape.dim


def _kind_text(kind: Kind | None) -> str:
    return "null" if kind is None else str(kind.shape)


def _nowhere(
    number: int, path: tuple[str, ...], value: Any, classifier: Classifier
) -> LandingRow:
    kind = None if value is None else classifier.kind(value, path)
    return LandingRow(
        number, ".".join(path), value, _kind_text(kind), None, None, False, "nowhere"
    )


def landings_of(
    number: int, record: Mapping[str, Any], plan: Plan, router: Router, look: Look
) -> RecordLandings:
    found = explain_record(router, plan.after, dict(record))
    columns = plan.after.by_name()
    by_key: dict[str, list[LandingRow]] = {}
    for x in found:  # a key's columns stay in schema order
        by_key.setdefault(x.key, []).extend(look.rows(
            number, (x.key,), x.value, x.kind, columns[x.column], (x.column,), x.stored
        ))
    # in the record's order, so each value reads with every column it lands in
    rows = [
        row
        for key, value in record.items()
        for row in by_key.get(key) or [_nowhere(number, (key,), value, look.classifier)]
    ]
    return RecordLandings(number, value_text(record, 200), tuple(rows))


def widen_landings(
    number: int, record: Mapping[str, Any], plan: Plan, row: Mapping[str, Any], look: Look
) -> RecordLandings:
    """Under a policy that widens (RULES 5) a value lands in the one column named for its
    key, as ``row`` (the record routed) holds it; its record is set aside otherwise
    (:func:`held_landings`)."""
    primary = primary_columns(plan.after)
    rows: list[LandingRow] = []
    for key, value in record.items():
        col = primary.get(key)
        if value is None or col is None:
            rows.append(_nowhere(number, (key,), value, look.classifier))
            continue
        kind = look.classifier.kind(value, (key,))
        rows += look.rows(number, (key,), value, kind, col, (col.name,), row[col.name])
    return RecordLandings(number, value_text(record, 200), tuple(rows))


def held_landings(
    number: int, record: Mapping[str, Any], held: Quarantined, look: Look
) -> RecordLandings:
    """A record set aside whole: each of its values, the one at fault with why."""
    at_fault = (held.field or "").split(".", 1)[0]
    rows = tuple(
        LandingRow(
            number, key, value, _kind_text(None if value is None else
                                           look.classifier.kind(value, (key,))),
            None, None, False, "quarantined", detail=held.detail if key == at_fault else "",
        )
        for key, value in record.items()
    )
    return RecordLandings(number, value_text(record, 200), rows, held.detail)


def aside_landings(number: int, held: Quarantined) -> RecordLandings:
    """A record set aside before planning (no record, or a value with no type): one row,
    its field (or the whole item) and why; its values are not typed again."""
    record = held.record
    value = record.get(held.field) if isinstance(record, Mapping) and held.field else record
    # the grid's own column numbers the record (from 1); a reason never does
    detail = detail_text(held.detail)
    row = LandingRow(
        number, held.field or "", value, held.observed or "-", None, None, False,
        "quarantined", detail=detail,
    )
    return RecordLandings(number, clip(held.raw, 200), (row,), held.detail)


