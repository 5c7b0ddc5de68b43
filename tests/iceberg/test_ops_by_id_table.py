"""Operations naming fields by ID on a real table (PyIceberg, embedded SQLite catalog; no
Spark): looked up when the plan is made, committed by path, logged with path and ID."""

from __future__ import annotations

import itertools
import json

import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.schema import Schema
from pyiceberg.types import IntegerType, LongType, NestedField, StringType, StructType

import toolkit
from toolkit import ops
from toolkit.core.evolution.layout import PartitionField
from toolkit.errors import OperationError
from toolkit.iceberg.lineage import lineage, undo
from toolkit.iceberg.operations import evolve, layout_of, preview_evolution

_names = itertools.count()

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "name", StringType(), required=False),
    NestedField(3, "small", IntegerType(), required=False),
    NestedField(
        4, "address", StructType(NestedField(5, "zip", StringType(), required=False)),
        required=False,
    ),
)


@pytest.fixture
def table(lakehouse: Catalog) -> str:
    lakehouse.create_namespace_if_not_exists("by_id")
    name = f"by_id.t{next(_names)}"
    tbl = lakehouse.create_table(name, schema=SCHEMA)
    rows = [
        {"id": 1, "name": "ann", "small": 7, "address": {"zip": "75001"}},
        {"id": 2, "name": None, "small": None, "address": None},
    ]
    tbl.append(pa.Table.from_pylist(rows, schema=tbl.schema().as_arrow()))
    return name


def test_a_plan_by_id_is_previewed_by_path_committed_and_logged_with_both(
    lakehouse: Catalog, table: str
) -> None:
    plan = [
        ops.rename(2, "full_name"),
        ops.rename(5, "postcode"),
        ops.widen(3, "long"),
        ops.move_before(3, 2),
        ops.partition_by(1, "bucket[4]"),
    ]
    preview = preview_evolution(lakehouse, table, plan)
    shown = str(preview)
    assert "~ rename name (#2) -> full_name" in shown
    assert "~ rename address.zip (#5) -> postcode" in shown
    assert "^ widen small (#3) -> long" in shown
    assert "> move small (#3) before full_name (#2)" in shown
    assert "+ partition by bucket[4](id (#1))" in shown

    entry = evolve(lakehouse, table, preview.plan, expected=preview.state)

    tbl = lakehouse.load_table(table)
    schema = tbl.schema()
    assert [(f.field_id, f.name) for f in schema.fields] == [
        (1, "id"), (3, "small"), (2, "full_name"), (4, "address"),
    ]
    assert schema.find_field("address.postcode").field_id == 5
    assert isinstance(schema.find_field(3).field_type, LongType)
    assert layout_of(tbl).partition == (PartitionField(1, "bucket[4]", "id_bucket_4"),)
    # the data stays with its field IDs
    rows = tbl.scan().to_arrow().to_pylist()
    assert rows[0] == {"id": 1, "small": 7, "full_name": "ann", "address": {"postcode": "75001"}}
    # the log holds the resolved paths and the IDs
    (logged,) = lineage(tbl)
    assert logged.seq == entry.seq
    raw = json.loads(tbl.properties[f"toolkit.lineage.{entry.seq}"])
    assert raw["ops"][0] == {"op": "rename", "path": ["name"], "to": "full_name", "id": 2}
    assert raw["ops"][1] == {"op": "rename", "path": ["address", "zip"], "to": "postcode", "id": 5}
    assert raw["ops"][4] == {
        "op": "partition", "source": ["id"], "transform": "bucket[4]", "source_id": 1,
    }
    assert "  ~ rename name (#2) -> full_name" in str(logged)


def test_evolve_takes_operations_by_id_and_undo_reverses_them(
    lakehouse: Catalog, table: str
) -> None:
    entry = evolve(lakehouse, table, [ops.rename(2, "who"), ops.move_first(4)])
    assert [f.name for f in lakehouse.load_table(table).schema().fields] == [
        "address", "id", "who", "small",
    ]
    undo(lakehouse, table, entry)
    tbl = lakehouse.load_table(table)
    assert [(f.field_id, f.name) for f in tbl.schema().fields] == [
        (1, "id"), (2, "name"), (3, "small"), (4, "address"),
    ]


def test_an_unknown_id_is_refused_naming_it_and_the_table_and_nothing_changes(
    lakehouse: Catalog, table: str
) -> None:
    before = lakehouse.load_table(table).metadata
    with pytest.raises(OperationError) as err:
        preview_evolution(lakehouse, table, [ops.rename(42, "x")])
    text = str(err.value)
    assert f"no field has ID 42 in {table}" in text
    assert "1 id, 2 name, 3 small, 4 address, 5 address.zip" in text
    refused = f"operation 2 \\(drop #42\\): no field has ID 42 in {table}"
    with pytest.raises(OperationError, match=refused):
        evolve(lakehouse, table, [ops.rename(2, "x"), ops.drop(42)])
    after = lakehouse.load_table(table).metadata
    assert after.current_schema_id == before.current_schema_id
    assert after.properties == before.properties
    # what the message tells the user to print does show the IDs
    hint = str(toolkit.preview_evolution(lakehouse, table, []).plan.before)
    assert "2: name: optional string" in hint and "4: address:" in hint
