"""The widening policy (RULES 5): one column per key, widened to a supertype in place or by
an approved rewrite; records with values the matrix marks X go to quarantine (or fail).

It reads the matrix of :mod:`toolkit.core.values.widening` and nothing else decides a type, so
the whole policy is: plan a batch from what was observed (a full observation or a Spark
summary, like the ``upsolver`` policy), then route each record, or set it aside.

>>> from toolkit.core.batch.observe import observe_struct
>>> from toolkit.core.batch.options import Options
>>> from toolkit.core.values.types import Column
>>> opts = Options(policy=WIDEN)
>>> table = Struct((Column(1, "n", "int"), Column(2, "flag", "boolean")))
>>> batch = [{"n": 7, "flag": True}, {"n": 8, "flag": 1}]
>>> plan = plan_widen(table, observe_struct(batch, opts), opts)
>>> [str(r).splitlines()[0] for r in plan.retypes]
['~ n: int -> long (id 1, in place)']
>>> rows, quarantined = route_widen(plan, batch, opts)
>>> rows
[{'n': 7, 'flag': True}]
>>> quarantined[0].field, quarantined[0].observed, quarantined[0].table_type
('flag', 'long', 'boolean')
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

from toolkit.core.batch.contracts import contracted
from toolkit.core.batch.hint_plans import as_they_came, hinted_rows
from toolkit.core.batch.observe import Classifier, observe_struct
from toolkit.core.batch.observed import Observed, ObservedField
from toolkit.core.batch.quarantine import Quarantined, Reason
from toolkit.core.batch.required import requires, set_aside_unfilled
from toolkit.core.batch.settings import Settings
from toolkit.core.evolution.batch_plan import (
    AddColumn,
    Plan,
    Retype,
    max_field_id,
    numbered_like_iceberg,
    renumbered_type,
    struct_prefix,
)
from toolkit.core.evolution.operations import MakeOptional
from toolkit.core.evolution.reasons import because
from toolkit.core.policies.base import Columns, ComparisonRun, EvolutionPolicy
from toolkit.core.values.conversions import LOSSY, Conversions
from toolkit.core.values.families import wrap_type
from toolkit.core.values.naming import TakenNames, evolved_doc
from toolkit.core.values.types import (
    ICEBERG_TYPE_OF,
    RECORD,
    Column,
    ColumnType,
    Kind,
    ListOf,
    MapOf,
    Opaque,
    Struct,
    type_to_str,
)
from toolkit.core.values.widening import (
    TEXTUAL,
    accepted,
    convert_value,
    in_place,
    matrix_name,
    primary_columns,
)
from toolkit.core.values.wording import a_shape, and_join, counted, with_article
from toolkit.errors import IncompatibleRecordError

if TYPE_CHECKING:
    from toolkit.core.batch.observe import StructObservation
    from toolkit.core.batch.observed import Seen
    from toolkit.core.batch.routing import Router

#: An observed kind's Iceberg type (a timestamp: an instant), keyed by plain strings (the
#: comprehension widens ICEBERG_TYPE_OF's Literal keys, which a dict's type would not).
_ICEBERG_OF: dict[str, str] = {k: v for k, v in ICEBERG_TYPE_OF.items()}
#: Among types accepting equally many values, a new column takes the narrowest.
_RANK = {t: i for i, t in enumerate(
    ("boolean", "date", "timestamp", "int", "long", "float", "double", "decimal", "string",
     "bytes")
)}


def _iceberg_name(matrix_type: str, like: str) -> str:
    """The Iceberg type for a matrix type, keeping a timestamp column's own flavour."""
    if matrix_type == "bytes":
        return "binary"
    if matrix_type == "timestamp":
        return like if like in ("timestamp", "timestamptz") else "timestamptz"
    return matrix_type


def _leaf_and_dim(t: ColumnType) -> tuple[ColumnType, int, list[str]]:
    """A column type's leaf, its list depth, and the full-name suffix down to the leaf."""
    dim, suffix = 0, []
    while isinstance(t, ListOf):
        t, dim = t.element, dim + 1
        suffix.append("element")
    return t, dim, suffix


