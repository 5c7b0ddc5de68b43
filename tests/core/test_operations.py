"""RULES 5-6: user-written evolution operations, previewed purely (no table, no Spark)."""

from __future__ import annotations

import pytest

from toolkit import ops
from toolkit.core.evolution.layout import PartitionField, SortField, TableLayout
from toolkit.core.evolution.operations import (
    AddPartitionField,
    MoveField,
    RemovePartitionField,
    SortKey,
    WidenField,
)
from toolkit.core.evolution.plans import (
    Evolution,
    operation_from_json,
    operation_to_json,
    plan_evolution,
)
from toolkit.core.values.types import Column, ListOf, Struct, parse_type, type_to_str
from toolkit.errors import OperationError

TABLE = Struct(
    (
        Column(1, "id", "long", required=True),
        Column(2, "name", "string"),
        Column(3, "count", "int"),
        Column(4, "ratio", "float"),
        Column(5, "address", Struct((Column(6, "city", "string"), Column(7, "zip", "int")))),
        Column(8, "tags", ListOf(9, "int")),
        Column(10, "ts", "timestamptz"),
        Column(11, "born", "date"),
        Column(12, "ok", "boolean"),
    )
)
LAYOUT = TableLayout(TABLE)


def names(struct: Struct) -> list[str]:
    return [c.name for c in struct.fields]


def col(struct: Struct, name: str) -> Column:
    return struct.by_name()[name]


@pytest.mark.parametrize(
    ("text", "rendered"),
    [
        ("long", "long"),
        ("decimal(9,2)", "decimal(9, 2)"),
        ("fixed[16]", "fixed[16]"),
        ("list<string>", "list<string>"),
        ("struct<a: long, b: list<struct<c: date>>>", "struct<a: long, b: list<struct<c: date>>>"),
    ],
)
def test_iceberg_type_strings_parse_and_render_back(text: str, rendered: str) -> None:
    assert type_to_str(parse_type(text)) == rendered


@pytest.mark.parametrize("text", ["lon", "list<long", "map<string>", "decimal(40, 2)"])
def test_bad_type_strings_are_refused_with_the_text(text: str) -> None:
    with pytest.raises(ValueError, match="invalid Iceberg type"):
        parse_type(text)


def test_rename_keeps_the_field_id_and_position() -> None:
    after = ops.rename("name", "full_name").apply(TABLE)
    assert names(after)[:3] == ["id", "full_name", "count"]
    assert col(after, "full_name").id == 2


def test_rename_of_a_nested_field() -> None:
    after = ops.rename("address.zip", "postcode").apply(TABLE)
    assert [c.name for c in col(after, "address").type.fields] == ["city", "postcode"]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("op", "message"),
    [
        (ops.rename("name", "ID"), "name 'ID' is taken by field 'id'"),
        (ops.rename("nope", "x"), "no field 'nope'"),
        (ops.rename("Name", "x"), "did you mean 'name'"),
        (ops.add("address.CITY", "string"), "name 'CITY' is taken by field 'city' in address"),
        (ops.add(("address.city",), "string"), "full name 'address.city' is taken"),
        (ops.add("name.x", "long"), "name is string, not a struct"),
        (ops.drop("address.nope"), "no field 'nope' in address"),
        (ops.widen("name", "long"), "cannot widen from string to long"),
        (ops.widen("count", "binary"), "cannot widen from int to binary"),
        (ops.widen("ok", "string"), "cannot widen from boolean to string"),
        (ops.widen("born", "timestamptz"), "cannot widen from date to timestamptz"),
        (ops.widen("address", "string"), "only primitives widen"),
        (ops.move_after("city", "name"), "no field 'city'"),
        (ops.move_after("address.city", "name"), "not in the same struct"),
    ],
    ids=lambda v: v if isinstance(v, str) else str(v),
)
def test_invalid_operations_name_the_field(op: ops.Operation, message: str) -> None:
    with pytest.raises(OperationError, match=message.replace("(", r"\(")):
        op.apply_to(LAYOUT)


