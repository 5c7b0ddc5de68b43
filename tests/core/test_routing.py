"""RULES 3.1: every value goes to every column of its family that accepts it."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.core.helpers import columns, run
from toolkit.core.values.families import accepts, receives
from toolkit.core.values.lattice import UPSOLVER
from toolkit.core.values.types import Column, Kind, ListOf, Struct

UTC = dt.UTC


@pytest.mark.parametrize(
    ("kind", "column", "accepted"),
    [
        (Kind("long", 0), Column(1, "c", "double"), True),
        (Kind("long", 0), Column(1, "c", ListOf(2, "double")), True),  # wrapped
        (Kind("long", 1), Column(1, "c", "long"), False),  # higher dimension never fits
        (Kind("double", 0), Column(1, "c", "long"), False),
        (Kind("long", 0, frozenset({"double"})), Column(1, "c", "double"), False),
        (Kind("record", 0), Column(1, "c", "string"), False),  # records never go to text
        (Kind("record", 0), Column(1, "c", ListOf(2, Struct())), True),
        (Kind("record", 1), Column(1, "c", Struct()), False),
        (Kind(None, 1), Column(1, "c", ListOf(2, Struct())), True),  # [] fits any array
        (Kind(None, 1), Column(1, "c", "string"), False),
        (Kind("string", 0), Column(1, "c", "decimal(9, 2)"), False),  # opaque declared type
        (Kind("date", 0), Column(1, "c", "timestamp"), True),  # declared, without zone
    ],
    ids=repr,
)
def test_rules_3_compatibility(kind: Kind, column: Column, accepted: bool) -> None:
    assert accepts(UPSOLVER, kind, column) is accepted


def test_rules_3_1_long_into_timestamp_is_for_routing_only() -> None:
    ts = Column(1, "t", "timestamptz")
    assert not accepts(UPSOLVER, Kind("long", 0), ts)
    assert receives(UPSOLVER, Kind("long", 0), ts)
    assert not receives(UPSOLVER, Kind("long", 1), ts)


def test_rules_3_1_value_goes_to_exact_wider_and_higher_dimension_columns() -> None:
    r = run([{"a": 1}, {"a": [2.5]}, {"a": "x"}, {"a": ["y"]}], [{"a": 7}])
    assert columns(r.table_schema) == {
        "a": "list<string>",
        "a_array_double": "list<double>",
        "a_long": "long",
        "a_string": "string",
    }
    assert r.rows[-1] == {"a": ["7"], "a_array_double": [7.0], "a_long": 7, "a_string": "7"}


def test_rules_3_1_long_written_into_timestamp_columns_of_higher_dimension() -> None:
    r = run([{"t": ["2024-01-02T00:00:00Z"]}], [{"t": 1704153600}])
    assert columns(r.table_schema) == {
        "t": "list<timestamptz>", "t_array_long": "list<long>", "t_long": "long",
    }
    assert r.rows[1]["t"] == [dt.datetime(2024, 1, 2, tzinfo=UTC)]


def test_rules_3_1_long_too_large_for_a_timestamp_stays_only_in_its_long_column() -> None:
    r = run([{"t": "2024-01-02T00:00:00Z"}], [{"t": 10**18 + 1}])
    assert r.rows[1] == {"t": None, "t_long": 10**18 + 1}


def test_rules_3_1_dates_and_timestamps_convert_into_wider_columns() -> None:
    r = run([{"a": 1.5}], [{"a": "2024-01-02"}, {"a": "2024-01-02T00:00:01.5Z"}])
    assert [x["a"] for x in r.rows] == [1.5, 1704153600000.0, 1704153601500.0]


def test_rules_3_1_declared_timestamp_without_zone_gets_naive_utc() -> None:
    declared = Struct((Column(1, "t", "timestamp"),))
    import toolkit

    r = toolkit.simulate([[{"t": "2024-01-02T05:00:00+02:00"}]], schema=declared)
    assert r.rows[0]["t"] == dt.datetime(2024, 1, 2, 3, 0, 0)


def test_rules_3_1_arrays_convert_each_leaf_by_its_own_type() -> None:
    r = run([{"a": [1.5]}], [{"a": [True, 2, None]}])
    assert r.rows[1]["a"] == [1.0, 2.0, None]


def test_rules_3_1_integer_beyond_64_bits_is_kept_as_text() -> None:
    r = run([{"n": 2**64}])
    assert columns(r.table_schema) == {"n": "string"}
    assert r.rows[0]["n"] == str(2**64)
