"""The toolkit's in-memory API: ``simulate``, ``profile`` and ``coalesce_sql``
(``toolkit.iceberg.views``).

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
from toolkit.core.engine import Run, simulate_batches
from toolkit.core.options import make_options
from toolkit.core.planner import Plan
from toolkit.core.profile import Profile
from toolkit.core.quarantine import Quarantined
from toolkit.core.types import Struct
from toolkit.iceberg.schema import to_iceberg
from toolkit.iceberg.views import as_struct, coalesce_sql

Records = Iterable[Mapping[str, Any]]


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
    return Simulation(simulate_batches(batches, as_struct(schema), make_options(**options)))


def profile(records: Records, *, batch: int = 0, **options: Any) -> Profile:
    """Per field path: counts per observed type and dimension, nulls, first/last batch,
    sample values. Profiles merge with ``+``."""
    return _profile.profile(records, batch=batch, options=make_options(**options))  # type: ignore[arg-type]


__all__ = ["Records", "Simulation", "coalesce_sql", "make_options", "profile", "simulate"]
