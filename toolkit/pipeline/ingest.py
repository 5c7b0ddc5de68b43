"""Ingest one batch into a real Iceberg table: profile on Spark, plan with the core engine,
commit with PyIceberg, route on Spark, append with Spark's Iceberg writer.

Every decision is the same core code :func:`toolkit.simulate` runs, so a table ingested
batch by batch equals the simulation of the same batches. JSON lines are profiled and
routed inside the JVM (``toolkit.spark.tally``, ``toolkit.spark.router``: the core still
decides, the JVM converts); everything else runs the core itself in Spark's Python workers.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import (
    TableAlreadyExistsError,
)
from pyiceberg.table import Table

from toolkit.core.batch.arrivals import Arrivals
from toolkit.core.batch.offsets import OffsetRange, parse_batch_id, range_batch_id, resume_offsets
from toolkit.core.batch.options import REWRITES_WHEN_APPROVED, Options, make_options, takes_options
from toolkit.core.batch.profile import Profile
from toolkit.core.batch.summary import Summary
from toolkit.core.engine import make_plan
from toolkit.core.evolution.batch_plan import Plan
from toolkit.core.evolution.lineage import plan_lineage_properties
from toolkit.core.evolution.state import TableState
from toolkit.core.maintenance.folding import choose_fold
from toolkit.core.values.types import Struct
from toolkit.errors import IncompatibleRecordError, PlanChangedError, StalePlanError
from toolkit.iceberg.catalog import NEW_TABLE_PROPERTIES, ensure_namespace, load_table
from toolkit.iceberg.commit import commit_plan
from toolkit.iceberg.ledger import (
    BATCH_ID_PROPERTY,
    STAGING_PROPERTY,
    drop_staged,
    ingested_batches,
)
from toolkit.iceberg.operations import evolve
from toolkit.iceberg.quarantine import append_quarantined, quarantine_table_id
from toolkit.iceberg.schema import from_iceberg, to_iceberg
from toolkit.iceberg.statistics import arrivals_notes
from toolkit.kafka import KafkaTopic, TopicReader, is_kafka_url, plan_ranges, to_lines
from toolkit.pipeline.sources import as_dataframe
from toolkit.spark.batches import (
    OnePass,
    SparkObservation,
    observe_on_spark,
    publish_write,
    quarantine_on_spark,
    write_batch,
    write_one_pass,
)
from toolkit.spark.progress import tracking
from toolkit.spark.router import codes_note, kept_codes
from toolkit.spark.tally import jvm_tally_ready
from toolkit.spark.workers import JVM_MODES, Mode

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
    #: whether the batch fit the table's schema and was read once, routed and tallied in
    #: the same pass (see :func:`ingest`); else it was observed, planned, then routed
    one_pass: bool = False

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


def _one_pass_codes(
    table: Table | None, mode: str, options: Options, spark: SparkSession
) -> dict[tuple[str, ...], frozenset[int]] | None:
    """The array kind codes ``table`` keeps (:func:`toolkit.spark.router.kept_codes`) when
    a batch may be written in one pass (see :func:`toolkit.spark.batches.write_one_pass`);
    None when it may not: a new or empty table, records other than JSON lines, a policy
    the JVM does not route, or a table with list columns that keeps no codes yet (written
    before they were kept: the routing table could not foresee their arrays, so the pass
    would mostly be done again)."""
    if table is None or mode not in JVM_MODES or not options.policy.jvm_routes:
        return None
    schema = from_iceberg(table.schema())
    if not schema.fields or not jvm_tally_ready(spark):
        return None
    kept = kept_codes(table.metadata.properties)
    if not kept and _has_lists(schema):
        return None
    return kept


def _has_lists(struct: Struct) -> bool:
    return any(
        c.shape.dim or (isinstance(c.leaf, Struct) and _has_lists(c.leaf))
        for c in struct.fields
    )


def _arrivals(seen: SparkObservation, arriving: bool) -> Arrivals:
    """What a batch brought, recorded with it (toolkit.statistics); a replay records that
    nothing new arrived (its records were counted when they first arrived)."""
    return Arrivals.of(seen.profile) if arriving else Arrivals()


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
    loaded: Table | None = None,
) -> tuple[Table, Plan, int]:
    """Plan against the table as it is, commit; re-plan when another writer got there
    first (RULES 6: a stale plan is never applied as is). With ``expected`` (the state a
    user previewed), a moved table is refused instead of re-planned; with ``approved``, a
    plan other than the approved one is refused. ``check`` sees each plan before it is
    committed, and may refuse it by raising. ``loaded``: the table as the caller just
    loaded it, planned against on the first attempt."""
    moved: StalePlanError | None = None
    for attempt in range(1, MAX_ATTEMPTS + 1):
        # loading parses the whole metadata, which grows with every schema a table keeps;
        # the first plan uses the caller's copy (the commit's requirements catch a table
        # that moved since), a re-plan loads it again
        table = loaded if attempt == 1 and loaded is not None else load_table(
            catalog, identifier)
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
            ensure_namespace(catalog, namespace)
            log = plan_lineage_properties(plan, {}, batch_id)  # RULES 6 lineage
            # a lineage entry too big for the table's properties (a first batch of
            # thousands of columns) goes to a fold file, which needs the table's folder:
            # the table is created empty, then the plan is committed (bounded properties)
            big = bool(choose_fold(tuple(log.items())))
            try:
                # batches are staged, then published once (toolkit.iceberg.ledger)
                table = catalog.create_table(
                    identifier, schema=to_iceberg(Struct() if big else plan.after),
                    properties={**NEW_TABLE_PROPERTIES, **({} if big else log),
                                STAGING_PROPERTY: "true"},
                )
            except TableAlreadyExistsError:
                continue
            if not big:
                return table, plan, attempt
            try:
                return commit_plan(table, plan, TableState.of(table), batch_id=batch_id), \
                    plan, attempt
            except StalePlanError as exc:  # another writer committed to the new table first
                if expected is not None:
                    raise
                moved = exc
                continue
        state = TableState.of(table)
        try:
            if plan.rewrites:
                # RULES 5: approved rewrites run after the plan's other changes, all in one
                # commit (readers never see the columns added without the rewrite)
                evolve(catalog, table, plan, expected=state, batch=batch_id)
                table.refresh()
            else:
                table = commit_plan(table, plan, state, batch_id=batch_id)
            return table, plan, attempt
        except StalePlanError as exc:
            if expected is not None:
                raise
            moved = exc
    raise RuntimeError(
        f"{identifier}: other writers kept changing the table; gave up after "
        f"{MAX_ATTEMPTS} plans"
    ) from moved


@takes_options(defaults={"allow_rewrites": REWRITES_WHEN_APPROVED})  # RULES 5
def ingest(
    source: Any,
    table: str,
    catalog: Catalog,
    spark: SparkSession,
    batch_id: str | None = None,
    *,
    approved: Plan | None = None,
    expected: TableState | None = None,
    format: str | None = None,
    arriving: bool = True,
    **options: Any,
) -> IngestReport:
    """Ingest one batch (one task time) into ``table`` (``namespace.name``).

    ``source``: ``kafka://HOST:PORT/TOPIC`` (the topic up to its end offsets now, from
    where the table's ledger says it stands: see :func:`ingest_topic_batch`; keyword
    ``provenance``, ``group``, ``client_options``), a list of dicts, a path, glob or
    folder of JSON-lines, JSON, Parquet, ORC, CSV or Avro files (by extension, ``.gz``
    too for the text ones), a Spark DataFrame
    (one string column of raw JSON, or typed columns), a pandas, Arrow or Polars frame
    (typed columns keep their types, RULES 1): any kind of
    :data:`~toolkit.pipeline.sources.SOURCE_KINDS`; ``format`` names the kind when the
    source cannot tell it (files without extensions). The table and its namespace are
    created on first ingest. ``batch_id`` is stored in the snapshot summary; a batch id
    already ingested writes nothing the second time. ``options`` as for
    :func:`toolkit.simulate`.

    ``approved`` and ``expected`` hold the batch to a plan a user approved (see
    :func:`plan_preview`): if the table is no longer in the ``expected`` state it raises
    :class:`~toolkit.iceberg.commit.StalePlanError`, and if the batch needs other changes
    than ``approved`` it raises :class:`~toolkit.iceberg.commit.PlanChangedError`; either
    way nothing is applied.

    What the batch's records brought is recorded with it, for
    :func:`toolkit.statistics` (``arrived``); ``arriving=False`` says they were counted
    when they first arrived (a replay of quarantined records).
    """
    if is_kafka_url(source):
        return _ingest_topic(source, table, catalog, spark, batch_id, approved, expected,
                             options)
    if "allow_rewrites" not in options:  # RULES 5: a rewrite runs only when approved
        options["allow_rewrites"] = approved is not None and bool(approved.rewrites)
    opts = make_options(**options)
    batch_id = batch_id or uuid.uuid4().hex
    with tracking(spark, f"Ingesting batch {batch_id} into {table}") as track:
        report = _ingest_batch(source, table, catalog, spark, batch_id, opts, approved,
                               expected, format, arriving)
        track.finish(f"Batch {batch_id} was already in {table}" if report.skipped else
                     f"Wrote batch {batch_id}: {report.rows_written:,} rows into {table}")
    return report


def _ingest_batch(
    source: Any,
    table: str,
    catalog: Catalog,
    spark: SparkSession,
    batch_id: str,
    opts: Options,
    approved: Plan | None,
    expected: TableState | None,
    format: str | None,
    arriving: bool,
) -> IngestReport:
    existing = load_table(catalog, table)
    batch_index = 0 if existing is None else len(existing.snapshots())
    df, kind = as_dataframe(spark, source, format)
    mode = kind.mode
    if existing is not None and batch_id in ingested_batches(existing):
        current = from_iceberg(existing.schema())
        nothing = Plan(batch_index, current, current, ())
        return IngestReport(table, batch_id, nothing, 0, None, Profile(), skipped=True)

    known = _one_pass_codes(existing, mode, opts, spark) \
        if approved is None and expected is None else None
    one = None
    if known is not None:
        assert existing is not None
        one = write_one_pass(df, opts, existing, f"{catalog.name}.{table}", batch_id,
                             batch_index, known)
    if one is None:
        seen = observe_on_spark(df, mode, opts, batch_index)
        return _planned(df, mode, seen, existing, catalog, spark, table, batch_id, opts,
                        batch_index, approved, expected, arriving)
    assert existing is not None
    seen = SparkObservation(
        one.tally.summary, one.tally.profile, len(one.aside), next(iter(one.aside), None),
        one.tally.codes,
    )
    try:
        return _planned(df, mode, seen, existing, catalog, spark, table, batch_id, opts,
                        batch_index, approved, expected, arriving, one)
    except BaseException:
        with contextlib.suppress(Exception):  # the error on the way is the one to see
            drop_staged(existing, one.write_id)  # its staged rows go
        raise


def _planned(
    df: DataFrame,
    mode: Mode,
    seen: SparkObservation,
    existing: Table | None,
    catalog: Catalog,
    spark: SparkSession,
    table: str,
    batch_id: str,
    opts: Options,
    batch_index: int,
    approved: Plan | None,
    expected: TableState | None,
    arriving: bool,
    one: OnePass | None = None,
) -> IngestReport:
    """Plan the batch ``seen`` observed, commit the plan, write the rows: those ``one``
    staged when its tally was planned against the very table it was routed into (the plan
    changes nothing, no other writer moved the table, the routing foresaw every kind),
    else routed now. The same plan and the same checks either way."""
    policy = opts.policy
    fail = opts.on_incompatible == "fail"
    if fail and seen.first_aside is not None:
        raise IncompatibleRecordError(seen.first_aside)
    # a policy whose routing sets records aside (the widening one) needs the quarantine
    # pass on every batch, and with on_incompatible="fail" refuses such records up front;
    # so does a plan with rare types (the upsolver policy's rare_type_percent)
    if seen.summary.rows == 0:
        if one is not None and existing is not None:  # an empty batch publishes nothing
            drop_staged(existing, one.write_id)
        schema = Struct() if existing is None else from_iceberg(existing.schema())
        plan = Plan(batch_index, schema, schema, ())
        aside = quarantine_on_spark(df, mode, opts, plan, batch_id) if seen.aside else []
        quarantined = append_quarantined(
            catalog, table, aside, batch_id,
            schema_id=None if existing is None else existing.metadata.current_schema_id)
        return IngestReport(table, batch_id, plan, 0, None, seen.profile,
                            quarantined=quarantined)

    def refuse_incompatible(plan: Plan) -> None:
        if not policy.sets_aside_under(plan):
            return
        items = quarantine_on_spark(df, mode, opts, plan, batch_id)
        if items:
            raise IncompatibleRecordError(items[0])

    tbl, plan, attempts = _plan_and_commit(
        catalog, table, seen.summary, opts, batch_index, approved, expected,
        check=refuse_incompatible if fail else None, batch_id=batch_id,
        loaded=existing,
    )
    arrived = arrivals_notes(_arrivals(seen, arriving))
    # the array shapes this batch brought, kept for the one-pass routing of the next ones
    codes = {} if seen.codes is None else codes_note(
        kept_codes(tbl.metadata.properties), seen.codes)

    def notes(snapshot_id: int) -> dict[str, str]:
        return {**arrived(snapshot_id), **codes}

    quarantined = 0
    if one is not None and one.foreseen and attempts == 1 and not plan.changed \
            and not policy.sets_aside_under(plan):
        # planned against the table the rows were routed into, and nothing to change:
        # the staged rows are those the routing below would write, by the same rules
        # (planning read the table after the write: commit_plan looks before a no-op);
        # the lines the router set aside go to the quarantine first, as below
        quarantined = append_quarantined(catalog, table, one.aside, batch_id)
        written = publish_write(tbl, one.write_id, batch_id, "jvm", notes, fresh=True)
    else:
        if one is not None:  # routed again, on the tally in hand
            drop_staged(tbl, one.write_id)
        if policy.sets_aside_under(plan) or seen.aside:
            aside = quarantine_on_spark(df, mode, opts, plan, batch_id)
            # replay routes these records by field ID from the schema they met
            quarantined = append_quarantined(catalog, table, aside, batch_id,
                                             schema_id=tbl.metadata.current_schema_id)
        written = write_batch(
            df, mode, opts, tbl, catalog, spark, table, batch_id, plan,
            clean=not (seen.aside or plan.rare),  # rare types: routed by Python workers
            codes=seen.codes, notes=notes,
        )
        one = None
    one_pass = one is not None
    if written.snapshot is None:  # another process published this batch id first
        return IngestReport(table, batch_id, plan, 0, None, seen.profile, attempts=attempts,
                            quarantined=quarantined, skipped=True, one_pass=one_pass)
    return IngestReport(
        table, batch_id, plan, written.rows, written.snapshot.snapshot_id,
        seen.profile, attempts=attempts, quarantined=quarantined,
        routed_in=written.where, one_pass=one_pass,
    )


# --- Kafka: one batch of a topic, exactly once ---------------------------------------------------

#: what a batch id of messages set aside before ingest ends with in the quarantine table
#: (``ingest`` quarantines its own records under the batch id itself)
ASIDE_SUFFIX = "#not-records"


def _ingest_topic(
    url: str, table: str, catalog: Catalog, spark: SparkSession, batch_id: str | None,
    approved: Plan | None, expected: TableState | None, options: dict[str, Any],
) -> IngestReport:
    """``ingest("kafka://...")``: the topic up to its end offsets at the start, one batch."""
    if batch_id is not None or approved is not None or expected is not None:
        raise ValueError("a Kafka batch is named by the offsets it reads: leave out "
                         "batch_id=, approved= and expected=")
    group = str(options.pop("group", None) or f"toolkit-{table}")
    client = options.pop("client_options", None)
    provenance = options.pop("provenance", ())
    make_options(**options)
    with TopicReader(KafkaTopic.parse(url), group, client) as reader:
        upto = {p: high for p, (_, high) in reader.watermarks().items()}
        report = ingest_topic_batch(reader, table, catalog, spark, options, upto=upto,
                                    provenance=provenance)
    if report is None:
        current = load_table(catalog, table)
        schema = Struct() if current is None else from_iceberg(current.schema())
        return IngestReport(table, f"{url} (nothing new)", Plan(0, schema, schema, ()), 0,
                            None, Profile(), skipped=True)
    return report


def provenance_fields(provenance: bool | Sequence[str]) -> tuple[str, ...]:
    """The provenance columns asked for: True is all of ``toolkit.kafka.PROVENANCE``."""
    from toolkit.kafka import PROVENANCE

    if provenance is True:
        return PROVENANCE
    if provenance is False or provenance is None:
        return ()
    unknown = [f for f in provenance if f not in PROVENANCE]
    if unknown:
        raise ValueError(f"provenance: no column {unknown[0]!r}; choose among "
                         f"{', '.join(PROVENANCE)}")
    return tuple(provenance)


def _intended(intent: Path | None, topic: str, planned: tuple[OffsetRange, ...],
              marks: Mapping[int, tuple[int, int]]) -> tuple[OffsetRange, ...]:
    """The batch a crashed run had started, when it starts where this one would: read the
    same ranges again, so the batch keeps its id (and what was set aside of it is not set
    aside twice); else the planned ranges."""
    if intent is None or not intent.is_file():
        return planned
    parsed = parse_batch_id(intent.read_text().strip())
    if parsed is None or parsed[0] != topic:
        return planned
    _, ranges = parsed
    same_start = {(r.partition, r.start) for r in ranges} == \
        {(r.partition, r.start) for r in planned}
    readable = all(r.end <= marks.get(r.partition, (0, -1))[1] for r in ranges)
    return ranges if same_start and readable else planned


def _mark_batch(table: Table, batch_id: str) -> IngestReport:
    """A batch with nothing to write (every message set aside) still lands in the ledger:
    an empty append carrying its id, so the topic's offsets move past it."""
    with table.transaction() as tx, tx.update_snapshot(
            snapshot_properties={BATCH_ID_PROPERTY: batch_id}).fast_append():
        pass
    table.refresh()
    schema = from_iceberg(table.schema())
    snap = table.current_snapshot()
    return IngestReport(".".join(table.name()), batch_id,
                        Plan(len(table.snapshots()), schema, schema, ()), 0,
                        None if snap is None else snap.snapshot_id, Profile())


