"""RULES 5 value conversions are one table (``toolkit.core.values.widening.VALUE_CONVERSIONS``):
the router writing an incoming value, the simulation reading old values under a widened
type and the rewrite of a real table's data files give the same value, or all refuse it
(RULES 2: exactness per value), cell by cell. Nothing here may drift apart again."""

from __future__ import annotations

import datetime as dt
import struct
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.types import (
    DateType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    NestedField,
    PrimitiveType,
    StringType,
)

import toolkit
from toolkit.core.values.conversions import LOSSY, render_float, to_float32
from toolkit.core.values.types import Column, Struct
from toolkit.core.values.widening import (
    RETYPES,
    REWRITES,
    VALUE_CONVERSIONS,
    convert_value,
    in_place,
    retype_value,
)
from toolkit.errors import RewriteLossError
from toolkit.iceberg.operations import _rebuild

INT = [0, -7, 2**24, 2**24 + 1, -(2**24) - 1, 2**31 - 1, -(2**31)]
LONG = [*INT, 2**53, 2**53 + 1, -(2**53) - 1, 2**62 + 1, 2**63 - 1]
FLOAT = [  # values a float column holds: 32-bit floats
    0.0, -0.0, to_float32(0.1), 2.5, 2.0**40, 2869290.5, to_float32(1e-45),
    to_float32(3.4e38), float("inf"), float("nan"),
]  # fmt: skip
DOUBLE = [0.1, -0.0, 1e20, 2.0**53 + 2, 5e-324, -3.25e-5, float("-inf"), float("nan")]
VALUES = {"int": INT, "long": LONG, "float": FLOAT, "double": DOUBLE}

ICEBERG: dict[str, PrimitiveType] = {
    "int": IntegerType(), "long": LongType(), "float": FloatType(), "double": DoubleType(),
    "string": StringType(), "date": DateType(),
}  # fmt: skip
ARROW = {
    "int": pa.int32(), "long": pa.int64(), "float": pa.float32(), "double": pa.float64(),
    "string": pa.large_string(), "date": pa.date32(), "timestamp": pa.timestamp("us"),
    "timestamptz": pa.timestamp("us", tz="UTC"),
}  # fmt: skip
#: the type a JSON value of a column's values has when it arrives (JSON has no int/float)
JSON_KIND = {"int": "long", "long": "long", "double": "double"}


def same(a: Any, b: Any) -> bool:
    """Equal, with NaN equal to itself and -0.0 not equal to 0.0."""
    if isinstance(a, float) and isinstance(b, float):
        return struct.pack("<d", a) == struct.pack("<d", b) or (a != a and b != b)
    return type(a) is type(b) and a == b


def simulated(value: Any, old: str, new: str) -> Any:
    """What the simulation reads: ``retype_value``, a loss as LOSSY."""
    try:
        return retype_value(value, old, new)
    except RewriteLossError:
        return LOSSY


def rewritten(value: Any, old: str, new: str) -> Any:
    """What a real rewrite writes: the Iceberg adapter's ``_rebuild`` of one Arrow value;
    an in-place widening is Arrow reading the old value as the new type."""
    array = pa.array([value], type=ARROW[old])
    if in_place(old, new, format_version=3):
        return array.cast(ARROW[new]).to_pylist()[0]
    field = NestedField(2, "x", ICEBERG[new], required=False)
    try:
        out = _rebuild(array, ICEBERG[old], field, ARROW[new], {2: (1, old, new)})
    except RewriteLossError:
        return LOSSY
    return out.to_pylist()[0]


def routed(value: Any, column_type: str) -> Any:
    """What the router writes for an incoming value in a column of ``column_type``."""
    table = Struct((Column(1, "x", column_type),))
    sim = toolkit.simulate([[{"x": value}]], table, policy="widen")
    if sim.quarantined:
        assert [q.reason for q in sim.quarantined] == ["incompatible"]
        assert sim.table_schema == table
        return LOSSY
    return sim.rows[0]["x"]


