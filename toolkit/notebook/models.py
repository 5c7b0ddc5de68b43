"""View-models of the notebook panels: plain data computed from profiles, written data
statistics, previews and ingest outcomes.

Widgets and figures only render these (STYLE: "statistics are data; HTML, widget and plot
are renderings of the same model"), so everything a panel shows can be checked here, in
memory, without a browser, a kernel, ipywidgets or plotly.

>>> from toolkit.core.profile import profile
>>> m = StatisticsModel.from_profile(profile([{"a": 1, "b": "x"}, {"a": "one"}]))
>>> [(r.name, r.drifted) for r in m.rows]
[('a', True), ('b', False)]
>>> [(t.type, t.count) for t in m.field("a").types]
[('long', 1), ('string', 1)]
>>> m.filter("str").page(0, 10).total
2
"""

from __future__ import annotations

import hashlib
import json
import re
import traceback
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from toolkit.core.engine import Engine
from toolkit.core.families import families
from toolkit.core.options import Options
from toolkit.core.planner import MakeOptional, Plan, Retype
from toolkit.core.profile import FieldStats, Profile
from toolkit.core.quarantine import Quarantined
from toolkit.core.routing import Router, explain_record
from toolkit.core.state import ABSENT, TableState
from toolkit.core.types import RECORD, Column, ColumnType, ListOf, Struct, iter_ids, type_to_str
from toolkit.core.views import DIALECTS, Dialect, coalesce_sql
from toolkit.core.widen_policy import WidenRouter, primary_columns
from toolkit.errors import MalformedLineError, NotARecordError, PlanChangedError, StalePlanError

if TYPE_CHECKING:
    from toolkit.iceberg.statistics import ColumnStatistics, WrittenDataStatistics
    from toolkit.pipeline.ingest import IngestReport
    from toolkit.pipeline.preview import Preview

__all__ = [
    "BatchCounts",
    "CommitOutcome",
    "CommitRequest",
    "FieldRow",
    "LandingRow",
    "NewColumn",
    "Page",
    "PlanModel",
    "QuarantinePreview",
    "QuarantineSample",
    "RecordLandings",
    "SchemaNode",
    "StatisticsData",
    "StatisticsModel",
    "TypeCount",
    "as_statistics_model",
    "family_columns",
    "preview_batch_id",
    "schema_tree",
]

#: how long a value's text may get in a table cell before it is clipped
VALUE_WIDTH = 60


