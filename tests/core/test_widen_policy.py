"""RULES 5, the widening policy, in the pure engine: the matrix cell by cell, in place vs
rewrite, quarantine vs fail, nested fields and list elements, required -> optional."""

from __future__ import annotations

import random

import pytest

import toolkit
from toolkit.core.values.types import Column, ListOf, MapOf, Struct, type_to_str
from toolkit.core.values.widening import MATRIX, MATRIX_TYPES, in_place, widen
from toolkit.errors import IncompatibleRecordError

# RULES 5 as written in the spec, row = incoming, column = table type; X = incompatible.
SPEC = """
int    | int    | long   | float  | double | string | X
long   | long   | long   | float  | double | string | X
float  | float  | float  | float  | double | string | X
double | double | double | double | double | string | X
string | string | string | string | string | string | bytes
bytes  | X      | X      | X      | X      | string | bytes
"""


def spec_cells() -> dict[tuple[str, str], str | None]:
    cells = {}
    for line in SPEC.strip().splitlines():
        incoming, *row = (c.strip() for c in line.split("|"))
        for table, cell in zip(MATRIX_TYPES, row, strict=True):
            cells[incoming, table] = None if cell == "X" else cell
    return cells


def test_the_matrix_is_the_one_of_rules_5_cell_by_cell() -> None:
    assert spec_cells() == MATRIX
    for (incoming, table), cell in spec_cells().items():
        assert widen(incoming, table) == cell


@pytest.mark.parametrize(
    ("old", "new", "v3", "expected"),
    [
        ("int", "long", False, True),
        ("float", "double", False, True),
        ("decimal(9, 2)", "decimal(12, 2)", False, True),
        ("decimal(9, 2)", "decimal(12, 3)", False, False),
        ("date", "timestamp", False, False),
        ("date", "timestamp", True, True),
        ("long", "double", False, False),
        ("int", "string", False, False),
        ("long", "string", False, False),
    ],
)
def test_iceberg_changes_only_its_promotions_in_place(
    old: str, new: str, v3: bool, expected: bool
) -> None:
    assert in_place(old, new, 3 if v3 else 2) is expected


# A JSON value arrives (observed as long, double or string) in a declared column: the
# column after the batch, what the row holds, and whether the change is a rewrite.
JSON_CELLS = [
    # (value, column type, new column type or None (X), value read, rewrite?)
    (7, "int", "long", 7, False),
    (7, "long", "long", 7, None),
    (7, "float", "float", 7.0, None),
    (7, "double", "double", 7.0, None),
    (7, "string", "string", "7", None),
    (7, "binary", None, None, None),
    (2.5, "int", "double", 2.5, True),
    (2.5, "long", "double", 2.5, True),
    (2.5, "float", "double", 2.5, False),
    (2.5, "double", "double", 2.5, None),
    (2.5, "string", "string", "2.5", None),
    (2.5, "binary", None, None, None),
    ("x", "int", "string", "x", True),
    ("x", "long", "string", "x", True),
    ("x", "float", "string", "x", True),
    ("x", "double", "string", "x", True),
    ("x", "string", "string", "x", None),
    ("x", "binary", "binary", b"x", None),
]


@pytest.mark.parametrize(("value", "table", "after", "read", "rewrite"), JSON_CELLS)
def test_a_json_value_into_a_declared_column_follows_the_matrix(
    value: object, table: str, after: str | None, read: object, rewrite: bool | None
) -> None:
    schema = Struct((Column(1, "v", table),))
    sim = toolkit.simulate([[{"v": value}]], schema, policy="widen")
    [plan] = sim.plans
    col = sim.table_schema.fields[0]
    if after is None:
        assert col.type == table and sim.rows == []
        [q] = sim.quarantined
        assert (q.record, q.reason, q.field, q.table_type) == ({"v": value}, "incompatible",
                                                                "v", table)
        assert repr(value) in q.detail and table in q.detail
        return
    assert sim.quarantined == ()
    # a rewrite puts a new column (new field ID, as Iceberg assigns it) under the same name
    assert col.type == after and (col.id, col.name) == (2 if rewrite else 1, "v")
    assert sim.rows == [{"v": read}]
    if rewrite is None:
        assert not plan.changed
    else:
        [retype] = plan.retypes
        assert (retype.before, retype.after, retype.in_place) == (table, after, not rewrite)
        assert retype.new_id == (2 if rewrite else None)


def test_earlier_rows_read_as_the_widened_type() -> None:
    sim = toolkit.simulate([[{"n": 1}, {"n": 2}], [{"n": 2.5}], [{"n": "x"}]], policy="widen")
    assert [r["n"] for r in sim.rows] == ["1", "2", "2.5", "x"]
    assert [str(p).splitlines()[1].split(" (")[0] for p in sim.plans[1:]] == [
        "~ n: long -> double",
        "~ n: double -> string",
    ]


