"""RULES 7: COALESCE views that fold each family of columns back into one column.

SQL is one sqlglot expression tree rendered per dialect; every identifier is quoted, so a
field name that came from data can never end a statement or inject another.

>>> s = Struct((Column(1, "my_field", "long"),
...             Column(2, "my_field_string", "string", "upsolver_evolved_from:my_field")))
>>> print(coalesce_select(s, "db.events").sql("trino"))
SELECT COALESCE("my_field_string", CAST("my_field" AS VARCHAR)) AS "my_field" FROM db.events

Epoch families (a timestamp or date column beside long columns, docs/rules.md *Timestamp
formats and epoch units*) read the timestamp column first, converted explicitly to epoch
``timestamp_unit``: it holds every long the family received as the instant its own
magnitude gives (RULES 2), so units are never mixed in the folded column. A long column
whose whole numbers were seen in another unit, or in several (``epoch_units``, from a
profile), stays out of the fold, as its own column:

>>> e = Struct((Column(1, "ts", "timestamp"),
...             Column(2, "ts_long", "long", "upsolver_evolved_from:ts")))
>>> print(coalesce_select(e, "t", epoch_units={"ts": {"s", "ms"}}).sql("duckdb"))
SELECT EPOCH_MS("ts") AS "ts" /* ts: epoch ms of "ts"; whole numbers arrived as epoch s, ms:
"ts_long" is not folded in */, "ts_long" /* raw whole numbers (epoch s, ms), not folded
into ts */ FROM t
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Literal, TypeAlias

from sqlglot import exp

from toolkit.core.batch.profile import Profile
from toolkit.core.values.conversions import EpochUnit
from toolkit.core.values.lattice import UPSOLVER, Lattice
from toolkit.core.values.naming import free_name
from toolkit.core.values.types import RECORD, Column, Primitive, Shape, Struct

Dialect: TypeAlias = Literal["spark", "trino", "duckdb", "athena"]
DIALECTS: tuple[Dialect, ...] = ("spark", "trino", "duckdb", "athena")

_SQL_TYPE: dict[str, str] = {
    "boolean": "boolean",
    "long": "bigint",
    "double": "double",
    "date": "date",
    "timestamp": "timestamptz",
    "string": "text",
}


def _ident(name: str) -> exp.Identifier:
    return exp.to_identifier(name, quoted=True)


def _sql_type(shape: Shape) -> exp.DataType:
    assert shape.type is not None
    t = exp.DataType.build(_SQL_TYPE[shape.type])
    for _ in range(shape.dim):
        t = exp.DataType(this=exp.DataType.Type.ARRAY, expressions=[t], nested=True)
    return t


def _epoch(col: exp.Expression, unit: EpochUnit, dialect: Dialect) -> exp.Expression:
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


def _as(col: Column, target: Shape, unit: EpochUnit, dialect: Dialect) -> exp.Expression:
    """``col`` converted to the family's common denominator: leaf cast, then wrapping."""
    shape = col.shape
    assert shape.type is not None and target.type is not None
    e: exp.Expression = exp.column(_ident(col.name))
    if shape.type != target.type:
        if shape.type in ("timestamp", "date") and target.type in ("long", "double"):
            if shape.dim:  # arrays of temporal values into numbers: no portable form
                return exp.Null()
            source = e
            if shape.type == "date":
                source = exp.cast(e, _sql_type(Shape("timestamp", 0)))
            e = _epoch(source, unit, dialect)
            if target.type == "double":
                e = exp.cast(e, "double")
        else:
            e = exp.cast(e, _sql_type(Shape(target.type, shape.dim)))
    if target.dim > shape.dim:  # RULES 7: scalars feeding arrays are wrapped...
        wrapped = e
        for _ in range(target.dim - shape.dim):
            wrapped = exp.Array(expressions=[wrapped])
        # ...but a null stays null, not an array holding a null
        source = exp.column(_ident(col.name))
        e = exp.case().when(exp.Is(this=source, expression=exp.Null()), exp.Null()).else_(wrapped)
    return e


#: column types whose values are instants (an epoch family has one beside a long column)
_TEMPORAL = ("timestamp", "date")


def _comment(text: str) -> str:
    """A comment's text that cannot end or nest a comment (names come from data; Spark
    nests ``/* */`` comments)."""
    text = text.replace("*/", "* /").replace("/*", "/ *")
    return " " + text.replace(SPARK_VARIABLE, "$ {") + " "  # nor a Spark variable (below)


def _quoted(col: Column) -> str:
    return '"' + col.name + '"'


