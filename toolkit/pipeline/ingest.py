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
from toolkit.core.batch.contracts import (
    CONTRACTS_PROPERTY,
    Contracts,
    contract_error,
    frozen,
)
from toolkit.core.batch.conversion_warnings import conversion_warnings
from toolkit.core.batch.hint_plans import hints_note
from toolkit.core.batch.offsets import OffsetRange, parse_batch_id, range_batch_id, resume_offsets
from toolkit.core.batch.options import (
    REWRITES_WHEN_APPROVED,
    Options,
    make_options,
    obeyed,
    takes_options,
)
from toolkit.core.batch.profile import Profile
from toolkit.core.batch.quarantine import Quarantined
from toolkit.core.batch.required import requires
from toolkit.core.batch.summary import Summary
from toolkit.core.engine import make_plan
from toolkit.core.evolution.batch_plan import Plan
from toolkit.core.evolution.field_operations import refuse_identifier_changes
from toolkit.core.evolution.lineage import plan_lineage_properties
from toolkit.core.evolution.state import TableState
from toolkit.core.maintenance.folding import choose_fold
from toolkit.core.values.types import Struct
from toolkit.core.values.wording import counted
from toolkit.errors import IncompatibleRecordError, PlanChangedError, StalePlanError
from toolkit.iceberg.catalog import NEW_TABLE_PROPERTIES, ensure_namespace, load_table
from toolkit.iceberg.commit import commit_plan
from toolkit.iceberg.ledger import (
    BATCH_ID_PROPERTY,
    STAGING_PROPERTY,
    drop_staged,
    ingested_batches,
)
from toolkit.iceberg.new_tables import (
    STAGING_FOR_PROPERTY,
    discard_table,
    new_table_location,
    promote,
    staging_identifier,
)
from toolkit.iceberg.operations import evolve
from toolkit.iceberg.quarantine import append_quarantined, quarantine_table_id
from toolkit.iceberg.schema import from_iceberg, to_iceberg
from toolkit.iceberg.statistics import arrivals_notes
from toolkit.kafka import KafkaTopic, TopicReader, is_kafka_url, plan_ranges, to_lines
from toolkit.pipeline.context import BatchContext
from toolkit.pipeline.sources import as_dataframe, kind_of
from toolkit.pipeline.typed import (
    Head,
    columnar_source,
    guessed_plan,
    observe_columnar,
    write_columnar,
    write_columnar_one_pass,
)
from toolkit.spark.batches import (
    OnePass,
    SparkBatch,
    SparkObservation,
    Written,
    observe_on_spark,
    publish_write,
    quarantine_on_spark,
    write_batch,
    write_one_pass,
)
from toolkit.spark.columnar import TypedSeen, typed_columns
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
    #: values written only as another kind of value (a boolean as a number...), per field
    #: and observed type, in words (:mod:`toolkit.core.batch.conversion_warnings`)
    warnings: tuple[str, ...] = ()

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
        warned = "".join(f"\nWarning: {w}" for w in self.warnings)
        return (
            f"{self.table}: batch {self.batch_id} wrote {counted(self.rows_written, 'row')} "
            f"(snapshot {self.snapshot_id}){aside}\n{self.plan}{warned}"
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
    if options.hints:  # hinted values are converted by the core, in Python (docs/rules.md)
        return None
    schema = from_iceberg(table.schema())
    if not schema.fields or requires(schema) or not jvm_tally_ready(spark):
        return None  # (a required field: records that leave it empty are set aside first)
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
    ctx: BatchContext,
    summary: Summary,
    batch_index: int,
    loaded: Table | None,
    check: Callable[[Plan], None] | None = None,
    profile: Profile | None = None,
) -> tuple[Table, Plan, int]:
    """Plan against the table as it is, commit; re-plan when another writer got there
    first (RULES 6: a stale plan is never applied as is). With ``ctx.expected`` (the state
    a user previewed), a moved table is refused instead of re-planned; with
    ``ctx.approved``, a plan other than the approved one is refused. ``check`` sees each
    plan before it is committed, and may refuse it by raising. ``loaded``: the table as
    the caller just loaded it, planned against on the first attempt; ``profile`` the
    batch's (reasons then say where a new field starts in the batch)."""
    moved: StalePlanError | None = None
    for attempt in range(1, MAX_ATTEMPTS + 1):
        # loading parses the whole metadata, which grows with every schema a table keeps;
        # the first plan uses the caller's copy (the commit's requirements catch a table
        # that moved since), a re-plan loads it again
        current = loaded if attempt == 1 and loaded is not None else load_table(
            ctx.catalog, ctx.table)
        if ctx.expected is not None and TableState.of(current) != ctx.expected:
            raise StalePlanError(ctx.table, ctx.expected, TableState.of(current))
        schema = Struct() if current is None else from_iceberg(current.schema())
        assigned = 0 if current is None else current.metadata.last_column_id
        plan = make_plan(schema, summary, ctx.options, batch_index, assigned, seen=profile)
        if ctx.approved is not None and not plan.same_changes(ctx.approved):
            raise PlanChangedError(ctx.table, ctx.approved, plan)
        if check is not None:
            check(plan)
        try:
            committed = _commit(ctx, current, plan)
        except StalePlanError as exc:  # another writer committed first
            if ctx.expected is not None:
                raise
            moved = exc
            continue
        if committed is not None:
            return committed, plan, attempt
    raise RuntimeError(
        f"{ctx.table}: other writers kept changing the table; gave up after "
        f"{MAX_ATTEMPTS} plans"
    ) from moved