def _rows_of(obs: Observed) -> int:
    rows = getattr(obs, "rows", 0)
    return rows if isinstance(rows, int) else len(rows)


@dataclass
class _Context:
    options: Settings
    last_id: int
    taken: TakenNames
    changes: list[AddColumn]
    retypes: list[Retype]
    optionals: list[MakeOptional]
    pending: list[Retype]

    def next_id(self) -> int:
        self.last_id += 1
        return self.last_id


def plan_widen(
    schema: Struct, obs: Observed, options: Settings, batch: int = 0, last_assigned: int = 0
) -> Plan:
    """Plan one batch under the widening policy (RULES 5): new keys get a column of their
    type, existing columns widen by the matrix (in place, or by a rewrite when
    ``options.allow_rewrites``; otherwise the rewrite is listed as pending), required
    columns the batch leaves null become optional."""
    last_id = max(max_field_id(schema), last_assigned)  # IDs of dropped columns stay used
    ctx = _Context(options, last_id, TakenNames(), [], [], [], [])
    ctx.taken.add_type((), schema)  # full and short names, as Iceberg indexes them (RULES 4)
    after = _plan_struct(ctx, schema, obs, (), record=True)
    plan = Plan(
        batch, schema, after, tuple(ctx.changes), tuple(ctx.retypes), tuple(ctx.optionals),
        tuple(ctx.pending),
    )
    return _rewrites_renumbered(numbered_like_iceberg(plan, last_id), last_id)


def _rewrites_renumbered(plan: Plan, last_assigned: int) -> Plan:
    """A rewritten column gets a new field ID, after those of the added columns: the
    columns are added first, then each rewrite adds its new column (as Iceberg numbers)."""
    if not plan.rewrites:
        return plan
    last = max(max_field_id(plan.after), last_assigned)
    new_ids: dict[int, int] = {}
    retypes = []
    for r in plan.retypes:
        if not r.in_place:
            last += 1
            new_ids[r.column_id] = last
            r = replace(r, new_id=last)
        retypes.append(r)
    after = renumbered_type(plan.after, lambda i: new_ids.get(i, i))
    assert isinstance(after, Struct)
    return replace(plan, after=after, retypes=tuple(retypes))


def _plan_struct(
    ctx: _Context, struct: Struct, obs: Observed, prefix: tuple[str, ...], *, record: bool
) -> Struct:
    primary = primary_columns(struct)
    rows = _rows_of(obs)
    by_id: dict[int, Column] = {}
    # in key order, not record order: two columns' new nested fields may claim colliding
    # full names (``a``.``b``.``c`` and ``a.b``.``c``), and the first claim keeps its name
    for key, fobs in sorted(obs.fields.items()):
        col = primary.get(key)
        if col is not None:
            by_id[col.id] = _evolve(ctx, col, fobs, (*prefix, col.name), record)
    fields = []
    for declared in struct.fields:
        col = by_id.get(declared.id, declared)  # (widened, or retyped by a rewrite)
        seen = obs.fields.get(col.family)
        present = 0 if seen is None else sum(seen.counts.values())
        if col.required and present < rows and primary.get(col.family) is declared:
            col = replace(col, required=False)
            if record:
                absent = rows - present
                ctx.optionals.append(MakeOptional((*prefix, col.name), col.id, because(
                    f"{absent:,} of {counted(rows, 'record')} {'has' if absent == 1 else 'have'}"
                    f" no value for `{col.name}`, so it becomes optional", "5",
                )))
        fields.append(col)
    new = sorted(k for k in obs.fields if k not in primary)
    for key in new:
        col = _new_column(ctx, key, obs.fields[key], prefix)
        if col is not None:
            fields.append(col)
            if record:
                ctx.changes.append(AddColumn(prefix, col, key, _new_reason(key, obs.fields[key])))
    if all(a is b for a, b in zip(fields, struct.fields, strict=False)) and len(fields) == len(
        struct.fields
    ):
        return struct
    return Struct(tuple(fields))


