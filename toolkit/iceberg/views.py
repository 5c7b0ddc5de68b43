"""RULES 7 COALESCE views over an Iceberg schema: the core's view SQL, fed a PyIceberg
``Schema`` (or the core's own ``Struct``) and the evolution options by keyword.

>>> from pyiceberg.schema import Schema
>>> from pyiceberg.types import LongType, NestedField, StringType
>>> schema = Schema(NestedField(1, "a", LongType()),
...                 NestedField(2, "a_string", StringType(), doc="upsolver_evolved_from:a"))
>>> print(coalesce_sql(schema, "db.t", "trino"))
SELECT COALESCE("a_string", CAST("a" AS VARCHAR)) AS "a" /* a: long and string fold into
string (longs as text) */ FROM db.t
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyiceberg.schema import Schema

from toolkit.core.batch.options import make_options, takes_options
from toolkit.core.batch.profile import Profile
from toolkit.core.evolution.view_types import check_view_types, hinted_view_types
from toolkit.core.values.types import Struct
from toolkit.core.views import Dialect, epoch_units_of
from toolkit.core.views import coalesce_sql as _coalesce_sql
from toolkit.iceberg.schema import from_iceberg

__all__ = ["as_struct", "coalesce_sql"]


def as_struct(schema: Schema | Struct | None) -> Struct:
    """A PyIceberg schema in the core's model (a ``Struct`` as it is; None: no columns)."""
    if schema is None:
        return Struct()
    return schema if isinstance(schema, Struct) else from_iceberg(schema)


@takes_options
def coalesce_sql(
    schema: Schema | Struct,
    table: str,
    dialect: Dialect = "spark",
    *,
    view: str | None = None,
    pretty: bool = False,
    profile: Profile | None = None,
    view_types: Mapping[str, str] | None = None,
    properties: Mapping[str, str] | None = None,
    **options: Any,
) -> str:
    """The COALESCE view of RULES 7 over ``table``, for ``spark``, ``trino``, ``duckdb`` or
    ``athena``; with ``view=``, the ``CREATE OR REPLACE VIEW`` statement. ``options`` as
    for :func:`toolkit.simulate` (``lattice``, ``timestamp_unit``...).

    One column per source key, nested families folded inside their structs; each reads
    as its ``view_types`` entry (per dotted field: ``{"quantity": "long", "address.zip":
    "string", "ts": "timestamp[s]"}``), else the family's type when every sibling converts
    into it exactly (a timestamp family as a TIMESTAMP, its longs read in
    ``long_timestamp_unit``), else string (records and lists as JSON text). The SQL's
    comments say what each field folds to and what that costs (docs/rules.md, *What the
    view folds to*).

    A hinted field (the ``hints`` option, or the hints the table keeps: its
    ``properties``) reads as its hint's type unless ``view_types`` says otherwise.

    ``profile``: a profile of the data (:func:`toolkit.profile`); the comment of a
    timestamp family then says the epoch units its whole numbers were seen in."""
    opts = make_options(**options)
    struct = as_struct(schema)
    check_view_types(struct, view_types)  # hints may name fields with no column yet
    return _coalesce_sql(
        struct,
        table,
        dialect,
        view=view,
        lattice=opts.lattice,
        timestamp_unit=opts.timestamp_unit,
        pretty=pretty,
        epoch_units=None if profile is None else epoch_units_of(profile),
        long_timestamp_unit=opts.long_timestamp_unit,
        # (the hints option once the options have it: toolkit.core.batch.hints)
        view_types=hinted_view_types(view_types, opts.hints, properties),
    )
