"""RULES 7: COALESCE views that fold each family of columns back into one column.

SQL is one sqlglot expression tree rendered per dialect; every identifier is quoted, so a
field name that came from data can never end a statement or inject another. The view has
one column per source key, at every level; what each family folds into, and what that
costs, is decided in :mod:`toolkit.core.evolution.view_folds` and said in a comment beside it:

>>> s = Struct((Column(1, "my_field", "long"),
...             Column(2, "my_field_string", "string", "upsolver_evolved_from:my_field")))
>>> print(coalesce_select(s, "db.events").sql("trino"))
SELECT COALESCE("my_field_string", CAST("my_field" AS VARCHAR)) AS "my_field" /* my_field:
long and string fold into string (longs as text) */ FROM db.events

A timestamp family (a timestamp column beside long columns) reads as a TIMESTAMP: the
timestamp column first (it holds every long the family received as the instant its
magnitude gives, RULES 2), then the longs read the same way:

>>> e = Struct((Column(1, "ts", "timestamptz"),
...             Column(2, "ts_long", "long", "upsolver_evolved_from:ts")))
>>> print(coalesce_select(e, "t", long_timestamp_unit="ms", dialect="duckdb").sql("duckdb"))
SELECT COALESCE("ts", EPOCH_MS("ts_long") AT TIME ZONE 'UTC') AS "ts" /* ts: timestamp and
long fold into timestamp (longs read as epoch ms) */ FROM t
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from sqlglot import exp

from toolkit.core.batch.profile import Profile
from toolkit.core.evolution.view_folds import (
    DIALECTS,
    SPARK_VARIABLE,
    Dialect,
    Fold,
    Target,
    fold_struct,
    make_context,
    view_folds,
)
from toolkit.core.values.conversions import LongTimestampUnit
from toolkit.core.values.lattice import UPSOLVER, Lattice
from toolkit.core.values.naming import free_name
from toolkit.core.values.types import Column, Struct  # noqa: F401  (Column: the examples)

__all__ = [
    "DIALECTS",
    "SPARK_VARIABLE",
    "SUBSTITUTION_NOTE",
    "Dialect",
    "Fold",
    "coalesce_select",
    "coalesce_sql",
    "epoch_units_of",
    "view_folds",
]


def _ident(name: str) -> exp.Identifier:
    return exp.to_identifier(name, quoted=True)


def _comment(text: str) -> str:
    """A comment's text that cannot end or nest a comment (names come from data; Spark
    nests ``/* */`` comments)."""
    text = text.replace("*/", "* /").replace("/*", "/ *")
    return " " + text.replace(SPARK_VARIABLE, "$ {") + " "  # nor a Spark variable (below)


def coalesce_select(
    schema: Struct,
    table: str,
    *,
    lattice: Lattice = UPSOLVER,
    timestamp_unit: str = "ms",
    dialect: Dialect = "spark",
    epoch_units: Mapping[str, Collection[str]] | None = None,
    long_timestamp_unit: LongTimestampUnit = "auto",
    view_types: Mapping[str, str | Target] | None = None,
) -> exp.Select:
    """The SELECT of the COALESCE view over ``table`` (a name such as ``db.events``): one
    column per source key, nested families folded inside their structs
    (:mod:`toolkit.core.evolution.view_folds`), each fold said in a comment.

    ``view_types``: per dotted field, the type to read it as (``{"quantity": "long",
    "ts": "timestamp[s]"}``), over the family's own. ``long_timestamp_unit``: the epoch
    unit longs of a timestamp family are read in (``auto``: their magnitude, RULES 2).
    ``epoch_units``: per top-level field, the epoch units its whole numbers were seen in
    (:func:`epoch_units_of` a profile), said in the comment."""
    ctx = make_context(dialect, lattice, timestamp_unit, long_timestamp_unit, view_types,
                       epoch_units)
    folded, _ = fold_struct(schema, lambda n: exp.column(_ident(n)), (), ctx)
    items: list[exp.Expr] = []
    for f in folded:
        if isinstance(f.expr, exp.Column) and f.expr.name == f.name:
            item: exp.Expr = f.expr  # a column as stored, under its own name
        else:
            item = exp.alias_(f.expr, _ident(f.name))
        if f.folds:
            item.add_comments([_comment("; ".join(str(x) for x in f.folds))])
        items.append(item)
    return exp.select(*items).from_(exp.to_table(table, dialect=dialect))


def coalesce_sql(
    schema: Struct,
    table: str,
    dialect: Dialect = "spark",
    *,
    view: str | None = None,
    lattice: Lattice = UPSOLVER,
    timestamp_unit: str = "ms",
    pretty: bool = False,
    epoch_units: Mapping[str, Collection[str]] | None = None,
    long_timestamp_unit: LongTimestampUnit = "auto",
    view_types: Mapping[str, str | Target] | None = None,
) -> str:
    """The view's SQL for one dialect; with ``view``, a ``CREATE OR REPLACE VIEW``."""
    if dialect not in DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r}; choose one of {', '.join(DIALECTS)}")
    select = coalesce_select(
        schema, table, lattice=lattice, timestamp_unit=timestamp_unit, dialect=dialect,
        epoch_units=epoch_units, long_timestamp_unit=long_timestamp_unit,
        view_types=view_types,
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
