"""RULES 3.2-3.5 and the seed document's examples: which columns each batch adds."""

from __future__ import annotations

import datetime as dt

from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from tests.core.helpers import column, columns, docs, run
from toolkit.core.values.types import Column, Struct

UTC = dt.UTC
EVOLVED = "upsolver_evolved_from:"


def test_seed_end_result_my_field_gets_my_field_string() -> None:
    r = run([{"my_field": 1}, {"my_field": 2}], [{"my_field": "abc"}], [{"my_field": 7}])
    s = r.table_schema
    assert columns(s) == {"my_field": "long", "my_field_string": "string"}
    assert docs(s) == {"my_field": None, "my_field_string": EVOLVED + "my_field"}
    # the string column is populated with all future values; the original keeps whole numbers
    assert [(x["my_field"], x["my_field_string"]) for x in r.rows] == [
        (1, None), (2, None), (None, "abc"), (7, "7"),
    ]


def test_seed_rule_6_size_then_double_adds_documented_size_double() -> None:
    r = run([{"size": 4}], [{"size": 2.3}])
    assert columns(r.table_schema) == {"size": "long", "size_double": "double"}
    assert column(r.table_schema, "size_double").doc == "upsolver_evolved_from:size"


def test_seed_rule_1_first_type_of_an_array_field_is_its_main_representation() -> None:
    r = run([{"a": [[[1, 2]]]}])
    assert columns(r.table_schema) == {"a": "list<list<list<long>>>"}


def test_seed_rule_2_narrower_type_is_converted_into_existing_field() -> None:
    r = run([{"a": "x"}], [{"a": 5}, {"a": True}, {"a": "2024-01-02"}])
    assert columns(r.table_schema) == {"a": "string"}
    assert [x["a"] for x in r.rows] == ["x", "5", "true", "2024-01-02"]
    assert not r.plans[1].changed


def test_seed_rule_3_boolean_then_date_adds_a_string_and_a_date() -> None:
    r = run([{"a": True}], [{"a": "2024-01-02"}])
    assert columns(r.table_schema) == {"a": "boolean", "a_date": "date", "a_string": "string"}
    assert r.rows[1] == {"a": None, "a_date": dt.date(2024, 1, 2), "a_string": "2024-01-02"}


def test_seed_rule_5_coordinates_array3_long() -> None:
    r = run([{"coordinates": "n/a"}], [{"coordinates": [[[1, 2], [3]]]}])
    assert columns(r.table_schema) == {
        "coordinates": "string",
        "coordinates_array3_long": "list<list<list<long>>>",
        "coordinates_array3_string": "list<list<list<string>>>",
    }
    assert r.rows[1]["coordinates_array3_long"] == [[[1, 2], [3]]]
    assert r.rows[1]["coordinates_array3_string"] == [[["1", "2"], ["3"]]]


def test_seed_rule_7_all_values_routed_to_the_widest_highest_dimension_column() -> None:
    r = run([{"a": 1}], [{"a": "2024-01-02"}], [{"a": "x"}], [{"a": ["2024-01-03"]}],
            [{"a": ["y"]}], [{"a": 2}, {"a": "2024-01-04"}, {"a": [True]}])
    last = r.rows[-3:]
    assert [x["a_array_string"] for x in last] == [["2"], ["2024-01-04"], ["true"]]


def test_seed_example_1_array_long_then_string() -> None:
    r = run([{"a": [1, 2]}], [{"a": "x"}], [{"a": [3]}, {"a": 4}, {"a": True}])
    s = r.table_schema
    assert columns(s) == {"a": "list<long>", "a_array_string": "list<string>", "a_string": "string"}
    assert docs(s)["a_string"] == docs(s)["a_array_string"] == EVOLVED + "a"
    assert r.rows[1] == {"a": None, "a_array_string": ["x"], "a_string": "x"}
    # values convertible to long at dimension <= 1 still go to the original a[]::long
    assert [x["a"] for x in r.rows[2:]] == [[3], [4], [1]]
    assert [x["a_string"] for x in r.rows[2:]] == [None, "4", "true"]


def test_seed_example_2_largest_dimension_takes_the_original_name() -> None:
    r = run([{"a": 1}, {"a": [2]}, {"a": [[3]]}])
    assert columns(r.table_schema) == {
        "a": "list<list<long>>", "a_array_long": "list<long>", "a_long": "long",
    }
    assert [x["a"] for x in r.rows] == [[[1]], [[2]], [[3]]]
    assert [x["a_long"] for x in r.rows] == [1, None, None]