def _new_reason(key: str, fobs: ObservedField) -> str:
    shapes = sorted({k.shape for k in fobs.counts}, key=str)
    said = f"This batch brought the new key `{key}` as {and_join(a_shape(s) for s in shapes)}"
    if len(shapes) > 1:
        said += "; its column takes the type that holds the most of them"
    return because(said, "5")


def _choose_shape(counts: Mapping[Kind, int]) -> tuple[str, int] | None:
    """The (leaf type, dimension) of a new column: the one accepting most values, then the
    narrowest; None when every value is null or an empty array... of records only. An
    array mixing records and primitives fits no column type: it counts for none (its
    records are quarantined, docs/rules.md)."""
    counts = {k: n for k, n in counts.items() if k.mixed is None}
    typed = {k: n for k, n in counts.items() if k.type is not None}
    candidates: set[tuple[str, int]] = set()
    for k in typed:
        assert k.type is not None
        candidates.add((k.type, k.dim))
        for k2 in typed:
            assert k2.type is not None
            joined = accepted(k2.type, k.type) if k.type != RECORD else None
            if joined is not None and k.dim == k2.dim:
                candidates.add((joined, k.dim))
    if not candidates:
        dims = [k.dim for k in counts]
        return ("string", max(dims)) if dims else None  # RULES 1: empty arrays: of string

    def score(c: tuple[str, int]) -> tuple[int, int, int]:
        t, d = c
        n = 0
        for k, m in counts.items():
            if k.type is None:
                n += m if k.dim <= d else 0
            elif k.dim == d and (
                k.type == t if RECORD in (k.type, t) else accepted(k.type, t) == t
            ):
                n += m
        return (-n, d, _RANK.get(t, 99))

    return min(candidates, key=score)


def _new_column(
    ctx: _Context, key: str, fobs: ObservedField, prefix: tuple[str, ...]
) -> Column | None:
    shape = _choose_shape(fobs.counts)
    if shape is None:
        return None  # RULES 3.5: only nulls so far
    leaf_type, dim = shape
    # RULES 4: named before the fields nested in it, and the struct's new keys one by one
    # in key order (RULES 3.3), each with its nested fields: a key ``dot.key`` beside a
    # new list of records ``dot`` whose records hold ``key`` becomes ``dot.key_2``,
    # whichever record came first (docs/rules.md).
    name = ctx.taken.claim(key, prefix, dim, record=leaf_type == RECORD)
    col_id = ctx.next_id()
    element_ids = [ctx.next_id() for _ in range(dim)]
    leaf: str | Struct
    if leaf_type == RECORD:
        inner = struct_prefix((*prefix, name), dim)
        leaf = _plan_struct(ctx, Struct(), fobs.nested(dim), inner, record=False)
        if not leaf.fields:
            return None  # records with no typed field yet: no column (docs/rules.md)
    else:
        leaf = ICEBERG_TYPE_OF.get(leaf_type, leaf_type)  # type: ignore[call-overload]
        leaf = _iceberg_name(matrix_name(str(leaf)), str(leaf))
    doc = None if name == key else evolved_doc(key)
    return Column(col_id, name, wrap_type(leaf, dim, element_ids), doc)


def _evolve(
    ctx: _Context, col: Column, fobs: ObservedField, full: tuple[str, ...], record: bool
) -> Column:
    """An existing column after this batch: nested records evolve, the leaf widens."""
    leaf, dim, suffix = _leaf_and_dim(col.type)
    leaf_path = (*full, *suffix)
    if isinstance(leaf, Struct):
        if not any(k.type == RECORD and k.dim == dim for k in fobs.counts):
            return col
        grown = _plan_struct(ctx, leaf, fobs.nested(dim), leaf_path, record=record)
        if grown is leaf:
            return col
        return replace(col, type=_rewrap(col.type, grown))
    if isinstance(leaf, MapOf):
        return _evolve_map(ctx, col, leaf, dim, fobs, leaf_path, record)
    if isinstance(leaf, Opaque):
        return col
    assert isinstance(leaf, str)
    # A list element is never rewritten (nor is a column of a list of records): Iceberg
    # has no way to give it a new ID in place, so such values wait for a user's plan.
    inside_list = "element" in full[:-1] or bool(suffix)
    new_leaf = _widened(
        ctx, leaf, fobs.counts, dim, _Leaf(leaf_path, _leaf_id(col), col.name), inside_list,
        record,
    )
    return col if new_leaf == leaf else replace(col, type=_rewrap(col.type, new_leaf))


