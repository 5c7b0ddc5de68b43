"""Operations naming fields by field ID (issue 15): ``toolkit.ops.rename(2, "x")``.

The ID is looked up when the plan is made, in the layout the operation applies to; the
planned operation keeps the path found and the ID, prints both, and is logged with both.
"""

from __future__ import annotations

import json

import pytest

from toolkit import ops
from toolkit.core.evolution.layout import PartitionField, SortField, TableLayout
from toolkit.core.evolution.lineage import lineage_properties, read_lineage
from toolkit.core.evolution.operations import (
    DropField,
    MoveField,
    PartitionById,
    RenameField,
    SortById,
    WidenField,
)
from toolkit.core.evolution.plans import operation_from_json, plan_evolution
from toolkit.core.values.types import Column, ListOf, Struct
from toolkit.errors import OperationError

#: 1 id, 2 name, 3 address{4 zip, 5 city}, 6 tags list<int> (element 7), 8 ts, 9 n (required)
TABLE = TableLayout(
    Struct(
        (
            Column(1, "id", "long"),
            Column(2, "name", "string"),
            Column(3, "address", Struct((Column(4, "zip", "string"), Column(5, "city", "string")))),
            Column(6, "tags", ListOf(7, "int")),
            Column(8, "ts", "timestamptz"),
            Column(9, "n", "int", required=True),
        )
    )
)


def names(layout: TableLayout) -> list[tuple[int, str]]:
    return [(c.id, c.name) for c in layout.schema.fields]


def test_an_operation_by_id_does_what_the_same_operation_by_path_does() -> None:
    pairs = [
        (ops.rename(2, "full_name"), ops.rename("name", "full_name")),
        (ops.rename(5, "town"), ops.rename("address.city", "town")),
        (ops.drop(4), ops.drop("address.zip")),
        (ops.widen(9, "long"), ops.widen("n", "long")),
        (ops.widen(7, "long"), ops.widen("tags.element", "long")),
        (ops.make_optional(9), ops.make_optional("n")),
        (ops.move_first(8), ops.move_first("ts")),
        (ops.move_after(1, 8), ops.move_after("id", "ts")),
        (ops.move_before(5, 4), ops.move_before("address.city", "address.zip")),
        (ops.move_after("id", 8), ops.move_after("id", "ts")),
        (ops.partition_by(8, "day"), ops.partition_by("ts", "day")),
        (ops.sort_by(2, ops.SortKey(1, "desc")), ops.sort_by("name", ops.SortKey(("id",), "desc"))),
    ]
    for by_id, by_path in pairs:
        assert plan_evolution(TABLE, [by_id]).after == plan_evolution(TABLE, [by_path]).after, by_id


def test_printed_before_and_after_the_plan_resolves_the_ids() -> None:
    plan = [
        ops.rename(2, "full_name"),
        ops.drop(4),
        ops.widen(7, "long"),
        ops.make_optional(9),
        ops.move_after(1, 8),
        ops.partition_by(8, "day"),
        ops.sort_by(2, ops.SortKey(1, "desc")),
    ]
    assert [str(op) for op in plan] == [
        "~ rename #2 -> full_name",
        "- drop #4",
        "^ widen #7 -> long",
        "? make optional #9",
        "> move #1 after #8",
        "+ partition by day(#8)",
        "= sort by #2 asc nulls-first, #1 desc nulls-last",
    ]
    evo = plan_evolution(TABLE, plan)
    assert [str(op) for op in evo.operations] == [
        "~ rename name (#2) -> full_name",
        "- drop address.zip (#4)",
        "^ widen tags.element (#7) -> long",
        "? make optional n (#9)",
        "> move id (#1) after ts (#8)",
        "+ partition by day(ts (#8))",
        "= sort by full_name (#2) asc nulls-first, id (#1) desc nulls-last",
    ]
    assert evo.after.partition == (PartitionField(8, "day", "ts_day"),)
    assert evo.after.sort == (SortField(2), SortField(1, "identity", "desc", "nulls-last"))


