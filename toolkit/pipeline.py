"""Ingest batches into real Iceberg tables: profile on Spark, plan with the core engine,
commit with PyIceberg, route in Spark's workers, append with Spark's Iceberg writer.

Every step runs the same core code as :func:`toolkit.simulate`, so a table ingested batch
by batch equals the simulation of the same batches.
"""

from __future__ import annotations

import contextlib
import functools
import pickle
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import (
    NamespaceAlreadyExistsError,
    NoSuchTableError,
    TableAlreadyExistsError,
)
from pyiceberg.table import Table

from toolkit.api import make_options
from toolkit.core.engine import Engine
from toolkit.core.options import Options
from toolkit.core.planner import Plan, plan_batch
from toolkit.core.profile import Profile, profile_of
from toolkit.core.summary import Summary
from toolkit.core.types import Struct
from toolkit.iceberg.commit import (
    BATCH_ID_PROPERTY,
    PlanChangedError,
    StalePlanError,
    TableState,
    batch_id_of,
    commit_plan,
)
from toolkit.iceberg.schema import from_iceberg, to_iceberg
from toolkit.spark.commit import commit_plan_in_spark
from toolkit.spark.workers import Mode, observe_partition, route_partition

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: how often a batch is re-planned when another writer changed the table first
MAX_ATTEMPTS = 10


@dataclass(frozen=True)
class IngestReport:
    """What one :func:`ingest` call (one batch, one task time) did."""

    table: str
    batch_id: str
    plan: Plan
    rows_written: int
    snapshot_id: int | None
    profile: Profile
    skipped: bool = False  # the batch id was already ingested: nothing written
    attempts: int = 1  # plans made (more than one when another writer moved the table)

    def __str__(self) -> str:
        if self.skipped:
            return f"{self.table}: batch {self.batch_id} was already ingested; nothing written"
        return (
            f"{self.table}: batch {self.batch_id} wrote {self.rows_written} rows "
            f"(snapshot {self.snapshot_id})\n{self.plan}"
        )


def as_dataframe(spark: SparkSession, source: Any) -> tuple[DataFrame, Mode]:
    """A source as a DataFrame and how its records are carried."""
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StringType

    if isinstance(source, DataFrame):
        fields = source.schema.fields
        if len(fields) == 1 and isinstance(fields[0].dataType, StringType):
            return source, "json"
        return source, "rows"
    if isinstance(source, str | Path):
        return spark.read.text(str(source)), "json"
    # Python records travel pickled, so workers see exactly the values simulate() sees.
    rows = [(pickle.dumps(dict(r)),) for r in source]
    slices = max(1, min(len(rows), spark.sparkContext.defaultParallelism))
    rdd = spark.sparkContext.parallelize(rows, slices)
    return spark.createDataFrame(rdd, "value binary"), "pickle"


def observe_on_spark(
    df: DataFrame, mode: Mode, options: Options, batch: int
) -> tuple[Summary, Profile]:
    """Distributed observation: each partition summarizes and profiles its records; the
    driver merges them (both merge exactly)."""
    fn = functools.partial(observe_partition, mode=mode, options=options, batch=batch)
    payloads = df.mapInArrow(fn, "payload binary").collect()
    summary, prof = Summary(), Profile()
    for row in payloads:
        s, p = pickle.loads(row.payload)
        summary, prof = summary + s, prof + p
    return summary, prof


def _load(catalog: Catalog, identifier: str) -> Table | None:
    try:
        return catalog.load_table(identifier)
    except NoSuchTableError:
        return None


def ingested_batches(table: Table) -> set[str]:
    """The batch ids committed to ``table`` so far (from its snapshot summaries)."""
    return {b for b in map(batch_id_of, table.snapshots()) if b is not None}


def _plan_and_commit(
    catalog: Catalog,
    identifier: str,
    summary: Summary,
    options: Options,
    batch: int,
    approved: Plan | None = None,
    expected: TableState | None = None,
    spark: SparkSession | None = None,
) -> tuple[Table, Plan, int]:
    """Plan against the table as it is, commit; re-plan when another writer got there
    first (RULES 6: a stale plan is never applied as is). With ``expected`` (the state a
    user previewed), a moved table is refused instead of re-planned; with ``approved``, a
    plan other than the approved one is refused."""
    moved: StalePlanError | None = None
    for attempt in range(1, MAX_ATTEMPTS + 1):
        table = _load(catalog, identifier)
        if expected is not None and TableState.of(table) != expected:
            raise StalePlanError(identifier, expected, TableState.of(table))
        current = Struct() if table is None else from_iceberg(table.schema())
        plan = plan_batch(current, summary, options, batch)
        if approved is not None and plan.changes != approved.changes:
            raise PlanChangedError(identifier, approved, plan)
        if table is None:
            namespace = identifier.rsplit(".", 1)[0]
            with contextlib.suppress(NamespaceAlreadyExistsError):
                catalog.create_namespace(namespace)
            try:
                table = catalog.create_table(identifier, schema=to_iceberg(plan.after))
            except TableAlreadyExistsError:
                continue
            return table, plan, attempt
        state = TableState.of(table)
        try:
            if spark is None:
                return commit_plan(table, plan, state), plan, attempt
            spark_name = f"{catalog.name}.{identifier}"
            return commit_plan_in_spark(spark, spark_name, table, plan, state), plan, attempt
        except StalePlanError as exc:
            if expected is not None:
                raise
            moved = exc
    raise RuntimeError(
        f"{identifier}: other writers kept changing the table; gave up after "
        f"{MAX_ATTEMPTS} plans"
    ) from moved