@pytest.mark.parametrize(
    ("table", "value"),
    [("boolean", 1), ("boolean", "true"), ("long", True), ("date", 5), ("date", "soon"),
     ("timestamptz", 1.5), ("decimal(9, 2)", 1), ("double", True)],
)
def test_booleans_dates_timestamps_and_decimals_do_not_widen(table: str, value: object) -> None:
    schema = Struct((Column(1, "v", table),))
    sim = toolkit.simulate([[{"v": value}]], schema, policy="widen")
    assert sim.table_schema == schema and sim.rows == []
    assert [q.reason for q in sim.quarantined] == ["incompatible"]


def test_a_date_text_into_a_string_column_stays_text_and_into_a_date_column_is_a_date() -> None:
    schema = Struct((Column(1, "s", "string"), Column(2, "d", "date")))
    sim = toolkit.simulate([[{"s": "2024-01-02", "d": "2024-01-03"}]], schema, policy="widen")
    import datetime as dt

    assert sim.rows == [{"s": "2024-01-02", "d": dt.date(2024, 1, 3)}]


def test_on_incompatible_fail_names_field_types_and_value() -> None:
    schema = Struct((Column(1, "flag", "boolean"),))
    with pytest.raises(IncompatibleRecordError) as err:
        toolkit.simulate([[{"flag": True}, {"flag": 12345}]], schema, policy="widen",
                         on_incompatible="fail")
    text = str(err.value)
    assert "'flag'" in text and "12345" in text and "long" in text and "boolean" in text


def test_a_rewrite_not_approved_sends_its_records_to_quarantine_and_is_shown_pending() -> None:
    schema = Struct((Column(1, "n", "long"),))
    batch = [{"n": 1}, {"n": "x"}, {"n": 2}]
    sim = toolkit.simulate([batch], schema, policy="widen", allow_rewrites=False)
    [plan] = sim.plans
    assert plan.retypes == () and [(r.before, r.after) for r in plan.pending] == [
        ("long", "string")
    ]
    assert "awaiting approval" in str(plan)
    assert sim.rows == [{"n": 1}, {"n": 2}]
    [q] = sim.quarantined
    assert (q.record, q.reason, q.observed, q.table_type) == (
        {"n": "x"}, "rewrite-not-approved", "string", "long"
    )
    approved = toolkit.simulate([batch], schema, policy="widen")
    assert [r["n"] for r in approved.rows] == ["1", "x", "2"]


def test_list_elements_and_nested_fields_widen_by_the_same_matrix() -> None:
    schema = Struct((
        Column(1, "tags", ListOf(3, "int")),
        Column(2, "pos", Struct((Column(4, "x", "float"), Column(5, "y", "long")))),
    ))
    sim = toolkit.simulate(
        [[{"tags": [1, 2**40], "pos": {"x": 0.1, "y": 3, "z": "new"}}]], schema, policy="widen"
    )
    [plan] = sim.plans
    assert {(r.path, r.before, r.after, r.in_place) for r in plan.retypes} == {
        (("tags", "element"), "int", "long", True),
        (("pos", "x"), "float", "double", True),
    }
    assert [(c.parent, c.column.name, c.column.type) for c in plan.changes] == [
        (("pos",), "z", "string")
    ]
    assert sim.rows == [{"tags": [1, 2**40], "pos": {"x": 0.1, "y": 3, "z": "new"}}]


def test_a_scalar_into_a_list_column_and_a_record_into_a_scalar_are_incompatible() -> None:
    schema = Struct((Column(1, "tags", ListOf(2, "string")), Column(3, "n", "long")))
    sim = toolkit.simulate([[{"tags": "a"}, {"n": {"k": 1}}, {"tags": ["b"], "n": 4}]], schema,
                           policy="widen")
    assert sim.rows == [{"tags": ["b"], "n": 4}]
    assert [(q.field, q.observed) for q in sim.quarantined] == [
        ("tags", "string"), ("n", "record")
    ]


def test_a_required_column_left_null_becomes_optional_never_back() -> None:
    schema = Struct((Column(1, "id", "long", required=True), Column(2, "v", "string")))
    sim = toolkit.simulate([[{"id": 1, "v": "a"}], [{"v": "b"}], [{"id": 3}]], schema,
                           policy="widen")
    assert [len(p.optionals) for p in sim.plans] == [0, 1, 0]
    assert sim.table_schema.fields[0].required is False
    assert sim.rows == [{"id": 1, "v": "a"}, {"id": None, "v": "b"}, {"id": 3, "v": None}]


