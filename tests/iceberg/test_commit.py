"""toolkit.iceberg.commit: a plan committed to a real table in the embedded SQLite catalog.

Every table is a real PyIceberg table; "another writer" is a second handle on the same
catalog table, as another process would have. No Spark, no mocks.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.table import Table
from pyiceberg.types import StringType

from toolkit.core.engine import Engine
from toolkit.core.evolution.batch_plan import Plan
from toolkit.core.evolution.state import TableState
from toolkit.core.values.types import Column, Struct
from toolkit.errors import OperationError, StalePlanError
from toolkit.iceberg.commit import commit_plan
from toolkit.iceberg.schema import from_iceberg, to_iceberg

ENGINE = Engine()
_names = itertools.count()

FIRST = [{"id": 1, "size": 4, "device": {"os": "ios"}, "items": [{"sku": 1}], "tags": ["a"]}]
DRIFT = [
    {"id": "x-1", "size": 2.5, "device": {"os": "ios", "build": 7}, "items": [{"sku": "A"}],
     "tags": "single", "new": [[1]]},
]


def new_table(lakehouse: Catalog, records: list[dict[str, Any]]) -> Table:
    """A fresh table whose schema is the plan of ``records`` on an empty table."""
    if ("commits",) not in lakehouse.list_namespaces():
        lakehouse.create_namespace("commits")
    plan = ENGINE.plan(Struct(), ENGINE.observe(records))
    return lakehouse.create_table(f"commits.t{next(_names)}", schema=to_iceberg(plan.after))


def plan_for(table: Table, records: list[dict[str, Any]]) -> Plan:
    return ENGINE.plan(from_iceberg(table.schema()), ENGINE.observe(records), 1)


def append(table: Table, rows: list[dict[str, Any]]) -> None:
    table.append(pa.Table.from_pylist(rows, schema=table.schema().as_arrow()))


def test_the_table_gets_exactly_the_plans_ids_names_types_and_docs(lakehouse: Catalog) -> None:
    table = new_table(lakehouse, FIRST)
    plan = plan_for(table, DRIFT)
    added = {".".join(c.path): c.column.doc for c in plan.changes}
    assert added["id_string"] == "upsolver_evolved_from:id"
    assert "device.build" in added and "new" in added  # nested and list columns too

    commit_plan(table, plan, TableState.of(table))

    again = lakehouse.load_table(table.name())  # as any other reader sees it
    assert from_iceberg(again.schema()) == plan.after
    assert again.metadata.last_column_id == again.schema().highest_field_id
    assert again.schema().find_field("size_double").doc == "upsolver_evolved_from:size"


def test_a_plan_made_before_another_writer_committed_is_refused_by_the_catalog(
    lakehouse: Catalog,
) -> None:
    mine = new_table(lakehouse, FIRST)
    state = TableState.of(mine)
    plan = plan_for(mine, DRIFT)
    # another writer (another process, say) evolves the table; `mine` still shows the old
    # state, so only the catalog's check of the commit's requirements can refuse it
    other = lakehouse.load_table(mine.name())
    with other.update_schema() as update:
        update.add_column("id_string", StringType(), doc="upsolver_evolved_from:id")

    with pytest.raises(StalePlanError, match=r"moved since the plan was made \(its schema went "
                       r"from id 0 to 1\).*the plan was not applied"):
        commit_plan(mine, plan, state)
    names = [f.name for f in lakehouse.load_table(mine.name()).schema().fields]
    assert names == ["device", "id", "items", "size", "tags", "id_string"]


def test_data_another_writer_appended_meanwhile_makes_the_plan_stale(lakehouse: Catalog) -> None:
    mine = new_table(lakehouse, FIRST)
    state = TableState.of(mine)
    plan = plan_for(mine, DRIFT)
    append(lakehouse.load_table(mine.name()), [{"id": 2}])

    with pytest.raises(StalePlanError, match=r"its snapshot went from None to \d+"):
        commit_plan(mine, plan, state)
    assert lakehouse.load_table(mine.name()).schema().schema_id == 0
    # a plan that changes nothing is checked too: there is no commit to refuse it
    with pytest.raises(StalePlanError, match="its snapshot went from None"):
        commit_plan(mine, plan_for(mine, FIRST), state)


def test_new_ids_never_reuse_the_id_of_a_dropped_column(lakehouse: Catalog) -> None:
    table = new_table(lakehouse, [{"a": 1, "b": 2}])
    with table.update_schema() as update:
        update.delete_column("b")  # id 2 stays assigned: old data files hold it
    plan = plan_for(table, [{"c": [1]}])
    assert [(c.column.name, c.column.id) for c in plan.changes] == [("c", 2)]

    commit_plan(table, plan, TableState.of(table))
    field = table.schema().find_field("c")
    assert field.field_id == 3 and table.schema().find_field(4).name == "element"
    assert table.metadata.last_column_id == 4


def test_a_schema_that_would_not_read_the_tables_data_is_refused(lakehouse: Catalog) -> None:
    table = new_table(lakehouse, [{"a": 1}])
    plan = plan_for(table, [{"b": 1}])
    (a, b) = plan.after.fields
    retyped = replace(plan, after=Struct((Column(a.id, "a", "string"), b)))
    with pytest.raises(ValueError, match=r"field a \(id 1\) cannot go from long to string"):
        commit_plan(table, retyped, TableState.of(table))
    dropped = replace(plan, after=Struct((b,)))
    with pytest.raises(ValueError, match=r"drops field a \(id 1\)"):
        commit_plan(table, dropped, TableState.of(table))
    assert lakehouse.load_table(table.name()).schema().schema_id == 0  # nothing committed


def test_a_column_named_like_a_nested_fields_short_name_is_refused_as_iceberg_does(
    lakehouse: Catalog,
) -> None:
    # RULES 4: Iceberg's name index holds dot.key for dot.element.key; Spark's ALTER TABLE
    # and PyIceberg's add_column refuse a column dot.key, so the commit does too
    table = new_table(lakehouse, [{"dot": [{"key": True}]}])
    plan = plan_for(table, [{"dot.key": False}])
    dot, numbered = plan.after.fields
    assert numbered.name == "dot.key_2"  # as planned: it commits
    as_before = replace(plan, after=Struct((dot, replace(numbered, name="Dot.Key"))))
    with pytest.raises(OperationError, match=r"the name 'dot\.key' would name 2 fields"):
        commit_plan(table, as_before, TableState.of(table))
    assert lakehouse.load_table(table.name()).schema().schema_id == 0  # nothing committed
    commit_plan(table, plan, TableState.of(table))
    assert [f.name for f in table.schema().fields] == ["dot", "dot.key_2"]


def test_time_travel_reads_an_older_snapshot_with_the_schema_it_was_written_with(
    lakehouse: Catalog,
) -> None:
    table = new_table(lakehouse, [{"a": 1}])
    append(table, [{"a": 1}])
    first = table.current_snapshot()
    assert first is not None
    for batch in ([{"a": "x"}], [{"b": 1}], [{"c": 1}]):  # schema-only commits in between
        commit_plan(table, plan_for(table, batch), TableState.of(table))
    append(table, [{"a": 2, "c": 3}])

    old = table.scan(snapshot_id=first.snapshot_id).to_arrow()
    assert old.column_names == ["a"] and old.to_pylist() == [{"a": 1}]
    now = lakehouse.load_table(table.name())
    assert now.scan().to_arrow().column_names == ["a", "a_string", "b", "c"]
    assert {s.schema_id for s in now.snapshots()} <= set(now.schemas())


def test_schema_versions_no_snapshot_uses_do_not_pile_up(lakehouse: Catalog) -> None:
    table = new_table(lakehouse, [{f"c{k}": 1 for k in range(8)}])
    append(table, [{"c0": 1}])
    kept = new_table(lakehouse, [{f"c{k}": 1 for k in range(8)}])
    for k in range(8):
        for t, remove in ((table, True), (kept, False)):
            plan = plan_for(t, [{f"c{k}": "text"}])
            commit_plan(t, plan, TableState.of(t), remove_unused_schemas=remove)

    # the snapshot's schema (0), the one current before the last commit, the current one
    assert sorted(lakehouse.load_table(table.name()).schemas()) == [0, 7, 8]
    assert sorted(lakehouse.load_table(kept.name()).schemas()) == list(range(9))
    assert from_iceberg(table.schema()) == from_iceberg(kept.schema())