def _commit(ctx: BatchContext, loaded: Table | None, plan: Plan) -> Table | None:
    """Commit ``plan`` to the table (``loaded``; None: create it); None when another
    writer created the table first (plan again). Raises :class:`StalePlanError` when
    another writer committed to it first."""
    if loaded is None:
        return _create(ctx, plan)
    state = TableState.of(loaded)
    if plan.rewrites:
        # the policies never rewrite an identifier field: refused whole, as simulate does
        refuse_identifier_changes(f"the plan for {ctx.table}", plan.after,
                                  loaded.schema().identifier_field_ids, plan.rewritten)
        # RULES 5: approved rewrites run after the plan's other changes, all in one
        # commit (readers never see the columns added without the rewrite)
        evolve(ctx.catalog, loaded, plan, expected=state, batch=ctx.batch_id)
        loaded.refresh()
        return loaded
    return commit_plan(loaded, plan, state, batch_id=ctx.batch_id)


def _create(ctx: BatchContext, plan: Plan) -> Table | None:
    """Create the table with ``plan``'s schema (and its namespace); None when another
    writer created it first."""
    ensure_namespace(ctx.catalog, ctx.table.rsplit(".", 1)[0])
    lineage = plan_lineage_properties(plan, {}, ctx.batch_id)  # RULES 6 lineage
    # a lineage entry too big for the table's properties (a first batch of thousands of
    # columns) goes to a fold file, which needs the table's folder: the table is created
    # empty, then the plan is committed (bounded properties)
    big = bool(choose_fold(tuple(lineage.items())))
    try:
        # batches are staged, then published once (toolkit.iceberg.ledger)
        created = ctx.catalog.create_table(
            ctx.table, schema=to_iceberg(Struct() if big else plan.after),
            properties={**NEW_TABLE_PROPERTIES, **({} if big else lineage),
                        STAGING_PROPERTY: "true"},
        )
    except TableAlreadyExistsError:
        return None
    if not big:
        return created
    return commit_plan(created, plan, TableState.of(created), batch_id=ctx.batch_id)


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
    ctx = BatchContext(table, catalog, spark, make_options(**options),
                       batch_id or uuid.uuid4().hex, approved, expected, arriving)
    with tracking(spark, f"Ingesting batch {ctx.batch_id} into {table}") as track:
        report = _ingest_batch(ctx, source, format)
        rows = counted(report.rows_written, "row")
        track.finish(f"Batch {ctx.batch_id} was already in {table}" if report.skipped else
                     f"Wrote batch {ctx.batch_id}: {rows} into {table}")
    if report.skipped:
        return report
    warned = report.warnings  # (told by _report, under the options the batch ran under)
    if not report.rows_written:
        hint = _no_json_hint(source, format, report)
        warned += () if hint is None else (hint,)
    return dataclasses.replace(report, warnings=warned) if warned else report