def test_a_new_key_takes_the_type_accepting_most_values_whatever_the_record_order() -> None:
    batch = [{"k": 1}, {"k": 2.5}, {"k": True}, {"k": 3}]
    plans = set()
    for seed in range(5):
        shuffled = batch[:]
        random.Random(seed).shuffle(shuffled)
        sim = toolkit.simulate([shuffled], policy="widen")
        plans.add(str(sim.table_schema))
        assert [q.record for q in sim.quarantined] == [{"k": True}]
    assert plans == {str(Struct((Column(1, "k", "double"),)))}


def test_the_widening_policy_quarantines_invalid_records_like_the_automatic_one() -> None:
    sim = toolkit.simulate([[{"a": 1}, "text", {"a": 2}]], policy="widen")
    assert sim.rows == [{"a": 1}, {"a": 2}]
    assert [q.reason for q in sim.quarantined] == ["not-a-record"]


def _map_table(value: str) -> Struct:
    return Struct((Column(1, "id", "long"), Column(2, "m", MapOf(3, "string", 4, value))))


def test_a_map_value_widens_in_place_by_the_matrix() -> None:
    sim = toolkit.simulate([[{"id": 1, "m": {"a": 1, "b": 2**40}}]], _map_table("int"),
                           policy="widen")
    [plan] = sim.plans
    assert [(r.path, r.column_id, r.before, r.after, r.in_place) for r in plan.retypes] == [
        (("m", "value"), 4, "int", "long", True)
    ]
    assert type_to_str(sim.table_schema.fields[1].type) == "map<string, long>"
    assert sim.rows == [{"id": 1, "m": {"a": 1, "b": 2**40}}]
    assert not sim.quarantined


def test_a_map_value_needing_a_rewrite_waits_for_approval_in_quarantine() -> None:
    batch = [{"id": 1, "m": {"a": 1}}, {"id": 2, "m": {"a": 2.5}}]
    for allow in (False, True):  # a map value is never rewritten, like a list element
        sim = toolkit.simulate([batch], _map_table("long"), policy="widen",
                               allow_rewrites=allow)
        [plan] = sim.plans
        assert plan.retypes == ()
        assert [(r.path, r.before, r.after) for r in plan.pending] == [
            (("m", "value"), "long", "double")
        ]
        assert sim.rows == [{"id": 1, "m": {"a": 1}}]
        [q] = sim.quarantined
        assert (q.record, q.reason, q.field, q.observed, q.table_type) == (
            batch[1], "rewrite-not-approved", "m.value", "double", "long"
        )


@pytest.mark.parametrize(
    ("value", "observed"),
    [({"a": True}, "boolean"), (5, "long"), ([{"a": 1}], "record[]"), ({"a": {"b": 1}}, "record")],
)
def test_an_x_cell_or_a_non_object_into_a_map_column_is_incompatible(
    value: object, observed: str
) -> None:
    batch = [{"id": 1, "m": value}, {"id": 2, "m": {"a": 3, "b": None}}]
    sim = toolkit.simulate([batch], _map_table("long"), policy="widen")
    assert sim.plans[0].retypes == () and sim.plans[0].pending == ()
    assert sim.rows == [{"id": 2, "m": {"a": 3, "b": None}}]
    [q] = sim.quarantined
    assert (q.record, q.reason, q.observed) == (batch[0], "incompatible", observed)


def test_a_map_keyed_by_anything_but_string_takes_no_json_object() -> None:
    schema = Struct((Column(1, "m", MapOf(2, "int", 3, "long")),))
    sim = toolkit.simulate([[{"m": {"1": 2}}]], schema, policy="widen")
    assert sim.rows == [] and [q.reason for q in sim.quarantined] == ["incompatible"]
    assert sim.table_schema == schema


def test_the_automatic_policy_writes_an_object_that_fits_into_a_map_column() -> None:
    sim = toolkit.simulate([[{"m": {"a": 1}}]], _map_table("long"))
    assert [c.name for c in sim.table_schema.fields] == ["id", "m"]
    assert sim.rows == [{"id": None, "m": {"a": 1}}]


def test_simulate_reads_rewritten_values_as_the_real_rewrite_writes_them() -> None:
    """A rewrite's values come from one conversion per cell on real tables
    (``toolkit/iceberg/operations.py``) and from ``retype_value`` in the simulation: they
    must agree wherever the real rewrite accepts the value (it refuses inexact ones)."""
    from toolkit.core.values.conversions import LOSSY
    from toolkit.core.values.widening import REWRITES as _REWRITES
    from toolkit.core.values.widening import retype_value

    ints = [0, 1, -7, 2**31 - 1, -(2**31), 2**53, 2**62 + 1]
    floats = [0.0, -0.0, 0.1, 2.5, 1e20, -3.25e-5, float("inf")]
    for (old, new), convert in _REWRITES.items():
        for value in ints if old in ("int", "long") else floats:
            written = convert(value)
            if written is not LOSSY:
                assert retype_value(value, old, new) == written, (old, new, value)
