"""What a plan is made against: a table's schema and its latest snapshot (RULES 6).

A plan made against one state is never applied to a table that has moved on since; the
state is compared, and carried as the commit's requirements, by the Iceberg adapter.

>>> ABSENT
TableState(schema_id=-1, snapshot_id=None)
>>> TableState.of(None) == ABSENT
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolkit.core.values.wording import and_join


@dataclass(frozen=True)
class TableState:
    """What a plan was made against: the table's schema and its latest snapshot."""

    schema_id: int
    snapshot_id: int | None

    @classmethod
    def of(cls, table: Any) -> TableState:
        """The state of a PyIceberg ``table`` (read through its public methods, so the core
        needs no PyIceberg); a table that does not exist yet (None) is :data:`ABSENT`."""
        if table is None:
            return ABSENT
        snap = table.current_snapshot()
        return cls(table.schema().schema_id, None if snap is None else snap.snapshot_id)

    def moved_to(self, now: TableState) -> str:
        """What changed from this state to ``now``, in words ("" when nothing did).

        >>> TableState(1, 10).moved_to(TableState(2, 11))
        'its schema went from id 1 to 2 and its snapshot went from 10 to 11'
        """
        parts = []
        if ABSENT in (self, now):
            parts.append("it was created" if self == ABSENT else "it was dropped")
        else:
            if self.schema_id != now.schema_id:
                parts.append(f"its schema went from id {self.schema_id} to {now.schema_id}")
            if self.snapshot_id != now.snapshot_id:
                parts.append(f"its snapshot went from {self.snapshot_id} to {now.snapshot_id}")
        return and_join(parts)


#: the state of a table that does not exist yet
ABSENT = TableState(-1, None)

__all__ = ["ABSENT", "TableState"]
