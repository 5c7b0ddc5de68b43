"""Issue 26: under the ``upsolver`` policy a JSON object arriving for a declared
``map<string, V>`` column is written into the map when each of its values fits V (RULES 3:
type and dimension, exact per value, RULES 2); otherwise the family gets its record column
(`m_record`, RULES 3.3), as today. Decided per batch, whatever the order of records."""

from __future__ import annotations

from typing import Any

from toolkit.core.batch.observe import observe_struct
from toolkit.core.batch.options import Options
from toolkit.core.batch.routing import Router
from toolkit.core.policies.upsolver_planner import plan_batch
from toolkit.core.values.types import Column, MapOf, Struct, type_to_str

OPTS = Options()
POINT = Struct((Column(5, "x", "long"), Column(6, "label", "string")))
TABLE = Struct((
    Column(1, "id", "long"),
    Column(2, "counts", MapOf(3, "string", 4, "long")),
    Column(7, "points", MapOf(8, "string", 9, POINT)),
))


def ingest(batch: list[dict[str, Any]]) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """The schema after the batch (name -> type) and the rows written."""
    plan = plan_batch(TABLE, observe_struct(batch, OPTS), OPTS)
    rows = Router(OPTS).rows(plan.after, observe_struct(batch, OPTS))
    return {c.name: type_to_str(c.type) for c in plan.after.fields}, rows


def test_fitting_objects_land_in_the_maps_with_their_values_exactly() -> None:
    schema, rows = ingest([
        {"id": 1, "counts": {"a": 1, "b": None}, "points": {"p": {"x": 3, "label": "q"}}},
        {"id": 2, "counts": {}, "points": {"p": {"x": 4}, "r": None}},
    ])
    assert list(schema) == ["id", "counts", "points"]  # no new column
    assert rows == [
        {"id": 1, "counts": {"a": 1, "b": None}, "points": {"p": {"x": 3, "label": "q"}}},
        {"id": 2, "counts": {}, "points": {"p": {"x": 4, "label": None}, "r": None}},
    ]


def test_a_value_converted_exactly_into_a_wider_map_value() -> None:
    table = Struct((Column(1, "m", MapOf(2, "string", 3, "double")),))
    batch = [{"m": {"a": 1, "b": 2.5}}]
    plan = plan_batch(table, observe_struct(batch, OPTS), OPTS)
    assert not plan.changes
    assert Router(OPTS).rows(plan.after, observe_struct(batch, OPTS)) == [
        {"m": {"a": 1.0, "b": 2.5}}
    ]


def test_an_object_whose_values_do_not_fit_gets_the_record_column() -> None:
    schema, rows = ingest([
        {"id": 1, "counts": {"a": 1}},
        {"id": 2, "counts": {"a": 1.5}},  # a double does not fit map<string, long>
        {"id": 3, "points": {"p": {"x": 1, "z": True}}},  # a field the struct lacks
    ])
    assert schema["counts_record"] == "struct<a: double>"  # RULES 3.2, seed edge case 1
    assert schema["points_record"] == "struct<p: struct<x: long, z: boolean>>"
    # an object that fits is written into the map too (RULES 3.1: every compatible column)
    assert [r["counts"] for r in rows] == [{"a": 1}, None, None]
    assert [r["counts_record"] for r in rows] == [
        {"a": 1.0}, {"a": 1.5}, None
    ]
    assert [r["points"] for r in rows] == [None, None, None]
    assert rows[2]["points_record"] == {"p": {"x": 1, "z": True}}


def test_the_result_does_not_depend_on_the_order_of_records() -> None:
    batch = [
        {"id": 1, "counts": {"a": 1}},
        {"id": 2, "counts": {"a": "many"}},
        {"id": 3, "counts": {"b": 2}, "points": {"p": {"x": 1}}},
    ]
    schema, rows = ingest(batch)
    schema_r, rows_r = ingest(batch[::-1])
    assert schema == schema_r
    assert rows == rows_r[::-1]
    assert "counts_record" in schema and "points_record" not in schema
    assert rows[2]["points"] == {"p": {"x": 1, "label": None}}