def _evolve_map(
    ctx: _Context, col: Column, leaf: MapOf, dim: int, fobs: ObservedField,
    leaf_path: tuple[str, ...], record: bool,
) -> Column:
    """A map column whose value type widens by the matrix (RULES 5: "element types inside
    lists and maps widen by the same matrix"): the values of every key of the JSON objects
    it receives count. JSON keys are strings, so only a map keyed by string takes objects;
    values that are lists or records are routed, not widened."""
    if leaf.key != "string" or not isinstance(leaf.value, str):
        return col
    if not any(k.type == RECORD and k.dim == dim for k in fobs.counts):
        return col
    values: Counter[Kind] = Counter()
    for vobs in fobs.nested(dim).fields.values():
        values.update(vobs.counts)
    # like a list element, a map value is never rewritten: no new ID for it in place
    new_value = _widened(
        ctx, leaf.value, values, 0, _Leaf((*leaf_path, "value"), leaf.value_id, col.name),
        True, record,
    )
    if new_value == leaf.value:
        return col
    return replace(col, type=_rewrap(col.type, replace(leaf, value=new_value)))


@dataclass(frozen=True)
class _Leaf:
    """A primitive leaf the matrix may widen: its Iceberg full name, its field ID and the
    column it belongs to (named in the reason)."""

    path: tuple[str, ...]
    id: int
    column: str


def _widened(
    ctx: _Context, leaf: str, counts: Mapping[Kind, int], dim: int, at: _Leaf,
    no_rewrite: bool, record: bool,
) -> str:
    """The type of primitive ``leaf`` (at Iceberg full name ``at.path``) after values of
    ``counts`` at dimension ``dim`` arrive; its Retype is recorded (or listed as pending
    when it needs a rewrite nobody approved, or that ``no_rewrite`` forbids)."""
    table = matrix_name(leaf)
    target = table
    for k in sorted(counts, key=lambda k: (str(k.type), k.dim)):
        if k.type is None or k.type == RECORD or k.dim != dim:
            continue
        joined = accepted(k.type, target)
        if joined is not None and accepted(k.type, table) is not None:
            target = joined
    if target == table:
        return leaf
    new_leaf = _iceberg_name(target, leaf)
    change = Retype(
        at.path, at.id, leaf, new_leaf, in_place(leaf, new_leaf),
        because(f"This batch had values of `{at.column}` that only "
                f"{with_article(new_leaf + ' column')} holds", "5"),
    )
    if not change.in_place and (not ctx.options.allow_rewrites or no_rewrite):
        if record:
            ctx.pending.append(change)
        return leaf
    if record:
        ctx.retypes.append(change)
    return new_leaf


def _leaf_id(col: Column) -> int:
    t, leaf_id = col.type, col.id
    while isinstance(t, ListOf):
        leaf_id, t = t.element_id, t.element
    return leaf_id


def _rewrap(t: ColumnType, leaf: ColumnType) -> ColumnType:
    if isinstance(t, ListOf):
        return replace(t, element=_rewrap(t.element, leaf))  # keeps element_required
    return leaf


# --- routing -----------------------------------------------------------------------------


class _Reject(Exception):
    def __init__(self, path: list[str], value: Any, observed: str, table: str) -> None:
        self.path, self.value, self.observed, self.table = path, value, observed, table


