"""RULES 2: the primitive lattice and per-value exact conversions."""

from __future__ import annotations

import datetime as dt
import itertools

import pytest

from toolkit.core.values.conversions import LOSSY, Conversions, render_double, render_timestamp
from toolkit.core.values.lattice import STRICT, UPSOLVER
from toolkit.core.values.types import PRIMITIVES, Kind

UTC = dt.UTC


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("boolean", "long"),
        ("long", "double"),
        ("double", "string"),
        ("date", "timestamp"),
        ("timestamp", "long"),
        ("date", "long"),  # through timestamp
        ("boolean", "string"),
    ],
)
def test_rules_2_narrower_converts_into_wider(a: str, b: str) -> None:
    assert UPSOLVER.leq(a, b)
    assert not UPSOLVER.leq(b, a)


def test_rules_2_string_is_wider_than_everything() -> None:
    assert all(UPSOLVER.leq(p, "string") for p in PRIMITIVES)
    assert all(UPSOLVER.widest(p, "string") == "string" for p in PRIMITIVES)


@pytest.mark.parametrize(
    ("a", "b", "widest"),
    [
        ("long", "double", "double"),
        ("timestamp", "long", "long"),
        ("date", "timestamp", "timestamp"),
        ("boolean", "date", "string"),  # both convert to long, yet: string
        ("boolean", "timestamp", "string"),
        ("double", "date", "double"),
    ],
)
def test_rules_2_widest(a: str, b: str, widest: str) -> None:
    assert UPSOLVER.widest(a, b) == widest  # type: ignore[arg-type]
    assert UPSOLVER.widest(b, a) == widest  # type: ignore[arg-type]


def test_rules_2_widest_is_commutative_and_ordering_is_a_partial_order() -> None:
    for a, b in itertools.product(PRIMITIVES, repeat=2):
        assert UPSOLVER.widest(a, b) == UPSOLVER.widest(b, a)
        if UPSOLVER.leq(a, b) and UPSOLVER.leq(b, a):
            assert a == b


def test_rules_2_stricter_lattice_is_a_table_not_a_fork() -> None:
    assert not STRICT.leq("timestamp", "long")
    assert STRICT.widest("timestamp", "long") == "string"
    assert STRICT.leq("date", "timestamp")


def test_rules_2_per_value_exactness_makes_a_kind_unfit() -> None:
    big = Kind("long", 0, frozenset({"double"}))
    assert not UPSOLVER.fits(big, "double")
    assert UPSOLVER.fits(big, "string")
    assert UPSOLVER.widest_kind([big, Kind("double", 0)]) == Kind("string", 0)
    assert UPSOLVER.widest_kind([big, Kind("boolean", 0)]) == big


def test_rules_2_widest_over_a_set_does_not_depend_on_order() -> None:
    kinds = [Kind("boolean", 0), Kind("date", 0), Kind("long", 0)]
    for order in itertools.permutations(kinds):
        assert UPSOLVER.widest_kind(order) == Kind("long", 0)
        assert UPSOLVER.widest_of(k.type for k in order) == "long"  # type: ignore[misc]


conv = Conversions()


@pytest.mark.parametrize(
    ("value", "from_type", "to_type", "expected"),
    [
        (True, "boolean", "long", 1),
        (False, "boolean", "double", 0.0),
        (True, "boolean", "string", "true"),
        (12, "long", "double", 12.0),
        (2**53 + 1, "long", "double", LOSSY),
        (-42, "long", "string", "-42"),
        (0.1, "double", "string", "0.1"),
        (1e16, "double", "string", "1e+16"),
        (float("nan"), "double", "string", "NaN"),
        (float("-inf"), "double", "string", "-Infinity"),
        ("2024-01-02", "date", "timestamp", dt.datetime(2024, 1, 2, tzinfo=UTC)),
        ("2024-01-02", "date", "long", 1704153600000),
        ("2024-01-02", "date", "string", "2024-01-02"),  # a text keeps its spelling
        (dt.date(2024, 1, 2), "date", "string", "2024-01-02"),
        ("2024-01-02T03:04:05.123Z", "timestamp", "long", 1704164645123),
        ("2024-01-02T03:04:05.123456Z", "timestamp", "long", LOSSY),
        ("2024-01-02T05:04:05+02:00", "timestamp", "timestamp",
         dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
        (dt.datetime(2024, 1, 2, 3, 4, 5, 600), "timestamp", "string",
         "2024-01-02T03:04:05.000600Z"),
        (2**70, "string", "string", str(2**70)),
    ],
    ids=repr,
)
def test_rules_2_conversion_table(
    value: object, from_type: str, to_type: str, expected: object
) -> None:
    assert conv.convert(value, from_type, to_type) == expected or (
        expected is LOSSY and conv.convert(value, from_type, to_type) is LOSSY
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1704164645, dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),  # seconds
        (1704164645123, dt.datetime(2024, 1, 2, 3, 4, 5, 123000, tzinfo=UTC)),  # millis
        (1704164645123456, dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)),  # micros
        (1704164645123456000, dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)),  # nanos
        (1704164645123456789, LOSSY),  # nanosecond digits a timestamp cannot hold
    ],
)
def test_rules_2_long_to_timestamp_reads_unit_from_magnitude(value: int, expected: object) -> None:
    out = conv.convert(value, "long", "timestamp")
    assert out == expected or (expected is LOSSY and out is LOSSY)


def test_rules_2_long_to_timestamp_fixed_unit_is_configurable() -> None:
    fixed = Conversions(long_timestamp_unit="ms")
    assert fixed.convert(1000, "long", "timestamp") == dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC)


def test_rules_2_timestamp_to_long_unit_is_configurable() -> None:
    micros = Conversions(timestamp_unit="us")
    ts = "2024-01-02T03:04:05.123456Z"
    assert micros.convert(ts, "timestamp", "long") == 1704164645123456


def test_rules_2_text_renderings_round_trip() -> None:
    for x in [0.1, 1e-7, 123456789.125, -0.0, 5e-324, 1.7976931348623157e308]:
        assert float(render_double(x)) == x
    ts = dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)
    assert dt.datetime.fromisoformat(render_timestamp(ts)) == ts