def test_a_name_iceberg_indexes_through_a_list_of_records_is_taken() -> None:
    # RULES 4: Iceberg's index holds dot.key for dot.element.key, both ways round
    layout = ops.add("dot", "list<struct<key: boolean>>").apply_to(LAYOUT)
    with pytest.raises(OperationError, match=r"full name 'dot\.key' is taken"):
        ops.add(("dot.key",), "long").apply_to(layout)
    dotted = ops.add(("dot.key",), "long").apply_to(LAYOUT)
    dotted = ops.add("dot", "list<struct<x: long>>").apply_to(dotted)
    with pytest.raises(OperationError, match=r"'dot\.key' \(Iceberg's name of 'dot\.element"):
        ops.add("dot.key", "long").apply_to(dotted)


def test_add_assigns_ids_like_iceberg_never_reusing_a_dropped_one() -> None:
    layout = ops.drop("ok").apply_to(LAYOUT)  # id 12 dropped: the table's last id stays 12
    after = ops.add("extra", "struct<a: long, b: list<string>>").apply_to(layout)
    extra = col(after.schema, "extra")
    assert extra.id == 13
    assert extra.type == Struct((Column(14, "a", "long"), Column(15, "b", ListOf(16, "string"))))
    assert after.last_column_id == 16


def test_an_added_column_under_a_dropped_name_gets_a_new_id() -> None:
    evo = plan_evolution(TABLE, [ops.drop("name"), ops.add("name", "string")])
    assert col(evo.schema, "name").id == 13


def test_nested_add_in_a_struct_and_in_a_list_of_structs() -> None:
    table = Struct((Column(1, "items", ListOf(2, Struct((Column(3, "qty", "long"),)))),))
    for path in ("items.price", ("items", "element", "price")):
        after = ops.add(path, "double").apply(table)
        items = col(after, "items").type
        assert isinstance(items, ListOf) and isinstance(items.element, Struct)
        assert [(c.id, c.name) for c in items.element.fields] == [(3, "qty"), (4, "price")]


@pytest.mark.parametrize(
    ("path", "old", "new", "rewrite"),
    [
        ("count", "int", "long", False),
        ("ratio", "float", "double", False),
        ("address.zip", "int", "long", False),
        ("tags.element", "int", "long", False),
        ("count", "int", "string", True),
        ("count", "int", "double", True),
        ("id", "long", "string", True),
        ("ratio", "float", "string", True),
    ],
)
def test_widening_is_in_place_only_where_iceberg_promotes(
    path: str, old: str, new: str, rewrite: bool
) -> None:
    evo = plan_evolution(TABLE, [ops.widen(path, new)])
    (op,) = evo.operations
    assert isinstance(op, WidenField) and op.rewrite is rewrite
    assert evo.rewrites == ((op,) if rewrite else ())


def test_in_place_widening_keeps_the_id_a_rewrite_keeps_name_and_place_with_a_new_id() -> None:
    in_place = ops.widen("count", "long").apply(TABLE)
    assert col(in_place, "count") == Column(3, "count", "long")
    rewritten = ops.widen("id", "string").apply(TABLE)
    assert names(rewritten) == names(TABLE)
    assert col(rewritten, "id") == Column(13, "id", "string", required=True)


def test_date_to_timestamp_is_in_place_on_format_v3_only() -> None:
    with pytest.raises(OperationError):
        ops.widen("born", "timestamp").apply_to(TableLayout(TABLE, format_version=2))
    after = ops.widen("born", "timestamp").apply_to(TableLayout(TABLE, format_version=3))
    assert col(after.schema, "born") == Column(11, "born", "timestamp")


def test_a_rewrite_of_a_partition_source_is_refused() -> None:
    layout = TableLayout(TABLE, partition=(PartitionField(3, "identity", "count"),))
    with pytest.raises(OperationError, match="partition field 'count' uses"):
        ops.widen("count", "string").apply_to(layout)
    assert col(ops.widen("count", "long").apply_to(layout).schema, "count").type == "long"


