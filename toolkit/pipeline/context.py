"""One batch's context: what every step of a batch (plan, commit, set aside, route, write,
publish) needs to know, built once by :func:`~toolkit.pipeline.ingest.ingest` (which
``stream``, ``replay`` and a Kafka stream call per batch) and passed down as one value.

The words, one per thing:

* ``table``: the table's identifier, ``namespace.name`` (a str); ``loaded``: the
  PyIceberg :class:`~pyiceberg.table.Table` as last loaded (None before the first batch
  creates it); ``spark_name``: the table as Spark names it (``catalog.namespace.name``).
* ``batch_id``: the id a batch lands under in the table's ledger (a str, given or made);
  ``batch_index``: the core's number of the batch (the table's snapshot count), which
  plans are numbered by (:attr:`toolkit.core.evolution.batch_plan.Plan.batch`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyiceberg.catalog import Catalog

from toolkit.core.batch.options import Options
from toolkit.core.evolution.batch_plan import Plan
from toolkit.core.evolution.state import TableState

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["BatchContext"]


@dataclass(frozen=True)
class BatchContext:
    """Where one batch goes and what holds it: the table, its catalog, the Spark session,
    the evolution options, the batch id, and what a user approved (the plan and the table
    state it was previewed against, RULES 6), if anything."""

    table: str
    catalog: Catalog
    spark: SparkSession
    options: Options
    batch_id: str
    #: the plan a user approved: a batch needing other changes is refused
    approved: Plan | None = None
    #: the table state the approved plan was made against: a moved table is refused
    expected: TableState | None = None
    #: False for a replay: its records were counted when they first arrived
    arriving: bool = True

    @property
    def reviewed(self) -> bool:
        """Whether the batch is held to what a user reviewed (then it is always planned
        before it is written: never written in one pass)."""
        return self.approved is not None or self.expected is not None

    @property
    def spark_name(self) -> str:
        """The table as Spark's catalog names it."""
        return f"{self.catalog.name}.{self.table}"
