"""Issue 15: per field, the timestamp formats and epoch units seen (docs/rules.md,
*Timestamp formats and epoch units*), in the profile, the CLI and the explorer."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

import toolkit
from toolkit.cli import cli
from toolkit.core.batch.profile import FieldStats, Profile, profile
from toolkit.core.values.conversions import Conversions, epoch_unit_of
from toolkit.core.values.timestamps import EPOCH_WINDOW, epoch_label, tally
from toolkit.core.values.types import Kind, Shape
from toolkit.notebook.panels.explore.html import field_table_html
from toolkit.notebook.panels.explore.model import StatisticsModel

UTC = dt.UTC
SECONDS = 1_717_315_254  # 2024-06-02T08:00:54Z


def report_of(values: list[Any], key: str = "created_at") -> Any:
    return profile([{key: v} for v in values]).timestamps(key)


def test_iso_texts_are_counted_by_format() -> None:
    r = report_of([
        "2024-06-01T08:00:00Z", "2024-06-01T08:00:00.5+02:00", "2024-06-01 08:00-0530",
        "2024-06-01T08:00+05", "2024-06-01T08:00:00", "2024-06-01 08:00", "2024-06-01",
    ])
    assert dict(r.formats) == {"iso_offset": 4, "iso_local": 2, "iso_date": 1}
    assert r.mixed_formats and not r.units
    assert r.sentence() == (
        "created_at: 4 values are ISO date-times with an offset, 2 ISO date-times without an"
        " offset (read as UTC) and 1 ISO date: mixed formats"
    )


def test_a_column_of_texts_counts_as_each_text_would() -> None:
    """Columns of texts are counted all at once, leaves of arrays one by one: alike."""
    texts = ["2024-06-01T08:00:00Z", "2024-06-01T08:00:00.5+02:00", "2024-06-01 08:00-0530",
             "2024-06-01T08:00-05", "2024-06-01T08:00:00.123456", "2024-06-01 08:00",
             "2024-06-01", "2024-06-01T08:00:00-00:00", "2024-06-01T08:00:00.1Z"]
    scalars = tally(texts, [Kind("timestamp", 0)] * len(texts))
    assert scalars == tally([[t] for t in texts], [Kind("timestamp", 1)] * len(texts))
    assert scalars == {"iso_offset": 6, "iso_local": 2, "iso_date": 1}


def test_typed_datetimes_are_counted_aware_or_naive() -> None:
    r = report_of([dt.datetime(2024, 6, 1, tzinfo=UTC), dt.datetime(2024, 6, 1),
                   dt.datetime(2024, 6, 2), dt.date(2024, 6, 1)])
    assert dict(r.formats) == {"datetime_naive": 2, "datetime_aware": 1, "date_value": 1}


def test_one_format_is_not_mixed() -> None:
    r = report_of(["2024-06-01T08:00:00Z", "2024-06-02T08:00:00Z", None])
    assert not r.mixed
    assert r.sentence() == "created_at: 2 values are ISO date-times with an offset"


def test_mixed_epoch_units_are_one_sentence() -> None:
    """The issue's example: a long column holding milliseconds and seconds."""
    values = [SECONDS * 1000 + i for i in range(1200)] + [SECONDS + i for i in range(30)]
    r = report_of(values)
    assert dict(r.units) == {"ms": 1200, "s": 30}
    assert r.mixed_units
    assert r.sentence() == (
        "created_at: 1,200 whole numbers look like epoch milliseconds and 30 like epoch"
        " seconds: mixed units"
    )


def test_every_unit_is_recognised() -> None:
    r = report_of([SECONDS, SECONDS * 10**3, SECONDS * 10**6, SECONDS * 10**9 + 7])
    assert dict(r.units) == {"s": 1, "ms": 1, "us": 1, "ns": 1}


def test_timestamps_beside_one_unit_of_longs() -> None:
    r = report_of(["2024-06-01T08:00:00Z", SECONDS, 7])
    assert dict(r.units) == {"s": 1} and r.other_longs == 1 and not r.mixed
    assert r.sentence() == (
        "created_at: 1 value is ISO date-time with an offset; 1 whole number looks like epoch"
        " seconds and 1 like no epoch time of 2000-2100"
    )


def test_small_counters_are_never_epoch_times() -> None:
    """Even in a field named like a time: 0..100000 lies before 2000 in every unit."""
    r = report_of(list(range(100_000)), key="updated_at")
    assert r.time_field and not r.units and r.empty and r.sentence() is None


def test_ids_in_the_billions_are_not_epoch_seconds_unless_the_field_is_a_time() -> None:
    """The magnitude alone would read 1.7e9 as 2024 in seconds: the field must also be a
    time field (timestamps or dates in it, or a name that says time)."""
    ids = [SECONDS + i for i in range(50)] + [SECONDS * 1000]
    assert report_of(ids, key="user_id").sentence() is None
    assert report_of(ids, key="user_id").units == {}
    assert dict(report_of(ids, key="createdAt").units) == {"s": 50, "ms": 1}
    assert dict(report_of(ids, key="event_ts").units) == {"s": 50, "ms": 1}


def test_leaves_of_arrays_are_counted() -> None:
    r = report_of([[SECONDS, SECONDS * 1000], ["2024-06-01T08:00:00Z", "2024-06-01"], [[SECONDS]]])
    assert dict(r.units) == {"s": 2, "ms": 1}
    assert dict(r.formats) == {"iso_offset": 1, "iso_date": 1}


def test_without_date_detection_texts_are_no_times() -> None:
    p = profile([{"t": "2024-06-01T08:00:00Z"}], options=toolkit.make_options(detect_dates=False))
    assert p.timestamps("t").empty