def test_an_id_is_looked_up_after_the_plans_earlier_operations() -> None:
    # the rename changes the path of field 2; the drop by ID still finds it
    evo = plan_evolution(TABLE, [ops.rename(2, "full_name"), ops.drop(2)])
    assert [str(op) for op in evo.operations] == [
        "~ rename name (#2) -> full_name",
        "- drop full_name (#2)",
    ]
    assert 2 not in [c.id for c in evo.schema.fields]
    # a field dropped earlier in the plan has no ID any more
    with pytest.raises(OperationError, match=r"operation 2 \(rename #2\): no field has ID 2"):
        plan_evolution(TABLE, [ops.drop(2), ops.rename(2, "x")])


def test_an_unknown_id_names_the_id_the_table_and_the_ids_there_are() -> None:
    with pytest.raises(OperationError) as err:
        plan_evolution(TABLE, [ops.rename(42, "x")], table="db.events")
    text = str(err.value)
    assert text.startswith("operation 1 (rename #42): no field has ID 42 in db.events")
    assert "1 id, 2 name, 3 address, 4 address.zip, 5 address.city, 6 tags, 7 tags.element" in text
    assert "toolkit.preview_evolution(catalog, 'db.events', [])" in text
    # without a table name, the message still says what is wrong
    with pytest.raises(OperationError, match="no field has ID 42 in the table"):
        ops.drop(42).apply(TABLE.schema)
    for op in (ops.move_after(1, 42), ops.partition_by(42, "day"), ops.sort_by(ops.SortKey(42))):
        with pytest.raises(OperationError, match="no field has ID 42 in db.events"):
            plan_evolution(TABLE, [op], table="db.events")


def test_an_id_that_is_not_a_field_an_operation_can_take_fails_like_its_path() -> None:
    not_a_field = r"\(rename tags\.element \(#7\)\): tags\.element is a list element, not a field"
    with pytest.raises(OperationError, match=not_a_field):
        plan_evolution(TABLE, [ops.rename(7, "x")])
    # Iceberg: making an optional field optional changes nothing (no refusal)
    assert plan_evolution(TABLE, [ops.make_optional(2)]).after == TABLE


def test_add_takes_a_path_only() -> None:
    with pytest.raises(OperationError) as err:
        ops.add(5, "string")  # type: ignore[arg-type]
    assert str(err.value).startswith("add 5: a new field has no field ID yet")
    assert 'add("address.zip", "string")' in str(err.value)


def test_a_bool_is_not_taken_for_a_field_id() -> None:
    with pytest.raises(OperationError, match=r"rename True: name the field by its path"):
        ops.rename(True, "x")


def test_json_round_trips_before_and_after_resolution() -> None:
    built = [
        ops.rename(2, "full_name"),
        ops.drop(4),
        ops.widen(9, "long"),
        ops.make_optional(9),
        ops.move_before(5, 4),
        ops.move_first(8),
        ops.partition_by(8, "day", "by_day"),
        ops.sort_by(2, ops.SortKey(1, "desc"), "ts"),
    ]
    assert built[0].to_json() == {"op": "rename", "to": "full_name", "id": 2}
    assert built[4].to_json() == {"op": "move", "position": "before", "anchor_id": 4, "id": 5}
    assert built[6].to_json() == {
        "op": "partition", "transform": "day", "name": "by_day", "source_id": 8,
    }
    assert built[7].to_json()["keys"][2] == {
        "source": ["ts"], "direction": "asc", "nulls": "nulls-first", "transform": "identity",
    }
    for op in built:
        assert operation_from_json(json.loads(json.dumps(op.to_json()))) == op
    resolved = plan_evolution(TABLE, [built[0], built[2], built[4], built[6], built[7]])
    assert resolved.operations[0].to_json() == {
        "op": "rename", "path": ["name"], "to": "full_name", "id": 2,
    }
    assert resolved.operations[2].to_json() == {
        "op": "move", "path": ["address", "city"], "position": "before",
        "anchor": ["address", "zip"], "anchor_id": 4, "id": 5,
    }
    for op in resolved.operations:
        assert operation_from_json(json.loads(json.dumps(op.to_json()))) == op