def _no_json_hint(source: Any, format: str | None, report: IngestReport) -> str | None:
    """Why a DataFrame of one string column landed nothing, when none of its lines was a
    JSON object: such a frame is read as JSON lines unless ``format`` says otherwise."""
    if not report.quarantined or report.profile.records or format is not None \
            or kind_of(source).name != "jsonl-dataframe":
        return None
    (column,) = source.columns
    return (f"no line of the DataFrame's one string column {column!r} was a JSON object, "
            f"so {counted(report.quarantined, 'line')} went to the quarantine: a DataFrame "
            "of one string column is read as JSON lines; to land its text as a column "
            "instead, pass format=\"dataframe\"")


def _ingest_batch(
    ctx: BatchContext, source: Any, format: str | None, *, fresh_tried: bool = False
) -> IngestReport:
    """Read ``source`` on Spark and land it as one batch: written in one pass when it fits
    the table (:func:`toolkit.spark.batches.write_one_pass`), or when typed columns make
    a new table as guessed (:func:`_fresh_one_pass`), else observed, then planned,
    committed and written (:func:`_planned`)."""
    given = ctx
    loaded = load_table(ctx.catalog, ctx.table)
    batch_index = 0 if loaded is None else len(loaded.snapshots())
    # the field contracts and hints the table keeps hold when none are given (docs/rules.md,
    # Contracts, Type hints)
    ctx = dataclasses.replace(
        ctx, options=obeyed(ctx.options, None if loaded is None else loaded.properties))
    # typed columns take the columnar path (toolkit.pipeline.typed); its DataFrame is
    # the one the Python path reads too when a step must be done value by value
    typed_source = columnar_source(ctx.spark, source, kind_of(source, format), ctx.options)
    typed = None if typed_source is None else typed_source.frame
    head = None if typed_source is None else typed_source.head
    mode: Mode
    if typed is not None:
        df, mode = typed, "rows"
    else:
        df, kind = as_dataframe(ctx.spark, source, format)
        mode = kind.mode
    if typed is not None and loaded is None and not ctx.reviewed and not fresh_tried:
        fresh = _fresh_one_pass(ctx, typed, head)
        if fresh is not None:
            return fresh
        if load_table(ctx.catalog, ctx.table) is not None:  # another writer made it
            return _ingest_batch(given, source, format, fresh_tried=True)
    records = SparkBatch(df, mode, ctx.options, ctx.spark, ctx.batch_id)
    if loaded is not None and ctx.batch_id in ingested_batches(loaded):
        current = from_iceberg(loaded.schema())
        nothing = Plan(batch_index, current, current, ())
        return IngestReport(ctx.table, ctx.batch_id, nothing, 0, None, Profile(),
                            skipped=True)

    known = None if ctx.reviewed else _one_pass_codes(loaded, mode, ctx.options, ctx.spark)
    typed_seen: TypedSeen | None = None
    one = None
    if known is not None:
        assert loaded is not None
        one = write_one_pass(df, ctx.options, loaded, ctx.spark_name, ctx.batch_id,
                             batch_index, known)
    elif typed is not None and not ctx.reviewed and loaded is not None \
            and loaded.schema().fields and not requires(from_iceberg(loaded.schema())):
        # typed columns into a table that has columns: the steady state's one pass
        both = write_columnar_one_pass(typed, ctx.options, loaded, ctx.spark_name,
                                       ctx.batch_id, batch_index, head)
        one, typed_seen = (None, None) if both is None else both
    if one is None:
        columnar = None if typed is None else observe_columnar(typed, ctx.options,
                                                               batch_index)
        seen = observe_on_spark(df, mode, ctx.options, batch_index) if columnar is None \
            else columnar[0]
        return _planned(ctx, records, seen, loaded, batch_index,
                        typed=None if columnar is None else columnar[1])
    assert loaded is not None
    seen = SparkObservation(
        one.tally.summary, one.tally.profile, len(one.aside), next(iter(one.aside), None),
        one.tally.codes,
    )
    try:
        return _planned(ctx, records, seen, loaded, batch_index, one, typed_seen)
    except BaseException:
        with contextlib.suppress(Exception):  # the error on the way is the one to see
            drop_staged(loaded, one.write_id)  # its staged rows go
        raise