class WidenRouter:
    """Routes records into a table planned by :func:`plan_widen`: each value converted to
    its column's type, or the whole record rejected."""

    def __init__(self, plan: Plan, options: Settings, classifier: Classifier | None = None):
        self.plan = plan
        self.classifier = classifier or Classifier(options)
        self.conv: Conversions = options.conversions
        self.pending = {(r.path, r.after) for r in plan.pending}

    def route(
        self, records: Iterable[Any], batch: int | str, on_incompatible: str = "quarantine"
    ) -> tuple[list[dict[str, Any]], list[Quarantined]]:
        """The rows of the records that fit, and the records set aside (RULES 5); with
        ``on_incompatible="fail"`` the first incompatible record raises instead."""
        rows: list[dict[str, Any]] = []
        out: list[Quarantined] = []
        after = self.plan.after
        required = requires(after)
        for rec in records:
            try:
                row = self._struct(rec, after, [])
                if required:  # a field the table requires, left empty: the record waits
                    _, unfilled = set_aside_unfilled(after, [row], [rec], self.classifier,
                                                     batch, on_incompatible)
                    if unfilled:
                        out += unfilled
                        continue
                rows.append(row)
            except _Reject as r:
                field = ".".join(r.path)
                reason: Reason = "incompatible"
                hint = ""
                if (tuple(r.path), accepted(r.observed, r.table)) in self.pending or any(
                    p[0] == tuple(r.path) for p in self.pending
                ):
                    reason, hint = "rewrite-not-approved", " without a rewrite nobody approved"
                item = Quarantined(
                    rec, reason, field, r.observed, r.table, batch,
                    f"field {field!r}: value {_short(r.value)} observed as {r.observed} does "
                    f"not fit column type {r.table}{hint} (RULES 5)",
                )
                if on_incompatible == "fail":
                    raise IncompatibleRecordError(item) from None
                out.append(item)
        return rows, out

    def _struct(self, rec: Mapping[str, Any], struct: Struct, path: list[str]) -> dict[str, Any]:
        primary = primary_columns(struct)
        row: dict[str, Any] = dict.fromkeys(c.name for c in struct.fields)
        for key, value in rec.items():
            if value is None:
                continue
            col = primary.get(key)
            if col is None:  # keys with only nulls or records of no field have no column
                if self.classifier.kind(value, (*path, key)) is None or _empty_record(value):
                    continue
                where = [*path, key]
                raise _Reject(where, value, self._observed(value, where), "no column")
            row[col.name] = self._value(value, col.type, [*path, col.name])
        return row

    def _value(self, value: Any, t: ColumnType, path: list[str]) -> Any:
        if value is None:
            return None
        if isinstance(t, ListOf):
            if type(value) is not list:
                raise _Reject(path, value, self._observed(value, path), type_to_str(t))
            inner = [*path, "element"]
            return [self._value(v, t.element, inner) for v in value]
        if isinstance(t, Struct):
            if type(value) is not dict:
                raise _Reject(path, value, self._observed(value, path), type_to_str(t))
            return self._struct(value, t, path)
        if isinstance(t, MapOf):
            if type(value) is not dict or t.key != "string":
                raise _Reject(path, value, self._observed(value, path), type_to_str(t))
            inner = [*path, "value"]
            return {k: self._map_value(v, t, inner) for k, v in value.items()}
        if isinstance(t, Opaque):
            raise _Reject(path, value, self._observed(value, path), t.text)
        kind = self.classifier.kind(value, path)
        assert kind is not None
        if kind.dim or kind.type == RECORD:
            raise _Reject(path, value, str(kind.shape), t)
        assert kind.type is not None
        table = matrix_name(t)
        if accepted(kind.type, table) != table:
            raise _Reject(path, value, kind.type, t)
        return self._convert(value, kind.type, t, path)

    def _map_value(self, value: Any, t: MapOf, path: list[str]) -> Any:
        if value is None and t.value_required:
            raise _Reject(path, value, "null", type_to_str(t.value))
        return self._value(value, t.value, path)

    def _observed(self, value: Any, path: list[str]) -> str:
        kind = self.classifier.kind(value, path)
        return "null" if kind is None else str(kind.shape)

    def _convert(self, value: Any, kind: str, t: str, path: list[str]) -> Any:
        """``value`` (observed as ``kind``) in column type ``t`` by the one table of RULES 5
        conversions, or the record is rejected when no exact conversion holds it."""
        source = kind
        if kind in TEXTUAL and type(value) is str and matrix_name(t) in ("string", "bytes"):
            source = "string"  # a text keeps its own spelling (docs/rules.md)
        own = self.conv.own(value, source)  # RULES 1: ISO texts parsed, big integers as text
        out = LOSSY if own is None else convert_value(own, _ICEBERG_OF[source], t)
        if out is LOSSY:
            raise _Reject(path, value, kind, t)
        return out


