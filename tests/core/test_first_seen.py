"""Where drift starts: per field and type, the first and last record it arrived at, within
a batch and across batches (issue #28; docs/rules.md, *Where drift starts*)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolkit
from toolkit.core.batch.profile import profile
from toolkit.core.values.jsonlines import read_lines


def orders(n: int, shipping_from: int) -> list[dict[str, object]]:
    """An order feed whose ``shipping`` appears (as a record) from record ``shipping_from``."""
    return [
        {"id": i, **({"shipping": {"zip": "12345"}} if i >= shipping_from else {})}
        for i in range(1, n + 1)
    ]


def test_first_seen_numbers_records_from_one_across_batches_in_order() -> None:
    first = [{"price": 1}] * 1_200 + [{"price": "n/a"}]
    second = [{"price": 2.5}, {"price": 3}]
    p = toolkit.profile(first) + toolkit.profile(second, batch=1)
    assert p.first_seen("price") == {"long": 1, "string": 1_201, "double": 1_202}
    assert p.last_seen("price") == {"long": 1_203, "string": 1_201, "double": 1_202}
    # within a batch, counted from 1 in that batch
    assert p.first_seen("price", batch=1) == {"double": 1, "long": 2}
    assert p.last_seen("price", batch=0) == {"long": 1_200, "string": 1_201}


def test_simulation_profile_numbers_records_across_its_batches() -> None:
    run = toolkit.simulate([orders(1_000, 2_000), orders(2_000, 1_501)])
    assert run.profile.first_seen("shipping") == {"record": 2_501}
    assert run.profile.first_seen("shipping", batch=1) == {"record": 1_501}
    assert run.profile.first_seen(("shipping", "zip")) == {"string": 2_501}
    stats = run.profile.fields[("shipping",)]
    assert (stats.first_batch, stats.nulls) == (1, 2_500)


def test_a_nested_value_is_numbered_by_its_top_level_record() -> None:
    p = profile([
        {"a": {"b": 1}},
        {"a": None},
        {"a": [{"b": "x"}, {"b": 2}]},
        {"a": {"c": True}},
        {"a": [[{"b": 2.5}]]},
    ])
    assert p.first_seen(("a", "b")) == {"long": 1, "string": 3, "double": 5}
    assert p.last_seen(("a", "b")) == {"long": 3, "string": 3, "double": 5}
    assert p.first_seen(("a", "c")) == {"boolean": 4}
    assert p.first_seen("a") == {"record": 1, "record[]": 3, "record[][]": 5}


def test_a_line_set_aside_is_no_record_in_any_report(tmp_path: object) -> None:
    # docs/rules.md, Record numbers: the profile, the plan and simulate number the same
    # record alike (it was "record 3" in the profile, "record 2" in the plan); the
    # quarantine names the line set aside by its line
    from pathlib import Path

    day1, day2 = Path(str(tmp_path)) / "day1.jsonl", Path(str(tmp_path)) / "day2.jsonl"
    day1.write_text('{"n": 1}\n')
    day2.write_text('{"n": 2}\n{"n": \n{"n": "two", "shipping": {"zip": "1"}}\n')
    p = profile(read_lines(day2))
    assert p.lines_set_aside == 1
    assert p.first_seen("n") == {"long": 1, "string": 2}
    assert p.first_seen("shipping") == {"record": 2}
    assert p.drift_sentences() == ["`n` became a string at record 2"]

    sim = toolkit.simulate([day1, day2])
    assert "Batch 2 had `shipping` as a record, from record 2 " in str(sim.plans[1])
    assert sim.profile.first_seen("n", batch=1) == p.first_seen("n")
    assert [q.detail[:7] for q in sim.quarantined] == ["line 2:"]


def test_drift_is_told_where_it_starts() -> None:
    p = toolkit.profile([{"price": 1.5}] * 1_200 + [{"price": "free"}] * 3)
    assert p.drift_sentences() == ["`price` became a string at record 1,201"]
    two = p + toolkit.profile([{"price": True}], batch=1)
    assert two.drift_sentences()[-1] == (
        "`price` became a boolean at record 1,204 (record 1 of batch 2)"
    )
    assert "1,201-1,203" in str(p)  # the profile's table: first-last record per type


def test_unknown_field_is_named() -> None:
    with pytest.raises(KeyError, match="nope"):
        profile([{"a": 1}]).first_seen("nope")


values = st.one_of(st.none(), st.integers(-5, 5), st.text(max_size=2), st.booleans(),
                   st.builds(lambda v: {"v": v}, st.integers(0, 3)))
batch = st.lists(st.dictionaries(st.sampled_from("ab"), values, max_size=2), max_size=6)


def expected_firsts(
    batches: list[list[dict[str, object]]], key: str, inner: str | None = None
) -> dict[str, int]:
    """The first record of each type of top-level ``key`` (or of ``key.inner`` inside a
    record), one record at a time."""
    out: dict[str, int] = {}
    n = 0
    for b in batches:
        for r in b:
            n += 1
            v = r.get(key)
            if inner is not None:
                v = v.get(inner) if isinstance(v, dict) else None
            if v is not None:
                name = str(next(iter(profile([{key: v}]).fields[(key,)].counts)))
                out.setdefault(name, n)
    return out


@given(st.lists(batch, min_size=1, max_size=4))
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
def test_first_seen_is_the_first_record_of_each_type_however_profiles_are_merged(
    batches: list[list[dict[str, object]]],
) -> None:
    parts = [profile(b, batch=i) for i, b in enumerate(batches)]
    left = parts[0]
    for part in parts[1:]:
        left = left + part
    right = parts[-1]
    for part in reversed(parts[:-1]):
        right = part + right
    assert left == right and left.starts == right.starts  # merging stays associative
    for key in "ab":
        if (key,) in left.fields:
            assert left.first_seen(key) == expected_firsts(batches, key)
        if (key, "v") in left.fields:  # nested in records that sit beside other types
            assert left.first_seen((key, "v")) == expected_firsts(batches, key, "v")


def test_a_plan_says_which_batch_had_a_new_field_and_from_which_record() -> None:
    run = toolkit.simulate([orders(1_000, 2_000), orders(2_000, 1_501)])
    assert [str(r) for r in run.plans[1].reasons] == [
        "Batch 2 had `shipping` as a record, from record 1,501 (RULES 3.2)"]


def test_a_first_batch_names_the_record_a_later_type_starts_at() -> None:
    batch = [{"n": 1}] * 1_200 + [{"n": "2024-05-01T10:00:00Z"}]
    (first,) = toolkit.simulate([batch]).plans
    assert [str(r) for r in first.reasons][-1] == (
        "The first batch also had `n` as a timestamp, from record 1,201, which gets its own "
        "column (RULES 3.2)")


def test_the_explorer_says_where_a_field_changed_type() -> None:
    from toolkit.notebook.panels.explore.html import field_table_html
    from toolkit.notebook.panels.explore.model import StatisticsModel

    p = toolkit.profile([{"price": 1}] * 1_200 + [{"price": "n/a"}]) + toolkit.profile(
        orders(2_000, 1_501), batch=1)
    row = StatisticsModel.from_profile(p).field("price")
    assert row.drift_starts == ("`price` became a string at record 1,201 (batch 1)",)
    assert (row.first_batch, row.first_record, row.last_batch, row.last_record) == (
        "1", 1, "1", 1_201)
    shipping = StatisticsModel.from_profile(p).field("shipping")
    assert (shipping.first_batch, shipping.first_record) == ("2", 1_501)
    (b2,) = shipping.by_batch
    assert b2.records_text("record") == "records 1,501-2,000"
    html = field_table_html(StatisticsModel.from_profile(p).page(1, 50))
    assert "became a string at record 1,201 (batch 1)" in html
    assert "2 (record 1,501)" in html
