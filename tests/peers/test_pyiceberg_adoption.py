"""Adopting a table PyIceberg created (issue 26): a map of structs, a list of structs,
required fields, a list of required doubles and an identifier field. Drifting batches run
through ``toolkit.simulate(schema=table.schema())`` (the pure path, both policies); every
flag of every field the plans did not list stays as the table had it. (Tables Spark SQL
creates are adopted in the schema-model's own tests.)
"""

from __future__ import annotations

from typing import Any

import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.schema import Schema
from pyiceberg.types import IcebergType, ListType, MapType, NestedField, StructType

import toolkit
from tests.peers.model import lst, mp, opt, req, schema, st
from toolkit.core.evolution.layout import TableLayout

# The table as a PyIceberg user declares it (create_table assigns the field IDs).
DECLARED = schema(
    req(1, "id", "long", "the key"),
    opt(2, "name", "string"),
    opt(3, "locations", mp(4, "string", 5, st(req(6, "lat", "double"), req(7, "lon", "double")),
                           required=True), "named places"),
    opt(8, "points", lst(9, st(req(10, "x", "long"), opt(11, "y", "long")))),
    req(12, "doubles", lst(13, "double", required=True)),
    ids=[1],
)

NESTED_DRIFT = [
    [{"id": 1, "name": "ann", "points": [{"x": 1, "y": 2}], "doubles": [1.0, 2.0]}],
    # a new top-level column, a new field in the list's struct, a long where a string is
    [{"id": 2, "name": 7, "points": [{"x": 3, "y": 4, "z": 5}], "extra": True, "doubles": [3.0]}],
    # a double where a long is (a sibling column, or a widening), a field left out
    [{"id": 3, "points": [{"x": 2.5}], "doubles": [4.5], "score": 1.5}],
]
MAP_VALUES = [
    [{"id": 1, "locations": {"home": {"lat": 48.85, "lon": 2.35}}, "doubles": [1.0]}],
    # a map value with a field the value struct lacks
    [{"id": 2, "locations": {"work": {"lat": 1.0, "lon": 2.0, "alt": 30.0}}, "doubles": []}],
]


@pytest.fixture(scope="module")
def table_schema(tmp_path_factory: pytest.TempPathFactory) -> Schema:
    catalog: Catalog = toolkit.catalog(tmp_path_factory.mktemp("adopt"))
    catalog.create_namespace("adopt")
    return catalog.create_table("adopt.people", schema=DECLARED).schema()


def _shallow(t: IcebergType) -> str:
    """A type without what it holds: each field it holds is compared by its own ID."""
    if isinstance(t, StructType):
        return "struct"
    if isinstance(t, ListType):
        return f"list (element {'required' if t.element_required else 'optional'})"
    if isinstance(t, MapType):
        return f"map (value {'required' if t.value_required else 'optional'})"
    return str(t)


def flags(s: Schema) -> dict[int, tuple[Any, ...]]:
    """Per field ID (fields, list elements, map keys and values): name, shallow type,
    required-ness, doc and defaults."""
    out: dict[int, tuple[Any, ...]] = {}

    def walk(t: IcebergType) -> None:
        if isinstance(t, StructType):
            for f in t.fields:
                field(f)
        elif isinstance(t, ListType):
            out[t.element_id] = ("element", _shallow(t.element_type))
            walk(t.element_type)
        elif isinstance(t, MapType):
            out[t.key_id] = ("key", _shallow(t.key_type))
            out[t.value_id] = ("value", _shallow(t.value_type))
            walk(t.key_type)
            walk(t.value_type)

    def field(f: NestedField) -> None:
        out[f.field_id] = (
            f.name, _shallow(f.field_type), f.required, f.doc, f.initial_default, f.write_default
        )
        walk(f.field_type)

    walk(StructType(*s.fields))
    return out


def listed_ids(sim: toolkit.Simulation) -> set[int]:
    """The field IDs the plans' operations change."""
    out: set[int] = set()
    for plan in sim.plans:
        layout = TableLayout(plan.before)
        out |= {i for op in plan.operations if (i := op.subject_id(layout)) is not None}
    return out


@pytest.mark.parametrize("policy", ["upsolver", "widen"])
@pytest.mark.parametrize(
    "batches",
    [
        pytest.param(NESTED_DRIFT, id="nested drift"),
        pytest.param(MAP_VALUES, id="map values"),
    ],
)
def test_flags_the_plans_did_not_list_are_unchanged(
    table_schema: Schema, batches: list[list[dict[str, Any]]], policy: str
) -> None:
    sim = toolkit.simulate(batches, schema=table_schema, policy=policy)
    before, after = flags(table_schema), flags(sim.schema)
    touched = listed_ids(sim)
    problems = [
        f"#{i}: {before[i]} -> {after.get(i)}"
        for i in before
        if i not in touched and after.get(i) != before[i]
    ]
    if sim.schema.identifier_field_ids != table_schema.identifier_field_ids:
        problems.append(
            f"identifier fields: {table_schema.identifier_field_ids} -> "
            f"{sim.schema.identifier_field_ids}"
        )
    assert not problems, "\n".join(problems)
    assert len(sim.rows) == sum(len(b) for b in batches) - len(sim.quarantined)