def test_make_optional() -> None:
    after = ops.make_optional("id").apply(TABLE)
    assert col(after, "id").required is False
    assert ops.make_optional("id").inverse(TABLE) is None
    assert "never back" in (ops.make_optional("id").why_irreversible or "")


@pytest.mark.parametrize(
    ("op", "order"),
    [
        (ops.move_first("ok"), ["ok", "id", "name"]),
        (ops.move_before("ok", "name"), ["id", "ok", "name"]),
        (ops.move_after("id", "name"), ["name", "id", "count"]),
    ],
    ids=str,
)
def test_moves_and_their_inverse(op: MoveField, order: list[str]) -> None:
    after = op.apply(TABLE)
    assert names(after)[:3] == order
    assert sorted(after.fields, key=lambda c: c.id) == sorted(TABLE.fields, key=lambda c: c.id)
    assert op.inverse(TABLE).apply(after) == TABLE


def test_nested_move() -> None:
    after = ops.move_first("address.zip").apply(TABLE)
    assert [c.name for c in col(after, "address").type.fields] == ["zip", "city"]  # type: ignore[union-attr]


def test_a_drop_has_no_inverse_and_says_why() -> None:
    drop = ops.drop("name")
    assert drop.inverse(TABLE) is None
    assert "new field ID" in drop.why_irreversible
    assert names(drop.apply(TABLE)) == [n for n in names(TABLE) if n != "name"]


def test_a_partition_or_sort_source_cannot_be_dropped() -> None:
    layout = plan_evolution(TABLE, [ops.partition_by("ts", "day")]).after
    with pytest.raises(OperationError, match="ts is used by partition field 'ts_day'"):
        ops.drop("ts").apply_to(layout)
    sorted_ = plan_evolution(TABLE, [ops.sort_by("name")]).after
    with pytest.raises(OperationError, match="used by the sort order"):
        ops.drop("name").apply_to(sorted_)


@pytest.mark.parametrize(
    ("source", "transform", "name"),
    [
        ("id", "identity", "id"),
        ("id", "bucket[8]", "id_bucket_8"),
        ("name", "truncate[4]", "name_trunc_4"),
        ("ts", "hour", "ts_hour"),
        ("born", "month", "born_month"),
        ("address.city", "identity", "address.city"),
        ("ok", "void", "ok_null"),
    ],
)
def test_partition_fields_get_iceberg_names(source: str, transform: str, name: str) -> None:
    after = ops.partition_by(source, transform).apply_to(LAYOUT)
    assert [p.name for p in after.partition] == [name]


@pytest.mark.parametrize(
    ("op", "message"),
    [
        (ops.partition_by("count", "day"), "day cannot transform int values of count"),
        (ops.partition_by("id", "bucket[0]"), "positive parameter"),
        (ops.partition_by("id", "zorder"), "unknown transform"),
        (ops.partition_by("tags", "identity"), "sources are primitives"),
        (ops.partition_by("count", "bucket[4]", "name"), "partition name 'name' is a column"),
        (ops.remove_partition("id_bucket_8"), "no partition field 'id_bucket_8'"),
    ],
    ids=str,
)
def test_invalid_partition_changes(
    op: AddPartitionField | RemovePartitionField, message: str
) -> None:
    with pytest.raises(OperationError, match=message):
        op.apply_to(LAYOUT)


def test_partition_evolution_and_its_inverse() -> None:
    evo = plan_evolution(
        TABLE, [ops.partition_by("id", "bucket[8]"), ops.partition_by("ts", "day")]
    )
    assert evo.after.partition == (
        PartitionField(1, "bucket[8]", "id_bucket_8"),
        PartitionField(10, "day", "ts_day"),
    )
    with pytest.raises(OperationError, match="already partitioned by day"):
        ops.partition_by("ts", "hour").apply_to(evo.after)
    undo = evo.inverse()
    assert undo is not None and undo.after.partition == ()
    removed = plan_evolution(evo.after, [ops.remove_partition("id_bucket_8")])
    back = removed.inverse()
    assert back is not None and back.after.partition == (
        PartitionField(10, "day", "ts_day"),
        PartitionField(1, "bucket[8]", "id_bucket_8"),
    )


