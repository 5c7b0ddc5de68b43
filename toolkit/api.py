"""The toolkit's in-memory API: ``simulate``, ``profile`` and ``coalesce_sql``.

>>> result = simulate([[{"size": 4}], [{"size": 2.3}]])
>>> print(result.schema)
table {
  1: size: optional long
  2: size_double: optional double (upsolver_evolved_from:size)
}
>>> result.rows
[{'size': 4, 'size_double': None}, {'size': None, 'size_double': 2.3}]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from pyiceberg.schema import Schema

from toolkit.core import profile as _profile
from toolkit.core.conversions import EpochUnit, LongTimestampUnit
from toolkit.core.engine import Run, simulate_batches
from toolkit.core.lattice import STRICT, UPSOLVER, Lattice
from toolkit.core.options import POLICIES, Options, Policy
from toolkit.core.planner import Plan
from toolkit.core.profile import Profile
from toolkit.core.quarantine import OnIncompatible, Quarantined
from toolkit.core.types import Struct
from toolkit.core.views import Dialect
from toolkit.core.views import coalesce_sql as _coalesce_sql
from toolkit.iceberg.schema import from_iceberg, to_iceberg

LATTICES: dict[str, Lattice] = {"upsolver": UPSOLVER, "strict": STRICT}

Records = Iterable[Mapping[str, Any]]


def make_options(
    *,
    detect_dates: bool = True,
    timestamp_unit: EpochUnit = "ms",
    long_timestamp_unit: LongTimestampUnit = "auto",
    lattice: Lattice | str = UPSOLVER,
    policy: Policy = "upsolver",
    on_incompatible: OnIncompatible = "quarantine",
    allow_rewrites: bool = True,
) -> Options:
    """Options from keyword arguments (see :class:`~toolkit.core.options.Options`);
    ``lattice`` may be a name (``upsolver``, ``strict``)."""
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; choose one of {', '.join(POLICIES)}")
    if on_incompatible not in ("fail", "quarantine"):
        raise ValueError(
            f"unknown on_incompatible {on_incompatible!r}; choose 'fail' or 'quarantine'"
        )
    if isinstance(lattice, str):
        try:
            lattice = LATTICES[lattice]
        except KeyError:
            raise ValueError(
                f"unknown lattice {lattice!r}; choose one of {', '.join(LATTICES)}"
            ) from None
    return Options(
        detect_dates, timestamp_unit, long_timestamp_unit, lattice, policy, on_incompatible,
        allow_rewrites,
    )


def _struct(schema: Schema | Struct | None) -> Struct:
    if schema is None:
        return Struct()
    return schema if isinstance(schema, Struct) else from_iceberg(schema)


@dataclass(frozen=True)
class Simulation:
    """The outcome of :func:`simulate`."""

    run: Run

    @cached_property
    def schema(self) -> Schema:
        """The final table schema, with field IDs and docs."""
        return to_iceberg(self.run.schema)

    @property
    def table_schema(self) -> Struct:
        """The final schema in the core's model."""
        return self.run.schema

    @cached_property
    def rows(self) -> list[dict[str, Any]]:
        """One dict per input record, in input order, with every column of the final schema."""
        return self.run.rows

    @property
    def plans(self) -> tuple[Plan, ...]:
        """The plan each batch produced."""
        return self.run.plans

    @property
    def profile(self) -> Profile:
        """The merged profile of every batch."""
        return self.run.profile

    @property
    def quarantined(self) -> tuple[Quarantined, ...]:
        """The records set aside (RULES 5): record, reason, field, observed type, batch."""
        return self.run.quarantined


def simulate(
    batches: Iterable[Records], schema: Schema | Struct | None = None, **options: Any
) -> Simulation:
    """Run batches of JSON-like records through the evolution engine, in memory.

    ``schema`` is the table's starting schema (columns it already declares). ``options``
    are those of :func:`make_options`: ``policy="widen"`` follows RULES 5, with
    ``on_incompatible="quarantine"`` (records in :attr:`Simulation.quarantined`) or
    ``"fail"`` (an error naming field, types and value).

    >>> sim = simulate([[{"n": 1}], [{"n": 2.5}, {"n": True}]], policy="widen")
    >>> [(c.name, str(c.field_type)) for c in sim.schema.fields], sim.rows
    ([('n', 'double')], [{'n': 1.0}, {'n': 2.5}])
    >>> [(q.reason, q.field, q.observed, q.table_type) for q in sim.quarantined]
    [('incompatible', 'n', 'boolean', 'double')]
    """
    return Simulation(simulate_batches(batches, _struct(schema), make_options(**options)))


def profile(records: Records, *, batch: int = 0, **options: Any) -> Profile:
    """Per field path: counts per observed type and dimension, nulls, first/last batch,
    sample values. Profiles merge with ``+``."""
    return _profile.profile(records, batch=batch, options=make_options(**options))  # type: ignore[arg-type]


def coalesce_sql(
    schema: Schema | Struct,
    table: str,
    dialect: Dialect = "spark",
    *,
    view: str | None = None,
    pretty: bool = False,
    **options: Any,
) -> str:
    """The COALESCE view of RULES 7 over ``table``, for ``spark``, ``trino``, ``duckdb`` or
    ``athena``; with ``view=``, the ``CREATE OR REPLACE VIEW`` statement."""
    opts = make_options(**options)
    return _coalesce_sql(
        _struct(schema),
        table,
        dialect,
        view=view,
        lattice=opts.lattice,
        timestamp_unit=opts.timestamp_unit,
        pretty=pretty,
    )
