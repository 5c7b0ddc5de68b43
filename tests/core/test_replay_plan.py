"""The replay's two rules, pure (docs/rules.md, "Replay"): keys routed by field ID from
the schema a record was set aside against to the schema now, and only the records that can
land now kept, planned with them alone."""

from __future__ import annotations

import pytest

from toolkit.core.batch.options import make_options
from toolkit.core.batch.replay_plan import by_field_id, landing
from toolkit.core.values.types import Column, ListOf, Struct

THEN = Struct((
    Column(1, "id", "long"),
    Column(2, "name", "string"),
    Column(3, "address", Struct((Column(4, "city", "string"), Column(5, "zip", "long")))),
    Column(6, "items", ListOf(7, Struct((Column(8, "sku", "string"),)))),
    Column(9, "gone", "string"),
))  # fmt: skip
NOW = Struct((
    Column(1, "id", "long"),
    Column(2, "full_name", "string"),
    Column(3, "addr", Struct((Column(4, "town", "string"), Column(5, "zip", "long")))),
    Column(6, "items", ListOf(7, Struct((Column(8, "code", "string"),)))),
    Column(10, "name", "string"),  # a new field under the old name: not the record's
))  # fmt: skip


@pytest.mark.parametrize(
    ("record", "routed"),
    [
        ({"id": 1, "name": "Cy"}, {"id": 1, "full_name": "Cy"}),
        ({"address": {"city": "Oslo", "zip": 1}}, {"addr": {"town": "Oslo", "zip": 1}}),
        ({"items": [{"sku": "a"}, {"sku": "b"}, None]},
         {"items": [{"code": "a"}, {"code": "b"}, None]}),
        ({"gone": "x", "new": 2}, {"gone": "x", "new": 2}),  # dropped, unknown: as they are
        ({"name": "Cy", "full_name": "Dee"}, {"name": "Cy", "full_name": "Dee"}),  # both named
        ({"address": "not a record"}, {"addr": "not a record"}),
    ],
    ids=["renamed", "nested rename", "list of structs", "dropped and new keys",
         "both names in the record", "value of another shape"],
)
def test_keys_follow_their_field_id(record: dict[str, object], routed: object) -> None:
    assert by_field_id(record, THEN, NOW) == routed


def test_only_records_that_land_are_kept_and_the_others_say_why() -> None:
    table = Struct((Column(1, "id", "long"), Column(2, "active", "boolean")))
    records = [
        {"id": 1, "active": "maybe", "score": 3},
        {"id": 2, "active": True, "note": "x"},
        {"id": 3, "active": "no"},
    ]
    found = landing(records, table, make_options(policy="widen"))
    assert found.lands == (1,)
    assert [(i, q.reason, q.field) for i, q in found.cannot] == [
        (0, "incompatible", "active"), (2, "incompatible", "active")]
    # the upsolver policy takes them all (active_string)
    assert landing(records, table, make_options()).lands == (0, 1, 2)


def test_equal_records_are_told_apart() -> None:
    table = Struct((Column(1, "active", "boolean"),))
    records = [{"active": "x"}, {"active": "x"}, {"active": False}]
    found = landing(records, table, make_options(policy="widen"))
    assert found.lands == (2,) and [i for i, _ in found.cannot] == [0, 1]
