"""Table maintenance, previewed like any other plan: :func:`plan_maintenance` says what
expiring snapshots, compacting small files, rewriting manifests, removing orphan files and
dropping the staging tables stopped ingests left would do, changing nothing;
:func:`maintain` applies exactly that plan (refused if the table moved since) and reports
what Iceberg's procedures did.

Nothing a reader or the ledger needs is removed: the current snapshot, snapshots a branch
or tag points to, the last ``retain_last`` of each branch, staged writes under a day old
and the snapshot of a replay under way are kept; the batch ids of expired snapshots are
folded into the ingest ledger before they expire (so a batch id is still written once);
orphan files are removed only when older than a day (files of writes in flight survive);
staging tables are dropped only when unchanged for a day (an ingest may be writing one).

A notebook session::

    plan = toolkit.plan_maintenance("db.events", cat, spark)
    print(plan)                       # one sentence per step
    report = toolkit.maintain("db.events", cat, spark, plan)
    print(report)                     # what each procedure did
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from toolkit.core.evolution.state import TableState
from toolkit.core.maintenance.rules import make_plan
from toolkit.core.maintenance.steps import (
    DAY_MS,
    STEPS,
    Compact,
    DropStagingTables,
    ExpireSnapshots,
    MaintenancePlan,
    MaintenanceReport,
    OrphanSearch,
    RemoveOrphanFiles,
    RewriteManifests,
    StepResult,
    check_steps,
)
from toolkit.errors import StalePlanError
from toolkit.iceberg.ledger import remember_batches
from toolkit.iceberg.maintenance import refs_of, retention_rules, table_facts, with_losses
from toolkit.iceberg.new_tables import drop_leftover
from toolkit.iceberg.statistics import fold_arrivals, stale_arrivals_properties
from toolkit.spark import maintenance as procedures
from toolkit.spark.progress import tracking

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyiceberg.table import Table
    from pyspark.sql import SparkSession

__all__ = [
    "MaintenancePlan", "MaintenanceReport", "MaintenanceSettings", "maintain", "plan_maintenance",
]

log = logging.getLogger(__name__)

#: defaults: Iceberg's own for the snapshot age, compaction and orphan age; five
#: snapshots kept per branch whatever their age (Iceberg keeps one)
OLDER_THAN = dt.timedelta(days=5)
RETAIN_LAST = 5
MIN_INPUT_FILES = 5
ORPHANS_OLDER_THAN = dt.timedelta(days=3)
#: a staging table updated within a day may be an ingest's under way (as staged writes)
STAGING_OLDER_THAN = dt.timedelta(days=1)


@dataclass(frozen=True)
class MaintenanceSettings:
    """The keyword options of :func:`plan_maintenance`, as one value (a misspelt one is
    refused with a ``TypeError`` naming it)."""

    older_than: dt.timedelta | dt.datetime = OLDER_THAN
    retain_last: int = RETAIN_LAST
    target_file_size: int | None = None
    min_input_files: int = MIN_INPUT_FILES
    orphans_older_than: dt.timedelta | dt.datetime = ORPHANS_OLDER_THAN
    staging_older_than: dt.timedelta | dt.datetime = STAGING_OLDER_THAN
    steps: Iterable[str] = STEPS


def _cutoff_ms(when: dt.timedelta | dt.datetime, now_ms: int, what: str, table: str) -> int:
    """A time given as an age (``timedelta``: that long before now) or a moment (an aware
    ``datetime``), in milliseconds since the epoch."""
    if isinstance(when, dt.timedelta):
        return now_ms - int(when.total_seconds() * 1000)
    if isinstance(when, dt.datetime):
        if when.tzinfo is None:
            raise ValueError(
                f"{table}: {what}={when.isoformat()} has no time zone; pass an aware "
                "datetime (tzinfo=datetime.UTC) or an age (a timedelta)"
            )
        return int(when.timestamp() * 1000)
    raise TypeError(f"{table}: {what} is a timedelta or a datetime, not {type(when).__name__}")


def plan_maintenance(
    table: str,
    catalog: Catalog,
    spark: SparkSession | None = None,
    **options: Any,
) -> MaintenancePlan:
    """What maintaining ``table`` would do, measured now, changing nothing.

    * ``expire_snapshots``: snapshots older than ``older_than`` (an age, default 5 days,
      or an aware datetime), keeping the current one, those a branch or tag points to, the
      last ``retain_last`` (default 5) of each branch, staged writes under a day old and a
      replay's snapshot under way; the plan lists the ids it expires and says why it keeps
      the others and what readers lose.
    * ``compact``: data files under 75% (or over 180%) of ``target_file_size`` (default:
      the table's ``write.target-file-size-bytes``, else 512 MB), rewritten where a
      partition has at least ``min_input_files`` (default 5) of them.
    * ``rewrite_manifests``: the current manifests, into one per 8 MB (the table's
      ``commit.manifest.target-size-bytes``).
    * ``remove_orphan_files``: files no metadata references, older than
      ``orphans_older_than`` (default 3 days, never less than 1: files of writes in
      flight must survive), found by a dry run on ``spark``.
    * ``drop_staging_tables``: the staging tables (``<table>__toolkit_new_<id>``, marked
      as standing in for ``table``) that ingests which stopped before renaming them left,
      last updated before ``staging_older_than`` (default 1 day: an ingest under way may
      be writing a younger one), with what they hold.

    ``steps`` chooses among them (default all); ``spark`` is needed only for the orphan
    dry run. Pass the plan to :func:`maintain` to apply exactly it. ``options`` are the
    fields of :class:`MaintenanceSettings`.
    """
    settings = MaintenanceSettings(**options)
    older_than, orphans_older_than = settings.older_than, settings.orphans_older_than
    steps = settings.steps
    chosen = set(check_steps(steps))  # an unknown step is refused before anything runs
    now_ms = int(time.time() * 1000)
    tbl = catalog.load_table(table)
    facts = table_facts(catalog, table, tbl, now_ms=now_ms)
    orphans_ms = _cutoff_ms(orphans_older_than, now_ms, "orphans_older_than", table)
    found: tuple[str, ...] | None = None
    if "remove_orphan_files" in chosen:
        if orphans_ms > now_ms - DAY_MS:
            raise ValueError(
                f"{table}: orphans_older_than must be at least a day ago (files of writes in "
                f"flight must survive), not {orphans_older_than!r}"
            )
        if spark is None:
            raise ValueError(
                f"{table}: finding orphan files needs a Spark session (spark=); or leave "
                "'remove_orphan_files' out of steps"
            )
        with tracking(spark, f"Planning maintenance of {table}"):
            found = procedures.find_orphan_files(
                spark, catalog.name, tuple(tbl.name()), orphans_ms, tbl.location()
            )
    plan = make_plan(
        facts,
        chosen,
        older_than_ms=_cutoff_ms(older_than, now_ms, "older_than", table),
        retain_last=settings.retain_last,
        target_file_size=settings.target_file_size,
        min_input_files=settings.min_input_files,
        orphans=None if found is None else OrphanSearch(orphans_ms, found),
        staging_older_than_ms=_cutoff_ms(settings.staging_older_than, now_ms,
                                         "staging_older_than", table),
    )
    expiry = plan.expiry
    if expiry is None or not expiry.todo:
        return plan
    # what only the snapshots to expire still read (a dropped column's values, a rewritten
    # one's as stored before): said, with counts, in the step the user approves
    counted_expiry = with_losses(tbl, expiry)
    return replace(plan, steps=tuple(counted_expiry if s is expiry else s for s in plan.steps))


def _refuse_if_moved(plan: MaintenancePlan, table: Table) -> None:
    """Refuse a plan made against another state of the table: its schema or current
    snapshot moved, or a branch or tag changed (a snapshot to expire may now be kept), or
    retention was set on its refs."""
    state = TableState.of(table)
    if state != plan.state:
        raise StalePlanError(plan.table, plan.state, state)
    refs = tuple(sorted((r.name, r.snapshot_id) for r in refs_of(table)))
    if refs != plan.refs:
        changed = sorted(set(refs) ^ set(plan.refs))
        names = ", ".join(dict.fromkeys(name for name, _ in changed))
        raise StalePlanError(
            plan.table, plan.state, state, f"; its branches or tags changed ({names})"
        )
    rules = retention_rules(table)
    if rules and plan.expiry is not None and plan.expiry.todo:
        raise StalePlanError(
            plan.table, plan.state, state, f"; retention was set on it ({'; '.join(rules)})"
        )


def maintain(
    table: str,
    catalog: Catalog,
    spark: SparkSession,
    plan: MaintenancePlan | None = None,
    *,
    allow_losses: bool = False,
    **options: Any,
) -> MaintenanceReport:
    """Apply ``plan`` (from :func:`plan_maintenance`) to ``table``, or a fresh plan made
    with ``options`` (those of :func:`plan_maintenance`), and say what was done.

    A plan passed in was reviewed: it is applied as it is. A plan made here was not (a
    stream's maintenance, a scheduled call): it expires no snapshot when those it would
    expire are the last that read stored values (a dropped column's, or rows a delete
    removed; the plan counts them); the other steps run, and the report says what was
    kept and how to approve it. ``allow_losses=True`` is that approval given in advance.

    A plan made against another state of the table (new data, a schema change, a branch
    or tag moved) is refused with :class:`~toolkit.errors.StalePlanError` and nothing is
    done: plan again. Steps run in this order, each only if it has work: compaction
    (``rewrite_data_files``), ``rewrite_manifests``, then the batch ids of the snapshots
    to expire are folded into the ingest ledger and exactly the planned snapshots are
    expired (``expire_snapshots``), last exactly the planned orphan files are removed if
    still unreferenced (``remove_orphan_files``), and exactly the planned staging tables
    are dropped with their files (``drop_staging_tables``), each only if it is still a
    staging table of ``table`` and unchanged since the plan (one renamed meanwhile is the
    real table now; one that changed may be an ingest's under way): the others are kept
    and the report says why. The report holds each procedure's counts.
    """
    reviewed = plan is not None
    if plan is None:
        plan = plan_maintenance(table, catalog, spark, **options)
    elif options:
        raise ValueError(
            f"{table}: pass either a plan or options to plan with, not both "
            f"({', '.join(sorted(options))})"
        )
    if plan.table != table:
        raise ValueError(f"the plan is for table {plan.table}, not {table}")
    tbl = catalog.load_table(table)
    _refuse_if_moved(plan, tbl)
    name = tuple(tbl.name())
    results: list[StepResult] = []
    with tracking(spark, f"Maintaining {table}") as track:
        for step in plan.steps:
            if not step.todo:
                continue
            if isinstance(step, Compact):
                counts = procedures.compact(
                    spark, catalog.name, name, target_file_size=step.target_file_size,
                    min_input_files=step.min_input_files,
                )
                results.append(MaintenanceReport.compacted(counts))
            elif isinstance(step, RewriteManifests):
                counts = procedures.rewrite_manifests(spark, catalog.name, name)
                results.append(MaintenanceReport.manifests_rewritten(counts))
            elif isinstance(step, ExpireSnapshots):
                if step.gone and not (reviewed or allow_losses):
                    results.append(MaintenanceReport.not_expired(step))  # waits for a yes
                else:
                    results.append(_expire(spark, catalog, tbl, name, step))
            elif isinstance(step, RemoveOrphanFiles):
                removed = procedures.remove_orphan_files(
                    spark, catalog.name, name, step.files, step.older_than_ms
                )
                results.append(MaintenanceReport.orphans_removed(removed))
            elif isinstance(step, DropStagingTables):
                results.append(_drop_staging(catalog, table, step))
            (log.info if results[-1].ran else log.warning)("%s: %s", table, results[-1].sentence)
        track.finish(f"Maintained {table}: "
                     + ("; ".join(r.sentence for r in results) or "nothing to do"))
    tbl.refresh()
    return MaintenanceReport(table, plan, tuple(results), TableState.of(tbl))


def _expire(
    spark: SparkSession, catalog: Catalog, tbl: Table, name: tuple[str, ...],
    step: ExpireSnapshots,
) -> StepResult:
    """Fold the batch ids into the ledger and the arrivals of the snapshots to expire into
    the table's properties, then expire exactly the planned snapshots still in the
    metadata; the result counts those that left it."""
    remember_batches(tbl)  # first: a batch id must stay known once its snapshot is gone
    tbl.refresh()
    present = {s.snapshot_id for s in tbl.metadata.snapshots}
    ids = [i for i in step.expire if i in present]
    fold = fold_arrivals(tbl, ids)  # and what their batches brought, for statistics
    # One commit: the fold, and the removal of the arrivals properties of single snapshots
    # that outlived their snapshot or that this fold counts (every commit rewrites every
    # table property). Only those the fold counts: statistics then read a folded snapshot
    # from the fold alone, so no count is lost if the expiry below fails or expires fewer.
    # The expiry is Spark's own commit: PyIceberg's would leave behind the files only the
    # expired snapshots needed.
    stale = stale_arrivals_properties(tbl, fold.ids)
    if fold.properties or stale:
        with tbl.transaction() as tx:
            if fold.properties:
                tx.set_properties(fold.properties)
            if stale:
                tx.remove_properties(*stale)
    counts = procedures.expire_snapshots(spark, catalog.name, name, ids)
    tbl.refresh()
    left = {s.snapshot_id for s in tbl.metadata.snapshots}
    return MaintenanceReport.expired(sum(1 for i in ids if i not in left), counts, step)


def _drop_staging(catalog: Catalog, table: str, step: DropStagingTables) -> StepResult:
    """Drop exactly the planned staging tables (each checked again just before: see
    :func:`~toolkit.iceberg.new_tables.drop_leftover`) and delete their files."""
    done = [drop_leftover(catalog, table, t.identifier, t.last_updated_ms) for t in step.drop]
    return MaintenanceReport.staging_dropped(
        sum(1 for d in done if d.kept is None), sum(d.files for d in done),
        [f"{d.identifier}: {d.kept}" for d in done if d.kept is not None],
    )
