"""RULES 1: the observed type of a value."""

from __future__ import annotations

import datetime as dt

import pytest

from toolkit.core.batch.observe import Classifier, observe_struct
from toolkit.core.batch.options import Options
from toolkit.core.values.types import Kind
from toolkit.errors import UnsupportedValueError

classify = Classifier(Options()).kind


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (None, None),
        (True, Kind("boolean", 0)),
        (False, Kind("boolean", 0)),
        (0, Kind("long", 0)),
        (2**63 - 1, Kind("long", 0, frozenset({"double"}))),
        (-(2**63), Kind("long", 0)),  # a power of two: exact as a double
        (2**63, Kind("string", 0)),  # beyond 64 bits: text keeps every digit
        (-(2**63) - 1, Kind("string", 0)),
        (2**53 + 1, Kind("long", 0, frozenset({"double"}))),
        (1.5, Kind("double", 0)),
        (2.0, Kind("double", 0)),
        (1e300, Kind("double", 0)),
        ("2024-02-29", Kind("date", 0)),
        ("2023-02-29", Kind("string", 0)),  # not a real date
        ("2024-01-02T03:04:05Z", Kind("timestamp", 0)),
        ("2024-01-02 03:04:05+02:00", Kind("timestamp", 0)),
        ("2024-01-02T03:04:05.123Z", Kind("timestamp", 0)),
        ("2024-01-02T03:04", Kind("timestamp", 0)),
        ("2024-01-02T03:04:05.1234567Z", Kind("string", 0)),  # would be truncated
        ("20240102", Kind("string", 0)),
        ("hello", Kind("string", 0)),
        ("", Kind("string", 0)),
        (dt.date(2024, 1, 2), Kind("date", 0)),
        (dt.datetime(2024, 1, 2, 3, 4, 5), Kind("timestamp", 0)),
        ({"a": 1}, Kind("record", 0)),
        ({}, Kind("record", 0)),
    ],
    ids=repr,
)
def test_rules_1_observed_type_of_a_value(value: object, kind: Kind | None) -> None:
    assert classify(value) == kind


def test_rules_1_sub_millisecond_timestamp_is_not_exact_as_epoch_millis() -> None:
    k = classify("2024-01-02T03:04:05.123456Z")
    assert k == Kind("timestamp", 0, frozenset({"long", "double"}))


def test_rules_1_date_detection_can_be_switched_off() -> None:
    off = Classifier(Options(detect_dates=False)).kind
    assert off("2024-01-02") == Kind("string", 0)
    assert off("2024-01-02T03:04:05Z") == Kind("string", 0)


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ([1, 2], Kind("long", 1)),
        ([1, 2.5], Kind("double", 1)),  # element: widest of the leaves
        ([True, "x"], Kind("string", 1)),
        ([[1], [2]], Kind("long", 2)),
        ([[[1]]], Kind("long", 3)),
        ([1, [2]], Kind("long", 2)),  # ragged: the largest depth
        ([], Kind(None, 1)),  # empty: a dimension, no element type
        ([[]], Kind(None, 2)),
        ([None], Kind(None, 1)),
        ([None, 1], Kind("long", 1)),  # nulls inside arrays are kept, not typed
        ([{"a": 1}], Kind("record", 1)),
        ([[{"a": 1}]], Kind("record", 2)),
        ([2**60 + 1, 1.5], Kind("string", 1)),  # the long is not exact as a double
        ([2**60 + 1, 1], Kind("long", 1, frozenset({"double"}))),
        (["2024-01-02", "2024-01-02T00:00:00Z"], Kind("timestamp", 1)),
        # records beside primitives: a mixed array (docs/rules.md), both parts planned
        ([{"a": 1}, 2], Kind("record", 1, frozenset(), "long")),
        ([{"a": 1}, [2, "x"]], Kind("record", 2, frozenset(), "string")),
        ([{"a": 1}, 2**60 + 1], Kind("record", 1, frozenset({"double"}), "long")),
    ],
    ids=repr,
)
def test_rules_1_arrays_dimension_and_element_type(value: list[object], kind: Kind) -> None:
    assert classify(value) == kind


def test_rules_1_unsupported_python_value_names_field_and_value() -> None:
    delta = dt.timedelta(1)
    shown = r"field 'a.b': value datetime.timedelta\(days=1\) of type timedelta"
    with pytest.raises(UnsupportedValueError, match=shown):
        observe_struct([{"a": {"b": delta}}], Options()).fields["a"].nested(0)


def test_rules_1_missing_key_and_null_count_as_null() -> None:
    obs = observe_struct([{"a": 1}, {"a": None}, {}], Options())
    assert obs.fields["a"].nulls == 2
    assert obs.fields["a"].counts == {Kind("long", 0): 1}


def test_rules_1_column_fast_path_agrees_with_value_by_value() -> None:
    values = [1, 2**62 + 1, None, -5]
    obs = observe_struct([{"a": v} for v in values], Options())
    assert [obs.fields["a"].kind_at(i) for i in range(4)] == [classify(v) for v in values]
