"""RULES 4: a key with a dot in its name against Iceberg's name index, which holds every
field's full name and its short name (``dot.key`` for ``dot.element.key``, the field
``key`` of the records in the list ``dot``). A name in that index is taken: the column
that comes second is numbered, and its key still routes to it (docs/rules.md)."""

from __future__ import annotations

from typing import Any

import pytest

from toolkit.core.batch.options import make_options
from toolkit.core.engine import simulate_batches
from toolkit.core.values.naming import TakenNames
from toolkit.core.values.types import Column, ColumnType, ListOf, MapOf, Struct

LIST = {"dot": [{"key": True}]}
DOTTED = {"dot.key": False}


def names(t: ColumnType, prefix: str = "") -> list[str]:
    """Every field's name, list levels written ``[]`` (``dot[].key``)."""
    while isinstance(t, ListOf):
        t, prefix = t.element, prefix + "[]"
    if not isinstance(t, Struct):
        return []
    out = []
    for c in t.fields:
        out += [prefix + c.name, *names(c.type, prefix + c.name + ".")]
    return out


def simulated(*batches: list[dict[str, Any]], policy: str) -> tuple[list[str], list[Any]]:
    run = simulate_batches(list(batches), None, make_options(policy=policy))
    return names(run.schema), run.rows


ORDERS = pytest.mark.parametrize(
    "order", [[LIST, DOTTED], [DOTTED, LIST]], ids=["list first", "dotted first"]
)


@ORDERS
def test_in_one_batch_the_upsolver_policy_numbers_the_nested_field(
    order: list[dict[str, Any]],
) -> None:
    # the batch's top-level names are claimed before the fields nested in them,
    # whichever record came first (RULES 3.3)
    got, rows = simulated(order, policy="upsolver")
    assert sorted(got) == ["dot", "dot.[]key_2", "dot.key"]
    assert sorted(rows, key=str) == [
        {"dot": None, "dot.key": False}, {"dot": [{"key_2": True}], "dot.key": None},
    ]


@ORDERS
def test_in_one_batch_the_widen_policy_numbers_the_dotted_key(
    order: list[dict[str, Any]],
) -> None:
    # new keys in key order, each with its nested fields: ``dot`` and its ``key`` first
    got, rows = simulated(order, policy="widen")
    assert sorted(got) == ["dot", "dot.[]key", "dot.key_2"]
    assert sorted(rows, key=str) == [
        {"dot": None, "dot.key_2": False}, {"dot": [{"key": True}], "dot.key_2": None},
    ]


@pytest.mark.parametrize("policy", ["upsolver", "widen"])
def test_a_dotted_key_after_the_list_of_records_is_numbered(policy: str) -> None:
    got, rows = simulated([LIST], [DOTTED, {"dot.key": True}], policy=policy)
    assert got == ["dot", "dot.[]key", "dot.key_2"]
    assert rows == [
        {"dot": [{"key": True}], "dot.key_2": None},
        {"dot": None, "dot.key_2": False},
        {"dot": None, "dot.key_2": True},
    ]


@pytest.mark.parametrize("policy", ["upsolver", "widen"])
def test_a_list_of_records_after_the_dotted_key_numbers_its_field(policy: str) -> None:
    # the table's column keeps its name; the new nested field is the one numbered
    got, rows = simulated(
        [DOTTED], [LIST, {"dot": [{"key": False}]}], policy=policy
    )
    assert got[:3] == ["dot.key", "dot", "dot.[]key_2"]
    assert rows == [
        {"dot.key": False, "dot": None},
        {"dot.key": None, "dot": [{"key_2": True}]},
        {"dot.key": None, "dot": [{"key_2": False}]},  # the same key, the same column
    ]


@pytest.mark.parametrize("policy", ["upsolver", "widen"])
def test_a_struct_field_and_a_dotted_key_collide_as_before(policy: str) -> None:
    got, _ = simulated([{"a": {"b": 1}}], [{"a.b": 2, "A.B": 3}], policy=policy)
    # the nested a.b is the table's; "A.B" sorts before "a.b" (RULES 3.3)
    assert got == ["a", "a.b", "A.B_2", "a.b_3"]


def test_short_names_through_lists_of_lists_and_map_values_are_taken() -> None:
    taken = TakenNames()
    taken.add_type((), Struct((
        # list<list<struct<k>>>: Iceberg's short name keeps the outer ``element`` only
        Column(1, "l", ListOf(2, ListOf(3, Struct((Column(4, "k", "long"),))))),
        Column(5, "m", MapOf(6, "string", 7, Struct((Column(8, "v", "long"),)))),
        Column(9, "p", ListOf(10, "long")),
    )))
    assert taken.claim("l.element.k") == "l.element.k_2"
    assert taken.claim("l.k") == "l.k"
    assert taken.claim("m.v") == "m.v_2"
    assert taken.claim("m.value.v") == "m.value.v_2"
    assert taken.claim("p.element") == "p.element_2"  # a primitive element keeps its step
    # a new field of the map's records is checked under the short name too
    taken.add("m.w")
    assert taken.claim("w", ("m", "value")) == "w_2"