def test_seed_example_3_a_field_per_type_except_long_beside_double() -> None:
    r = run([{"a": 1}, {"a": 2.5}, {"a": "x"}, {"a": True}])
    assert columns(r.table_schema) == {
        "a": "string", "a_boolean": "boolean", "a_double": "double",
    }
    assert [x["a_double"] for x in r.rows] == [1.0, 2.5, None, 1.0]


def test_seed_example_4_records_at_two_dimensions() -> None:
    r = run([{"d": {"x": 1}}, {"d": [{"y": "a"}, {"x": 2}]}])
    s = r.table_schema
    assert columns(s) == {
        "d": "list<struct<x: long, y: string>>",  # the largest dimension gets all fields
        "d_record": "struct<x: long>",  # the smaller one only those seen at its dimension
    }
    assert r.rows[0] == {"d": [{"x": 1, "y": None}], "d_record": {"x": 1}}
    assert r.rows[1] == {"d": [{"x": None, "y": "a"}, {"x": 2, "y": None}], "d_record": None}


def test_edge_case_1_long_and_double_in_a_first_batch_give_one_double() -> None:
    r = run([{"x": 1}, {"x": 2.5}])
    assert columns(r.table_schema) == {"x": "double"}
    assert [x["x"] for x in r.rows] == [1.0, 2.5]


def test_edge_case_1_is_for_first_batches_only() -> None:
    r = run([{"x": 1}], [{"x": 2.5}])
    assert columns(r.table_schema) == {"x": "long", "x_double": "double"}


def test_edge_case_1_keeps_a_long_that_a_double_would_round() -> None:
    big = 2**60 + 1
    r = run([{"x": big}, {"x": 1.5}])
    assert columns(r.table_schema) == {"x": "string", "x_double": "double", "x_long": "long"}
    assert r.rows[0]["x_long"] == big and r.rows[0]["x"] == str(big)


def test_edge_case_2_timestamp_then_long_adds_started_long_and_fills_started() -> None:
    r = run([{"started": "2024-01-02T03:04:05Z"}], [{"started": 1704164645000}])
    s = r.table_schema
    assert columns(s) == {"started": "timestamptz", "started_long": "long"}
    assert r.rows[1] == {
        "started": dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC),  # routing exception
        "started_long": 1704164645000,
    }


def test_edge_case_2_long_then_timestamp_needs_no_new_column() -> None:
    r = run([{"started": 1704164645000}], [{"started": "2024-01-02T03:04:05Z"}])
    assert columns(r.table_schema) == {"started": "long"}
    assert r.rows[1]["started"] == 1704164645000


def test_edge_case_2_timestamp_and_long_in_one_batch_give_two_columns() -> None:
    r = run([{"started": "2024-01-02T03:04:05Z"}, {"started": 1704164645}])
    assert columns(r.table_schema) == {"started": "long", "started_timestamp": "timestamptz"}
    assert r.rows[1]["started_timestamp"] == dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_rules_2_boolean_and_date_have_string_as_common_denominator() -> None:
    r = run([{"a": True}, {"a": "2024-01-02"}])
    assert columns(r.table_schema) == {"a": "string", "a_boolean": "boolean", "a_date": "date"}


def test_rules_3_2_first_batch_versus_later_batches() -> None:
    together = run([{"a": True}, {"a": 5}])
    apart = run([{"a": True}], [{"a": 5}])
    assert columns(together.table_schema) == {"a": "long", "a_boolean": "boolean"}
    assert columns(apart.table_schema) == {"a": "boolean", "a_long": "long"}


def test_rules_3_2_name_precedence_declared_column_first() -> None:
    declared = Schema(NestedField(1, "x", StringType(), required=False))
    r = run_with(declared, [{"x": 1}, {"x": [2]}])
    assert columns(r.table_schema) == {
        "x": "string", "x_array_long": "list<long>", "x_array_string": "list<string>",
    }
    assert r.rows[0]["x"] == "1"