def family_expression(
    key: str,
    members: list[Column],
    lattice: Lattice = UPSOLVER,
    unit: EpochUnit = "ms",
    dialect: Dialect = "spark",
    epoch_units: Collection[str] | None = None,
) -> list[exp.Expr]:
    """The select items of one family: one ``COALESCE(...) AS key`` when it has several
    primitive columns. A family with records, and opaque columns, pass through as they are:
    records of different dimensions have different structs, no common denominator.

    An *epoch family* (a timestamp or date column and a long column, folded into a number)
    reads its temporal columns first, as epoch ``unit``; ``epoch_units`` are the units its
    whole numbers were seen in (a profile's report; None: unknown). A long column is folded
    after them unless units other than ``unit`` were seen: then it stays its own column,
    with a comment in the SQL (docs/rules.md, *Timestamp formats and epoch units*)."""
    primitive = [c for c in members if c.shape.type not in (None, RECORD)]
    records = [c for c in members if c.shape.type == RECORD]
    others = [c for c in members if c.shape.type is None]
    items: list[exp.Expr] = []
    if records:
        return [exp.column(_ident(c.name)) for c in members]
    if len(primitive) == 1 and primitive[0].name == key:
        items.append(exp.column(_ident(key)))
    elif primitive:
        types: list[Primitive] = [c.shape.type for c in primitive]  # type: ignore[misc]
        widest: Primitive = lattice.widest_of(types)
        target = Shape(widest, max(c.shape.dim for c in primitive))
        # RULES 7: from the most general column (populated for all later values) to the
        # original one.
        ordered = sorted(
            primitive,
            key=lambda c: (
                -c.shape.dim,
                len(lattice.up(c.shape.type)),  # type: ignore[arg-type]
                c.evolved_from is None,
                c.name,
            ),
        )
        unknown = set(epoch_units or ()) - set(_UNIT_ORDER)
        if unknown:
            raise ValueError(f"unknown epoch units {sorted(unknown)} for {key!r}; "
                             f"choose among {', '.join(_UNIT_ORDER)}")
        kept: list[Column] = []
        seen = ", ".join(sorted(epoch_units or (), key=_UNIT_ORDER.index))
        temporal = [c for c in ordered if c.shape.type in _TEMPORAL]
        epoch = bool(temporal) and widest in ("long", "double") and any(
            c.shape.type == "long" for c in ordered
        )
        if epoch:
            # the temporal columns first: each long is there as the instant its magnitude
            # gives (RULES 2), converted to ``unit`` explicitly below
            ordered = temporal + [c for c in ordered if c.shape.type not in _TEMPORAL]
            other_units = sorted(set(epoch_units or ()) - {unit}, key=_UNIT_ORDER.index)
            if other_units:
                kept = [c for c in ordered if c.shape.type == "long"]
                ordered = [c for c in ordered if c.shape.type != "long"]
        parts = [_as(c, target, unit, dialect) for c in ordered]
        value = parts[0] if len(parts) == 1 else exp.Coalesce(this=parts[0], expressions=parts[1:])
        item = exp.alias_(value, _ident(key))
        if epoch:
            source = ", ".join(_quoted(c) for c in temporal)
            note = f"{key}: epoch {unit} of {source}"
            longs = ", ".join(_quoted(c) for c in ordered if c.shape.type == "long")
            if kept:
                names = ", ".join(_quoted(c) for c in kept)
                note += f"; whole numbers arrived as epoch {seen}: {names} is not folded in"
            elif epoch_units is None:
                note += f", then {longs} as stored (the units of its whole numbers unchecked)"
            else:
                note += f", then {longs} (whole numbers seen in epoch {unit} only)"
            item.add_comments([_comment(note)])
        items.append(item)
        for c in kept:
            column = exp.column(_ident(c.name))
            column.add_comments(
                [_comment(f"raw whole numbers (epoch {seen}), not folded into {key}")]
            )
            items.append(column)
    items += [exp.column(_ident(c.name)) for c in others]
    return items


#: epoch units from the coarsest
_UNIT_ORDER = ("s", "ms", "us", "ns")


def coalesce_select(
    schema: Struct,
    table: str,
    *,
    lattice: Lattice = UPSOLVER,
    timestamp_unit: EpochUnit = "ms",
    dialect: Dialect = "spark",
    epoch_units: Mapping[str, Collection[str]] | None = None,
) -> exp.Select:
    """The SELECT of the COALESCE view over ``table`` (a name such as ``db.events``).

    ``epoch_units``: per top-level field, the epoch units its whole numbers were seen in
    (:func:`epoch_units_of` a profile); a family's long column is folded only when none
    other than ``timestamp_unit`` was seen (see :func:`family_expression`)."""
    groups: dict[str, list[Column]] = {}
    for col in schema.fields:
        groups.setdefault(col.family, []).append(col)
    items: list[exp.Expr] = []
    taken: set[str] = set()
    for key, members in groups.items():
        # RULES 4 for view columns too: keys that differ only by case (Spark refuses a view
        # whose columns collide that way) and the empty key (no engine takes "") are
        # numbered, in schema order, as their table columns are
        name = free_name(key, taken)
        units = None if epoch_units is None else epoch_units.get(key, ())
        family = family_expression(name, members, lattice, timestamp_unit, dialect, units)
        taken |= {e.alias_or_name.lower() for e in family}
        items += family
    return exp.select(*items).from_(exp.to_table(table, dialect=dialect))


