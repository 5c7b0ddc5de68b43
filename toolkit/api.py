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

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from pyiceberg.schema import Schema

from toolkit.core.batch import profile as _profile
from toolkit.core.batch.conversion_warnings import BatchWarning, UnwrittenRecords
from toolkit.core.batch.options import make_options, takes_options
from toolkit.core.batch.profile import Profile
from toolkit.core.batch.quarantine import Quarantined, set_aside_line
from toolkit.core.engine import Run, simulate_batches
from toolkit.core.evolution.batch_plan import Plan
from toolkit.core.evolution.field_operations import identifier_problem
from toolkit.core.evolution.layout import TableLayout
from toolkit.core.values.types import Struct
from toolkit.core.values.wording import counted
from toolkit.iceberg.schema import to_iceberg
from toolkit.iceberg.views import as_struct, coalesce_sql

Records = Iterable[Mapping[str, Any]]


@dataclass(frozen=True)
class Simulation:
    """The outcome of :func:`simulate`."""

    run: Run
    #: the starting schema's identifier fields, which no policy changes (issue 26)
    identifier_ids: tuple[int, ...] = ()

    @cached_property
    def schema(self) -> Schema:
        """The final table schema, with field IDs, docs and identifier fields (those the
        batches left valid: a real table refuses a batch that breaks one)."""
        layout = TableLayout(self.run.schema, identifier_ids=self.identifier_ids)
        kept = [i for i in self.identifier_ids if identifier_problem(layout, i) is None]
        return to_iceberg(self.run.schema, identifier_ids=kept)

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
    def warnings(self) -> tuple[BatchWarning, ...]:
        """Values written only as another kind of value (a boolean as a number, a number
        as text...), per batch, field and observed type, and records not written because
        the table had no column yet (RULES 3.5); ``str()`` of one is its line."""
        return self.run.warnings

    @property
    def quarantined(self) -> tuple[Quarantined, ...]:
        """The records set aside (RULES 5): record, reason, field, observed type, batch."""
        return self.run.quarantined

    @property
    def summary(self) -> str:
        """One line: records, batches, columns, and what was set aside, naming any field
        every value of which was set aside (it has no column: the schema cannot say so).

        >>> print(simulate([[{"n": 1}, {"n": 2}]]).summary)
        2 records in 1 batch, 2 written; 1 column
        """
        written = sum(b.size for b in self.run.batches)
        aside = self.quarantined
        # records of batches that left the table without a column (RULES 3.5)
        unwritten = sum(w.count for w in self.warnings if isinstance(w, UnwrittenRecords))
        total = written + len(aside) + unwritten
        batches = len(self.plans)
        columns = len(self.table_schema.fields)
        line = (
            f"{counted(total, 'record')} in {counted(batches, 'batch')}, {written:,} written; "
            f"{counted(columns, 'column')}"
        )
        if unwritten:
            line += f"; {unwritten:,} not written, as the table had no column yet"
        told = set_aside_line(total, self.table_schema, aside)
        return f"{line}; {told}" if told else line


@takes_options
def simulate(
    batches: Iterable[Any],
    schema: Schema | Struct | None = None,
    *,
    format: str | None = None,
    **options: Any,
) -> Simulation:
    """Run batches of JSON-like records through the evolution engine, in memory.

    Each batch is any source ``ingest`` takes (``toolkit.pipeline.sources``): a list of
    dicts (numpy and pandas scalars too), a pandas, Arrow or Polars frame, a JSON-lines
    path or glob (all its records one batch)... ``batches`` may itself be such a source
    rather than a list of batches: its own batches (a glob: each file one batch); a
    plain list of dicts is one batch.
    ``format`` names the kind of file sources whose names cannot tell it (``"jsonl"``...).

    ``schema`` is the table's starting schema (columns it already declares); a PyIceberg
    schema's identifier fields are never changed: a batch that would make one optional or
    rewrite it raises :class:`~toolkit.errors.OperationError`, as ``ingest`` refuses it. Of the
    options (listed below, as :func:`make_options` takes them), ``policy="widen"``
    follows RULES 5, with
    ``on_incompatible="quarantine"`` (records in :attr:`Simulation.quarantined`) or
    ``"fail"`` (an error naming field, types and value).

    >>> sim = simulate([[{"n": 1}], [{"n": 2.5}, {"n": True}]], policy="widen")
    >>> [(c.name, str(c.field_type)) for c in sim.schema.fields], sim.rows
    ([('n', 'double')], [{'n': 1.0}, {'n': 2.5}])
    >>> [(q.reason, q.field, q.observed, q.table_type) for q in sim.quarantined]
    [('incompatible', 'n', 'boolean', 'double')]
    """
    ids = tuple(schema.identifier_field_ids) if isinstance(schema, Schema) else ()
    return Simulation(
        simulate_batches(_batches(batches, format), as_struct(schema), make_options(**options),
                         ids),
        ids,
    )


@takes_options
def profile(
    source: Any, *, batch: int = 0, format: str | None = None, **options: Any
) -> Profile:
    """Per field path: counts per observed type and dimension, nulls, first/last batch,
    sample values, of any source (records, a frame, a JSON-lines path...: all its records
    as batch ``batch``; ``format`` names the kind of a file source its name cannot tell).
    Profiles merge with ``+``, a later one's records numbered after an earlier one's:
    ``first_seen(path)`` / ``last_seen(path)`` give each type's first and last record."""
    from toolkit.pipeline.sources import records_of  # loaded late: it loads Arrow

    records = records_of(source, format)
    return _profile.profile(records, batch=batch, options=make_options(**options))


def _batches(batches: Any, format: str | None) -> list[list[Any]]:
    """The batches of :func:`simulate`: each one a source of its own, unless ``batches``
    is a source other than Python records (a glob, a frame) and has batches itself.
    Python records are a batch as they are (values that are no records too, which the
    engine sets aside); any other source is all its records."""
    from toolkit.pipeline.sources import kind_of, records_of, source_kind

    if isinstance(batches, str | os.PathLike):  # files: each its own batch
        return kind_of(batches, format).records(batches)
    kind = source_kind(batches)
    if kind.name != "records":
        return kind.records(batches)
    items = list(batches)
    if not any(_named(b) for b in items):
        # Python records: one batch, or a list of batches (the records source's own rule)
        return kind.records(items)
    return [records_of(b, format) if _named(b) else list(b) for b in items]


def _named(batch: Any) -> bool:
    """Whether a batch of :func:`simulate` is a source to read (a path, a frame...)
    rather than Python records (or a value that is none, which the engine sets aside)."""
    from toolkit.pipeline.sources import source_kind

    if isinstance(batch, str | os.PathLike):
        return True
    try:
        return source_kind(batch).name != "records"
    except TypeError:  # no kind of source: a value among records
        return False


__all__ = ["Records", "Simulation", "coalesce_sql", "make_options", "profile", "simulate"]
