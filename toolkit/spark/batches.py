"""Spark execution of one batch: observe its records, find what to set aside, route and
append them with Spark's Iceberg writer.

Nothing here decides: observation, planning and routing are the core's (in Spark's Python
workers, ``toolkit.spark.workers``), or the JVM's tally and router fed by the core
(``toolkit.spark.tally``, ``toolkit.spark.router``). The orchestrator
(``toolkit.pipeline.ingest``) calls these in order.
"""

from __future__ import annotations

import functools
import json
import logging
import pickle
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot

from toolkit.core.batch.options import Options
from toolkit.core.batch.profile import Profile
from toolkit.core.batch.quarantine import Quarantined
from toolkit.core.batch.summary import Summary
from toolkit.core.evolution.batch_plan import Plan
from toolkit.core.values.types import Struct
from toolkit.iceberg.ledger import (
    BATCH_ID_PROPERTY,
    WRITE_ID_PROPERTY,
    drop_staged,
    enable_staging,
    publish,
)
from toolkit.iceberg.schema import from_iceberg, to_iceberg
from toolkit.spark.plans import LazyFrame, append
from toolkit.spark.progress import described
from toolkit.spark.router import (
    fitting_codes,
    foreseen,
    jvm_routing,
    payload_texts,
    route_on_jvm,
    route_tallied,
)
from toolkit.spark.tally import Tallied, jvm_tally_ready, observe_json, tallied_payloads
from toolkit.spark.workers import (
    JVM_MODES,
    Mode,
    observe_partition,
    quarantine_partition,
    reread,
    route_partition,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: how often an append is tried again when another writer changed the schema meanwhile
MAX_ATTEMPTS = 10
#: Iceberg's Spark session setting that makes a write to a staging table stage only (set
#: in a session of the write's own: toolkit.spark.settings)
WAP_ID = "spark.wap.id"
#: how often a staged append is tried when another writer took its sequence number
STAGED_ATTEMPTS = 5
#: what a REST catalog (lakana; Iceberg's own TableMetadata check) answers then
_SEQUENCE_RACE = "older than last sequence number"

log = logging.getLogger(__name__)

__all__ = [
    "OnePass",
    "SparkBatch",
    "SparkObservation",
    "Written",
    "observe_on_spark",
    "observe_partitions",
    "quarantine_on_spark",
    "spark_schema",
    "write_batch",
    "write_one_pass",
]


@dataclass(frozen=True)
class SparkBatch:
    """One batch's records as Spark holds them: the frame, how its rows are read
    (``mode``), the options that evolve them, the session that writes them and the id the
    batch lands under."""

    frame: DataFrame
    mode: Mode
    options: Options
    spark: SparkSession
    batch_id: str


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


@described(None, "Profiling")
def observe_on_spark(
    df: DataFrame, mode: Mode, options: Options, batch: int
) -> SparkObservation:
    """Distributed observation: each partition summarizes and profiles its records; the
    driver merges them (both merge exactly). JSON lines are tallied inside the JVM when
    the session has the tally jar (``toolkit.spark.tally``), with the same result."""
    # hinted values are converted before they are observed, by the core in Python workers
    # (docs/rules.md, Type hints): the JVM tally would type them as they came
    if mode in JVM_MODES and not options.hints and jvm_tally_ready(df.sparkSession):
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


@described(None, "Finding records to set aside")
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


@functools.lru_cache(maxsize=32)
def spark_schema(spark: SparkSession, schema: Struct) -> Any:
    """``schema`` as Spark's Iceberg catalog shows a table of that schema (Iceberg's own
    ``SparkSchemaUtil`` converts it). Kept per schema: a JVM round trip that grows with
    the width, which every batch of a stream would otherwise pay."""
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
    #: the snapshot that published the batch; None when another writer had published
    #: the same batch id first (then nothing of this write is visible)
    snapshot: Snapshot | None = None


@described(None, "Writing")
def write_batch(
    batch: SparkBatch,
    table: Table,
    spark_name: str,
    plan: Plan | None = None,
    *,
    clean: bool = True,
    codes: Mapping[tuple[str, ...], frozenset[int]] | None = None,
    notes: Callable[[int], Mapping[str, str]] | None = None,
) -> Written:
    """Route every record of ``batch`` and append them in one Iceberg commit to ``table``
    (``spark_name``: the table as Spark's catalog names it). ``plan`` is the batch's
    plan (the widening policy routes by it); ``clean`` says no record of the batch is to
    be set aside; ``codes`` are the kind codes the JVM tally saw: with them, JSON lines
    are routed inside the JVM (``toolkit.spark.router``), else in Python workers.
    ``notes``: table properties set as the batch is published, given its snapshot's id
    (:func:`toolkit.iceberg.ledger.publish`).

    Spark stages the rows, and :func:`toolkit.iceberg.ledger.publish` publishes them
    unless the batch id landed meanwhile: one batch id lands once, even when two
    processes write it at the same moment, or two threads of one session
    (:func:`_append_staged`)."""
    from pyspark.errors import AnalysisException
    from pyspark.sql.pandas.types import to_arrow_schema

    df, mode, options, spark, batch_id = (
        batch.frame, batch.mode, batch.options, batch.spark, batch.batch_id)
    # RULES 6: the rows are routed against the schema the batch's own plan made, not the
    # table's schema now, which another writer may have moved on meanwhile
    schema = from_iceberg(table.schema()) if plan is None else plan.after
    planned = spark_schema(spark, schema)  # once: a JVM round trip that grows with width
    arrow_schema = to_arrow_schema(planned)
    assert [c.name for c in schema.fields] == arrow_schema.names, "Spark and PyIceberg disagree"
    routing = jvm_routing(schema, codes, options) if mode in JVM_MODES and clean else None
    write_id = _new_write(table, batch_id)
    attempt = 0
    while True:
        target = spark.table(spark_name).schema
        # the JVM routes into the plan's own schema: padding for another writer's columns
        # is left to the Python path
        on_jvm = routing is not None and target == planned
        if on_jvm:
            assert routing is not None
            frame = route_on_jvm(df, routing, target, options)
        else:
            fn = functools.partial(
                _routed_as, target=to_arrow_schema(target), route=route_partition, mode=mode,
                options=options, schema=schema, arrow_schema=arrow_schema, plan=plan,
                clean=clean,
            )
            frame = df.mapInArrow(fn, target)
        try:
            _append_staged(frame, spark_name, batch_id, write_id)
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
            routing = None
    return publish_write(table, write_id, batch_id, "jvm" if on_jvm else "python", notes)


def publish_write(
    table: Table,
    write_id: str,
    batch_id: str,
    where: str,
    notes: Callable[[int], Mapping[str, str]] | None = None,
    *,
    fresh: bool = False,
) -> Written:
    """Publish the rows the write ``write_id`` staged (:func:`toolkit.iceberg.ledger.publish`,
    with ``notes`` and ``fresh``) and say what it appended; nothing when another writer
    had published ``batch_id`` first."""
    snapshot = publish(table, write_id, batch_id, notes, fresh=fresh)
    if snapshot is None:
        return Written(0, where)
    summary = snapshot.summary
    assert summary is not None
    return Written(int(summary.additional_properties.get("added-records", 0)), where, snapshot)


def _new_write(table: Table, batch_id: str) -> str:
    """The id of a new write attempt of ``batch_id``, on a table that stages writes."""
    enable_staging(table)
    return f"{batch_id}/{uuid.uuid4().hex}"


def _append_staged(
    frame: DataFrame | LazyFrame, spark_name: str, batch_id: str, write_id: str
) -> None:
    """Append ``frame`` to the table as a staged snapshot (Iceberg's write-audit-publish),
    tagged with the batch and the write; :func:`toolkit.iceberg.ledger.publish` publishes
    it.

    The write's id is a session setting (``spark.wap.id``), so the append runs in a
    session of its own (:func:`toolkit.spark.plans.append`): another write of the same
    session meanwhile (a second stream, another thread's ingest) neither stages under
    this id nor loses its own, which would publish it unchecked."""
    options = {f"snapshot-property.{BATCH_ID_PROPERTY}": batch_id,
               f"snapshot-property.{WRITE_ID_PROPERTY}": write_id}
    for attempt in range(1, STAGED_ATTEMPTS + 1):
        try:
            append(frame, spark_name, options, {WAP_ID: write_id})
            return
        except Exception as exc:
            # A REST catalog server checks a staged snapshot's sequence number on its own
            # (no requirement the client sends covers it): a writer that raced another one
            # gets a refusal, not the conflict Iceberg retries. The rows are written again
            # on the table as it now is; the refused attempt's files are orphans for
            # maintenance (tests/streams/test_rest_catalog.py)
            if attempt == STAGED_ATTEMPTS or _SEQUENCE_RACE not in str(exc):
                raise


@dataclass(frozen=True)
class OnePass:
    """A batch routed against its table's schema and tallied in the same pass, its rows
    staged (not published): :func:`write_one_pass`."""

    write_id: str
    #: the batch's tally, exactly what :func:`observe_on_spark` gives
    tally: Tallied
    #: whether the routing table foresaw every kind code the tally saw at each key (if
    #: not, some value was written as null, and the write must be done again)
    foreseen: bool
    #: the lines the router set aside (not UTF-8, not JSON objects, malformed, a key
    #: twice), as the Python path sets them aside: for the quarantine
    aside: tuple[Quarantined, ...] = ()


@described(None, "Profiling and writing")
def write_one_pass(
    df: DataFrame,
    options: Options,
    table: Table,
    spark_name: str,
    batch_id: str,
    batch: int,
    known: Mapping[tuple[str, ...], frozenset[int]],
) -> OnePass | None:
    """Route JSON lines against ``table``'s current schema and tally them in the same pass
    inside the JVM, staging the rows (into ``spark_name``, the table as Spark names it):
    the steady state of a stream, where a batch fits the schema, reads its data once.
    ``known``: the array kind codes seen at each key by earlier batches (the routing table
    foresees them, and every scalar code).

    Nothing is published here. The caller plans on :attr:`OnePass.tally` as it plans any
    batch; if the plan changes nothing and the write foresaw every code, the staged rows
    are exactly what the two-pass path (observe, plan, route) writes, and are published
    (:func:`publish_write`); otherwise the caller drops them
    (:func:`toolkit.iceberg.ledger.drop_staged`) and routes again with the tally it has.
    None when the JVM does not route this batch (:func:`jvm_routing`) or Spark refused it
    (the JVM router met a line it would not read, or another writer changed the schema
    first): nothing is staged then, and the caller takes the two-pass path from the start.
    """
    from py4j.protocol import Py4JJavaError  # type: ignore[import-untyped]
    from pyspark.errors import PySparkException

    spark = df.sparkSession
    schema = from_iceberg(table.schema())
    codes = fitting_codes(schema, known)
    routing = jvm_routing(schema, codes, options)
    if routing is None:  # jvm_routing decides what the JVM routes: the two passes do it
        return None
    frame, payloads, partitions = route_tallied(
        df, routing, spark_schema(spark, schema), options
    )
    write_id = _new_write(table, batch_id)
    try:
        _append_staged(frame, spark_name, batch_id, write_id)
    except (Py4JJavaError, PySparkException) as exc:  # a failed job stages nothing
        log.info("batch %s: not written in one pass (%s)", batch_id,
                 str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__)
        return None
    try:
        tally = tallied_payloads(payload_texts(spark, payloads), partitions, options, batch)
    except BaseException:
        drop_staged(table, write_id)
        raise
    if tally is None:  # a task's payload went missing: the two passes do the batch
        drop_staged(table, write_id)
        return None
    aside = reread(tally.aside, batch_id)
    if aside is None:  # a line the JVM would not read is a record to Python: two passes
        log.info("batch %s: a line the JVM router set aside reads as a record", batch_id)
        drop_staged(table, write_id)
        return None
    return OnePass(write_id, tally, foreseen(tally.codes, codes), tuple(aside))


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


#: for the columnar path of typed sources (``toolkit.pipeline.typed``): a write of its own
#: projection, staged and published as :func:`write_batch` stages and publishes
new_write = _new_write
append_staged = _append_staged
