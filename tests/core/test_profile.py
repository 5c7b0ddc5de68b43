"""Profiles: per field path, which types arrived, how often and when; they merge exactly."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import toolkit
from toolkit.core.values.types import Shape

LONG, DOUBLE, STRING = Shape("long", 0), Shape("double", 0), Shape("string", 0)


def test_profile_counts_types_dimensions_nulls_and_samples() -> None:
    p = toolkit.profile([{"a": 1}, {"a": "x"}, {"a": [1, 2]}, {"a": None}, {"b": 2}])
    a = p.fields[("a",)]
    assert a.counts == {LONG: 1, STRING: 1, Shape("long", 1): 1}
    assert a.nulls == 2  # one null, one missing
    assert a.samples[LONG] == (1,) and a.samples[STRING] == ("x",)
    assert a.drifted
    assert p.records == 5


def test_profile_nested_paths_count_nulls_against_their_enclosing_records() -> None:
    p = toolkit.profile([{"d": {"x": 1}}, {"d": [{"x": "s"}, {"y": 1}]}, {"d": None}])
    assert p.fields[("d",)].records_inside == 3
    assert p.fields[("d", "x")].counts == {LONG: 1, STRING: 1}
    assert p.fields[("d", "x")].nulls == 1
    assert p.fields[("d", "y")].nulls == 2


def test_profile_first_and_last_batch_and_drift_over_batches() -> None:
    p = toolkit.profile([{"a": 1}], batch=0) + toolkit.profile([{"b": 1}], batch=1) + \
        toolkit.profile([{"a": 2.5}], batch=2)
    a = p.fields[("a",)]
    assert (a.first_batch, a.last_batch) == (0, 2)
    assert a.by_batch == {0: {LONG: 1}, 2: {DOUBLE: 1}}
    assert a.nulls == 1  # absent from batch 1's record


def test_profile_of_a_simulation_is_the_merge_of_its_batches() -> None:
    batches = [[{"a": 1, "d": {"x": 1}}], [{"a": "x"}, {"d": [{"x": 2.5}]}]]
    merged = toolkit.profile(batches[0], batch=0) + toolkit.profile(batches[1], batch=1)
    assert toolkit.simulate(batches).profile == merged


def test_profile_prints_a_table() -> None:
    text = str(toolkit.profile([{"my_field": 1}, {"my_field": "x"}]))
    assert "my_field  long" in text and "my_field  string" in text and "50%" in text


records = st.lists(
    st.dictionaries(
        st.sampled_from(["a", "b", "d"]),
        st.one_of(
            st.none(), st.integers(), st.text(max_size=3), st.floats(allow_nan=False),
            st.lists(st.integers(), max_size=2),
            st.dictionaries(st.sampled_from(["x", "y"]), st.integers() | st.text(max_size=2)),
        ),
    ),
    max_size=6,
)


@settings(max_examples=60, deadline=None)
@given(records, records, records)
def test_profile_merge_is_exact_and_associative(
    a: list[dict[str, Any]], b: list[dict[str, Any]], c: list[dict[str, Any]]
) -> None:
    pa, pb, pc = (toolkit.profile(x) for x in (a, b, c))
    assert (pa + pb) + pc == pa + (pb + pc)
    whole = toolkit.profile(a + b + c)
    parts = pa + pb + pc
    assert parts.records == whole.records
    for path, stats in whole.fields.items():
        assert parts.fields[path].counts == stats.counts
        assert parts.fields[path].nulls == stats.nulls
