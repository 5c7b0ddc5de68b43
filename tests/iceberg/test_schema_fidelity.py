"""Every Iceberg table, not only the toolkit's (issue 26): a PyIceberg schema reads into the
core's model and writes back unchanged, and plans on real tables keep every flag they do not
list -- required list elements and map values, identifier fields, docs -- reach fields inside
maps, and refuse with a ToolkitError what Iceberg refuses."""

from __future__ import annotations

import itertools
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyiceberg.catalog import Catalog
from pyiceberg.schema import Schema, assign_fresh_schema_ids
from pyiceberg.table import Table
from pyiceberg.types import (
    BooleanType,
    DateType,
    DoubleType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    UnknownType,
)

import toolkit
from toolkit import ops
from toolkit.iceberg.schema import from_iceberg, identifier_ids, to_iceberg

_names = itertools.count()

# --- round trip: PyIceberg schema -> the core's model -> PyIceberg schema ----------------------

_PRIMS: list[IcebergType] = [
    IntegerType(),
    LongType(),
    FloatType(),
    DoubleType(),
    StringType(),
    DateType(),
    BooleanType(),
]
_DEFAULTS: dict[type, Any] = {IntegerType: 3, LongType: 4, StringType: "d", BooleanType: False}


def _iceberg_types(depth: int) -> st.SearchStrategy[IcebergType]:
    prim = st.sampled_from(_PRIMS)
    if depth == 0:
        return prim
    inner = _iceberg_types(depth - 1)
    return st.one_of(
        prim,
        st.builds(lambda e, r: ListType(0, e, element_required=r), inner, st.booleans()),
        st.builds(
            lambda v, r: MapType(0, StringType(), 0, v, value_required=r), inner, st.booleans()
        ),  # fmt: skip
        _struct_types(depth - 1),
    )


@st.composite
def _struct_types(draw: st.DrawFn, depth: int = 2) -> StructType:
    names = draw(st.lists(st.sampled_from("abcd"), min_size=1, max_size=3, unique=True))
    fields = []
    for n in names:
        t = draw(_iceberg_types(depth))
        default = _DEFAULTS.get(type(t)) if draw(st.booleans()) else None
        fields.append(NestedField(0, n, t, required=draw(st.booleans()),
                                  doc=draw(st.sampled_from([None, "a doc"])),
                                  initial_default=default, write_default=default))  # fmt: skip
    return StructType(*fields)


@st.composite
def iceberg_schemas(draw: st.DrawFn) -> Schema:
    struct = draw(_struct_types())
    schema = assign_fresh_schema_ids(Schema(*struct.fields))
    top = [
        f.field_id
        for f in schema.fields
        if f.required and isinstance(f.field_type, LongType | StringType | IntegerType)
    ]
    ids = [top[0]] if top and draw(st.booleans()) else []
    return Schema(*schema.fields, schema_id=3, identifier_field_ids=ids)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(iceberg_schemas())
def test_a_pyiceberg_schema_round_trips_through_the_core_model(schema: Schema) -> None:
    back = to_iceberg(from_iceberg(schema), schema.schema_id, identifier_ids(schema))
    assert back == schema
    assert back.model_dump_json() == schema.model_dump_json()  # defaults and docs too


def test_a_v3_schema_with_defaults_and_unknown_round_trips() -> None:
    schema = Schema(
        NestedField(1, "id", LongType(), required=True, initial_default=0, write_default=0),
        NestedField(2, "nothing", UnknownType()),
        NestedField(
            3, "label", StringType(), initial_default="none", write_default="n/a", doc="what it is"
        ),  # fmt: skip
        identifier_field_ids=[1],
    )
    assert to_iceberg(from_iceberg(schema), 0, identifier_ids(schema)) == schema


# --- real tables -------------------------------------------------------------------------------

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True, doc="row key"),
    NestedField(2, "points", ListType(3, StructType(
        NestedField(4, "x", LongType()), NestedField(5, "y", LongType())), element_required=True)),
    NestedField(6, "locations", MapType(7, StringType(), 8, StructType(
        NestedField(9, "lat", FloatType()), NestedField(10, "long", FloatType())),
        value_required=True)),
    NestedField(11, "vals", ListType(12, DoubleType(), element_required=True)),
    identifier_field_ids=[1],
)  # fmt: skip

ROWS = [{"id": 1, "points": [{"x": 1, "y": 2}], "locations": [("home", {"lat": 1.5, "long": 2.5})],
         "vals": [0.5]}]  # fmt: skip