def coalesce_sql(
    schema: Struct,
    table: str,
    dialect: Dialect = "spark",
    *,
    view: str | None = None,
    lattice: Lattice = UPSOLVER,
    timestamp_unit: EpochUnit = "ms",
    pretty: bool = False,
    epoch_units: Mapping[str, Collection[str]] | None = None,
) -> str:
    """The view's SQL for one dialect; with ``view``, a ``CREATE OR REPLACE VIEW``."""
    if dialect not in DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r}; choose one of {', '.join(DIALECTS)}")
    select = coalesce_select(
        schema, table, lattice=lattice, timestamp_unit=timestamp_unit, dialect=dialect,
        epoch_units=epoch_units,
    )
    names = [e.alias_or_name for e in select.expressions]
    substituted = dialect == "spark" and any(SPARK_VARIABLE in n for n in names)
    if substituted:
        select = _without_spark_variables(select, view is not None)
    if view is None:
        return select.sql(dialect=dialect, pretty=pretty)
    target: exp.Expr = exp.to_table(view, dialect=dialect)
    if substituted:
        # the view's column names, given apart from its query: a stored view keeps only the
        # query, whose aliases are stand-ins here, and reads its names from its schema
        target = exp.Schema(this=target, expressions=[_ident(n) for n in names])
    create = exp.Create(this=target, kind="VIEW", replace=True, expression=select)
    if substituted:
        create.add_comments([SUBSTITUTION_NOTE])
    return create.sql(dialect=dialect, pretty=pretty)


#: Spark replaces ``${name}`` in SQL text before parsing it (``${env:HOME}`` by the
#: driver's environment variable, ``${spark.app.name}`` by a setting, an unknown name by
#: nothing) while ``spark.sql.variable.substitute`` is on, as it is by default; and again
#: each time a session parses a stored view's query to read it. A name from data holding
#: it reaches no Spark query as text: a column is read by ``IDENTIFIER('`$' || '{...}`')``
#: (the name built by Spark from pieces none of which holds ``${``), a view's columns are
#: named in its column list (not stored with its query), and the SQL of a bare SELECT,
#: whose aliases must be names, says to run it with substitution off.
SPARK_VARIABLE = "${"

#: said in Spark SQL whose names hold ``${`` (a comment cannot hold it either)
SUBSTITUTION_NOTE = (
    " names here hold '$' then '{', which Spark replaces as a variable: run this with "
    "SET spark.sql.variable.substitute=false ")


def _identifier_call(name: str) -> exp.Expr:
    """Spark's ``IDENTIFIER(...)`` of a column ``name``, its text made of string pieces
    split after each ``$`` of a ``${``."""
    text = "`" + name.replace("`", "``") + "`"
    first, *rest = text.split(SPARK_VARIABLE)
    pieces = [first + "$", *("{" + p + "$" for p in rest[:-1]), "{" + rest[-1]]
    joined: exp.Expr = exp.Literal.string(pieces[0])
    for piece in pieces[1:]:
        joined = exp.DPipe(this=joined, expression=exp.Literal.string(piece), safe=True)
    return exp.Anonymous(this="IDENTIFIER", expressions=[joined])


def _without_spark_variables(select: exp.Select, in_view: bool) -> exp.Select:
    """``select`` with no ``${`` left in its text (see :data:`SPARK_VARIABLE`): columns read
    by :func:`_identifier_call`; in a view, aliases holding it replaced by free stand-ins
    (the view's column list names them, which needs substitution off to create); else a
    note to run it with substitution off."""

    def column(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column) and SPARK_VARIABLE in node.name:
            return _identifier_call(node.name)
        return node

    out = select.transform(column)
    assert isinstance(out, exp.Select)
    if not in_view:  # the CREATE statement carries the note
        out.add_comments([SUBSTITUTION_NOTE])
        return out
    taken = {e.alias_or_name.lower() for e in out.expressions}
    for e in out.expressions:
        if isinstance(e, exp.Alias) and SPARK_VARIABLE in e.alias:
            stand_in = free_name("_c", taken)
            taken.add(stand_in.lower())
            e.set("alias", _ident(stand_in))
    return out


def epoch_units_of(profile: Profile) -> dict[str, frozenset[str]]:
    """Per top-level field of a profile, the epoch units its whole numbers were seen in
    (:mod:`toolkit.core.values.timestamps`): the ``epoch_units`` of :func:`coalesce_select`.

    >>> from toolkit.core.batch.profile import profile
    >>> epoch_units_of(profile([{"ts": "2024-06-01T08:00:00Z"}, {"ts": 1717229009}]))
    {'ts': frozenset({'s'})}
    """
    out = {}
    for path, stats in profile.fields.items():
        # the raw counts, not the report's: a field whose family has a timestamp column is
        # a time field, whatever the profile's batches showed of it
        labels = stats.temporal or {}
        units = frozenset(k.removeprefix("epoch_") for k in labels if k.startswith("epoch_"))
        if len(path) == 1 and units:
            out[path[0]] = units
    return out
