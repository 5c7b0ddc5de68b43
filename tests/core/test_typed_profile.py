"""The value classes of typed columns (toolkit.core.batch.typed_profile): every value of a class
has the kind the core classifier gives the class's representative, and the projection
routes each class where the core router routes its values."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolkit.core.batch.observe import Classifier
from toolkit.core.batch.options import Options
from toolkit.core.batch.typed_profile import (
    Landing,
    Target,
    class_kinds,
    projection,
    typed_summary,
    value_classes,
)
from toolkit.core.values.conversions import LOSSY, MICROS_PER, long_to_double
from toolkit.core.values.scalars import Int
from toolkit.core.values.types import EVOLVED_DOC_PREFIX, Column, Kind, ListOf, Struct

ALL = 1  # a count: the class holds values


def _kind_of_class(source: str, cls: str, options: Options) -> Kind:
    kinds = class_kinds(source, {cls: ALL}, options)
    assert kinds is not None
    return kinds[cls]


@given(st.integers(-(2**63), 2**63 - 1))
def test_a_long_is_of_the_kind_of_its_class(v: int) -> None:
    opts = Options()
    cls = "exact" if long_to_double(v) is not LOSSY else "lossy"
    assert Classifier(opts).kind(v) == _kind_of_class("long", cls, opts)


@given(st.integers(-(2**31), 2**31 - 1), st.sampled_from(["byte", "short", "int"]))
def test_narrow_ints_are_longs_under_the_automatic_policy(v: int, source: str) -> None:
    opts = Options()
    assert Classifier(opts).kind(Int(v)) == _kind_of_class(source, "all", opts) == Kind("long", 0)


@pytest.mark.parametrize("unit", ["s", "ms"])
@given(st.datetimes(dt.datetime(1, 1, 2), dt.datetime(9999, 12, 30)))
def test_a_timestamp_is_of_the_kind_of_its_class(unit: str, v: dt.datetime) -> None:
    opts = Options(timestamp_unit=unit)  # type: ignore[arg-type]
    v = v.replace(tzinfo=dt.UTC)
    cls = "whole" if v.microsecond % MICROS_PER[unit] == 0 else "fraction"
    assert Classifier(opts).kind(v) == _kind_of_class("timestamp", cls, opts)


@given(st.one_of(st.dates().map(dt.date.isoformat), st.text(max_size=12)))
def test_a_text_that_is_an_iso_date_is_a_date_and_a_ten_character_other_is_a_string(
    v: str,
) -> None:
    opts = Options()
    kind = Classifier(opts).kind(v)
    if kind == Kind("date", 0):
        assert kind == _kind_of_class("string", "date", opts)
    elif len(v) == 10 or not (v[:4].isdigit() and v[4:5] == "-"):
        assert kind == _kind_of_class("string", "text", opts)


def test_a_class_typed_value_by_value_sends_the_batch_to_python() -> None:
    assert class_kinds("string", {"text": 3, "other": 1}, Options()) is None
    assert class_kinds("string", {"text": 3, "other": 0}, Options()) == {"text": Kind("string", 0)}
    assert value_classes("string", Options(detect_dates=False)) == ("text",)


def test_the_summary_counts_each_kind_and_keeps_columns_of_nulls() -> None:
    kinds = {"t": {"text": Kind("string", 0), "date": Kind("date", 0)}, "n": {}}
    s = typed_summary(kinds, {"t": {"text": 2, "date": 1}, "n": {"all": 0}}, 5)
    assert s.rows == 5 and list(s.fields) == ["n", "t"]
    assert dict(s.fields["t"].counts) == {Kind("string", 0): 2, Kind("date", 0): 1}
    assert dict(s.fields["n"].counts) == {}


def _evolved(cid: int, name: str, t: object, family: str) -> Column:
    return Column(cid, name, t, doc=f"{EVOLVED_DOC_PREFIX}{family}")  # type: ignore[arg-type]


def test_each_class_lands_in_every_column_of_its_family_that_receives_it() -> None:
    schema = Struct((
        Column(1, "v", "double"),
        _evolved(2, "v_string", "string", "v"),
        Column(3, "w", ListOf(4, "long")),
        Column(5, "other", "long"),
    ))
    kinds = {
        "v": {"exact": Kind("long", 0), "lossy": Kind("long", 0, frozenset({"double"}))},
        "w": {"all": Kind("long", 0)},
    }
    assert projection(schema, kinds, Options()) == (
        # a long a double would round is written to the string column only (RULES 2)
        Target("v", (Landing("v", "exact", "long", "double"),)),
        Target("v_string", (Landing("v", "exact", "long", "string"),
                            Landing("v", "lossy", "long", "string"))),
        Target("w", (Landing("w", "all", "long", "long", wrap=1),)),  # RULES 3: 5 -> [5]
        Target("other"),
    )


def test_a_value_headed_for_a_list_of_lists_is_left_to_the_python_router() -> None:
    schema = Struct((Column(1, "w", ListOf(2, ListOf(3, "long"))),))
    assert projection(schema, {"w": {"all": Kind("long", 0)}}, Options()) is None