def new_table(lakehouse: Catalog, rows: bool = True) -> tuple[Table, str]:
    if ("fidelity",) not in lakehouse.list_namespaces():
        lakehouse.create_namespace("fidelity")
    name = f"fidelity.t{next(_names)}"
    table = lakehouse.create_table(name, schema=SCHEMA)
    if rows:
        table.append(pa.Table.from_pylist(ROWS, schema=table.schema().as_arrow()))
    return table, name


def flags(table: Table) -> dict[str, Any]:
    schema = table.schema()
    points = schema.find_field("points").field_type
    locations = schema.find_field("locations").field_type
    vals = schema.find_field("vals").field_type
    assert isinstance(points, ListType) and isinstance(locations, MapType)
    assert isinstance(vals, ListType)
    return {
        "points.element": points.element_required,
        "locations.value": locations.value_required,
        "vals.element": vals.element_required,
        "id": schema.find_field("id").required,
        "id doc": schema.find_field("id").doc,
        "identifier": schema.identifier_field_names(),
    }


KEPT = {
    "points.element": True, "locations.value": True, "vals.element": True, "id": True,
    "id doc": "row key", "identifier": {"id"},
}  # fmt: skip


@pytest.mark.parametrize("policy", ["upsolver", "widen"])
def test_the_policys_plan_keeps_required_elements_and_identifiers(
    lakehouse: Catalog, policy: str
) -> None:
    table, name = new_table(lakehouse)
    records = [{"id": 2, "vals": [1.5], "extra": "x", "points": [{"x": 3, "y": 4, "z": 5}]}]
    preview = toolkit.plan_preview(records, name, lakehouse, policy=policy)
    assert preview.plan.changed
    toolkit.evolve(lakehouse, name, preview.plan, expected=preview.state)
    table.refresh()
    assert flags(table) == KEPT
    assert table.schema().find_field("extra") is not None


def test_a_users_plan_reaches_map_values_and_keeps_every_other_flag(lakehouse: Catalog) -> None:
    table, name = new_table(lakehouse)
    long_id = table.schema().find_field("locations.long").field_id
    x_id = table.schema().find_field("points.x").field_id
    toolkit.evolve(lakehouse, name, [
        ops.add("locations.value.alt", "int"),
        ops.rename("points.x", "X"),
        ops.widen("locations.lat", "double"),
        ops.widen(long_id, "double"),
        ops.move_first("locations.long"),
        ops.add("m", MapType(1, StringType(), 2, LongType())),
        ops.update_doc("vals", "values"),
    ])  # fmt: skip
    table.refresh()
    assert flags(table) == KEPT
    schema = table.schema()
    locations = schema.find_field("locations").field_type
    assert isinstance(locations, MapType)
    assert [f.name for f in locations.value_type.fields] == ["long", "lat", "alt"]  # type: ignore[attr-defined]
    assert str(locations.value_type) == (
        f"struct<{long_id}: long: optional double, {long_id - 1}: lat: optional double, "
        "13: alt: optional int>"
    )
    m = schema.find_field("m")
    assert isinstance(m.field_type, MapType) and m.field_type.value_required
    assert (m.field_id, m.field_type.key_id, m.field_type.value_id) == (14, 15, 16)
    assert schema.find_field("points.X").field_id == x_id
    assert schema.find_field("vals").doc == "values"
    # the lineage reads back, and the table takes more plans
    assert len(toolkit.lineage(table)) == 1
    toolkit.evolve(lakehouse, name, [ops.add("n", "string")])
    assert len(toolkit.lineage(lakehouse.load_table(name))) == 2
    # the data reads back through the renamed and widened fields
    assert table.scan().to_arrow().column("locations").to_pylist()[0][0][1]["lat"] == 1.5


def test_identifier_fields_on_a_real_table(lakehouse: Catalog) -> None:
    table, name = new_table(lakehouse)
    with pytest.raises(toolkit.ToolkitError, match=r"operation 1 \(drop id\): identifier field"):
        toolkit.evolve(lakehouse, name, [ops.drop("id")])
    with pytest.raises(toolkit.OperationError, match="vals is not a primitive type"):
        toolkit.evolve(lakehouse, name, [ops.add("k", "long"), ops.set_identifier_fields("vals")])
    toolkit.evolve(lakehouse, name, [ops.drop("id"), ops.set_identifier_fields()], drop_data=True)
    table.refresh()
    assert table.schema().identifier_field_ids == []
    assert table.schema().find_field("points") is not None


