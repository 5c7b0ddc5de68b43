"""RULES 1 for typed values (docs/rules.md, typed values): numpy and pandas scalars, the
int and float of typed sources, decimals and bytes, under both policies; and the
Onehouse matrix cell by cell with typed values (24 of 24 cells reachable)."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal, localcontext
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import toolkit
from tests.core.test_properties import (
    Oracle,
    double_text,
    encodings,
    examples,
    same,
    written_records,
)
from toolkit.core.values.scalars import Float, Int, plain_record, plain_value
from toolkit.core.values.types import Column, Struct
from toolkit.core.values.widening import MATRIX, in_place
from toolkit.errors import RewriteLossError

# --- plain values --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "plain", "plain_type"),
    [
        (np.int8(-8), -8, Int),
        (np.int16(300), 300, Int),
        (np.int32(-(2**31)), -(2**31), Int),
        (np.uint16(65535), 65535, Int),
        (np.int64(2**63 - 1), 2**63 - 1, int),
        (np.uint32(2**32 - 1), 2**32 - 1, int),
        (np.uint64(2**64 - 1), 2**64 - 1, int),
        (np.float32(0.1), float(np.float32(0.1)), Float),
        (np.float64(0.1), 0.1, float),
        (np.bool_(True), True, bool),
        (np.str_("é"), "é", str),
        (pd.Timestamp("2024-01-02T03:04:05.123456Z"),
         dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=dt.UTC), dt.datetime),
        (pd.Timestamp("2024-01-02T03:04:05.123456789"), "2024-01-02T03:04:05.123456789", str),
        (pd.NaT, None, type(None)),
        (np.datetime64("2024-01-02T03:04:05"), dt.datetime(2024, 1, 2, 3, 4, 5), dt.datetime),
        (np.datetime64("NaT"), None, type(None)),
        (Decimal("1.10"), Decimal("1.10"), Decimal),
        (bytearray(b"ab"), b"ab", bytes),
        (memoryview(b"ab"), b"ab", bytes),
        (uuid.UUID(int=5), "00000000-0000-0000-0000-000000000005", str),
        (dt.time(1, 2, 3, 4), "01:02:03.000004", str),
        (np.array([np.int32(1), np.int32(2)]), [1, 2], list),
    ],
)
def test_what_users_hold_becomes_a_plain_value_with_the_same_meaning(
    value: object, plain: object, plain_type: type
) -> None:
    out = plain_value(value)
    assert out == plain and type(out) is plain_type


def test_when_every_value_of_a_field_is_set_aside_the_summary_says_so() -> None:
    sim = toolkit.simulate([[{"t": dt.timedelta(1)}, {"t": dt.timedelta(2)}]])
    assert len(sim.schema.fields) == 0  # the schema alone cannot tell why
    assert sim.summary.startswith(
        "2 records in 1 batch, 0 written; 0 columns; all 2 records were set aside "
        "(value cannot be stored: 2), nothing was written; every value of field 't' was set aside, "
        "so it has no column: field 't': value datetime.timedelta(days=1)"
    )
    sim = toolkit.simulate([[{"t": dt.timedelta(1), "a": 1}, {"a": 2}]])
    assert "1 of 2 records were set aside" in sim.summary
    assert "every value of field 't' was set aside" in sim.summary
    sim = toolkit.simulate([[{"t": dt.timedelta(1), "a": 1}, {"t": 2}]])
    assert "every value" not in sim.summary  # 't' has a column: some of its values landed


def test_a_value_with_no_plain_form_is_left_for_the_engine_to_refuse() -> None:
    delta = dt.timedelta(seconds=3)
    assert plain_record({"d": delta}) == {"d": delta}
    sim = toolkit.simulate([[{"d": delta, "n": 1}, {"n": 2}]])
    [q] = sim.quarantined
    assert q.reason == "invalid-value" and q.field == "d" and "timedelta" in q.detail
    assert sim.rows == [{"n": 2}]


# --- a pandas frame's records, as users get them from df.to_dict("records") -----------------


def frame() -> pd.DataFrame:
    return pd.DataFrame({
        "n": np.array([1, 2], dtype="int32"),
        "f": np.array([0.5, 1.5], dtype="float32"),
        "big": np.array([2**62, -1], dtype="int64"),
        "at": pd.to_datetime(["2024-01-02T03:04:05Z", None]),
        "ok": [True, False],
    })


def test_a_pandas_frames_records_keep_their_meaning_under_the_automatic_policy() -> None:
    sim = toolkit.simulate([frame().to_dict("records")])
    assert sim.quarantined == ()
    types = {f.name: str(f.field_type) for f in sim.schema.fields}
    assert types == {"n": "long", "f": "double", "big": "long", "at": "timestamptz",
                     "ok": "boolean"}
    assert sim.rows[0] == {"n": 1, "f": 0.5, "big": 2**62, "ok": True,
                           "at": dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC)}
    assert sim.rows[1]["at"] is None


def test_typed_sources_keep_their_own_types_under_the_widening_policy() -> None:
    # (pandas' to_dict boxes int32 as a plain int: rows of numpy scalars keep the width)
    records = [dict(zip(frame().columns, row, strict=True))
               for row in zip(*(frame()[c].to_numpy() for c in frame().columns), strict=True)]
    sim = toolkit.simulate([records], policy="widen")
    types = {f.name: str(f.field_type) for f in sim.schema.fields}
    assert types["n"] == "int" and types["f"] == "float" and types["big"] == "long"
    # an existing int column stays int for int values, and a float column float
    schema = Struct((Column(1, "n", "int"), Column(2, "f", "float")))
    sim = toolkit.simulate([[{"n": np.int16(3), "f": np.float32(2.5)}]], schema, policy="widen")
    assert not sim.plans[0].changed
    assert sim.rows == [{"n": 3, "f": 2.5}]


# --- decimals and binary under the automatic policy ----------------------------------------


def test_decimals_get_a_decimal_column_and_never_lose_a_digit() -> None:
    sim = toolkit.simulate([
        [{"amount": Decimal("1.10")}, {"amount": Decimal("-99999999999999999999.5")}],
        [{"amount": Decimal("1E+25")}, {"amount": Decimal("0.1234567890123456789")},
         {"amount": Decimal("NaN")}, {"amount": 3}],
    ])
    cols = {f.name: (str(f.field_type), f.doc) for f in sim.schema.fields}
    assert cols == {
        "amount": ("decimal(38, 18)", None),
        "amount_string": ("string", "upsolver_evolved_from:amount"),
        "amount_long": ("long", "upsolver_evolved_from:amount"),
    }
    got = [(r["amount"], r["amount_string"], r["amount_long"]) for r in sim.rows]
    assert got == [
        (Decimal("1.10"), None, None),
        (Decimal("-99999999999999999999.5"), None, None),
        # beyond 20 integer or 18 fraction digits: the decimal's own text, every digit kept
        (None, "10000000000000000000000000", None),
        (None, "0.1234567890123456789", None),
        (None, "NaN", None),
        (None, "3", 3),
    ]


def test_binary_gets_a_binary_column_and_text_only_when_it_is_utf8() -> None:
    sim = toolkit.simulate([[{"b": "text"}], [{"b": b"\xc3\xa9"}, {"b": b"\xff"}]])
    cols = {f.name: str(f.field_type) for f in sim.schema.fields}
    assert cols == {"b": "string", "b_binary": "binary"}
    assert [(r["b"], r["b_binary"]) for r in sim.rows] == [
        ("text", None), ("é", b"\xc3\xa9"), (None, b"\xff"),
    ]


def test_a_record_set_aside_keeps_its_bytes_and_decimals_in_its_raw_json() -> None:
    schema = Struct((Column(1, "n", "long"),))
    sim = toolkit.simulate(
        [[{"n": b"\xff", "d": Decimal("1.50")}, {"n": b"ok"}]], schema, policy="widen"
    )
    raws = sorted(q.raw for q in sim.quarantined)
    assert raws == ['{"n":"base64:/w==","d":"1.50"}', '{"n":"ok"}']


def test_an_array_of_bytes_that_are_no_text_beside_other_values_is_set_aside() -> None:
    sim = toolkit.simulate([[{"a": [b"\x80", 0]}, {"a": [b"\x80"]}, {"a": [b"ok", 1]}]])
    [q] = sim.quarantined
    assert q.reason == "invalid-value" and q.field == "a"
    assert "not UTF-8 text" in q.detail and "b'\\x80'" in q.detail
    assert [(r["a"], r["a_array_binary"]) for r in sim.rows] == [
        (None, [b"\x80"]), (["ok", "1"], None),
    ]


# --- RULES 5: the 24 cells of the matrix, with typed values --------------------------------

#: a value observed as each incoming type of the matrix
INCOMING = {
    "int": Int(7), "long": 7, "float": Float(2.5), "double": 2.5, "string": "x", "bytes": b"x",
}
ICEBERG = {"bytes": "binary"}


@pytest.mark.parametrize(("incoming", "table"), sorted(MATRIX))
def test_every_cell_of_the_matrix_is_reached(incoming: str, table: str) -> None:
    value, table_type = INCOMING[incoming], ICEBERG.get(table, table)
    cell = MATRIX[incoming, table]
    sim = toolkit.simulate([[{"v": value}]], Struct((Column(1, "v", table_type),)),
                           policy="widen")
    col = sim.table_schema.fields[0]
    if cell is None:
        assert col.type == table_type and sim.rows == []
        [q] = sim.quarantined
        assert (q.reason, q.field, q.observed, q.table_type) == (
            "incompatible", "v", incoming if incoming != "bytes" else "binary", table_type)
        return
    after = ICEBERG.get(cell, cell)
    assert sim.quarantined == () and col.type == after
    assert col.id == (1 if in_place(table_type, after) else 2)
    [read] = [r["v"] for r in sim.rows]
    expected = {"string": str(value) if not isinstance(value, bytes) else "x",
                "binary": b"x"}.get(after, value)
    assert read == expected


# --- property: typed records lose nothing (RULES 2's principle) -----------------------------

_NUMPY_INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
               np.uint64]


@st.composite
def numpy_ints(draw: st.DrawFn) -> Any:
    t = draw(st.sampled_from(_NUMPY_INTS))
    info = np.iinfo(t)
    return t(draw(st.integers(int(info.min), int(info.max))))


TYPED = st.one_of(
    numpy_ints(),
    st.floats(width=32).map(np.float32),
    st.floats().map(np.float64),
    st.booleans().map(np.bool_),
    st.decimals(allow_nan=True, allow_infinity=True),
    st.binary(max_size=4),
    st.datetimes(min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 1, 1)).map(
        pd.Timestamp),
    st.just(pd.NaT),
    st.integers(-(2**70), 2**70),
    st.text(max_size=4),
)
#: inside arrays, bytes that spell text (beside other values, other bytes have no exact
#: column type: see test_an_array_of_bytes_that_are_no_text_beside_other_values...)
IN_ARRAYS = st.one_of(
    TYPED.filter(lambda v: not isinstance(v, bytes)),
    st.text(max_size=3).map(str.encode),
)
RECORDS = st.lists(
    st.dictionaries(st.sampled_from("abc"), st.one_of(TYPED, st.lists(IN_ARRAYS, max_size=3)),
                    max_size=3),
    min_size=1, max_size=4,
)


def typed_encodings(v: Any) -> dict[str, list[Any]]:
    """Column type -> the stored values that give back plain value ``v`` exactly, for the
    typed values the oracle of test_properties.py does not know."""
    if isinstance(v, Decimal):
        text = format(v, "f")
        with localcontext(prec=200):
            fits = v.is_finite() and v == v.quantize(Decimal("1e-18")) and abs(v) < 10**20
        return {"decimal(38, 18)": [v], "string": [text]} if fits else {"string": [text]}
    if isinstance(v, bytes):
        try:
            return {"binary": [v], "string": [v.decode("utf-8")]}
        except UnicodeDecodeError:
            return {"binary": [v]}
    if type(v) is Int:
        return {"long": [int(v)], "double": [float(v)], "string": [str(int(v))]}
    if type(v) is Float:
        return {"double": [float(v)], "string": [double_text(float(v))]}
    return encodings(v, detect_dates=True)


class TypedOracle(Oracle):
    def leaf(self, v: Any, t: Any, stored: Any, *, in_array: bool) -> bool:
        # a row may hold a typed source's int or float as it came (an int subclass)
        stored = {Int: int, Float: float}.get(type(stored), lambda x: x)(stored)
        if stored is None or not isinstance(t, str) or isinstance(v, dict):
            return super().leaf(v, t, stored, in_array=in_array)
        if isinstance(v, Decimal | bytes | Int | Float):
            return any(same(stored, e) for e in typed_encodings(v).get(t, ()))
        return super().leaf(v, t, stored, in_array=in_array)


@examples(150)
@given(st.lists(RECORDS, min_size=1, max_size=3))
def test_typed_records_lose_nothing_under_the_automatic_policy(batches: list[Any]) -> None:
    sim = toolkit.simulate(batches)
    assert sim.quarantined == ()
    plain = [plain_record(r) for r in written_records(batches, sim)]
    oracle = TypedOracle(detect_dates=True)
    for i, (record, row) in enumerate(zip(plain, sim.rows, strict=True)):
        lost = oracle.lost(record, sim.table_schema, row)
        assert not lost, f"record {i}: {lost}\nschema:\n{sim.schema}"


@examples(100)
@given(st.lists(RECORDS, min_size=1, max_size=3))
def test_typed_records_are_written_or_set_aside_under_the_widening_policy(
    batches: list[Any],
) -> None:
    sim = toolkit.simulate(batches, policy="widen")
    try:
        rows = sim.rows  # earlier batches' rows read under the types of the last plan
    except RewriteLossError as err:
        # a rewrite the matrix asks for (long -> float) that would change a stored value
        # is refused whole, naming it, as on a real table: nothing is changed or lost
        assert "would change; nothing was applied" in str(err)
        return
    # (a batch leaving the table without a column writes no row, its aside ones are aside)
    aside = [q for q in sim.quarantined if sim.plans[int(q.batch)].after.fields]
    assert len(rows) + len(aside) == len(written_records(batches, sim))
    assert all(q.reason in ("incompatible", "rewrite-not-approved") for q in sim.quarantined)
