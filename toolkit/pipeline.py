"""Ingest batches into real Iceberg tables: profile on Spark, plan with the core engine,
commit with PyIceberg, route on Spark, append with Spark's Iceberg writer.

Every decision is the same core code :func:`toolkit.simulate` runs, so a table ingested
batch by batch equals the simulation of the same batches. JSON lines are profiled and
routed inside the JVM (``toolkit.spark.tally``, ``toolkit.spark.router``: the core still
decides, the JVM converts); everything else runs the core itself in Spark's Python workers.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import pickle
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import (
    NamespaceAlreadyExistsError,
    NoSuchTableError,
    TableAlreadyExistsError,
)
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot

from toolkit.api import make_options
from toolkit.core.engine import Engine, make_plan
from toolkit.core.options import Options
from toolkit.core.planner import Plan
from toolkit.core.profile import Profile, profile_of
from toolkit.core.quarantine import IncompatibleRecordError, Quarantined
from toolkit.core.summary import Summary
from toolkit.core.types import Struct
from toolkit.core.widen_policy import without_rewrites
from toolkit.iceberg.commit import (
    BATCH_ID_PROPERTY,
    PlanChangedError,
    StalePlanError,
    TableState,
    batch_id_of,
    commit_plan,
)
from toolkit.iceberg.lineage import plan_lineage_properties
from toolkit.iceberg.quarantine import append_quarantined, quarantine_table_id
from toolkit.iceberg.schema import from_iceberg, to_iceberg
from toolkit.spark.router import jvm_routing, route_on_jvm
from toolkit.spark.tally import jvm_tally_ready, observe_json
from toolkit.spark.workers import Mode, observe_partition, quarantine_partition, route_partition

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: how often a batch is re-planned when another writer changed the table first
MAX_ATTEMPTS = 10

log = logging.getLogger(__name__)


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
    quarantined: int = 0  # records set aside in the quarantine table (RULES 5)
    #: where the rows were routed: ``jvm`` (toolkit.spark.router) or ``python`` workers
    routed_in: str = "python"

    @property
    def quarantine_table(self) -> str:
        """Where records the table could not take went (see :func:`toolkit.quarantine`)."""
        return quarantine_table_id(self.table)

    def __str__(self) -> str:
        if self.skipped:
            return f"{self.table}: batch {self.batch_id} was already ingested; nothing written"
        aside = (
            f"; {self.quarantined} set aside in {self.quarantine_table}"
            if self.quarantined
            else ""
        )
        return (
            f"{self.table}: batch {self.batch_id} wrote {self.rows_written} rows "
            f"(snapshot {self.snapshot_id}){aside}\n{self.plan}"
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


@dataclass(frozen=True)
class SparkObservation:
    """A batch observed on Spark: the merged summary and profile of its records, and how
    many items were set aside (not records, malformed, untypable), with the first one."""

    summary: Summary
    profile: Profile
    aside: int = 0
    first_aside: Quarantined | None = None
    #: kind codes seen per field path when the JVM tallied every line (the JVM router's
    #: table covers them); None when Python workers observed some
    codes: Mapping[tuple[str, ...], frozenset[int]] | None = None


def observe_on_spark(
    df: DataFrame, mode: Mode, options: Options, batch: int
) -> SparkObservation:
    """Distributed observation: each partition summarizes and profiles its records; the
    driver merges them (both merge exactly). JSON lines are tallied inside the JVM when
    the session has the tally jar (``toolkit.spark.tally``), with the same result."""
    if mode == "json" and jvm_tally_ready(df.sparkSession):
        # partitions the JVM hands back (a line it cannot read as Python does) go through
        # the Python workers, which set malformed lines and non-objects aside as usual
        tally = observe_json(
            df, options, batch, lambda d: observe_partitions(d, mode, options, batch)
        )
        aside = [(n, q) for _, _, n, q in tally.handed_back]
        first = next((q for _, q in aside if q is not None), None)
        codes = None if tally.handed_back else tally.codes
        return SparkObservation(
            tally.summary, tally.profile, sum(n for n, _ in aside), first, codes
        )
    summary, prof, aside_n, first = Summary(), Profile(), 0, None
    for s, p, n, q in observe_partitions(df, mode, options, batch):
        summary, prof, aside_n, first = summary + s, prof + p, aside_n + n, first or q
    return SparkObservation(summary, prof, aside_n, first)


def observe_partitions(
    df: DataFrame, mode: Mode, options: Options, batch: int
) -> list[tuple[Summary, Profile, int, Quarantined | None]]:
    """Observation in Spark's Python workers: per partition, in order, its summary, profile,
    and how many items it set aside, with the first."""
    fn = functools.partial(observe_partition, mode=mode, options=options, batch=batch)
    return [pickle.loads(row.payload) for row in df.mapInArrow(fn, "payload binary").collect()]


def quarantine_on_spark(
    df: DataFrame, mode: Mode, options: Options, plan: Plan, batch_id: str
) -> list[Quarantined]:
    """Every record of the batch the table cannot take under ``plan``, in source order."""
    fn = functools.partial(
        quarantine_partition, mode=mode, options=options, plan=plan, batch_id=batch_id
    )
    out: list[Quarantined] = []
    for row in df.mapInArrow(fn, "payload binary").collect():
        out += pickle.loads(row.payload)
    return out


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
    check: Callable[[Plan], None] | None = None,
    batch_id: str | None = None,
) -> tuple[Table, Plan, int]:
    """Plan against the table as it is, commit; re-plan when another writer got there
    first (RULES 6: a stale plan is never applied as is). With ``expected`` (the state a
    user previewed), a moved table is refused instead of re-planned; with ``approved``, a
    plan other than the approved one is refused. ``check`` sees each plan before it is
    committed, and may refuse it by raising."""
    moved: StalePlanError | None = None
    for attempt in range(1, MAX_ATTEMPTS + 1):
        table = _load(catalog, identifier)
        if expected is not None and TableState.of(table) != expected:
            raise StalePlanError(identifier, expected, TableState.of(table))
        current = Struct() if table is None else from_iceberg(table.schema())
        assigned = 0 if table is None else table.metadata.last_column_id
        plan = make_plan(current, summary, options, batch, assigned)
        if approved is not None and not plan.same_changes(approved):
            raise PlanChangedError(identifier, approved, plan)
        if check is not None:
            check(plan)
        if table is None:
            namespace = identifier.rsplit(".", 1)[0]
            with contextlib.suppress(NamespaceAlreadyExistsError):
                catalog.create_namespace(namespace)
            try:
                log = plan_lineage_properties(plan, {}, batch_id)  # RULES 6 lineage
                table = catalog.create_table(
                    identifier, schema=to_iceberg(plan.after), properties=log
                )
            except TableAlreadyExistsError:
                continue
            return table, plan, attempt
        state = TableState.of(table)
        try:
            table = commit_plan(table, without_rewrites(plan), state, batch_id=batch_id)
            if plan.rewrites:
                table = _rewrite(catalog, identifier, table, plan, batch_id)
            return table, plan, attempt
        except StalePlanError as exc:
            if expected is not None:
                raise
            moved = exc
    raise RuntimeError(
        f"{identifier}: other writers kept changing the table; gave up after "
        f"{MAX_ATTEMPTS} plans"
    ) from moved


def _rewrite(
    catalog: Catalog, identifier: str, table: Table, plan: Plan, batch_id: str | None
) -> Table:
    """RULES 5: the approved rewrites of a plan, in one commit after its other changes
    (:func:`toolkit.evolve` rewrites the data files and the schema together, so readers
    never see a half-done state, and logs it)."""
    from toolkit.core.operations import widen_to
    from toolkit.iceberg.operations import evolve

    evolve(
        catalog, identifier, [widen_to(r.path, r.after, rewrite=True) for r in plan.rewrites],
        expected=TableState.of(table), decided_by="RULES 5",
        batch=str(plan.batch) if batch_id is None else batch_id,
        reason="; ".join(r.reason for r in plan.rewrites),
    )
    table.refresh()
    return table


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
    if "allow_rewrites" not in options:  # RULES 5: a rewrite runs only when approved
        options["allow_rewrites"] = approved is not None and bool(approved.rewrites)
    opts = make_options(**options)
    batch_id = batch_id or uuid.uuid4().hex
    existing = _load(catalog, table)
    batch_index = 0 if existing is None else len(existing.snapshots())
    df, mode = as_dataframe(spark, source)
    if existing is not None and batch_id in ingested_batches(existing):
        current = from_iceberg(existing.schema())
        nothing = Plan(batch_index, current, current, ())
        return IngestReport(table, batch_id, nothing, 0, None, Profile(), skipped=True)

    seen = observe_on_spark(df, mode, opts, batch_index)
    fail = opts.on_incompatible == "fail"
    if fail and seen.first_aside is not None:
        raise IncompatibleRecordError(seen.first_aside)
    widen = opts.policy == "widen"
    if seen.summary.rows == 0:
        schema = Struct() if existing is None else from_iceberg(existing.schema())
        plan = Plan(batch_index, schema, schema, ())
        aside = quarantine_on_spark(df, mode, opts, plan, batch_id) if seen.aside else []
        quarantined = append_quarantined(catalog, table, aside, batch_id)
        return IngestReport(table, batch_id, plan, 0, None, seen.profile,
                            quarantined=quarantined)

    def refuse_incompatible(plan: Plan) -> None:
        items = quarantine_on_spark(df, mode, opts, plan, batch_id)
        if items:
            raise IncompatibleRecordError(items[0])

    tbl, plan, attempts = _plan_and_commit(
        catalog, table, seen.summary, opts, batch_index, approved, expected,
        check=refuse_incompatible if fail and widen else None, batch_id=batch_id,
    )
    quarantined = 0
    if widen or seen.aside:
        aside = quarantine_on_spark(df, mode, opts, plan, batch_id)
        quarantined = append_quarantined(catalog, table, aside, batch_id)
    written = write_batch(
        df, mode, opts, tbl, catalog, spark, table, batch_id, plan, clean=not seen.aside,
        codes=seen.codes,
    )
    tbl.refresh()
    snap = _snapshot_of(tbl, batch_id)
    return IngestReport(
        table, batch_id, plan, written.rows, snap.snapshot_id,
        seen.profile, attempts=attempts, quarantined=quarantined, routed_in=written.where,
    )


def _spark_schema(spark: SparkSession, schema: Struct) -> Any:
    """``schema`` as Spark's Iceberg catalog shows a table of that schema (Iceberg's own
    ``SparkSchemaUtil`` converts it)."""
    from pyspark.sql.types import StructType

    jvm: Any = spark._jvm
    jschema = jvm.org.apache.iceberg.SchemaParser.fromJson(to_iceberg(schema).model_dump_json())
    converted = jvm.org.apache.iceberg.spark.SparkSchemaUtil.convert(jschema)
    return StructType.fromJson(json.loads(converted.json()))


@dataclass(frozen=True)
class Written:
    """What :func:`write_batch` appended, and where the rows were routed."""

    rows: int
    where: str  # "jvm" or "python"


def write_batch(
    df: DataFrame,
    mode: Mode,
    options: Options,
    table: Table,
    catalog: Catalog,
    spark: SparkSession,
    identifier: str,
    batch_id: str,
    plan: Plan | None = None,
    *,
    clean: bool = True,
    codes: Mapping[tuple[str, ...], frozenset[int]] | None = None,
) -> Written:
    """Route every record and append them in one Iceberg commit. ``plan`` is the batch's
    plan (the widening policy routes by it); ``clean`` says no record of the batch is to
    be set aside; ``codes`` are the kind codes the JVM tally saw: with them, JSON lines
    are routed inside the JVM (``toolkit.spark.router``), else in Python workers."""
    from pyspark.errors import AnalysisException
    from pyspark.sql.pandas.types import to_arrow_schema

    spark_name = f"{catalog.name}.{identifier}"
    # RULES 6: the rows are routed against the schema the batch's own plan made, not the
    # table's schema now, which another writer may have moved on meanwhile
    schema = from_iceberg(table.schema()) if plan is None else plan.after
    arrow_schema = to_arrow_schema(_spark_schema(spark, schema))
    assert [c.name for c in schema.fields] == arrow_schema.names, "Spark and PyIceberg disagree"
    jvm_table = (
        jvm_routing(schema, codes, options) if mode == "json" and clean else None
    )
    attempt = 0
    while True:
        target = spark.table(spark_name).schema
        # the JVM routes into the plan's own schema: padding for another writer's columns
        # is left to the Python path
        on_jvm = jvm_table is not None and target == _spark_schema(spark, schema)
        if on_jvm:
            assert jvm_table is not None
            frame = route_on_jvm(df, jvm_table, target, options)
        else:
            fn = functools.partial(
                _routed_as, target=to_arrow_schema(target), route=route_partition, mode=mode,
                options=options, schema=schema, arrow_schema=arrow_schema, plan=plan,
                clean=clean,
            )
            frame = df.mapInArrow(fn, target)
        writer = frame.writeTo(spark_name)
        try:
            writer.option(f"snapshot-property.{BATCH_ID_PROPERTY}", batch_id).append()
            break
        except AnalysisException as exc:
            # Another writer changed the schema between our reading it and the append's
            # own reading (nothing was written): pad to the schema as it is now.
            attempt += 1
            if "INCOMPATIBLE_DATA_FOR_TABLE" not in str(exc) or attempt == MAX_ATTEMPTS:
                raise
        except Exception as exc:
            if not on_jvm:
                raise
            # The JVM router met what its table does not foresee and failed the job before
            # anything was committed: the Python router does the batch.
            log.warning("batch %s: the JVM router refused it (%s); routing in Python "
                        "workers", batch_id, str(exc).splitlines()[0][:300])
            jvm_table = None
    table.refresh()
    summary = _snapshot_of(table, batch_id).summary
    assert summary is not None
    rows = int(summary.additional_properties.get("added-records", 0))
    return Written(rows, "jvm" if on_jvm else "python")


def _routed_as(
    batches: Iterator[pa.RecordBatch], *, target: pa.Schema, route: Any, **routing: Any
) -> Iterator[pa.RecordBatch]:
    """Runs in Spark's workers: ``route``'s chunks as rows of the table's ``target``
    schema, which may hold columns (nested ones too) another writer added after the
    batch's plan; they are null in these rows, as in the simulation of the batches in
    the order of their plans."""
    for chunk in route(batches, **routing):
        if chunk.schema.equals(target):
            yield chunk
        else:
            yield pa.RecordBatch.from_pylist(chunk.to_pylist(), schema=target)


def _snapshot_of(table: Table, batch_id: str) -> Snapshot:
    """The snapshot that wrote ``batch_id`` (another writer may have committed since)."""
    return next(s for s in reversed(table.snapshots()) if batch_id_of(s) == batch_id)


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
    assigned = 0 if existing is None else existing.metadata.last_column_id
    plan = make_plan(current, obs, engine.options, batch, assigned)
    if plan.rewrites and existing is not None:  # RULES 5: show what a rewrite touches
        from toolkit.iceberg.operations import rewrite_cost

        n, size = rewrite_cost(existing)
        plan = replace(plan, retypes=tuple(
            r if r.in_place else replace(r, rows=n, bytes=size) for r in plan.retypes
        ))
    return Preview(table, plan, TableState.of(existing), profile_of(obs, batch), tuple(rows))