def test_a_required_add_and_making_elements_optional(lakehouse: Catalog) -> None:
    table, name = new_table(lakehouse, rows=False)
    toolkit.evolve(lakehouse, name, [ops.add("r", "long", required=True),
                                     ops.make_optional("vals.element"),
                                     ops.make_optional("locations.value")])  # fmt: skip
    table.refresh()
    assert table.schema().find_field("r").required
    assert flags(table)["vals.element"] is False and flags(table)["locations.value"] is False
    table.append(pa.Table.from_pylist([{"id": 1, "r": 2}], schema=table.schema().as_arrow()))
    with pytest.raises(toolkit.OperationError, match="this table may have rows"):
        toolkit.evolve(lakehouse, name, [ops.add("r2", "long", required=True)])


def test_only_column_dropped_and_added_in_one_plan(lakehouse: Catalog) -> None:
    if ("fidelity",) not in lakehouse.list_namespaces():
        lakehouse.create_namespace("fidelity")
    name = f"fidelity.t{next(_names)}"
    lakehouse.create_table(name, schema=Schema(NestedField(1, "a", LongType())))
    toolkit.evolve(lakehouse, name, [ops.drop("a"), ops.add("b", "string")])
    assert [f.name for f in lakehouse.load_table(name).schema().fields] == ["b"]


@pytest.mark.parametrize(
    "source",
    [
        pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("extra", pa.string())]),
        pd.DataFrame({"extra": ["x"], "score": [1.5]}),
        Schema(
            NestedField(
                1,
                "points",
                ListType(2, StructType(NestedField(3, "z", LongType())), element_required=True),
            )
        ),  # fmt: skip
    ],
    ids=["arrow schema", "pandas frame", "pyiceberg schema"],
)
def test_union_by_name_on_a_real_table(lakehouse: Catalog, source: Any) -> None:
    table, name = new_table(lakehouse)
    preview = toolkit.preview_evolution(lakehouse, name, [ops.union_by_name(source)])
    assert all(op.op in ("add", "optional", "widen", "doc") for op in preview.plan.operations)
    toolkit.evolve(lakehouse, name, preview.plan, expected=preview.state)
    table.refresh()
    assert {k: v for k, v in flags(table).items() if k != "points.element"} == {
        k: v for k, v in KEPT.items() if k != "points.element"
    }
    entry = toolkit.lineage(table)[-1]
    assert [op.op for op in entry.operations] == [op.op for op in preview.plan.operations]


def test_a_doc_is_set_and_removed_on_a_real_table(lakehouse: Catalog) -> None:
    table, name = new_table(lakehouse)
    toolkit.evolve(lakehouse, name, [ops.update_doc("vals", "values"), ops.update_doc("id", None)])
    table.refresh()
    assert (table.schema().find_field("vals").doc, table.schema().find_field("id").doc) == (
        "values",
        None,
    )
    entry = toolkit.lineage(table)[-1]
    assert [str(op) for op in entry.inverse_operations or ()] == [
        "~ doc id -> 'row key'",
        "~ doc vals -> None",
    ]


def test_a_policy_plan_that_would_break_an_identifier_field_is_refused_whole(
    lakehouse: Catalog,
) -> None:
    table, name = new_table(lakehouse)
    preview = toolkit.plan_preview([{"id": None, "extra": 1}], name, lakehouse, policy="widen")
    assert any(op.op == "optional" for op in preview.plan.operations)
    before = table.metadata_location
    with pytest.raises(toolkit.OperationError, match="identifier field id is optional"):
        toolkit.evolve(lakehouse, name, preview.plan, expected=preview.state)
    table.refresh()
    assert table.metadata_location == before


def test_a_plan_on_a_table_with_no_columns_commits_and_says_why_it_cannot_be_undone(
    lakehouse: Catalog,
) -> None:
    if ("fidelity",) not in lakehouse.list_namespaces():
        lakehouse.create_namespace("fidelity")
    name = f"fidelity.t{next(_names)}"
    lakehouse.create_table(name, schema=Schema())
    entry = toolkit.evolve(lakehouse, name, [ops.union_by_name(SCHEMA)])
    assert entry.inverse_operations is None
    assert "an Iceberg table keeps at least one" in entry.irreversible[-1]
    schema = lakehouse.load_table(name).schema()
    assert [f.name for f in schema.fields] == ["id", "points", "locations", "vals"]
    assert schema.find_field("id").required  # a table with no rows takes it required


def test_simulate_keeps_the_schemas_identifier_fields() -> None:
    sim = toolkit.simulate([[{"id": 1, "vals": [2.0], "y": "a"}]], schema=SCHEMA)
    assert sim.schema.identifier_field_ids == [1]
    flags_kept = sim.schema.find_field("vals").field_type
    assert isinstance(flags_kept, ListType) and flags_kept.element_required