def clip(text: str, width: int = VALUE_WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def value_text(value: Any, width: int = VALUE_WIDTH) -> str:
    """A value as JSON text (``"7"`` for a string, ``7`` for a number), clipped."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return clip(text, width)


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
    """Up to three sample values (a profile only; records and arrays as short texts)."""
    column: str | None = None
    """The column these values were written to (committed tables only)."""
    measured: bool = True
    """False when some data files hold the column without counts (written with metrics
    mode ``none``, as Spark's writer does for list elements): ``count`` is a lower bound."""

    @property
    def count_text(self) -> str:
        return f"{self.count}" if self.measured else f"{self.count}+"

    @property
    def label(self) -> str:
        return self.type if self.column is None else f"{self.column} ({self.type})"

    @property
    def sample_texts(self) -> tuple[str, ...]:
        """The samples as clipped JSON text, rendered only for the rows shown."""
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

    def count(self, label: str) -> int:
        return dict(self.counts).get(label, 0)


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
class Page:
    """One page of rows; ``number`` counts from 0 and is clamped to the pages there are."""

    rows: tuple[FieldRow, ...]
    number: int
    size: int
    pages: int
    total: int

    @property
    def first(self) -> int:
        """The 1-based position of the first row shown (0 when there is none)."""
        return self.number * self.size + 1 if self.rows else 0

    @property
    def last(self) -> int:
        return self.number * self.size + len(self.rows)

    def __str__(self) -> str:
        return f"{self.first}-{self.last} of {self.total} (page {self.number + 1} of {self.pages})"


@dataclass(frozen=True, slots=True)
class StatisticsModel:
    """Per field: types seen, nulls, batches, samples, family columns; filtered and paged.

    Built from a :class:`~toolkit.core.profile.Profile` (sample data) or from the
    :class:`~toolkit.iceberg.statistics.WrittenDataStatistics` of a committed table. Both
    give one row per source field path, so a panel shows them alike.
    """

    source: str
    """What was profiled: ``"20 records"``, ``"table db.events"``."""
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
        rows = []
        batches: set[int] = set()
        for path in sorted(profile.fields):
            s = profile.fields[path]
            batches.update(s.by_batch)
            rows.append(_profile_row(s, index))
        return cls(
            source if source is not None else f"{profile.records} records",
            profile.records,
            tuple(str(b) for b in sorted(batches)),
            tuple(rows),
            tuple(rows),
        )

    @classmethod
    def from_statistics(cls, stats: WrittenDataStatistics) -> StatisticsModel:
        """Rows from a committed table: one per source field, whose "types" are the columns
        of its family and the values each received (from the table's metadata alone)."""
        by_path = {c.path: c for c in stats.columns}
        groups: dict[tuple[str, ...], list[ColumnStatistics]] = {}
        for c in stats.columns:
            if c.kind == "field":
                groups.setdefault(_source_path(c.path, by_path), []).append(c)
        history: dict[str, dict[int, int]] = {}
        labels: dict[int, str] = {}
        for h in stats.history_rows():
            i, name, n = h["snapshot"], h["column"], h["values"]
            assert isinstance(i, int) and isinstance(name, str) and isinstance(n, int)
            labels[i] = str(h["batch"])
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

    def page(self, number: int, size: int = 25) -> Page:
        """Rows ``number * size`` onwards (``number`` from 0, clamped)."""
        if size < 1:
            raise ValueError(f"page size must be at least 1, not {size}")
        pages = max(1, -(-len(self.rows) // size))
        number = min(max(number, 0), pages - 1)
        start = number * size
        return Page(self.rows[start : start + size], number, size, pages, len(self.rows))

    def field(self, name: str) -> FieldRow:
        """The row of a dotted field name, or of the family holding column ``name``."""
        for r in self.all_rows:
            if r.name == name:
                return r
        for r in self.all_rows:
            if name in r.columns:
                return r
        raise KeyError(f"no field or column {name!r} in {self.source}")

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


def _profile_row(s: FieldStats, index: _FamilyIndex | None) -> FieldRow:
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
    by_batch = tuple(
        BatchCounts(str(b), tuple((str(k), n) for k, n in sorted(c.items(), key=_by_count)))
        for b, c in sorted(s.by_batch.items())
    )
    return FieldRow(
        s.path,
        types,
        s.nulls,
        None if s.first_batch is None else str(s.first_batch),
        None if s.last_batch is None else str(s.last_batch),
        names,
        any(c.evolved_from is not None for c in cols),
        by_batch,
        _search_text(s.path, types, names),
    )


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


# --- a preview: the schema before and after, new columns, landings, SQL ---------------------


@dataclass(frozen=True, slots=True)
class SchemaNode:
    """One field of a schema tree; list elements are nodes named ``element``."""

    path: tuple[str, ...]
    name: str
    field_id: int
    type: str
    doc: str | None
    new: bool
    """The plan adds this field (its ID is not in the schema before)."""
    required: bool = False
    children: tuple[SchemaNode, ...] = ()

    @property
    def full_name(self) -> str:
        return ".".join(self.path)

    def walk(self) -> Iterator[SchemaNode]:
        yield self
        for c in self.children:
            yield from c.walk()


def schema_tree(struct: Struct, new_ids: Iterable[int] = ()) -> tuple[SchemaNode, ...]:
    """A struct as a tree of nodes; the fields whose IDs are in ``new_ids`` are new."""
    fresh = frozenset(new_ids)
    return tuple(_column_node(c, (), fresh) for c in struct.fields)


def _column_node(col: Column, parent: tuple[str, ...], new: frozenset[int]) -> SchemaNode:
    path = (*parent, col.name)
    return SchemaNode(
        path, col.name, col.id, type_to_str(col.type), col.doc, col.id in new, col.required,
        _type_children(col.type, path, new),
    )


def _type_children(
    t: ColumnType, path: tuple[str, ...], new: frozenset[int]
) -> tuple[SchemaNode, ...]:
    if isinstance(t, Struct):
        return tuple(_column_node(c, path, new) for c in t.fields)
    if isinstance(t, ListOf):
        inner = (*path, "element")
        return (
            SchemaNode(
                inner, "element", t.element_id, type_to_str(t.element), None,
                t.element_id in new, False, _type_children(t.element, inner, new),
            ),
        )
    return ()


@dataclass(frozen=True, slots=True)
class NewColumn:
    """A column the plan adds, and the rule that decided it."""

    path: tuple[str, ...]
    field_id: int
    type: str
    doc: str | None
    reason: str
    family: str

    @property
    def name(self) -> str:
        return ".".join(self.path)


@dataclass(frozen=True, slots=True)
class LandingRow:
    """Where one input value lands, and how the column holds it."""

    key: str
    value: Any
    kind: str
    """The observed kind, as text: ``long``, ``string``, ``record[]``."""
    column: str
    stored: Any
    converted: bool

    @property
    def value_text(self) -> str:
        return value_text(self.value)

    @property
    def stored_text(self) -> str:
        return value_text(self.stored)


@dataclass(frozen=True, slots=True)
class RecordLandings:
    """The landings of one sample record."""

    index: int
    """Its position among the previewed records (from 0)."""
    record: str
    """The record as clipped JSON text."""
    landings: tuple[LandingRow, ...]
    unwritten: tuple[str, ...] = ()
    """Keys of the record that land nowhere (null values: RULES 3.5)."""
    quarantined: str | None = None
    """Why the whole record would be set aside instead (widening policy, RULES 5)."""


@dataclass(frozen=True, slots=True)
class QuarantineSample:
    """One record that would be set aside: why, where, and the record itself."""

    index: int
    """Its position among the previewed records (from 0)."""
    reason: str
    field: str | None
    observed: str | None
    table_type: str | None
    detail: str
    raw: str
    """The record as clipped JSON text."""


@dataclass(frozen=True, slots=True)
class QuarantinePreview:
    """The records of a preview the table cannot take as they are (RULES 5): counted by
    reason, with the first few of each reason as samples. ``fails`` when the options say
    such a record fails the whole batch instead (``on_incompatible="fail"``)."""

    total: int
    by_reason: tuple[tuple[str, int], ...]
    samples: tuple[QuarantineSample, ...]
    fails: bool = False

    @classmethod
    def of(
        cls,
        items: Sequence[tuple[int, Quarantined]],
        *,
        per_reason: int = 5,
        fails: bool = False,
    ) -> QuarantinePreview:
        counts: dict[str, int] = {}
        samples: list[QuarantineSample] = []
        for index, q in items:
            counts[q.reason] = counts.get(q.reason, 0) + 1
            if counts[q.reason] <= per_reason:
                samples.append(QuarantineSample(
                    index, q.reason, q.field, q.observed, q.table_type, q.detail,
                    clip(q.raw, 200),
                ))
        ranked = tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
        return cls(len(items), ranked, tuple(samples), fails)


def preview_batch_id(table: str, records: Iterable[Mapping[str, Any]]) -> str:
    """A batch id derived from the table name and the records, key order aside.

    The table state is deliberately left out: approving the same records for the same
    table again, after a commit, reuses the id, and ``ingest`` then writes nothing twice.
    (The state is held separately: ``expected`` refuses a table that moved.)

    >>> preview_batch_id("db.t", [{"a": 1, "b": 2}]) == preview_batch_id("db.t", [{"b": 2, "a": 1}])
    True
    >>> preview_batch_id("db.t", [{"a": 1}]) == preview_batch_id("db.u", [{"a": 1}])
    False
    """
    digest = hashlib.sha256(table.encode())
    for r in records:
        digest.update(b"\n")
        digest.update(json.dumps(r, sort_keys=True, default=repr, ensure_ascii=False).encode())
    return f"preview-{digest.hexdigest()[:20]}"


@dataclass(frozen=True, slots=True)
class PlanModel:
    """What a preview shows: the plan, where sample values land, and the view's SQL."""

    table: str
    batch: int
    batch_id: str
    state: TableState
    records: int
    """Records the plan was made on (all of them, not only the samples)."""
    before: tuple[SchemaNode, ...]
    after: tuple[SchemaNode, ...]
    new_columns: tuple[NewColumn, ...]
    samples: tuple[RecordLandings, ...]
    sql: tuple[tuple[Dialect, str], ...]
    """The COALESCE view's SELECT over the table after the plan, per dialect."""
    policy: str = "upsolver"
    widenings: tuple[Retype, ...] = ()
    """Columns the plan retypes (widening policy): in place or by an approved rewrite."""
    pending: tuple[Retype, ...] = ()
    """Rewrites the data needs but that are not approved (``allow_rewrites=False``): the
    values needing them are set aside instead."""
    optionals: tuple[MakeOptional, ...] = ()
    quarantine: QuarantinePreview | None = None
    """Records the table cannot take (widening policy); None under the automatic one."""

    @property
    def new_table(self) -> bool:
        return self.state == ABSENT

    @property
    def changed(self) -> bool:
        return bool(self.new_columns or self.widenings or self.optionals)

    @property
    def rewrites(self) -> tuple[Retype, ...]:
        """The widenings that rewrite data: approving the plan approves them."""
        return tuple(w for w in self.widenings if not w.in_place)

    @property
    def widening(self) -> bool:
        """Planned under the widening policy (RULES 5)."""
        return self.policy == "widen"

    def sql_for(self, dialect: Dialect) -> str:
        return dict(self.sql)[dialect]

    @property
    def summary(self) -> str:
        where = (
            f"{self.table} does not exist yet: it will be created"
            if self.new_table
            else f"{self.table} (schema id {self.state.schema_id}, "
            f"snapshot {self.state.snapshot_id})"
        )
        parts = [f"{len(self.new_columns)} column(s) to add"] if self.new_columns else []
        if self.widenings:
            parts.append(
                f"{len(self.widenings)} to widen ({len(self.rewrites)} by rewrite)"
            )
        if self.optionals:
            parts.append(f"{len(self.optionals)} to make optional")
        if self.pending:
            parts.append(f"{len(self.pending)} rewrite(s) awaiting approval")
        change = ", ".join(parts) or "no schema change"
        q = self.quarantine
        if q is not None and q.total:
            fate = "would fail the batch" if q.fails else "to quarantine"
            change += f"; {q.total} record(s) {fate}"
        return f"{self.records} records planned against {where}; {change}"

    @classmethod
    def from_preview(
        cls,
        preview: Preview,
        options: Options | None = None,
        *,
        sample: int = 20,
        batch_id: str | None = None,
    ) -> PlanModel:
        """``options`` must be those the preview was planned with (they decide routing and
        the view's SQL); ``sample`` limits the records whose landings are shown."""
        opts = options or Options()
        plan = preview.plan
        before_ids = set(iter_ids(plan.before))
        new_ids = [i for i in iter_ids(plan.after) if i not in before_ids]
        new_columns = tuple(
            NewColumn(
                c.path, c.column.id, type_to_str(c.column.type), c.column.doc, c.reason, c.family
            )
            for c in plan.changes
        )
        engine = Engine(opts)
        shown = preview.records[: max(sample, 0)]
        quarantine: QuarantinePreview | None = None
        if opts.policy == "widen":
            widen_router = WidenRouter(plan, opts, engine.classifier)
            aside = [
                (i, q)
                for i, r in enumerate(preview.records)
                for q in widen_router.route([r], plan.batch, "quarantine")[1]
            ]
            quarantine = QuarantinePreview.of(aside, fails=opts.on_incompatible == "fail")
            samples = tuple(_widen_landings(i, r, plan, widen_router) for i, r in enumerate(shown))
        else:
            samples = tuple(_landings(i, r, plan, engine.router) for i, r in enumerate(shown))
        sql: tuple[tuple[Dialect, str], ...] = ()
        if plan.after.fields:
            sql = tuple(
                (
                    d,
                    coalesce_sql(
                        plan.after, preview.table, d, lattice=opts.lattice,
                        timestamp_unit=opts.timestamp_unit, pretty=True,
                    ),
                )
                for d in DIALECTS
            )
        return cls(
            preview.table,
            plan.batch,
            batch_id or preview_batch_id(preview.table, preview.records),
            preview.state,
            len(preview.records),
            schema_tree(plan.before),
            schema_tree(plan.after, new_ids),
            new_columns,
            samples,
            sql,
            opts.policy,
            plan.retypes,
            plan.pending,
            plan.optionals,
            quarantine,
        )


def _landings(
    index: int, record: Mapping[str, Any], plan: Plan, router: Router
) -> RecordLandings:
    found = explain_record(router, plan.after, dict(record))
    # grouped by key in the record's order (a key's columns stay in schema order), so each
    # value reads with every column it lands in
    position = {k: i for i, k in enumerate(record)}
    found.sort(key=lambda x: position.get(x.key, len(position)))
    rows = tuple(
        LandingRow(x.key, x.value, str(x.kind.shape), x.column, x.stored, x.converted)
        for x in found
    )
    landed = {x.key for x in found}
    return RecordLandings(
        index, value_text(record, 200), rows, tuple(k for k in record if k not in landed)
    )


def _widen_landings(
    index: int, record: Mapping[str, Any], plan: Plan, router: WidenRouter
) -> RecordLandings:
    """Under the widening policy a value lands in the one column named for its key, or its
    whole record is set aside."""
    text = value_text(record, 200)
    rows, aside = router.route([record], plan.batch, "quarantine")
    if aside:
        return RecordLandings(index, text, (), (), aside[0].detail)
    row = rows[0]
    primary = primary_columns(plan.after)
    landed, unwritten = [], []
    for key, value in record.items():
        col = primary.get(key)
        if value is None or col is None:
            unwritten.append(key)
            continue
        kind = router.classifier.kind(value, (key,))
        stored = row[col.name]
        converted = type(stored) is not type(value) or stored != value
        shape = "-" if kind is None else str(kind.shape)
        landed.append(LandingRow(key, value, shape, col.name, stored, converted))
    return RecordLandings(index, text, tuple(landed), tuple(unwritten))


# --- what a commit did, or why it did not --------------------------------------------------


@dataclass(frozen=True, slots=True)
class CommitRequest:
    """What an approved preview asks to commit: the injected commit function's input."""

    table: str
    batch_id: str
    approved: Plan
    expected: TableState
    records: tuple[dict[str, Any], ...]


OutcomeKind: TypeAlias = Literal[
    "committed", "skipped", "stale", "plan_changed", "malformed", "not_a_record", "error"
]


@dataclass(frozen=True, slots=True)
class CommitOutcome:
    """What approving a preview did, in plain words; errors keep their traceback."""

    kind: OutcomeKind
    title: str
    message: str
    table: str | None = None
    batch_id: str | None = None
    snapshot_id: int | None = None
    rows_written: int = 0
    columns_added: tuple[str, ...] = ()
    error_type: str | None = None
    error: str | None = None
    """The exception's own message."""
    traceback: str | None = None

    @property
    def ok(self) -> bool:
        return self.kind in ("committed", "skipped")

    @property
    def preview_again(self) -> bool:
        """The plan no longer fits the table or the data: only a new preview helps."""
        return self.kind in ("stale", "plan_changed")

    @classmethod
    def from_report(cls, report: IngestReport) -> CommitOutcome:
        added = tuple(".".join(c.path) for c in report.plan.changes)
        widened = tuple(
            f"{'.'.join(r.path)} ({'in place' if r.in_place else 'rewritten'})"
            for r in report.plan.retypes
        )
        aside = report.quarantined
        if report.skipped:
            kind: OutcomeKind = "skipped"
            title = "Already committed"
            message = (
                f"Batch {report.batch_id} was already ingested into {report.table}: "
                "nothing was written again."
            )
        elif report.snapshot_id is None:
            kind, title = "committed", "Nothing to write"
            message = f"The batch held no records: nothing was written to {report.table}."
        else:
            kind, title = "committed", "Committed"
            columns = (
                f"{len(added)} column(s) added: {', '.join(added)}."
                if added
                else "No column was added."
            )
            message = (
                f"Committed snapshot {report.snapshot_id} to {report.table}: "
                f"{report.rows_written} rows written (batch {report.batch_id}). {columns}"
            )
            if widened:
                message += f" {len(widened)} column(s) widened: {', '.join(widened)}."
        if aside and not report.skipped:
            message += (
                f" {aside} record(s) set aside in {report.quarantine_table}: see "
                f"toolkit.quarantine(catalog, {report.table!r})."
            )
        return cls(
            kind, title, message, report.table, report.batch_id, report.snapshot_id,
            report.rows_written, added,
        )

    @classmethod
    def from_exception(cls, exc: BaseException) -> CommitOutcome:
        kind, title, message, table = _explain(exc)
        return cls(
            kind, title, message, table,
            error_type=type(exc).__name__,
            error=str(exc),
            traceback="".join(traceback.format_exception(exc)),
        )


def _explain(exc: BaseException) -> tuple[OutcomeKind, str, str, str | None]:
    """(kind, title, plain-words message, table) of an exception."""
    if isinstance(exc, StalePlanError):
        return (
            "stale",
            "The table changed",
            f"The table changed since this preview: {_moved(exc.planned, exc.now)}. "
            "Nothing was applied. Preview again to plan against the table as it is now.",
            exc.table,
        )
    if isinstance(exc, PlanChangedError):
        return (
            "plan_changed",
            "The data needs another plan",
            "The data needs other schema changes than the plan you approved "
            f"(approved: {exc.approved.describe_changes() or 'no change'}; needed now: "
            f"{exc.needed.describe_changes() or 'no change'}). Nothing was applied. "
            "Preview again.",
            exc.table,
        )
    if isinstance(exc, MalformedLineError):
        where = f"Line {exc.number}" if exc.number is not None else "A line"
        return (
            "malformed",
            "Malformed input",
            f"{where} of the input is not valid JSON: {clip(exc.line.strip(), 80)!r}. "
            "Nothing was committed. Fix or remove that line, then preview again.",
            None,
        )
    if isinstance(exc, NotARecordError):
        return (
            "not_a_record",
            "Not a record",
            f"Record {exc.index + 1} of the input is not a JSON object but a "
            f"{type(exc.value).__name__} ({value_text(exc.value, 60)}). Every record must "
            'be an object such as {"key": value}. Nothing was committed.',
            None,
        )
    return "error", "The commit failed", f"{type(exc).__name__}: {exc}", None


def _moved(planned: TableState, now: TableState) -> str:
    if planned == ABSENT and now != ABSENT:
        return "another writer created it"
    if now == ABSENT:
        return "it was dropped"
    parts = []
    if planned.schema_id != now.schema_id:
        parts.append(f"its schema changed (schema id {planned.schema_id} -> {now.schema_id})")
    if planned.snapshot_id != now.snapshot_id:
        parts.append(
            f"new data was committed (snapshot {planned.snapshot_id} -> {now.snapshot_id})"
        )
    return " and ".join(parts) or "another writer committed first"