def test_rules_3_2_name_precedence_record_then_array_then_primitive() -> None:
    assert columns(run([{"x": [1]}, {"x": {"a": 1}}]).table_schema) == {
        "x": "struct<a: long>", "x_array_long": "list<long>",
    }
    assert columns(run([{"x": "s"}, {"x": [1]}]).table_schema) == {
        "x": "list<string>", "x_array_long": "list<long>", "x_string": "string",
    }
    assert columns(run([{"x": 1}, {"x": "s"}]).table_schema) == {"x": "string", "x_long": "long"}


def test_rules_3_3_per_value_exactness_creates_a_column_rather_than_rounding() -> None:
    big = 2**60 + 1
    r = run([{"x": 1.5}], [{"x": big}, {"x": 2}])
    assert columns(r.table_schema) == {"x": "double", "x_long": "long"}
    assert r.rows[1] == {"x": None, "x_long": big}
    assert r.rows[2] == {"x": 2.0, "x_long": 2}


def test_rules_3_3_sub_millisecond_timestamp_into_long_family_gets_its_own_column() -> None:
    r = run([{"t": 5}], [{"t": "2024-01-02T03:04:05.123456Z"}, {"t": "2024-01-02T03:04:05Z"}])
    assert columns(r.table_schema) == {"t": "long", "t_timestamp": "timestamptz"}
    assert r.rows[1]["t"] is None
    assert r.rows[2]["t"] == 1704164645000


def test_rules_3_3_all_types_of_a_batch_are_decided_together() -> None:
    one = run([{"a": 1}], [{"a": 2.5}, {"a": "x"}])
    other = run([{"a": 1}], [{"a": "x"}, {"a": 2.5}])
    assert one.table_schema == other.table_schema
    assert columns(one.table_schema) == {"a": "long", "a_double": "double", "a_string": "string"}


def test_rules_3_3_columns_a_batch_adds_are_ordered_by_name() -> None:
    r = run([{"z": 1, "b": 1, "a": 1}])
    assert list(columns(r.table_schema)) == ["a", "b", "z"]
    assert [c.column.id for c in r.plans[0].changes] == [1, 2, 3]


def test_rules_3_4_nested_evolution_inside_a_struct() -> None:
    r = run([{"d": {"x": 1}}], [{"d": {"x": "s", "y": True}}])
    s = r.table_schema
    assert columns(s) == {"d": "struct<x: long, x_string: string, y: boolean>"}
    assert column(s, "d", "x_string").doc == EVOLVED + "x"
    assert column(s, "d", "y").doc is None
    assert [(c.path, c.family) for c in r.plans[1].changes] == [
        (("d", "x_string"), "x"), (("d", "y"), "y"),
    ]
    assert r.rows[0]["d"] == {"x": 1, "x_string": None, "y": None}
    assert r.rows[1]["d"] == {"x": None, "x_string": "s", "y": True}


def test_rules_3_4_nested_evolution_inside_an_array_of_structs() -> None:
    r = run([{"items": [{"sku": 1}]}], [{"items": [{"sku": "A", "qty": 2}, {"sku": 3}]}])
    assert columns(r.table_schema) == {
        "items": "list<struct<sku: long, qty: long, sku_string: string>>",
    }
    assert r.rows[1]["items"] == [
        {"sku": None, "qty": 2, "sku_string": "A"}, {"sku": 3, "qty": None, "sku_string": "3"},
    ]
    assert r.rows[0]["items"] == [{"sku": 1, "qty": None, "sku_string": None}]


def test_rules_3_4_record_beside_existing_smaller_dimension_record() -> None:
    r = run([{"d": {"x": 1}}], [{"d": [{"y": 2}]}, {"d": {"z": 3}}])
    assert columns(r.table_schema) == {
        "d": "struct<x: long, z: long>",
        # the larger dimension starts with every field the family's smaller one has
        "d_array_record": "list<struct<x: long, y: long, z: long>>",
    }


def test_rules_3_5_absent_field_writes_null_and_null_only_field_creates_no_column() -> None:
    r = run([{"a": 1, "n": None}], [{"b": 2}])
    assert columns(r.table_schema) == {"a": "long", "b": "long"}
    assert r.rows == [{"a": 1, "b": None}, {"a": None, "b": 2}]


def test_rules_3_5_existing_columns_never_change_type() -> None:
    r = run([{"a": 1}], [{"a": "x"}], [{"a": [1.5]}])
    first = {c.id: c for c in r.plans[0].after.fields}
    for plan in r.plans:
        for c in plan.after.fields:
            if c.id in first:
                assert c == first[c.id]