def test_nested_fields_have_reports() -> None:
    p = profile([{"r": {"at": SECONDS}}, {"r": {"at": SECONDS * 1000}}])
    assert p.timestamps(("r", "at")).mixed_units
    assert [r.path for r in p.timestamp_reports(mixed_only=True)] == [("r", "at")]


#: around 2000-01-01 and 2100-01-01 in each unit, and anywhere in 64 bits
_AROUND_WINDOW = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    *(st.integers(946_684_800 * per - 10**3, 946_684_800 * per + 10**3)
      for per in (1, 10**3, 10**6, 10**9)),
    *(st.integers(4_102_444_800 * per - 10**3, 4_102_444_800 * per + 10**3)
      for per in (1, 10**3, 10**6, 10**9)),
    st.integers(10**8, 10**19 - 1),
)


@given(_AROUND_WINDOW)
def test_epoch_label_reuses_the_conversion_rule(v: int) -> None:
    """The unit is the one long_timestamp_unit="auto" converts with, and the value counts
    as an epoch time exactly when that conversion lands in 2000-2100."""
    label = epoch_label(v)
    floor = v - v % 1000 if epoch_unit_of(v) == "ns" else v  # ns: whole microseconds
    instant = Conversions(long_timestamp_unit="auto").long_to_timestamp(floor)
    inside = isinstance(instant, dt.datetime) and EPOCH_WINDOW[0] <= instant < EPOCH_WINDOW[1]
    assert (label != "other_long") == inside
    if inside:
        assert label == f"epoch_{epoch_unit_of(v)}"


@given(st.lists(_AROUND_WINDOW, max_size=30))
def test_a_column_of_whole_numbers_counts_as_each_value_would(values: list[int]) -> None:
    """The profile counts a column with a sort (toolkit.core.values.timestamps._count_longs): the
    same counts as labelling each value with the conversion's rule."""
    want: dict[str, int] = {}
    for v in values:
        want[epoch_label(v)] = want.get(epoch_label(v), 0) + 1
    kinds = [Kind("long", 0)] * len(values)
    assert tally(values, kinds) == want
    assert tally([*values, None], [*kinds, None], uniform=Kind("long", 0)) == want
    # one by one, as leaves of arrays
    assert tally([[v] for v in values], [Kind("long", 1)] * len(values)) == want


def test_reports_merge_like_profiles() -> None:
    a = [{"t": SECONDS}, {"t": "2024-06-01T08:00:00Z"}]
    b = [{"t": SECONDS * 1000}, {"t": "2024-06-01T08:00:00"}]
    merged = (profile(a) + profile(b, batch=1)).timestamps("t")
    whole = profile(a + b).timestamps("t")
    assert (dict(merged.formats), dict(merged.units)) == (dict(whole.formats), dict(whole.units))
    assert merged.mixed_units and merged.mixed_formats


def test_a_profile_without_counts_says_so_and_never_passes_a_part_for_the_whole() -> None:
    """The JVM tally of JSON lines gathers no formats: its stats have none (None)."""
    shape = Shape("long", 0)
    jvm = FieldStats(("t",), {shape: 1}, 0, 0, {})
    assert not jvm.timestamps.gathered and jvm.timestamps.sentence() is None
    python = profile([{"t": SECONDS}, {"t": SECONDS * 1000}])
    merged = python + Profile({("t",): jvm}, 1)
    assert not merged.timestamps("t").gathered
    # and the counts take no part in a profile's equality (the JVM's equals Python's)
    assert replace_temporal(python) == python


def replace_temporal(p: Profile) -> Profile:
    from dataclasses import replace
    return Profile({k: replace(s, temporal=None) for k, s in p.fields.items()}, p.records)


def test_the_public_profile_exposes_it() -> None:
    p = toolkit.profile([{"created_at": SECONDS}, {"created_at": SECONDS * 1000}])
    assert p.timestamps("created_at").mixed_units
    assert p.fields[("created_at",)].timestamps.units == {"s": 1, "ms": 1}


def test_cli_profile_shows_mixed_units_in_text_and_json(tmp_path: Path) -> None:
    lines = [{"created_at": "2024-06-01T08:03:29Z", "n": 5}, {"created_at": SECONDS, "n": 6},
             {"created_at": SECONDS * 1000, "n": 7}]
    source = tmp_path / "events.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in lines))
    text = CliRunner().invoke(cli, ["profile", str(source)], catch_exceptions=False).output
    assert "Timestamp formats and epoch units:" in text
    assert ("created_at: 1 value is ISO date-time with an offset; 1 whole number looks like"
            " epoch seconds and 1 like epoch milliseconds: mixed units") in text
    out = CliRunner().invoke(cli, ["profile", str(source), "--json"], catch_exceptions=False)
    fields = {tuple(f["path"]): f for f in json.loads(out.output)["fields"]}
    times = fields[("created_at",)]["timestamps"]
    assert times["epoch_units"] == {"s": 1, "ms": 1} and times["mixed_units"] is True
    assert times["formats"] == {"iso_offset": 1} and times["mixed_formats"] is False
    assert "timestamps" not in fields[("n",)]  # small numbers: no times


def test_explorer_shows_a_line_for_mixed_fields_only() -> None:
    p = profile([{"ts": SECONDS, "ok": "2024-06-01", "<b>at": SECONDS},
                 {"ts": SECONDS * 1000, "ok": "2024-06-02", "<b>at": SECONDS * 10**6}])
    m = StatisticsModel.from_profile(p)
    assert m.field("ts").timestamps == (
        "ts: 1 whole number looks like epoch seconds and 1 like epoch milliseconds: mixed units"
    )
    assert m.field("ok").timestamps is None
    html = field_table_html(m.page(0))
    assert "like epoch milliseconds: mixed units" in html
    assert "&lt;b&gt;at: 1 whole number" in html and "<b>at" not in html
