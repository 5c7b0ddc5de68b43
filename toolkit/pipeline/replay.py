"""Replay: quarantined records go back through ``ingest`` into their target (RULES 5).

The records are parsed from their raw text with every value exact and ingested as one
batch whose id derives from the chosen rows, so running the same replay again writes
nothing twice; the quarantine table (``toolkit.iceberg.quarantine``) records the replay
under way, so an interrupted one is settled, never lost nor doubled.

>>> replay_batch_id(["b", "a"]) == replay_batch_id(["a", "b", "a"])
True
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyiceberg.catalog import Catalog

from toolkit.core.options import REWRITES_WHEN_APPROVED, make_options, takes_options
from toolkit.core.planner import Plan
from toolkit.core.quarantine import Quarantine, QuarantinedRow
from toolkit.core.state import TableState
from toolkit.core.wording import counted
from toolkit.errors import NotReplayableError
from toolkit.iceberg.catalog import load_table
from toolkit.iceberg.quarantine import (
    mark_replay,
    pending_replay,
    quarantine,
    quarantine_table_id,
    read_rows,
    replayed_batches,
    settle_replay,
    target_batches,
)
from toolkit.pipeline.ingest import IngestReport, ingest
from toolkit.pipeline.preview import Preview, plan_preview

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["ReplayReport", "replay", "replay_batch_id", "replay_preview", "replay_selection"]


def replay_batch_id(ids: Iterable[str]) -> str:
    """The batch id of a replay of ``ids``: the same rows always replay under the same
    batch id, so ``ingest`` writes them once even if the replay is run again."""
    digest = hashlib.sha256("\n".join(sorted(set(ids))).encode())
    return f"replay-{digest.hexdigest()[:24]}"


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


@takes_options
def replay_preview(
    catalog: Catalog,
    table_id: str,
    *,
    ids: Iterable[str] | None = None,
    reason: str | None = None,
    **options: Any,
) -> Preview:
    """The plan a replay of the selection would need, made without Spark and without
    changing anything: pass its ``plan`` and ``state`` to :func:`replay` as ``approved``
    and ``expected`` to replay under exactly that plan."""
    make_options(**options)  # a misspelt option fails before the quarantine is read
    rows, _ = replay_selection(quarantine(catalog, table_id), ids, reason)
    return plan_preview([r.record for r in rows], table_id, catalog, **options)


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
    if not rows:
        return ReplayReport(table_id, None, (), 0, kept, resumed=resumed)

    chosen = tuple(r.id for r in rows)
    batch_id = replay_batch_id(chosen)
    records = [r.record for r in rows]
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
    return ReplayReport(table_id, batch_id, chosen, again, kept, report, resumed)