def test_rules_1_empty_array_alone_is_created_as_array_of_string() -> None:
    r = run([{"t": []}], [{"t": [1]}])
    assert columns(r.table_schema) == {"t": "list<string>"}
    assert [x["t"] for x in r.rows] == [[], ["1"]]


def test_rules_1_empty_array_takes_the_type_of_other_evidence() -> None:
    r = run([{"t": []}, {"t": [1]}])
    assert columns(r.table_schema) == {"t": "list<long>"}


def test_rules_1_empty_array_goes_to_any_column_of_its_dimension() -> None:
    r = run([{"t": [1]}], [{"t": []}, {"t": [[]]}])
    assert columns(r.table_schema) == {"t": "list<long>", "t_array2_long": "list<list<long>>"}
    assert r.rows[1] == {"t": [], "t_array2_long": [[]]}
    assert r.rows[2] == {"t": None, "t_array2_long": [[]]}


def test_rules_1_ragged_arrays_wrap_shallower_leaves() -> None:
    r = run([{"r": [1, [2, None]]}])
    assert columns(r.table_schema) == {"r": "list<list<long>>"}
    assert r.rows[0]["r"] == [[1], [2, None]]


def test_rules_4_name_collision_appends_a_number() -> None:
    declared = Schema(NestedField(1, "a_string", LongType(), required=False))
    r = run_with(declared, [{"a": 1}], [{"a": "x"}])
    s = r.table_schema
    assert columns(s) == {"a_string": "long", "a": "long", "a_string_2": "string"}
    assert column(s, "a_string_2").doc == EVOLVED + "a"
    assert r.rows[1] == {"a_string": None, "a": None, "a_string_2": "x"}


def test_rules_4_names_collide_case_insensitively_and_routing_keeps_them_apart() -> None:
    r = run([{"name": "lower"}], [{"Name": "upper", "name": "again"}])
    s = r.table_schema
    assert columns(s) == {"name": "string", "Name_2": "string"}
    assert column(s, "Name_2").doc == EVOLVED + "Name"
    assert r.rows[1] == {"name": "again", "Name_2": "upper"}
    # the family of key "Name" is found again from the doc: no further column
    again = run([{"name": "lower"}], [{"Name": "upper"}], [{"Name": "x"}])
    assert columns(again.table_schema) == {"name": "string", "Name_2": "string"}


def test_rules_4_suffix_like_declared_column_is_not_part_of_a_family() -> None:
    declared = Schema(NestedField(1, "start_date", StringType(), required=False))
    r = run_with(declared, [{"start": "2024-01-02"}], [{"start": 5}])
    s = r.table_schema
    assert columns(s) == {"start_date": "string", "start": "date", "start_long": "long"}
    assert r.rows[0]["start_date"] is None


def test_rules_4_keys_with_dots_spaces_and_unicode() -> None:
    rec = {"a.b": 1, "x y": "s", "ünï": True, "": 2, "q\"`;": 3}
    r = run([rec])
    # an empty key names no column (Iceberg's Parquet writer refuses ""): numbered as a
    # collision, its doc keeps the key
    assert set(columns(r.table_schema)) == set(rec) - {""} | {"_2"}
    assert r.table_schema.by_name()["_2"].doc == "upsolver_evolved_from:"
    assert r.rows == [{("_2" if k == "" else k): v for k, v in rec.items()}]


def test_rules_3_replaying_a_batch_adds_nothing() -> None:
    b1 = [{"a": 1, "d": {"x": [1]}}]
    b2 = [{"a": "x", "d": [{"y": 2.5}]}]
    r = run(b1, b2, b1, b2)
    assert not r.plans[2].changed and not r.plans[3].changed


def run_with(schema: Schema | Struct, *batches: list[dict[str, object]]):  # type: ignore[no-untyped-def]
    import toolkit

    return toolkit.simulate(list(batches), schema=schema)


def test_declared_opaque_types_are_kept_and_never_written() -> None:
    declared = Struct((Column(1, "amount", "decimal(9, 2)"),))
    r = run_with(declared, [{"amount": 1.5}])
    assert columns(r.table_schema) == {"amount": "decimal(9, 2)", "amount_double": "double"}
    assert r.rows == [{"amount": None, "amount_double": 1.5}]