def test_sort_order_replacement_follows_renames_by_id_and_inverts() -> None:
    evo = plan_evolution(
        TABLE, [ops.sort_by("id", SortKey(("name",), "desc")), ops.rename("id", "key")]
    )
    assert evo.after.sort == (
        SortField(1, "identity", "asc", "nulls-first"),
        SortField(2, "identity", "desc", "nulls-last"),
    )
    assert "sorted by key asc nulls-first, name desc nulls-last" in str(evo.after)
    undo = evo.inverse()
    assert undo is not None and undo.after == TableLayout(TABLE, last_column_id=12)


def test_a_plan_previews_and_inverts_as_a_whole() -> None:
    evo = plan_evolution(
        TABLE,
        [ops.rename("name", "full_name"), ops.add("email", "string"), ops.move_first("email")],
        batch="day3",
        reason="cleanup",
    )
    assert names(evo.schema)[:3] == ["email", "id", "full_name"]
    undo = evo.inverse()
    assert undo is not None
    assert undo.schema == TABLE
    assert [str(op) for op in undo.operations] == [
        "> move email after ok",
        "- drop email",
        "~ rename full_name -> name",
    ]
    assert undo.reason == "undo: cleanup"


def test_a_plan_with_a_drop_has_no_inverse() -> None:
    evo = plan_evolution(TABLE, [ops.rename("name", "n"), ops.drop("ok")])
    assert evo.inverse() is None
    assert len(evo.irreversible) == 1 and "drop cannot be undone" in evo.irreversible[0]


def test_a_plan_names_the_failing_operation() -> None:
    with pytest.raises(OperationError, match=r"operation 2 \(rename name\): no field 'name'"):
        plan_evolution(TABLE, [ops.rename("name", "n"), ops.rename("name", "m")])


def test_subject_ids_follow_fields_not_names() -> None:
    evo = plan_evolution(TABLE, [ops.rename("name", "n"), ops.drop("n"), ops.add("name", "long")])
    assert evo.subject_ids() == (2, 2, None)


def test_dotted_names_are_reachable_through_tuples() -> None:
    table = Struct((Column(1, "a.b", "long"), Column(2, "a", Struct((Column(3, "c", "long"),)))))
    after = ops.rename(("a.b",), "ab").apply(table)
    assert names(after) == ["ab", "a"]
    with pytest.raises(OperationError, match="no field 'b' in a"):
        ops.rename("a.b", "x").apply(table)


ALL_OPS: list[ops.Operation] = [
    ops.add("address.zip4", "list<struct<a: long>>", doc="why"),
    ops.drop("ok"),
    ops.rename("name", "n"),
    WidenField(("id",), "string", True, 3, 1200),
    ops.make_optional("id"),
    ops.move_before("ok", "name"),
    ops.move_first("ok"),
    ops.partition_by("id", "bucket[8]", "b"),
    ops.remove_partition("b"),
    ops.sort_by("id", SortKey(("ts",), "desc", "nulls-first", "day")),
]


@pytest.mark.parametrize("op", ALL_OPS, ids=str)
def test_operations_round_trip_through_json(op: ops.Operation) -> None:
    assert operation_from_json(operation_to_json(op)) == op


def test_evolution_renders_for_a_preview() -> None:
    evo = plan_evolution(TABLE, [ops.widen("id", "string"), ops.add("x", "long")], batch="b1")
    assert isinstance(evo, Evolution)
    assert str(evo).splitlines() == [
        "user: 2 operations (batch b1)",
        "  ^ widen id -> string  REWRITE",
        "  + add x: long",
    ]