def _fresh_one_pass(
    ctx: BatchContext, typed: DataFrame, head: Head | None
) -> IngestReport | None:
    """A batch of typed columns into a new table in one pass (docs/performance.md). The
    table is made under a staging name (:mod:`toolkit.iceberg.new_tables`) from the plan
    of the batch's usual kinds (:func:`guessed_plan`); the batch is routed into it,
    counted and staged in one pass; it is published and renamed to its real name only if
    the plan of the counts is that very plan (what the two passes would have made). None
    when it is not, or another writer created the table meanwhile: then the staging
    table and its files are gone, and the batch takes the two passes."""
    cols = typed_columns(typed)  # once, for the guess and the pass
    guess = None if cols is None else guessed_plan(cols, ctx.options)
    if cols is None or guess is None:
        return None
    ensure_namespace(ctx.catalog, ctx.table.rsplit(".", 1)[0])
    location = new_table_location(ctx.catalog, ctx.table)
    if location is None:
        return None
    staging = staging_identifier(ctx.table)
    created = ctx.catalog.create_table(
        staging, schema=to_iceberg(guess.after), location=location,
        # marked, so that maintenance drops it if this process dies before the rename
        properties={**NEW_TABLE_PROPERTIES, STAGING_PROPERTY: "true",
                    STAGING_FOR_PROPERTY: ctx.table})
    kept = False
    try:
        both = write_columnar_one_pass(cols, ctx.options, created,
                                       f"{ctx.catalog.name}.{staging}", ctx.batch_id, 0, head)
        if both is None:
            return None
        tally = both[0].tally
        seen = SparkObservation(tally.summary, tally.profile)
        plan = make_plan(Struct(), seen.summary, ctx.options, 0, 0, seen=seen.profile)
        lineage = plan_lineage_properties(plan, {}, ctx.batch_id)  # RULES 6 lineage
        if plan.after != guess.after or plan.rare or plan.held or not seen.summary.rows \
                or ctx.options.policy.sets_aside_under(plan) \
                or choose_fold(tuple(lineage.items())):
            return None
        notes = _notes(ctx, seen, created)
        written = publish_write(created, both[0].write_id, ctx.batch_id, "jvm",
                                lambda snapshot: {**lineage, **notes(snapshot)})
        if promote(ctx.catalog, staging, ctx.table) is None:
            return None
        kept = True
        return _report(ctx, plan, seen, written, 1, 0, one_pass=True)
    finally:
        if not kept:
            discard_table(ctx.catalog, staging)


def _planned(
    ctx: BatchContext,
    records: SparkBatch,
    seen: SparkObservation,
    loaded: Table | None,
    batch_index: int,
    one: OnePass | None = None,
    typed: TypedSeen | None = None,
) -> IngestReport:
    """Plan the batch ``seen`` observed, commit the plan, write the rows: those ``one``
    staged when its tally was planned against the very table it was routed into (the plan
    changes nothing, no other writer moved the table, the routing foresaw every kind),
    else routed now (``typed``: a batch of typed columns, by one projection when it
    can). The same plan and the same checks either way."""
    policy = ctx.options.policy
    fail = ctx.options.on_incompatible == "fail"
    if fail and seen.first_aside is not None:
        raise IncompatibleRecordError(seen.first_aside)
    # a policy whose routing sets records aside (the widening one) needs the quarantine
    # pass on every batch, and with on_incompatible="fail" refuses such records up front;
    # so does a plan with rare types (the upsolver policy's rare_type_percent)
    if seen.summary.rows == 0:
        return _empty(ctx, records, seen, loaded, batch_index, one)

    def refuse_incompatible(plan: Plan) -> None:
        if not policy.sets_aside_under(plan) or not (fail or frozen(plan.held)):
            return
        items = quarantine_on_spark(records.frame, records.mode, ctx.options, plan,
                                    ctx.batch_id)
        if frozen(plan.held):  # a freeze contract fails the batch before anything commits
            modes = {b.key: b.mode for b in plan.held}
            refused = next(q for q in items
                           if q.reason == "contract" and modes.get(q.field or "") == "freeze")
            raise contract_error(refused)
        # (a record a contract sets aside goes to the quarantine whatever on_incompatible says)
        items = [q for q in items if q.reason not in ("contract", "contract-value")]
        if items and fail:
            raise IncompatibleRecordError(items[0])

    committed, plan, attempts = _plan_and_commit(
        ctx, seen.summary, batch_index, loaded, check=refuse_incompatible,
        profile=seen.profile,
    )
    notes = _notes(ctx, seen, committed)
    aside = list[Quarantined]()  # set aside after reading: their values are not warned
    if one is not None and one.foreseen and attempts == 1 and not plan.changed \
            and not policy.sets_aside_under(plan):
        # planned against the table the rows were routed into, and nothing to change:
        # the staged rows are those the routing below would write, by the same rules
        # (planning read the table after the write: commit_plan looks before a no-op);
        # the lines the router set aside go to the quarantine first, as below
        quarantined = append_quarantined(ctx.catalog, ctx.table, one.aside, ctx.batch_id)
        written = publish_write(committed, one.write_id, ctx.batch_id, "jvm", notes,
                                fresh=True)
    else:
        if one is not None:  # routed again, on the tally in hand
            drop_staged(committed, one.write_id)
        quarantined = 0
        if policy.sets_aside_under(plan) or seen.aside:
            quarantined, aside = _set_aside(ctx, records, plan, committed)
        written = _route_and_write(ctx, records, seen, committed, plan, notes, typed)
        one = None
    return _report(ctx, plan, seen, written, attempts, quarantined, one_pass=one is not None,
                   aside=aside)


