"""RULES 7 COALESCE views over an Iceberg schema: the core's view SQL, fed a PyIceberg
``Schema`` (or the core's own ``Struct``) and the evolution options by keyword.

>>> from pyiceberg.schema import Schema
>>> from pyiceberg.types import LongType, NestedField, StringType
>>> schema = Schema(NestedField(1, "a", LongType()),
...                 NestedField(2, "a_string", StringType(), doc="upsolver_evolved_from:a"))
>>> print(coalesce_sql(schema, "db.t", "trino"))
SELECT COALESCE("a_string", CAST("a" AS VARCHAR)) AS "a" FROM db.t
"""

from __future__ import annotations

from typing import Any

from pyiceberg.schema import Schema

from toolkit.core.batch.options import make_options, takes_options
from toolkit.core.batch.profile import Profile
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
    **options: Any,
) -> str:
    """The COALESCE view of RULES 7 over ``table``, for ``spark``, ``trino``, ``duckdb`` or
    ``athena``; with ``view=``, the ``CREATE OR REPLACE VIEW`` statement. ``options`` as
    for :func:`toolkit.simulate` (``lattice``, ``timestamp_unit``...).

    ``profile``: a profile of the data (:func:`toolkit.profile`). A field whose whole
    numbers it saw in an epoch unit other than ``timestamp_unit``, or in several, keeps
    its long column out of the fold, as its own view column (docs/rules.md, *Timestamp
    formats and epoch units*); without one, long columns are folded after the timestamp
    column, which is always read first."""
    opts = make_options(**options)
    return _coalesce_sql(
        as_struct(schema),
        table,
        dialect,
        view=view,
        lattice=opts.lattice,
        timestamp_unit=opts.timestamp_unit,
        pretty=pretty,
        epoch_units=None if profile is None else epoch_units_of(profile),
    )