def _empty_record(value: Any) -> bool:
    return type(value) is dict and all(v is None or _empty_record(v) for v in value.values())


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def route_widen(
    plan: Plan,
    records: Iterable[Any],
    options: Settings,
    batch: int | str = 0,
    classifier: Classifier | None = None,
) -> tuple[list[dict[str, Any]], list[Quarantined]]:
    """Route ``records`` under ``plan`` (see :class:`WidenRouter`)."""
    return WidenRouter(plan, options, classifier).route(records, batch, options.on_incompatible)


@dataclass(frozen=True)
class WidenPolicy(EvolutionPolicy):
    """The ``widen`` policy (RULES 5): one column per key widened by the matrix, the
    records the table cannot take set aside (or failed)."""

    name: ClassVar[str] = "widen"
    does: ClassVar[str] = "one column per key, widened by the matrix"
    brief: ClassVar[str] = "widened columns"
    rules: ClassVar[str] = "RULES 5"
    rule: ClassVar[str] = "RULES 5"
    sets_aside: ClassVar[bool] = True
    jvm_routes: ClassVar[bool] = False  # it routes by its own plan, in Python
    widens: ClassVar[bool] = True
    comparison: ClassVar[tuple[ComparisonRun, ...]] = (
        ComparisonRun(name, f"{name}, rewrites approved", {"allow_rewrites": True}),
        ComparisonRun(f"{name}-no-rewrites", f"{name}, no rewrites", {"allow_rewrites": False}),
    )

    def plan(
        self, schema: Struct, obs: Observed, options: Settings, batch: int = 0,
        last_assigned: int = 0, seen: Seen | None = None,
    ) -> Plan:
        return plan_widen(schema, obs, options, batch, last_assigned)

    def route(
        self, plan: Plan, obs: StructObservation, options: Settings, router: Router,
        batch: int | str = 0,
    ) -> tuple[Columns, int, list[Quarantined]]:
        obs, refused = contracted(plan, obs, router.classifier, batch)
        kept, aside = route_widen(plan, obs.rows, options, batch, router.classifier)
        columns: Columns = [[r[c.name] for r in kept] for c in plan.after.fields]
        return columns, len(kept), refused.settled(aside)

    def fit(
        self, plan: Plan, rows: list[dict[str, Any]], options: Settings,
        classifier: Classifier, batch: int | str = 0,
    ) -> tuple[list[dict[str, Any]], list[Quarantined]]:
        hinted = hinted_rows(rows, options)  # (docs/rules.md, Type hints)
        if not plan.held:
            kept, aside = WidenRouter(plan, options, classifier).route(hinted, batch)
            return kept, as_they_came(aside, hinted, rows)
        classifier.parsed.clear()
        obs, refused = contracted(
            plan, observe_struct(hinted, classifier), classifier, batch, fail=False)
        kept, aside = WidenRouter(plan, options, classifier).route(obs.rows, batch)
        return kept, as_they_came(refused.settled(aside), hinted, rows)


WIDEN = WidenPolicy()


__all__ = [
    "WIDEN",
    "WidenPolicy",
    "WidenRouter",
    "accepted",
    "matrix_name",
    "plan_widen",
    "primary_columns",
    "route_widen",
]