def _empty(
    ctx: BatchContext, records: SparkBatch, seen: SparkObservation, loaded: Table | None,
    batch_index: int, one: OnePass | None,
) -> IngestReport:
    """A batch without a record: nothing is published, and the items it set aside go to
    the quarantine."""
    if one is not None and loaded is not None:  # an empty batch publishes nothing
        drop_staged(loaded, one.write_id)
    schema = Struct() if loaded is None else from_iceberg(loaded.schema())
    plan = Plan(batch_index, schema, schema, ())
    aside = quarantine_on_spark(records.frame, records.mode, ctx.options, plan,
                                ctx.batch_id) if seen.aside else []
    quarantined = append_quarantined(
        ctx.catalog, ctx.table, aside, ctx.batch_id,
        schema_id=None if loaded is None else loaded.metadata.current_schema_id)
    return IngestReport(ctx.table, ctx.batch_id, plan, 0, None, seen.profile,
                        quarantined=quarantined)


def _notes(
    ctx: BatchContext, seen: SparkObservation, committed: Table
) -> Callable[[int], dict[str, str]]:
    """The table properties published with the batch, given its snapshot's id: what it
    brought (for :func:`toolkit.statistics`) and the array shapes it brought (kept for
    the one-pass routing of the next batches)."""
    arrived = arrivals_notes(_arrivals(seen, ctx.arriving))
    codes = {} if seen.codes is None else codes_note(
        kept_codes(committed.metadata.properties), seen.codes)
    # the contracts and hints given with the batch are kept with the table, for the
    # batches after it (docs/rules.md, Contracts, Type hints)
    kept = Contracts.of_table(committed.metadata.properties)
    given = ctx.options.contracts
    contracts = {} if given is None or given == kept else {CONTRACTS_PROPERTY: given.to_json()}
    hints = hints_note(ctx.options, committed.metadata.properties)

    def notes(snapshot_id: int) -> dict[str, str]:
        return {**arrived(snapshot_id), **codes, **contracts, **hints}

    return notes


def _set_aside(
    ctx: BatchContext, records: SparkBatch, plan: Plan, committed: Table
) -> tuple[int, list[Quarantined]]:
    """Append the records the table cannot take under ``plan`` to its quarantine
    (RULES 5); how many were appended, and the records."""
    aside = quarantine_on_spark(records.frame, records.mode, ctx.options, plan, ctx.batch_id)
    # replay routes these records by field ID from the schema they met
    appended = append_quarantined(ctx.catalog, ctx.table, aside, ctx.batch_id,
                                  schema_id=committed.metadata.current_schema_id)
    return appended, list(aside)


