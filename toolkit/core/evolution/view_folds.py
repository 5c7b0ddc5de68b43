"""RULES 7, issue 28: what the COALESCE view folds each family into, at every level.

The view has exactly one column per source key, named as the key, and so has every struct
inside it: nested families are folded inside their structs (``zip`` and ``zip_long``
inside ``address`` read as one ``zip``), through lists of records too. A family reads as:

1. the ``view_types`` entry of its dotted path, where given (values that do not convert
   read NULL, and the SQL comment says so);
2. else the family's own type when every sibling converts into it exactly: the widest type
   of RULES 2 (``long`` and ``double`` read as ``double``), and a *timestamp family* (a
   timestamp or date column beside long columns) as a TIMESTAMP, its longs read in the
   field's epoch unit (``long_timestamp_unit``: by their magnitude, as the engine wrote
   them into the timestamp column, or a fixed unit);
3. else the common denominator: string; a record, map or list sibling as its JSON text.

Each fold is described by a :class:`Fold` (``address: record and string fold into string
(records as JSON text)``): the SQL comments, the notebook preview and the CLI say it.

>>> s = Struct((Column(1, "address", Struct((
...         Column(2, "zip", "string"),
...         Column(3, "zip_long", "long", "upsolver_evolved_from:zip")))),
...     Column(4, "address_string", "string", "upsolver_evolved_from:address")))
>>> for f in view_folds(s):
...     print(f)
address.zip: string and long fold into string (longs as text)
address: record and string fold into string (records as JSON text)
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Final, Literal, TypeAlias

from sqlglot import exp

from toolkit.core.evolution.view_types import (
    HintLike,
    Target,
    array_of,
    column_sql_type,
    hinted_view_types,
    parse_view_type,
    sql_type,
    struct_type,
    view_paths,
)
from toolkit.core.values.conversions import LongTimestampUnit
from toolkit.core.values.lattice import UPSOLVER, Lattice
from toolkit.core.values.naming import free_name
from toolkit.core.values.types import (
    RECORD,
    Column,
    ColumnType,
    ListOf,
    MapOf,
    Opaque,
    Shape,
    Struct,
)
from toolkit.core.values.wording import and_join

__all__ = [
    "DIALECTS",
    "SPARK_VARIABLE",
    "Dialect",
    "Fold",
    "FoldedColumn",
    "Target",
    "fold_struct",
    "make_context",
    "view_folds",
]

Dialect: TypeAlias = Literal["spark", "trino", "duckdb", "athena"]
DIALECTS: tuple[Dialect, ...] = ("spark", "trino", "duckdb", "athena")

#: Spark replaces ``${name}`` in SQL text (see toolkit.core.views): a struct the view would
#: rebuild around such a name is read as stored instead
SPARK_VARIABLE: Final = "${"

#: an epoch unit longs are read in (conversions._Unit and nanoseconds)
_Unit: TypeAlias = Literal["s", "ms", "us", "ns"]

_TEMPORAL = ("timestamp", "date")

#: RULES 2: the magnitudes below which a long is read as epoch s, ms, us (else ns)
_MAGNITUDE: Final[tuple[tuple[int, _Unit], ...]] = ((10**11, "s"), (10**14, "ms"),
                                                        (10**17, "us"))




@dataclass(frozen=True, slots=True)
class Fold:
    """What one field of the view folds: its sibling columns' types, what they read as,
    and what that costs a reader ("" when nothing)."""

    path: tuple[str, ...]
    columns: tuple[str, ...]
    shapes: tuple[str, ...]
    reads_as: str
    cost: str = ""
    chosen: bool = False  # a view_types entry

    def __str__(self) -> str:
        verb = "read as" if self.chosen else "fold into"
        shapes = and_join(dict.fromkeys(self.shapes))
        tail = f" ({self.cost})" if self.cost else ""
        return f"{'.'.join(self.path)}: {shapes} {verb} {self.reads_as}{tail}"


@dataclass(frozen=True)
class _Context:
    dialect: Dialect
    lattice: Lattice
    timestamp_unit: str
    long_unit: LongTimestampUnit
    view_types: Mapping[str, Target]
    epoch_units: Mapping[str, Collection[str]] | None


@dataclass
class FoldedColumn:
    """One column of the view (or of a struct in it): its expression, its SQL type (None
    when the toolkit has no name for it), the folds it holds (its own and nested ones),
    and whether it differs from the stored column it would otherwise pass through."""

    name: str
    expr: exp.Expr
    dtype: exp.DataType | None
    folds: list[Fold] = field(default_factory=list)
    changed: bool = False


def _ident(name: str) -> exp.Identifier:
    return exp.to_identifier(name, quoted=True)




# --- conversions of one value ----------------------------------------------------------------


def _call(name: str, *args: exp.Expr) -> exp.Expr:
    return exp.Anonymous(this=name, expressions=list(args))


def _utc(e: exp.Expr, dialect: Dialect) -> exp.Expr:
    """A zone-less timestamp that holds UTC, as the instant it is (DuckDB's epoch
    functions give zone-less ones; a cast would read them in the session's zone)."""
    if dialect == "duckdb":
        return exp.AtTimeZone(this=e, zone=exp.Literal.string("UTC"))
    return e


def _from_epoch_unit(e: exp.Expr, unit: _Unit, dialect: Dialect) -> exp.Expr:
    """A long of epoch ``unit`` as a timestamp (an instant)."""
    n = exp.Literal.number
    if dialect in ("trino", "athena"):
        if unit == "ns":
            return _call("FROM_UNIXTIME_NANOS", e)
        if unit == "s":
            return _call("FROM_UNIXTIME", e)
        scale = exp.UnixToTime.MILLIS if unit == "ms" else exp.UnixToTime.MICROS
        return exp.UnixToTime(this=e, scale=scale)
    if unit == "ns":  # Spark and DuckDB keep microseconds: whole ones
        return _from_epoch_unit(exp.IntDiv(this=e, expression=n(1000)), "us", dialect)
    if dialect == "spark":
        fn = {"s": "TIMESTAMP_SECONDS", "ms": "TIMESTAMP_MILLIS", "us": "TIMESTAMP_MICROS"}
        return _call(fn[unit], e)
    if unit == "s":
        return _call("TO_TIMESTAMP", e)  # DuckDB: already an instant
    fn = {"ms": "EPOCH_MS", "us": "MAKE_TIMESTAMP"}
    return _utc(_call(fn[unit], e), dialect)


def _from_epoch(e: exp.Expr, unit: LongTimestampUnit, dialect: Dialect) -> exp.Expr:
    """RULES 2: a long read as a timestamp, in a fixed unit or by its magnitude (the way
    the engine wrote it into the family's timestamp column)."""
    if unit != "auto":
        return _from_epoch_unit(e, unit, dialect)
    case = exp.case()
    for bound, u in _MAGNITUDE:
        # no ABS: it overflows on the smallest long
        inside = exp.and_(exp.GT(this=e.copy(), expression=exp.Literal.number(-bound)),
                          exp.LT(this=e.copy(), expression=exp.Literal.number(bound)))
        case = case.when(inside, _from_epoch_unit(e.copy(), u, dialect))
    return case.else_(_from_epoch_unit(e.copy(), "ns", dialect))


def _date_as_timestamp(e: exp.Expr, dialect: Dialect) -> exp.Expr:
    """A date as the instant of its UTC midnight (RULES 2), whatever the session's zone."""
    if dialect == "spark":
        days = _call("UNIX_DATE", e)
        return _call("TIMESTAMP_SECONDS", exp.Mul(this=days, expression=exp.Literal.number(86400)))
    if dialect == "duckdb":
        return _utc(exp.cast(e, "timestamp"), dialect)
    return _call("WITH_TIMEZONE", exp.cast(e, "timestamp"), exp.Literal.string("UTC"))


def _epoch(col: exp.Expr, unit: str, dialect: Dialect) -> exp.Expr:
    """A timestamp as the epoch long the engine writes (RULES 2), not Spark's CAST (seconds).
    Trino and Athena have no UNIX_MILLIS: their form goes through fractional epoch seconds."""
    if dialect in ("trino", "athena") and unit != "s":
        scale = exp.Literal.number(1000 if unit == "ms" else 1_000_000)
        return exp.cast(exp.Mul(this=exp.TimeToUnix(this=col), expression=scale), "bigint")
    if unit == "ms":
        return exp.UnixMillis(this=col)
    if unit == "us":
        return exp.UnixMicros(this=col)
    return exp.cast(exp.TimeToUnix(this=col), "bigint")


def _json_text(e: exp.Expr, dialect: Dialect) -> exp.Expr:
    """A record, map or list as its JSON text (``to_json`` in Spark and DuckDB,
    ``json_format(CAST(... AS JSON))`` in Trino and Athena). Spark keeps null fields, as
    the others do (its ``to_json`` leaves them out by default)."""
    if dialect == "spark":
        keep = exp.VarMap(keys=exp.Array(expressions=[exp.Literal.string("ignoreNullFields")]),
                          values=exp.Array(expressions=[exp.Literal.string("false")]))
        return exp.JSONFormat(this=e, options=keep)
    return exp.JSONFormat(this=e)


def _leaf_converter(
    source: str, target: Target, ctx: _Context
) -> tuple[Callable[[exp.Expr], exp.Expr] | None, bool]:
    """How one leaf value of type ``source`` becomes ``target``'s leaf type: a function
    (None: a plain CAST does it), and whether every value converts exactly."""
    d = ctx.dialect
    if source == target.type:
        return (lambda e: e), True
    if source in _TEMPORAL and target.type in ("long", "double"):
        def epoch(e: exp.Expr) -> exp.Expr:
            ts = _date_as_timestamp(e, d) if source == "date" else e
            out = _epoch(ts, ctx.timestamp_unit, d)
            return exp.cast(out, "double") if target.type == "double" else out
        return epoch, True
    if target.type == "timestamp" and source == "long":
        return (lambda e: _from_epoch(e, target.unit, d)), True
    if target.type == "timestamp" and source == "date":
        return (lambda e: _date_as_timestamp(e, d)), True
    return None, ctx.lattice.leq(source, target.type)


def _transform(e: exp.Expr, dim: int, fn: Callable[[exp.Expr], exp.Expr], tag: str) -> exp.Expr:
    """``fn`` applied to every leaf of a list of dimension ``dim`` (TRANSFORM with lambdas
    named apart from any column: the lambda's variable shadows a column of its name)."""
    if dim == 0:
        return fn(e)
    var = exp.to_identifier(f"_{tag}{dim}")
    body = _transform(exp.column(var), dim - 1, fn, tag)
    return exp.Transform(this=e, expression=exp.Lambda(this=body, expressions=[var]))


# --- folding ----------------------------------------------------------------------------------


@dataclass
class _Value:
    column: Column
    expr: exp.Expr
    dtype: exp.DataType | None
    folds: list[Fold]
    changed: bool
    depth: int
    #: a record column's fields as the view reads them (read from ``ref`` at dimension 0,
    #: else from the innermost lambda variable of ``tag``)
    items: list[FoldedColumn] | None = None
    ref: exp.Expr | None = None
    tag: str = ""


def _field(parent: exp.Expr, name: str) -> exp.Expr:
    # parenthesised: ``"t"."zip"`` would read column zip of a table t (DuckDB)
    return exp.Dot(this=exp.Paren(this=parent.copy()), expression=_ident(name))


def _names(t: ColumnType) -> list[str]:
    if isinstance(t, ListOf):
        return _names(t.element)
    if isinstance(t, Struct):
        return [n for c in t.fields for n in (c.name, *_names(c.type))]
    return []


def _build_struct(items: list[FoldedColumn], ctx: _Context) -> exp.Expr | None:
    """A struct of ``items`` named as they are (None where a dialect cannot say it: Trino
    names a row's fields by a cast only, which needs every field's type)."""
    if ctx.dialect in ("trino", "athena"):
        types = [i.dtype for i in items]
        if any(t is None for t in types):
            return None
        row = struct_type([i.name for i in items], types)  # type: ignore[arg-type]
        return exp.cast(exp.Struct(expressions=[i.expr.copy() for i in items]), row)
    return exp.Struct(expressions=[exp.PropertyEQ(this=_ident(i.name), expression=i.expr.copy())
                                   for i in items])


def _rebuilt(ref: exp.Expr, dim: int, built: exp.Expr, tag: str) -> exp.Expr:
    """``built`` (read from the innermost element of ``ref``) in place of each record of
    ``ref``, a list of dimension ``dim``; a null record stays null, not a record of nulls."""

    def rebuild(e: exp.Expr) -> exp.Expr:
        return exp.case().when(exp.Is(this=e.copy(), expression=exp.Null()), exp.Null()).else_(
            built.copy())

    # in a list, the lambda of the innermost level is the one the fields were read from
    return rebuild(ref) if dim == 0 else _transform(ref, dim, rebuild, tag)


def _value(col: Column, ref: exp.Expr, path: tuple[str, ...], ctx: _Context, depth: int) -> _Value:
    """A stored column as the view reads it: a struct (or list of structs) with nested
    families rebuilt folded; anything else as stored."""
    dtype = column_sql_type(col.type)
    leaf = col.leaf
    if not isinstance(leaf, Struct):
        return _Value(col, ref, dtype, [], False, depth)
    dim = col.shape.dim
    tag = f"r{depth}_"
    base = ref if dim == 0 else exp.column(exp.to_identifier(f"_{tag}1"))
    items, changed = fold_struct(leaf, lambda n: _field(base, n), path, ctx, depth + 1)
    folds = [f for i in items for f in i.folds]
    names = [i.name for i in items]
    if ctx.dialect == "spark" and any(SPARK_VARIABLE in n for n in [*_names(col.type), *names]):
        # names Spark would substitute (SPARK_VARIABLE): the struct is read as stored
        return _Value(col, ref, dtype, [], False, depth)
    if not changed:
        return _Value(col, ref, dtype, folds, False, depth, items, ref, tag)
    built = _build_struct(items, ctx)
    if built is None:
        return _Value(col, ref, dtype, [], False, depth)
    types = [i.dtype for i in items]
    row = None if any(t is None for t in types) else struct_type(names, types)  # type: ignore[arg-type]
    new_type = None if row is None else array_of(row, dim)
    return _Value(col, _rebuilt(ref, dim, built, tag), new_type, folds, True, depth, items,
                  ref, tag)


def _reshaped(small: _Value, large: _Value, ctx: _Context) -> exp.Expr | None:
    """The records of ``small`` as those of ``large``, a record column of a larger
    dimension (RULES 3.4: it starts with the smaller ones' fields): its fields, null where
    ``small`` has none. None when they do not fit (a field only ``small`` has, or of
    another type)."""
    if small.items is None or large.items is None or small.ref is None:
        return None
    mine = {i.name: i for i in small.items}
    if set(mine) - {i.name for i in large.items}:
        return None
    fields: list[FoldedColumn] = []
    for i in large.items:
        own = mine.get(i.name)
        if i.dtype is None or (own is not None and own.dtype != i.dtype):
            return None
        fields.append(own or FoldedColumn(i.name, exp.cast(exp.Null(), i.dtype), i.dtype))
    built = _build_struct(fields, ctx)
    if built is None:
        return None
    return _rebuilt(small.ref, small.column.shape.dim, built, small.tag)


def _wrapped(e: exp.Expr, source: exp.Expr, times: int) -> exp.Expr:
    """RULES 7: ``e`` (the value of ``source``) wrapped in ``times`` arrays, as scalars
    feeding an array are; but a null stays null, not an array holding a null."""
    for _ in range(times):
        e = exp.Array(expressions=[e])
    return exp.case().when(exp.Is(this=source.copy(), expression=exp.Null()), exp.Null()).else_(e)


def _record_family(name: str, path: tuple[str, ...], values: list[_Value],
                   ctx: _Context) -> FoldedColumn | None:
    """A family of record columns of different dimensions as a list of records of the
    largest one (every smaller record converts into it exactly: wrapped, with null for the
    fields it lacks), or None when a smaller one does not fit its struct."""
    if any(v.column.shape.type != RECORD for v in values):
        return None
    dims = [v.column.shape.dim for v in values]
    if len(set(dims)) != len(dims):
        return None
    ordered = sorted(values, key=lambda v: -v.column.shape.dim)  # RULES 7: the largest first
    large = ordered[0]
    parts = [large.expr]
    for v in ordered[1:]:
        fit = _reshaped(v, large, ctx)
        if fit is None:
            return None
        parts.append(_wrapped(fit, v.expr if v.ref is None else v.ref,
                              large.column.shape.dim - v.column.shape.dim))
    shapes = tuple(str(v.column.shape) for v in values)
    fold = Fold(path, tuple(v.column.name for v in values), shapes, str(large.column.shape),
                "records as one-element lists")
    nested = list(dict.fromkeys(f for v in values for f in v.folds))
    return FoldedColumn(name, exp.Coalesce(this=parts[0], expressions=parts[1:]), large.dtype,
                        [*nested, fold], True)


def _order_key(ctx: _Context) -> Callable[[_Value], tuple[int, int, bool, str]]:
    def key(v: _Value) -> tuple[int, int, bool, str]:
        s = v.column.shape
        # RULES 7: from the most general column (populated for all later values) to the
        # original one
        return (-s.dim, len(ctx.lattice.up(s.type or "")), v.column.evolved_from is None,
                v.column.name)
    return key


def _target(values: list[_Value], ctx: _Context) -> Target:
    shapes = [v.column.shape for v in values]
    if any(s.type in (RECORD, None) for s in shapes):
        return Target("string")  # the common denominator of records and anything else
    types = {s.type for s in shapes}
    dim = max(s.dim for s in shapes)
    if types & set(_TEMPORAL) and "long" in types and types <= {"long", *_TEMPORAL}:
        return Target("timestamp", dim, ctx.long_unit)  # a timestamp family
    return Target(ctx.lattice.widest_of(types), dim)  # type: ignore[arg-type]


def _convert(v: _Value, target: Target, ctx: _Context) -> tuple[exp.Expr, str]:
    """A member's value as ``target``, and the cost of it in words ("" when none)."""
    s = v.column.shape
    e = v.expr
    words = str(Shape(s.type, 0)) if s.type else "value"
    tag = f"e{v.depth}_"
    if target.type == "string" and target.dim == 0 and (s.dim or s.type in (RECORD, None)):
        if s.type is None and not s.dim and not isinstance(v.column.leaf, MapOf):
            return exp.cast(e, "text"), f"{words}s as text"
        what = "records" if s.type == RECORD and not s.dim else "lists" if s.dim else "maps"
        return _json_text(e, ctx.dialect), f"{what} as JSON text"
    if s.type in (RECORD, None) or s.dim > target.dim:
        return exp.Null(), f"{str(s)} values read NULL"
    assert s.type is not None
    fn, exact = _leaf_converter(s.type, target, ctx)
    cost = ""
    if fn is None:
        leaf_target = Target(target.type, s.dim)
        cast = exp.cast if exact else (lambda x, t: exp.TryCast(this=x, to=t))
        e = cast(e, sql_type(leaf_target))
        if not exact:
            cost = f"{words}s that do not read as {target.type} are NULL"
        elif target.type == "string":
            cost = f"{words}s as text"
        elif s.type == "boolean":
            cost = "booleans as 1 and 0"
    elif s.type != target.type:
        e = _transform(e, s.dim, fn, tag)
        if target.type == "timestamp" and s.type == "long":
            cost = ("longs read as epoch s, ms, us or ns by their magnitude"
                    if target.unit == "auto" else f"longs read as epoch {target.unit}")
        elif s.type in _TEMPORAL and target.type in ("long", "double"):
            cost = f"{words}s as epoch {ctx.timestamp_unit}"
    if target.dim > s.dim:
        e = _wrapped(e, v.expr, target.dim - s.dim)
        cost = ", ".join(x for x in (cost, "single values as one-element lists") if x)
    return e, cost


def _shape_words(col: Column) -> str:
    """A column's type as a fold names it: ``long``, ``record[]``, ``map``, ``uuid``."""
    shape = col.shape
    if shape.type is not None:
        return str(shape)
    leaf = col.leaf
    word = "map" if isinstance(leaf, MapOf) else leaf.text if isinstance(leaf, Opaque) else "value"
    return word + "[]" * shape.dim


def _fold_family(name: str, path: tuple[str, ...], values: list[_Value],
                 ctx: _Context) -> FoldedColumn:
    nested = [f for v in values for f in v.folds]
    chosen = ctx.view_types.get(".".join(path))
    if chosen is None and len(values) == 1:
        v = values[0]
        return FoldedColumn(name, v.expr, v.dtype, nested, v.changed or v.column.name != name)
    records = None if chosen is not None else _record_family(name, path, values, ctx)
    if records is not None:
        return records
    target = chosen if chosen is not None else _target(values, ctx)
    key = _order_key(ctx)
    types = {v.column.shape.type for v in values}
    if target.type == "timestamp" or (
        target.type in ("long", "double") and "long" in types and types & set(_TEMPORAL)
    ):
        # the instants first: a timestamp column holds every long of the family as the
        # instant its magnitude gives (RULES 3.1), read in one unit here
        rank = {"timestamp": 0, "date": 1}
        ordered = sorted(values, key=lambda v: (rank.get(v.column.shape.type or "", 2), key(v)))
    elif chosen is not None:  # the columns of the chosen type, then those that convert
        def fit(v: _Value) -> int:
            t = v.column.shape.type or ""
            return 0 if t == target.type else 1 if ctx.lattice.leq(t, target.type) else 2
        ordered = sorted(values, key=lambda v: (fit(v), key(v)))
    else:
        ordered = sorted(values, key=key)
    parts: list[exp.Expr] = []
    costs: list[str] = []
    for v in ordered:
        part, cost = _convert(v, target, ctx)
        parts.append(part)
        if cost and cost not in costs:
            costs.append(cost)
    dims = {v.column.shape.dim for v in values if v.column.shape.type == RECORD}
    if any(v.column.shape.type not in (RECORD, None) and v.column.shape.dim in dims - {0}
           for v in values):
        # a list mixing records and values is stored as two lists (docs/rules.md)
        costs.append("a list mixing records and values reads its records only")
    if "long" in types and ctx.epoch_units is not None and len(path) == 1:
        seen = sorted(ctx.epoch_units.get(path[0], ()), key=_UNIT_ORDER.index)
        if seen:
            costs.append(f"whole numbers seen as epoch {', '.join(seen)}")
    value = parts[0] if len(parts) == 1 else exp.Coalesce(this=parts[0], expressions=parts[1:])
    fold = Fold(path, tuple(v.column.name for v in values),
                tuple(_shape_words(v.column) for v in values),
                str(target), "; ".join(costs), chosen is not None)
    return FoldedColumn(name, value, sql_type(target), [*nested, fold], True)


#: epoch units from the coarsest
_UNIT_ORDER = ("s", "ms", "us", "ns")


def fold_struct(
    struct: Struct,
    ref: Callable[[str], exp.Expr],
    path: tuple[str, ...],
    ctx: _Context,
    depth: int = 0,
) -> tuple[list[FoldedColumn], bool]:
    """One :class:`FoldedColumn` per family of ``struct`` (its columns read by ``ref``),
    and whether any differs from the stored column."""
    groups: dict[str, list[Column]] = {}
    for col in struct.fields:
        groups.setdefault(col.family, []).append(col)
    out: list[FoldedColumn] = []
    taken: set[str] = set()
    changed = False
    for key, members in groups.items():
        # RULES 4 for view columns too: keys that differ only by case (Spark refuses a view
        # whose columns collide that way) and the empty key (no engine takes "") are
        # numbered, in schema order, as their table columns are
        name = free_name(key, taken)
        taken.add(name.lower())
        values = [_value(c, ref(c.name), (*path, key), ctx, depth) for c in members]
        item = _fold_family(name, (*path, key), values, ctx)
        changed |= item.changed
        out.append(item)
    return out, changed


def make_context(
    dialect: Dialect = "spark",
    lattice: Lattice = UPSOLVER,
    timestamp_unit: str = "ms",
    long_timestamp_unit: LongTimestampUnit = "auto",
    view_types: Mapping[str, str | Target] | None = None,
    epoch_units: Mapping[str, Collection[str]] | None = None,
) -> _Context:
    """The settings of one rendering (``view_types`` checked: a bad one is a
    :class:`~toolkit.errors.ViewTypeError` naming the field)."""
    types: dict[str, Target] = {}
    for p, t in (view_types or {}).items():
        target = t if isinstance(t, Target) else parse_view_type(p, t)
        if isinstance(t, str) and "[" not in t:  # no unit given: the option's
            target = replace(target, unit=long_timestamp_unit)
        types[p] = target
    for key, units in (epoch_units or {}).items():
        unknown = set(units) - set(_UNIT_ORDER)
        if unknown:
            raise ValueError(f"unknown epoch units {sorted(unknown)} for {key!r}; "
                             f"choose among {', '.join(_UNIT_ORDER)}")
    return _Context(dialect, lattice, timestamp_unit, long_timestamp_unit, types, epoch_units)


def view_folds(
    schema: Struct,
    *,
    lattice: Lattice = UPSOLVER,
    timestamp_unit: str = "ms",
    long_timestamp_unit: LongTimestampUnit = "auto",
    view_types: Mapping[str, str | Target] | None = None,
    hints: Iterable[HintLike] = (),
) -> tuple[Fold, ...]:
    """Every fold of the view over ``schema``, nested ones first: what the preview says
    (a field hinted by ``hints``, the options' type hints, reads as its hint's type)."""
    merged: dict[str, str | Target] = {
        **hinted_view_types(None, hints), **(view_types or {})}
    paths = view_paths(schema)
    view_types = {p: t for p, t in merged.items() if p in paths}
    ctx = make_context("duckdb", lattice, timestamp_unit, long_timestamp_unit, view_types)
    items, _ = fold_struct(schema, lambda n: exp.column(_ident(n)), (), ctx)
    return tuple(f for i in items for f in i.folds)
