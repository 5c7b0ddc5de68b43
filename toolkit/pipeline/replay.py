"""Replay: quarantined records go back through ``ingest`` into their target (RULES 5).

The records are parsed from their raw text with every value exact and ingested as one
batch whose id derives from the chosen rows, so running the same replay again writes
nothing twice; the quarantine table (``toolkit.iceberg.quarantine``) records the replay
under way, so an interrupted one is settled, never lost nor doubled.

Before anything is planned, each record's keys are routed by field ID from the schema it
was set aside against to the table's schema now (a record quarantined before a rename
lands in the renamed column), and only the records that can land now are replayed: the
others stay in the quarantine, each with the reason it cannot land
(:mod:`toolkit.core.batch.replay_plan`), so a replay never commits a schema change that no row
it writes needs.

>>> replay_batch_id(["b", "a"]) == replay_batch_id(["a", "b", "a"])
True
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyiceberg.catalog import Catalog

from toolkit.core.batch.options import (
    REWRITES_WHEN_APPROVED,
    Options,
    make_options,
    obeyed,
    takes_options,
)
from toolkit.core.batch.quarantine import Quarantine, QuarantinedRow, detail_text, reason_words
from toolkit.core.batch.replay_plan import by_field_id, landing
from toolkit.core.evolution.batch_plan import Plan
from toolkit.core.evolution.state import TableState
from toolkit.core.values.types import Struct
from toolkit.core.values.wording import counted
from toolkit.errors import NotReplayableError
from toolkit.iceberg.catalog import load_table
from toolkit.iceberg.lineage import lineage
from toolkit.iceberg.quarantine import (
    mark_replay,
    pending_replay,
    quarantine,
    quarantine_table_id,
    read_rows,
    replayed_batches,
    set_aside_against,
    settle_replay,
    target_batches,
)
from toolkit.iceberg.schema import from_iceberg
from toolkit.pipeline.ingest import IngestReport, ingest
from toolkit.pipeline.preview import Preview, plan_preview

if TYPE_CHECKING:
    from pyiceberg.table import Table
    from pyspark.sql import SparkSession

__all__ = [
    "CannotLand",
    "ReplayPreview",
    "ReplayReport",
    "replay",
    "replay_batch_id",
    "replay_preview",
    "replay_selection",
    "sort_out",
]


def replay_batch_id(ids: Iterable[str]) -> str:
    """The batch id of a replay of ``ids``: the same rows always replay under the same
    batch id, so ``ingest`` writes them once even if the replay is run again."""
    digest = hashlib.sha256("\n".join(sorted(set(ids))).encode())
    return f"replay-{digest.hexdigest()[:24]}"


@dataclass(frozen=True)
class CannotLand:
    """A quarantined record a replay leaves in the quarantine because the table cannot take
    it now: its id, the reason key and field, and why in a sentence (the engine's)."""

    id: str
    reason: str
    field: str | None
    detail: str

    def __str__(self) -> str:
        return detail_text(self.detail) or reason_words(self.reason)


def cannot_land_text(cannot: tuple[CannotLand, ...], shown: int = 3) -> str:
    """The records that cannot land now, in a sentence: how many, and why (the first
    reasons).

    >>> print(cannot_land_text((CannotLand("a", "incompatible", "x", "x is text"),)))
    1 record cannot land now and stays in the quarantine: x is text
    """
    if not cannot:
        return ""
    reasons = list(dict.fromkeys(str(c) for c in cannot))
    more = f" (and {len(reasons) - shown} more reasons)" if len(reasons) > shown else ""
    verb = "stays" if len(cannot) == 1 else "stay"
    return (f"{counted(len(cannot), 'record')} cannot land now and {verb} in the quarantine: "
            + "; ".join(reasons[:shown]) + more)


@dataclass(frozen=True)
class ReplayReport:
    """What :func:`replay` did."""

    table: str
    batch_id: str | None
    replayed: tuple[str, ...]
    """Ids sent back through ingest and removed from the quarantine."""
    requarantined: int
    """Of those, records quarantined again (under ``batch_id``) since they still do not fit."""
    not_replayable: tuple[str, ...]
    """Ids left in the quarantine because they cannot be replayed (malformed, not a record)."""
    ingest: IngestReport | None = None
    resumed: tuple[str, ...] = ()
    """Ids of an interrupted earlier replay, finished first."""
    already: bool = False
    """The very same ids were replayed before (as ``batch_id``): nothing was done again."""
    cannot_land: tuple[CannotLand, ...] = ()
    """Chosen records left in the quarantine because the table cannot take them now."""

    @property
    def written(self) -> int:
        return 0 if self.ingest is None else self.ingest.rows_written

    def __str__(self) -> str:
        if self.already:
            text = (
                f"{self.table}: these records were already replayed as batch {self.batch_id}; "
                "nothing was written again"
            )
        elif not self.replayed and not self.resumed:
            text = f"{self.table}: nothing to replay"
        else:
            text = (
                f"{self.table}: replayed {counted(len(self.replayed), 'record')} as batch "
                f"{self.batch_id}: {counted(self.written, 'row')} written, "
                f"{self.requarantined:,} quarantined again"
            )
            if self.resumed:
                resumed = counted(len(self.resumed), "record")
                text += f"; finished an interrupted replay of {resumed}"
        if self.not_replayable:
            text += (
                f"; {counted(len(self.not_replayable), 'record')} cannot be replayed "
                "(malformed or not a JSON object) and stay in the quarantine"
            )
        if self.cannot_land:
            text += "; " + cannot_land_text(self.cannot_land)
        return text


def replay_selection(
    q: Quarantine, ids: Iterable[str] | None = None, reason: str | None = None
) -> tuple[tuple[QuarantinedRow, ...], tuple[QuarantinedRow, ...]]:
    """(rows to replay, rows that cannot be) for a selection: explicit ``ids`` must exist
    and be replayable; without ids, every row (of ``reason``) that can be replayed."""
    chosen = q.select(ids=ids, reason=reason).rows
    unfit = tuple(r for r in chosen if not r.replayable)
    if ids is not None and unfit:
        raise NotReplayableError(q.quarantine_table, unfit)
    return tuple(r for r in chosen if r.replayable), unfit


@dataclass(frozen=True)
class ReplayPreview:
    """What a replay of a selection would do, before anything changes: the records that
    can land now (``ids``) and the plan made with them alone, and the records that cannot
    land now (``cannot``), with why. Pass ``plan`` and ``state`` to :func:`replay` as
    ``approved`` and ``expected`` to replay under exactly that plan."""

    table: str
    plan: Plan
    state: TableState
    ids: tuple[str, ...]
    cannot: tuple[CannotLand, ...] = ()
    preview: Preview | None = None


def _schema_at(
    row: QuarantinedRow, recorded: dict[str, int], history: list[tuple[int, int]]
) -> int | None:
    """The target's schema ID ``row`` was set aside against: as the quarantine recorded
    it, else the last schema the table's lineage and snapshots had at the time it was set
    aside (``history``: (time in ms, schema ID), oldest first)."""
    if row.batch_id in recorded:
        return recorded[row.batch_id]
    if row.quarantined_at is None:
        return None
    at = int(row.quarantined_at.timestamp() * 1000)
    found = None
    for when, schema_id in history:
        if when > at:
            break
        found = schema_id
    return found


def routed_by_field_id(
    target: Table | None, qtable: Table | None, rows: Iterable[QuarantinedRow]
) -> list[Any]:
    """Each row's record, its keys routed by field ID from the schema it was set aside
    against to the target's schema now (:func:`toolkit.core.batch.replay_plan.by_field_id`)."""
    rows = list(rows)
    if target is None:
        return [r.record for r in rows]
    recorded = {} if qtable is None else set_aside_against(qtable)
    history = sorted(
        [(e.at_ms, e.schema_id) for e in lineage(target) if e.schema_id is not None]
        + [(s.timestamp_ms, s.schema_id) for s in target.snapshots() if s.schema_id is not None]
    )
    schemas = {s.schema_id: s for s in target.schemas().values()}
    now = from_iceberg(target.schema())
    then_of: dict[int, Struct] = {}
    out = []
    for r in rows:
        schema_id = _schema_at(r, recorded, history)
        if schema_id is None or schema_id not in schemas or (
                schema_id == target.metadata.current_schema_id):
            out.append(r.record)
            continue
        if schema_id not in then_of:
            then_of[schema_id] = from_iceberg(schemas[schema_id])
        out.append(by_field_id(r.record, then_of[schema_id], now))
    return out


def sort_out(
    catalog: Catalog,
    table_id: str,
    rows: Iterable[QuarantinedRow],
    options: Options,
    qtable: Table | None = None,
) -> tuple[tuple[QuarantinedRow, ...], list[Any], tuple[CannotLand, ...]]:
    """Of replayable ``rows``: those that can land in ``table_id`` now with their records
    (routed by field ID), and the others with why they cannot (RULES 5: what the engine
    sets aside against the table as it is, under ``options``)."""
    rows = tuple(rows)
    target = load_table(catalog, table_id)
    if qtable is None:
        qtable = load_table(catalog, quarantine_table_id(table_id))
    records = routed_by_field_id(target, qtable, rows)
    schema = Struct() if target is None else from_iceberg(target.schema())
    # the field contracts and hints the table keeps, when none are given (docs/rules.md)
    options = obeyed(options, None if target is None else target.properties)
    found = landing(records, schema, options)
    cannot = tuple(
        CannotLand(rows[i].id, q.reason, q.field, q.detail) for i, q in found.cannot
    )
    return tuple(rows[i] for i in found.lands), [records[i] for i in found.lands], cannot


@takes_options
def replay_preview(
    catalog: Catalog,
    table_id: str,
    *,
    ids: Iterable[str] | None = None,
    reason: str | None = None,
    **options: Any,
) -> ReplayPreview:
    """The plan a replay of the selection would need, made without Spark and without
    changing anything, with the records that can land now only (the others are listed,
    with why, in ``cannot``): pass its ``plan`` and ``state`` to :func:`replay` as
    ``approved`` and ``expected`` to replay under exactly that plan."""
    opts = make_options(**options)  # a misspelt option fails before the quarantine is read
    rows, _ = replay_selection(quarantine(catalog, table_id), ids, reason)
    lands, records, cannot = sort_out(catalog, table_id, rows, opts)
    made = plan_preview(records, table_id, catalog, **options)
    return ReplayPreview(table_id, made.plan, made.state, tuple(r.id for r in lands), cannot,
                         made)


@takes_options(defaults={"allow_rewrites": REWRITES_WHEN_APPROVED})  # as ingest decides it
def replay(
    catalog: Catalog,
    table_id: str,
    spark: SparkSession,
    *,
    ids: Iterable[str] | None = None,
    reason: str | None = None,
    approved: Plan | None = None,
    expected: TableState | None = None,
    **ingest_options: Any,
) -> ReplayReport:
    """Send quarantined records back through :func:`toolkit.pipeline.ingest` into
    ``table_id``, then remove them from the quarantine.

    Chooses every replayable row, the rows ``ids``, or those of one ``reason``. The records
    are parsed from their raw text with every value exact and ingested as one batch whose
    id derives from the chosen ids (:func:`replay_batch_id`): running the same replay
    again writes nothing twice. Records that still do not fit are quarantined again by
    ingest under that batch id, so nothing is lost. ``approved`` / ``expected`` (from
    :func:`replay_preview`) hold the replay to a plan a user approved, as in ``ingest``;
    the options (below: ``policy=``, ``on_incompatible=``...) are passed on to it.

    Malformed lines and JSON that is not an object cannot be replayed: chosen by id they
    raise :class:`NotReplayableError`; otherwise they are left in place and listed in the
    report. :func:`discard` removes them for good.

    Crash safety: before ingesting, the quarantine table records the replay under way
    (a table property); the next replay first settles it, from whether its batch reached
    the target, so an interrupted replay is neither lost nor written twice. Replaying ids
    that were already replayed together returns a report saying so (``already``).
    """
    make_options(**ingest_options)  # a misspelt option fails now, whatever is quarantined
    qtable = load_table(catalog, quarantine_table_id(table_id))
    if qtable is None:
        return ReplayReport(table_id, None, (), 0, ())
    wanted = None if ids is None else tuple(dict.fromkeys(ids))
    resumed: tuple[str, ...] = ()
    pending = pending_replay(qtable)
    if pending is not None:
        resumed = settle_replay(qtable, pending[0] in target_batches(catalog, table_id))
    if wanted is not None:
        if replay_batch_id(wanted) in replayed_batches(qtable):  # this very replay: done
            return ReplayReport(
                table_id, replay_batch_id(wanted), (), 0, (), resumed=resumed, already=True
            )
        wanted = tuple(i for i in wanted if i not in set(resumed))
        if not wanted:
            return ReplayReport(table_id, None, (), 0, (), resumed=resumed)

    q = Quarantine(table_id, quarantine_table_id(table_id), True, read_rows(qtable))
    rows, unfit = replay_selection(q, wanted, reason)
    kept = tuple(r.id for r in unfit)
    # only records that land now are replayed, each routed by field ID, and the plan is
    # made with them alone: no schema change without the rows that need it
    decided = dict(ingest_options)
    if "allow_rewrites" not in decided:  # as ingest decides it (RULES 5)
        decided["allow_rewrites"] = approved is not None and bool(approved.rewrites)
    rows, records, cannot = sort_out(catalog, table_id, rows, make_options(**decided), qtable)
    if not rows:
        return ReplayReport(table_id, None, (), 0, kept, resumed=resumed, cannot_land=cannot)

    chosen = tuple(r.id for r in rows)
    batch_id = replay_batch_id(chosen)
    mark_replay(qtable, batch_id, chosen)
    try:
        report = ingest(
            records, table_id, catalog, spark, batch_id=batch_id,
            approved=approved, expected=expected,
            arriving=False,  # counted in the statistics when they first arrived
            **ingest_options,
        )
    except BaseException:
        qtable.refresh()
        settle_replay(qtable, batch_id in target_batches(catalog, table_id))
        raise
    qtable.refresh()
    settle_replay(qtable, reached_target=True)
    again = sum(1 for r in read_rows(qtable) if r.batch_id == batch_id)
    return ReplayReport(table_id, batch_id, chosen, again, kept, report, resumed,
                        cannot_land=cannot)