def _route_and_write(
    ctx: BatchContext, records: SparkBatch, seen: SparkObservation, committed: Table,
    plan: Plan, notes: Callable[[int], Mapping[str, str]], typed: TypedSeen | None = None,
) -> Written:
    """Route the batch's records by ``plan`` and write them, published under its id: by
    one projection when its columns are typed (``typed``) and none is set aside."""
    if typed is not None and not (seen.aside or plan.rare or plan.held) \
            and not ctx.options.policy.sets_aside_under(plan):
        projected = write_columnar(typed, ctx.options, committed, ctx.spark,
                                   ctx.spark_name, ctx.batch_id, plan, notes)
        if projected is not None:
            return projected
    return write_batch(
        records, committed, ctx.spark_name, plan,
        # rare types and values the contracts refuse: routed by Python workers
        clean=not (seen.aside or plan.rare or plan.held),
        codes=seen.codes, notes=notes,
    )


def _report(
    ctx: BatchContext, plan: Plan, seen: SparkObservation, written: Written, attempts: int,
    quarantined: int, *, one_pass: bool, aside: Sequence[Quarantined] = (),
) -> IngestReport:
    """What the batch did, as :func:`ingest` reports it (``aside``: the records it set
    aside after reading them, whose values its warnings do not count as written)."""
    if written.snapshot is None:  # another process published this batch id first
        return IngestReport(ctx.table, ctx.batch_id, plan, 0, None, seen.profile,
                            attempts=attempts, quarantined=quarantined, skipped=True,
                            one_pass=one_pass)
    # under the options the batch ran under: the hints the table keeps included (a kept
    # decimal hint's column holds its values as themselves)
    warned = tuple(str(w) for w in conversion_warnings(plan, seen.profile, ctx.options, aside))
    return IngestReport(
        ctx.table, ctx.batch_id, plan, written.rows, written.snapshot.snapshot_id,
        seen.profile, attempts=attempts, quarantined=quarantined,
        routed_in=written.where, one_pass=one_pass, warnings=warned,
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
        report = ingest_topic_batch(reader, table, catalog, spark, options,
                                    TopicReading(upto=upto, provenance=provenance))
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


@dataclass(frozen=True)
class TopicReading:
    """How the batches of a Kafka topic are read (:func:`ingest_topic_batch`): at most
    ``max_messages`` per partition, up to the offsets ``upto`` (default: the high
    watermarks), with the ``provenance`` columns asked for; ``intent``: a file naming the
    batch under way, so a batch killed half-way is read again with the same ranges (a
    checkpoint; without one, what such a batch set aside may be set aside twice)."""

    max_messages: int | None = None
    upto: Mapping[int, int] | None = None
    provenance: bool | Sequence[str] = ()
    intent: Path | None = None


def ingest_topic_batch(
    reader: TopicReader,
    table: str,
    catalog: Catalog,
    spark: SparkSession,
    options: Mapping[str, Any],
    reading: TopicReading | None = None,
) -> IngestReport | None:
    """Ingest the next batch of ``reader``'s topic into ``table``, exactly once; None when
    there is nothing new to read.

    The batch starts where the table's ledger says each partition stands (the batch ids
    of a topic are its offset ranges, ``toolkit.core.batch.offsets``), so a run killed at any
    point resumes with no message lost or written twice; the consumer group's offsets
    are committed after the table, as a hint for other tools. It reads as ``reading``
    says (:class:`TopicReading`). Messages whose value is not a JSON object are set aside
    with their topic, partition and offset. ``options``: evolution options, as for
    :func:`ingest`.
    """
    reading = reading or TopicReading()
    max_messages, upto, intent = reading.max_messages, reading.upto, reading.intent
    topic = reader.source.topic
    fields = provenance_fields(reading.provenance)
    loaded = load_table(catalog, table)
    resume = resume_offsets(() if loaded is None else ingested_batches(loaded), topic)
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
    if loaded is None and not lines:
        return None  # no table to mark the batch in: read again once records come
    aside_count = append_quarantined(catalog, table, aside, bid + ASIDE_SUFFIX)
    if lines:
        frame = spark.createDataFrame([(line,) for line in lines], "value string")
        report = ingest(frame, table, catalog, spark, bid, format="jsonl-dataframe",
                        **options)
    else:
        assert loaded is not None
        report = _mark_batch(loaded, bid)
    reader.commit(ranges)
    return dataclasses.replace(report, quarantined=report.quarantined + aside_count)
