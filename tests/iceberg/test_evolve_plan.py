"""toolkit.evolve, the one entry for every plan: a policy's plan too. A schema-only one takes
the fast path (one catalog commit whose schema is the plan's own, as ``commit_plan``); one
with approved rewrites is one transaction with them. Real tables, embedded catalog."""

from __future__ import annotations

import itertools
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.table import Table

from toolkit.core.batch.options import make_options
from toolkit.core.engine import Engine
from toolkit.core.evolution.state import TableState
from toolkit.core.values.types import Struct
from toolkit.errors import StalePlanError
from toolkit.iceberg.operations import evolve
from toolkit.iceberg.schema import from_iceberg, to_iceberg

_names = itertools.count()
WIDEN = Engine(make_options(policy="widen"))
AUTO = Engine()


def new_table(lakehouse: Catalog, engine: Engine, rows: list[dict[str, Any]]) -> Table:
    if ("evolve_plans",) not in lakehouse.list_namespaces():
        lakehouse.create_namespace("evolve_plans")
    plan = engine.plan(Struct(), engine.observe(rows))
    table = lakehouse.create_table(f"evolve_plans.t{next(_names)}", schema=to_iceberg(plan.after))
    table.append(pa.Table.from_pylist(rows, schema=table.schema().as_arrow()))
    return table


def test_a_schema_only_plan_is_one_catalog_commit_with_the_plans_ids(
    lakehouse: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = new_table(lakehouse, AUTO, [{"id": 1, "size": 4}])
    plan = AUTO.plan(from_iceberg(table.schema()), AUTO.observe([{"id": "x", "size": 2.5}]), 1)
    commits: list[object] = []
    real = type(lakehouse).commit_table
    monkeypatch.setattr(
        type(lakehouse), "commit_table",
        lambda self, *a, **k: commits.append(a) or real(self, *a, **k),
    )  # fmt: skip

    entry = evolve(lakehouse, table, plan, expected=TableState.of(table))

    assert len(commits) == 1
    assert from_iceberg(table.schema()) == plan.after
    assert entry is not None and entry.decided_by == "RULES 3" and entry.batch == "1"
    assert [op.to_json() for op in entry.operations] == [op.to_json() for op in plan.operations]
    assert entry.inverse() is not None


def test_a_plan_for_a_table_that_moved_is_refused(lakehouse: Catalog) -> None:
    table = new_table(lakehouse, AUTO, [{"id": 1}])
    state = TableState.of(table)
    name = ".".join(table.name())
    plan = AUTO.plan(from_iceberg(table.schema()), AUTO.observe([{"id": 1, "a": 1}]), 1)
    other = AUTO.plan(from_iceberg(table.schema()), AUTO.observe([{"id": 1, "b": 1}]), 1)
    evolve(lakehouse, name, other)
    with pytest.raises(StalePlanError):
        evolve(lakehouse, name, plan, expected=state)


def test_a_plan_that_changes_nothing_logs_nothing(lakehouse: Catalog) -> None:
    table = new_table(lakehouse, AUTO, [{"id": 1}])
    plan = AUTO.plan(from_iceberg(table.schema()), AUTO.observe([{"id": 2}]), 1)
    assert evolve(lakehouse, ".".join(table.name()), plan) is None


def test_a_plan_with_rewrites_runs_them_in_the_same_commit(lakehouse: Catalog) -> None:
    table = new_table(lakehouse, WIDEN, [{"id": 1, "n": 2}])
    name = ".".join(table.name())
    plan = WIDEN.plan(from_iceberg(table.schema()), WIDEN.observe([{"n": "x", "new": True}]), 1)
    assert plan.rewrites and plan.changes
    snapshots = len(table.snapshots())

    entry = evolve(lakehouse, name, plan, batch="b1")

    assert entry is not None and entry.decided_by == "RULES 5" and entry.batch == "b1"
    assert [op.to_json()["op"] for op in entry.operations] == ["add", "widen"]
    assert entry.operations[-1].to_json()["rewrite"] is True
    after = lakehouse.load_table(name)
    assert from_iceberg(after.schema()) == plan.after  # the planner's IDs, as Iceberg's
    assert len(after.snapshots()) == snapshots + 1  # one overwrite, one metadata commit
    assert after.scan().to_arrow().to_pylist() == [{"id": 1, "n": "2", "new": None}]
