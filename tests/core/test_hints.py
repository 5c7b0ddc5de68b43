"""Type hints per field (docs/rules.md, *Type hints*): a hinted field's column has the
hint's type from its first batch; what converts exactly lands there, the rest goes where
the policy puts it (RULES 3: the family; RULES 5: the quarantine); a bad hint is refused."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolkit
from toolkit.core.batch.hint_plans import hints_note
from toolkit.core.batch.hints import (
    HINTS_PROPERTY,
    hints_from_property,
    hints_property,
    parse_hint,
    to_hint,
)
from toolkit.core.batch.options import Options, make_options, obeyed
from toolkit.core.values.conversions import LOSSY, Conversions
from toolkit.core.values.types import Column, Struct, type_to_str
from toolkit.errors import HintError, ToolkitError

PRICES = [[{"id": 1, "price": 12.50}, {"id": 2, "price": "12.50"}, {"id": 3, "price": 3}]]
UTC = dt.UTC


def types(schema: Any) -> dict[str, str]:
    """Column name -> type text, of a simulation's (PyIceberg) schema or a plan's."""
    if isinstance(schema, Struct):
        return {c.name: type_to_str(c.type) for c in schema.fields}
    return {f.name: str(f.field_type) for f in schema.fields}


@pytest.mark.parametrize("policy", ["upsolver", "widen"])
def test_the_issue_s_price_is_decimal_from_the_first_batch_and_every_value_lands_exactly(
    policy: str,
) -> None:
    run = toolkit.simulate(PRICES, hints={"price": "decimal(10,2)"}, policy=policy)
    assert types(run.schema) == {"id": "long", "price": "decimal(10, 2)"}
    assert [r["price"] for r in run.rows] == [Decimal("12.50"), Decimal("12.50"), Decimal("3.00")]
    assert not run.quarantined
    # the plan says why the column has that type
    assert "The hints give `price` the type decimal(10, 2)" in run.plans[0].reasons[1]


def test_without_the_hint_the_same_batch_types_otherwise() -> None:
    run = toolkit.simulate(PRICES)
    assert types(run.schema) == {"id": "long", "price": "string", "price_double": "double"}


def test_under_upsolver_values_that_do_not_convert_go_to_the_family() -> None:
    batches = [[{"price": 3}, {"price": "n/a"}], [{"price": 1.234}, {"price": [1]}]]
    run = toolkit.simulate(batches, hints={"price": "decimal(10,2)"})
    assert types(run.schema) == {
        "price": "decimal(10, 2)", "price_string": "string",
        "price_array_long": "list<long>", "price_array_string": "list<string>",
    }
    by = [(r["price"], r["price_string"]) for r in run.rows]
    # RULES 3.1: the decimal also reaches the string column, as its text
    assert by == [(Decimal("3.00"), "3.00"), (None, "n/a"), (None, "1.234"), (None, None)]
    assert (run.rows[3]["price_array_long"], run.rows[3]["price_array_string"]) == ([1], ["1"])
    assert not run.quarantined


def test_under_widen_values_that_do_not_convert_are_quarantined_or_fail_the_batch() -> None:
    batches = [[{"id": 1, "price": 3}, {"id": 2, "price": "n/a"}, {"id": 3, "price": 1.234}]]
    run = toolkit.simulate(batches, hints={"price": "decimal(10,2)"}, policy="widen")
    assert [r["id"] for r in run.rows] == [1]
    assert sorted((q.record["id"], q.field) for q in run.quarantined) == [
        (2, "price"), (3, "price")]
    with pytest.raises(ToolkitError, match="n/a"):
        toolkit.simulate(batches, hints={"price": "decimal(10,2)"}, policy="widen",
                         on_incompatible="fail")


@pytest.mark.parametrize("policy", ["upsolver", "widen"])
def test_a_timestamp_hint_reads_longs_in_its_epoch_unit(policy: str) -> None:
    batches = [[{"ts": 1704164645000}, {"ts": "2024-01-02T03:04:05Z"}, {"ts": "2024-01-02"}]]
    run = toolkit.simulate(batches, hints={"ts": "timestamp[ms]"}, policy=policy)
    assert types(run.schema) == {"ts": "timestamp"}
    # a timestamp without zone holds the UTC wall time (a timestamptz, the instant)
    assert [r["ts"] for r in run.rows] == [
        dt.datetime(2024, 1, 2, 3, 4, 5), dt.datetime(2024, 1, 2, 3, 4, 5),
        dt.datetime(2024, 1, 2)]
    # in seconds the same long is another instant
    secs = toolkit.simulate([[{"ts": 1704164645}]], hints={"ts": "timestamptz[s]"})
    assert types(secs.schema) == {"ts": "timestamptz"}
    assert secs.rows[0]["ts"] == dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)


@pytest.mark.parametrize(
    ("hint", "values", "column"),
    [
        ("long", [1, "2", True], [1, 2, 1]),
        ("double", [1, "2.50", 0.1], [1.0, 2.5, 0.1]),
        ("string", [1, 2.5, True], ["1", "2.5", "true"]),
        ("boolean", [True, "false"], [True, False]),
        ("date", ["2024-01-02", dt.date(2024, 1, 3)], [dt.date(2024, 1, 2), dt.date(2024, 1, 3)]),
    ],
    ids=["long", "double", "string", "boolean", "date"],
)
def test_each_primitive_hint_takes_what_converts_exactly(
    hint: str, values: list[Any], column: list[Any]
) -> None:
    run = toolkit.simulate([[{"x": v} for v in values]], hints={"x": hint})
    assert types(run.schema) == {"x": hint}
    assert [r["x"] for r in run.rows] == column
    assert [type(r["x"]) for r in run.rows] == [type(c) for c in column]


def test_a_later_batch_obeys_the_hint_and_a_hint_on_an_existing_family_adds_its_column() -> None:
    table = Struct((Column(1, "price", "string"),))
    run = toolkit.simulate([[{"price": "4.5"}, {"price": "x"}]], table,
                           hints={"price": "decimal(10,2)"})
    assert types(run.schema) == {"price": "string", "price_decimal": "decimal(10, 2)"}
    assert run.schema.fields[1].doc == "upsolver_evolved_from:price"
    assert [(r["price"], r["price_decimal"]) for r in run.rows] == [
        ("4.50", Decimal("4.50")), ("x", None)]
    with pytest.raises(HintError, match=r"`price`.*string.*widen policy"):
        toolkit.simulate([[{"price": "4.5"}]], table, hints={"price": "decimal(10,2)"},
                         policy="widen")


def test_a_hinted_field_absent_or_null_creates_no_column_yet() -> None:
    run = toolkit.simulate([[{"id": 1, "price": None}], [{"id": 2, "price": 5}]],
                           hints={"price": "decimal(10,2)"})
    assert [c.column.name for c in run.plans[0].changes] == ["id"]
    assert types(run.plans[1].after)["price"] == "decimal(10, 2)"


def test_the_added_columns_are_numbered_and_ordered_as_iceberg_adds_them() -> None:
    run = toolkit.simulate([[{"z": 1, "price": "n/a", "a": 2}]], hints={"price": "long"})
    assert [(f.field_id, f.name) for f in run.schema.fields] == [
        (1, "a"), (2, "price"), (3, "price_string"), (4, "z")]
    later = toolkit.simulate([[{"a": 1}], [{"b": 1, "price": 2}]], hints={"price": "long"})
    assert [(c.column.id, c.column.name) for c in later.plans[1].changes] == [
        (2, "b"), (3, "price")]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("decimal(10)", "a decimal takes its precision and scale"),
        ("decmial(10,2)", r"decmial\(10,2\) is no Iceberg type \(did you mean decimal\?\)"),
        ("uuid", "uuid is an Iceberg type the hints do not take"),
        ("long[ms]", "only a timestamp takes an epoch unit"),
        ("timestamp[h]", "only a timestamp takes an epoch unit"),
        ("decimal(38,2)", "a decimal hint holds at most 20 digits before the point"),
        ("decimal(2,3)", "a decimal hint holds at most 20 digits"),
    ],
)
def test_a_bad_hint_is_refused_naming_field_and_type(text: str, message: str) -> None:
    with pytest.raises(HintError, match=r"hint for `price`: " + message):
        toolkit.simulate([[{"price": 1}]], hints={"price": text})


def test_a_bad_hint_is_a_toolkit_error_importable_from_toolkit() -> None:
    assert toolkit.HintError is HintError and issubclass(HintError, ValueError)
    with pytest.raises(toolkit.ToolkitError, match="hint for `ts`"):
        toolkit.simulate([[{"ts": 1}]], hints={"ts": "timestamp[ms"})


def test_a_hint_on_a_record_is_refused() -> None:
    with pytest.raises(HintError, match="hint for `address`: the field is a record"):
        toolkit.simulate([[{"address": {"zip": "1000"}}]], hints={"address": "string"})
    table = Struct((Column(1, "address", Struct((Column(2, "zip", "string"),))),))
    with pytest.raises(HintError, match="`address`"):
        toolkit.simulate([[{"address": "Main St"}]], table, hints={"address": "string"})
    # a field inside a record is not hinted silently as a key that never comes
    with pytest.raises(HintError, match="hint for `address.zip`: `address` is a record"):
        toolkit.simulate([[{"address": {"zip": 1000}}]], hints={"address.zip": "string"})
    # a dotted key is a top-level field like any other
    dotted = toolkit.simulate([[{"a.b": 1}]], hints={"a.b": "string"})
    assert dotted.rows == [{"a.b": "1"}]


def test_hints_travel_in_options_and_as_a_bounded_table_property() -> None:
    opts = make_options(hints={"ts": "timestamp[ms]", "price": "Decimal( 10 , 2 )"})
    assert [h.text for h in opts.hints] == ["decimal(10, 2)", "timestamp[ms]"]
    hash(opts)  # options stay hashable (the JVM routing table is cached by them)
    prop = hints_property(opts.hints)
    assert prop == {HINTS_PROPERTY: '{"price": "decimal(10, 2)", "ts": "timestamp[ms]"}'}
    assert hints_from_property(prop) == opts.hints
    # given hints replace the kept ones; none given, the kept ones hold
    assert obeyed(Options(), prop).hints == opts.hints
    other = make_options(hints={"q": "long"})
    assert obeyed(other, prop).hints == other.hints
    assert hints_note(other, prop) == {HINTS_PROPERTY: '{"q": "long"}'}
    assert hints_note(opts, prop) == {}
    with pytest.raises(HintError, match="table keeps at most 4,096"):
        make_options(hints={f"field_{i:04d}": "string" for i in range(400)})


@settings(max_examples=200, deadline=None)
@given(st.one_of(
    st.integers(min_value=-(10**12), max_value=10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(alphabet="0123456789.-e", max_size=8),
    st.decimals(allow_nan=False, allow_infinity=False, places=3),
    st.booleans(),
))
def test_a_value_converts_to_a_decimal_hint_only_when_its_number_is_kept(value: Any) -> None:
    h = parse_hint("p", "decimal(10,2)")
    out = to_hint(value, h, Conversions())
    if out is LOSSY:
        return
    assert isinstance(out, Decimal) and out.as_tuple().exponent == -2
    number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    assert out == number  # the same number, at the column's scale
    assert to_hint(out, h, Conversions()) == out  # converted once, it stays


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-999, 999), st.text(max_size=4),
                          st.floats(allow_nan=False, width=32)), min_size=1, max_size=12))
def test_nothing_is_lost_a_value_is_in_the_hinted_column_or_its_family(values: list[Any]) -> None:
    records = [{"id": i, "x": v} for i, v in enumerate(values)]
    run = toolkit.simulate([records], hints={"x": "decimal(10,2)"})
    for value, row in zip(values, run.rows, strict=True):
        if value is None:
            continue
        held = {k: v for k, v in row.items() if k != "id" and v is not None}
        assert held, (value, row)
        if "x" in held and isinstance(held["x"], Decimal):
            assert held["x"] == Decimal(repr(value) if isinstance(value, float) else value)
    widen = toolkit.simulate([records], hints={"x": "decimal(10,2)"}, policy="widen")
    assert len(widen.rows) + len(widen.quarantined) == len(records)


def test_a_quarantined_record_keeps_its_values_as_they_came() -> None:
    batch = [{"id": 1, "price": "12.50", "flag": True}, {"id": 2, "price": 3, "flag": 7}]
    run = toolkit.simulate([batch], Struct((Column(1, "flag", "boolean"),)),
                           hints={"price": "decimal(10,2)"}, policy="widen")
    assert [q.record for q in run.quarantined] == [batch[1]]
    assert run.quarantined[0].raw == '{"id":2,"price":3,"flag":7}'