def test_operations_logged_before_ids_existed_read_as_before() -> None:
    old = [
        {"op": "rename", "path": ["name"], "to": "n"},
        {"op": "move", "path": ["id"], "position": "after", "anchor": ["ts"]},
        {"op": "partition", "source": ["ts"], "transform": "day"},
        {"op": "sort", "keys": [{"source": ["id"], "direction": "asc", "nulls": "nulls-first",
                                 "transform": "identity"}]},
    ]  # fmt: skip
    read = [operation_from_json(d) for d in old]
    assert read == [
        RenameField(("name",), "n"),
        MoveField(("id",), "after", ("ts",)),
        ops.partition_by("ts", "day"),
        ops.sort_by("id"),
    ]
    assert [type(op) for op in read[2:]] == [type(ops.partition_by("ts")), type(ops.sort_by("id"))]
    assert [op.to_json() for op in read] == old
    assert repr(read[0]) == "RenameField(path=('name',), new_name='n')"


def test_lineage_logs_the_resolved_path_and_the_id() -> None:
    evo = plan_evolution(TABLE, [ops.rename(2, "full_name"), ops.widen(9, "long")], batch="b7")
    props = lineage_properties(evo, {}, at_ms=0)
    logged = json.loads(props["toolkit.lineage.1"])
    assert logged["ops"] == [
        {"op": "rename", "path": ["name"], "to": "full_name", "id": 2},
        {"op": "widen", "path": ["n"], "to": "long", "rewrite": False, "id": 9},
    ]
    (entry,) = read_lineage(props)
    assert entry.operations == evo.operations
    assert str(entry).splitlines()[1:3] == [
        "  ~ rename name (#2) -> full_name",
        "  ^ widen n (#9) -> long",
    ]
    # undoing a rename by ID renames the same field back (by path, guarded by its ID)
    renamed = plan_evolution(TABLE, [ops.rename(2, "full_name")])
    (entry,) = read_lineage(lineage_properties(renamed, {}, at_ms=0))
    assert entry.inverse() == (RenameField(("full_name",), "name"),)
    assert entry.guard == (2,)


def test_a_rewritten_field_gets_a_new_id_so_its_old_id_names_nothing() -> None:
    layout = TableLayout(Struct((Column(1, "id", "long"), Column(2, "score", "long"))))
    evo = plan_evolution(layout, [ops.widen(2, "string")])
    (widen,) = evo.operations
    assert isinstance(widen, WidenField) and widen.rewrite and widen.path == ("score",)
    assert [(c.id, c.name) for c in evo.schema.fields] == [(1, "id"), (3, "score")]
    with pytest.raises(OperationError, match="no field has ID 2 in the table"):
        plan_evolution(layout, [ops.widen(2, "string"), ops.drop(2)])


def test_planned_ids_follow_the_field_not_the_path() -> None:
    # a planned operation applied again finds its field by ID even where the path moved on
    planned = plan_evolution(TABLE, [ops.drop(5)]).operations[0]
    assert planned == DropField(("address", "city"), 5)
    renamed = plan_evolution(TABLE, [ops.rename("address.city", "town")]).after
    again = plan_evolution(renamed, [planned])
    assert str(again.operations[0]) == "- drop address.town (#5)"


def test_the_by_id_forms_of_partition_and_sort() -> None:
    part = ops.partition_by(8, "hour")
    assert isinstance(part, PartitionById) and part.op == "partition"
    sort = ops.sort_by(ops.SortKey(8, "desc"))
    assert isinstance(sort, SortById) and sort.op == "sort"
    evo = plan_evolution(TABLE, [part, sort])
    assert evo.inverse() is not None
    assert [str(op) for op in evo.inverse().operations] == [  # type: ignore[union-attr]
        "= sort by nothing (unsorted)",
        "- partition field ts_hour",
    ]
    assert evo.subject_ids() == (8, None)
