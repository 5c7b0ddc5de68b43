"""Preview: plan sample records against a table as it is now, without Spark and without
changing anything (RULES 6: what a user approves is exactly what is committed).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from pyiceberg.catalog import Catalog

from toolkit.core.engine import Engine, make_plan
from toolkit.core.options import make_options
from toolkit.core.planner import Plan
from toolkit.core.profile import Profile, profile_of
from toolkit.core.state import TableState
from toolkit.core.types import Struct
from toolkit.iceberg.catalog import load_table
from toolkit.iceberg.operations import rewrite_cost
from toolkit.iceberg.schema import from_iceberg

__all__ = ["Preview", "plan_preview"]


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
    existing = load_table(catalog, table)
    rows = [dict(r) for r in records]
    batch = 0 if existing is None else len(existing.snapshots())
    obs = engine.observe(rows, batch)
    current = Struct() if existing is None else from_iceberg(existing.schema())
    assigned = 0 if existing is None else existing.metadata.last_column_id
    plan = make_plan(current, obs, engine.options, batch, assigned)
    if plan.rewrites and existing is not None:  # RULES 5: show what a rewrite touches
        n, size = rewrite_cost(existing)
        plan = replace(plan, retypes=tuple(
            r if r.in_place else replace(r, rows=n, bytes=size) for r in plan.retypes
        ))
    return Preview(table, plan, TableState.of(existing), profile_of(obs, batch), tuple(rows))