def ingest_topic_batch(
    reader: TopicReader,
    table: str,
    catalog: Catalog,
    spark: SparkSession,
    options: Mapping[str, Any],
    *,
    max_messages: int | None = None,
    upto: Mapping[int, int] | None = None,
    provenance: bool | Sequence[str] = (),
    intent: Path | None = None,
) -> IngestReport | None:
    """Ingest the next batch of ``reader``'s topic into ``table``, exactly once; None when
    there is nothing new to read.

    The batch starts where the table's ledger says each partition stands (the batch ids
    of a topic are its offset ranges, ``toolkit.core.batch.offsets``), so a run killed at any
    point resumes with no message lost or written twice; the consumer group's offsets
    are committed after the table, as a hint for other tools. It reads up to the high
    watermarks (or ``upto``), at most ``max_messages`` per partition. Messages whose value
    is not a JSON object are set aside with their topic, partition and offset.
    ``intent``: a file naming the batch under way, so a batch killed half-way is read
    again with the same ranges (a checkpoint; without one, what such a batch set aside
    may be set aside twice). ``options``: evolution options, as for :func:`ingest`.
    """
    topic = reader.source.topic
    fields = provenance_fields(provenance)
    existing = load_table(catalog, table)
    resume = resume_offsets(() if existing is None else ingested_batches(existing), topic)
    marks = reader.watermarks()
    ranges = plan_ranges(resume, marks, reader.committed(), max_messages, upto)
    ranges = _intended(intent, topic, ranges, marks)
    if not any(r.count for r in ranges):
        return None
    bid = range_batch_id(topic, ranges)
    if intent is not None:  # written whole, then renamed: never half a batch id
        intent.parent.mkdir(parents=True, exist_ok=True)
        part = intent.with_name(intent.name + ".part")
        part.write_text(bid)
        os.replace(part, intent)
    lines, aside = to_lines(topic, reader.read(ranges), bid, fields)
    if existing is None and not lines:
        return None  # no table to mark the batch in: read again once records come
    aside_count = append_quarantined(catalog, table, aside, bid + ASIDE_SUFFIX)
    if lines:
        frame = spark.createDataFrame([(line,) for line in lines], "value string")
        report = ingest(frame, table, catalog, spark, bid, format="jsonl-dataframe",
                        **options)
    else:
        assert existing is not None
        report = _mark_batch(existing, bid)
    reader.commit(ranges)
    return dataclasses.replace(report, quarantined=report.quarantined + aside_count)