def ingest(
    source: Any,
    table: str,
    catalog: Catalog,
    spark: SparkSession,
    batch_id: str | None = None,
    *,
    approved: Plan | None = None,
    expected: TableState | None = None,
    **options: Any,
) -> IngestReport:
    """Ingest one batch (one task time) into ``table`` (``namespace.name``).

    ``source``: a list of dicts, a path or glob of JSON-lines files, or a Spark DataFrame
    (one string column of raw JSON, or typed columns). The table and its namespace are
    created on first ingest. ``batch_id`` is stored in the snapshot summary; a batch id
    already ingested writes nothing the second time. ``options`` as for
    :func:`toolkit.simulate`.

    ``approved`` and ``expected`` hold the batch to a plan a user approved (see
    :func:`plan_preview`): if the table is no longer in the ``expected`` state it raises
    :class:`~toolkit.iceberg.commit.StalePlanError`, and if the batch needs other changes
    than ``approved`` it raises :class:`~toolkit.iceberg.commit.PlanChangedError`; either
    way nothing is applied.
    """
    opts = make_options(**options)
    batch_id = batch_id or uuid.uuid4().hex
    existing = _load(catalog, table)
    batch_index = 0 if existing is None else len(existing.snapshots())
    df, mode = as_dataframe(spark, source)
    if existing is not None and batch_id in ingested_batches(existing):
        current = from_iceberg(existing.schema())
        nothing = Plan(batch_index, current, current, ())
        return IngestReport(table, batch_id, nothing, 0, None, Profile(), skipped=True)

    summary, prof = observe_on_spark(df, mode, opts, batch_index)
    if summary.rows == 0:
        schema = Struct() if existing is None else from_iceberg(existing.schema())
        return IngestReport(table, batch_id, Plan(batch_index, schema, schema, ()), 0, None, prof)

    tbl, plan, attempts = _plan_and_commit(
        catalog, table, summary, opts, batch_index, approved, expected, spark
    )
    written = write_batch(df, mode, opts, tbl, catalog, spark, table, batch_id)
    tbl.refresh()
    snap = tbl.current_snapshot()
    return IngestReport(
        table, batch_id, plan, written, None if snap is None else snap.snapshot_id, prof,
        attempts=attempts,
    )


def write_batch(
    df: DataFrame,
    mode: Mode,
    options: Options,
    table: Table,
    catalog: Catalog,
    spark: SparkSession,
    identifier: str,
    batch_id: str,
) -> int:
    """Route every record in Spark's workers and append them in one Iceberg commit."""
    from pyspark.sql.pandas.types import to_arrow_schema

    spark_name = f"{catalog.name}.{identifier}"
    schema = from_iceberg(table.schema())
    spark_schema = spark.table(spark_name).schema
    arrow_schema = to_arrow_schema(spark_schema)
    assert [c.name for c in schema.fields] == arrow_schema.names, "Spark and PyIceberg disagree"
    fn = functools.partial(
        route_partition, mode=mode, options=options, schema=schema, arrow_schema=arrow_schema
    )
    routed = df.mapInArrow(fn, spark_schema)
    routed.writeTo(spark_name).option(f"snapshot-property.{BATCH_ID_PROPERTY}", batch_id).append()
    table.refresh()
    snap = table.current_snapshot()
    assert snap is not None and snap.summary is not None
    return int(snap.summary.additional_properties.get("added-records", 0))


@dataclass(frozen=True)
class Preview:
    """A plan made on sample records against a table as it is now, before anything changes."""

    table: str
    plan: Plan
    state: TableState  # what the plan was made against (refused later if the table moved)
    profile: Profile
    records: tuple[dict[str, Any], ...]


def plan_preview(
    records: Iterable[Mapping[str, Any]], table: str, catalog: Catalog, **options: Any
) -> Preview:
    """Plan ``records`` against ``table`` (absent: a new table) without Spark and without
    changing anything; pass the result's ``plan`` and ``state`` to :func:`ingest` as
    ``approved`` and ``expected`` to commit exactly that."""
    engine = Engine(make_options(**options))
    existing = _load(catalog, table)
    rows = [dict(r) for r in records]
    batch = 0 if existing is None else len(existing.snapshots())
    obs = engine.observe(rows, batch)
    current = Struct() if existing is None else from_iceberg(existing.schema())
    return Preview(
        table, engine.plan(current, obs, batch), TableState.of(existing),
        profile_of(obs, batch), tuple(rows),
    )
