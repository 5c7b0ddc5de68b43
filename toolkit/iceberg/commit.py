"""Commit a plan's schema changes to a real Iceberg table, in one atomic commit.

RULES 6: a plan made against one state of the table is never applied to a table that
has moved on since; :class:`StalePlanError` says what changed, and the caller re-plans.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyiceberg.exceptions import CommitFailedException
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot

from toolkit.core.planner import Plan
from toolkit.core.types import type_to_str
from toolkit.iceberg.schema import type_to_iceberg

#: the snapshot summary property that records which batch a commit wrote
BATCH_ID_PROPERTY = "toolkit.batch-id"


def batch_id_of(snapshot: Snapshot) -> str | None:
    """The batch a snapshot wrote, if the toolkit wrote it."""
    if snapshot.summary is None:
        return None
    return snapshot.summary.additional_properties.get(BATCH_ID_PROPERTY)


@dataclass(frozen=True)
class TableState:
    """What a plan was made against: the table's schema and its latest snapshot."""

    schema_id: int
    snapshot_id: int | None

    @classmethod
    def of(cls, table: Table | None) -> TableState:
        """The state of ``table``; a table that does not exist yet is :data:`ABSENT`."""
        if table is None:
            return ABSENT
        snap = table.current_snapshot()
        return cls(table.schema().schema_id, None if snap is None else snap.snapshot_id)


#: the state of a table that does not exist yet
ABSENT = TableState(-1, None)


class PlanChangedError(RuntimeError):
    """The data needs other schema changes than the plan that was approved."""

    def __init__(self, table: str, approved: Plan, needed: Plan) -> None:
        self.table, self.approved, self.needed = table, approved, needed
        super().__init__(
            f"table {table}: the batch needs other changes than the approved plan "
            f"(approved: {describe_changes(approved) or 'none'}; needed: "
            f"{describe_changes(needed) or 'none'}); nothing was applied: preview again"
        )


class StalePlanError(RuntimeError):
    """The table moved since the plan was made; the plan was not applied."""

    def __init__(self, table: str, planned: TableState, now: TableState, detail: str = "") -> None:
        self.table, self.planned, self.now = table, planned, now
        parts = []
        if planned == ABSENT or now == ABSENT:
            parts.append("it was created" if planned == ABSENT else "it was dropped")
        elif planned.schema_id != now.schema_id:
            parts.append(f"its schema went from id {planned.schema_id} to {now.schema_id}")
        if ABSENT not in (planned, now) and planned.snapshot_id != now.snapshot_id:
            parts.append(f"its snapshot went from {planned.snapshot_id} to {now.snapshot_id}")
        moved = " and ".join(parts) or "another writer committed first"
        super().__init__(
            f"table {table} moved since the plan was made ({moved}){detail}: "
            "the plan was not applied; preview or ingest again to re-plan"
        )


def describe_changes(plan: Plan) -> str:
    return "; ".join(
        f"add {'.'.join(c.path)} {type_to_str(c.column.type)}" for c in plan.changes
    )


def commit_plan(table: Table, plan: Plan, planned: TableState) -> Table:
    """Apply ``plan``'s added columns (with their docs) in one schema commit.

    Refused with :class:`StalePlanError` if the table is no longer in the ``planned``
    state; PyIceberg's own requirement on the current schema ID closes the window
    between that check and the commit. Returns the refreshed table.
    """
    name = ".".join(table.name())
    table.refresh()
    now = TableState.of(table)
    if now != planned:
        raise StalePlanError(name, planned, now)
    if not plan.changes:
        return table
    try:
        with table.update_schema() as update:
            for change in plan.changes:
                col = change.column
                update.add_column(
                    path=change.path, field_type=type_to_iceberg(col.type), doc=col.doc
                )
    except CommitFailedException as exc:
        table.refresh()
        raise StalePlanError(name, planned, TableState.of(table), f" ({exc})") from exc
    table.refresh()
    return table