def test_the_table_holds_every_column_change_of_the_matrix() -> None:
    assert {
        ("int", "long"), ("float", "double"),
        ("int", "float"), ("int", "double"), ("int", "string"),
        ("long", "float"), ("long", "double"), ("long", "string"),
        ("float", "string"), ("double", "string"),
    } == RETYPES  # fmt: skip
    assert VALUE_CONVERSIONS.keys() >= RETYPES
    assert set(REWRITES) == {c for c in RETYPES if not in_place(*c)}
    # a JSON integer is a long: int and long values convert alike
    for new in ("float", "double", "string"):
        assert VALUE_CONVERSIONS["int", new] is VALUE_CONVERSIONS["long", new]


CELLS = sorted(RETYPES | {("date", "timestamp"), ("date", "timestamptz")})


@pytest.mark.parametrize(("old", "new"), CELLS, ids=[f"{o}->{n}" for o, n in CELLS])
def test_the_three_users_agree_value_by_value(old: str, new: str) -> None:
    values = VALUES.get(old, [dt.date(2024, 1, 2), dt.date(1, 1, 1), dt.date(9999, 12, 31)])
    lost = 0
    for value in values:
        expected = convert_value(value, old, new)
        lost += expected is LOSSY
        assert same(simulated(value, old, new), expected), (value, "simulation")
        assert same(rewritten(value, old, new), expected), (value, "rewrite")
        if old in JSON_KIND:  # the router takes the value as JSON brings it
            assert same(routed(value, new), expected), (value, "router")
    # the exactness edges: odd beyond 2**24 for a float, beyond 2**53 for a double
    assert lost == {("int", "float"): 3, ("long", "float"): 7, ("long", "double"): 4}.get(
        (old, new), 0
    )


def test_a_loss_names_the_column_in_the_rewrite_and_is_refused_by_the_router() -> None:
    with pytest.raises(RewriteLossError, match=r"cannot rewrite n from long to double"):
        retype_value(2**53 + 1, "long", "double", "n")
    assert routed(2**53 + 1, "double") is LOSSY
    assert routed(2**24 + 1, "float") is LOSSY and routed(2**24, "float") == 2.0**24


@pytest.mark.parametrize(
    ("value", "column_type", "expected"),
    [
        ("é", "binary", b"\xc3\xa9"),  # RULES 5: string -> bytes, as UTF-8
        ("2024-01-02 03:04", "string", "2024-01-02 03:04"),  # a text keeps its spelling
        ("2024-01-02 03:04", "binary", b"2024-01-02 03:04"),
        (dt.date(2024, 1, 2), "string", "2024-01-02"),
        (
            dt.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=dt.UTC),
            "string",
            "2024-01-02T03:04:05.000006Z",
        ),
        (dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC), "binary", b"2024-01-02T03:04:05Z"),
        ("2024-01-02T03:04:05+01:00", "timestamp", dt.datetime(2024, 1, 2, 2, 4, 5)),
        (
            "2024-01-02T03:04:05+01:00",
            "timestamptz",
            dt.datetime(2024, 1, 2, 2, 4, 5, tzinfo=dt.UTC),
        ),
        ("2024-01-02", "date", dt.date(2024, 1, 2)),
        (2**70, "string", str(2**70)),  # RULES 1: beyond 64 bits, a text
        ("\ud800", "binary", LOSSY),  # a lone surrogate has no UTF-8 form
    ],
)
def test_the_router_writes_other_values_by_the_same_table(
    value: Any, column_type: str, expected: Any
) -> None:
    assert same(routed(value, column_type), expected)


def test_a_float_reads_as_its_shortest_text() -> None:
    for bits in (0x3DCCCCCD, 0x00000001, 0x7F7FFFFF, 0x4B800001, 0xCB000001, 0x38D1B717):
        f = struct.unpack("<f", struct.pack("<I", bits))[0]
        text = render_float(f)
        assert to_float32(float(text)) == f
        assert len(text.rstrip("0")) <= len(repr(f).rstrip("0"))
    assert render_float(to_float32(0.1)) == "0.1" and render_float(-0.0) == "-0.0"
