"""Samples recorded with a batch's arrivals (issue 14): chosen from the profile's own
samples, drifting types first, bounded so that every snapshot summary stays small."""

from __future__ import annotations

import base64
import json
import time
import zlib
from typing import Any

import pytest

from toolkit.core.batch.arrivals import (
    BATCH_SAMPLES,
    SAMPLE_WIDTH,
    SAMPLES_KEPT,
    SAMPLES_PER_DRIFT,
    Arrivals,
    sample_text,
)
from toolkit.core.batch.profile import profile
from toolkit.core.values.types import Shape

#: the most one batch's encoded arrivals may take with 5,000 drifting fields
LIMIT_5000_FIELDS = 64 * 1024


def test_the_types_that_are_not_the_main_one_are_sampled_first() -> None:
    rows: list[dict[str, Any]] = [{"price": i} for i in range(10)]
    rows += [{"price": "12.5 EUR"}, {"price": "free"}, {"price": "free"}, {"price": 2.5}]
    a = Arrivals.of(profile(rows))
    # two distinct texts of each drifting type; one of the main type, for context
    assert a.samples("price") == {
        "string": ('"12.5 EUR"', '"free"'), "double": ("2.5",), "long": ("0",)}
    assert list(a.samples("price"))[:2] == ["string", "double"]
    assert a.samples("nowhere") == {}


def test_every_kind_of_value_is_rendered_as_the_explorer_shows_a_profile() -> None:
    a = Arrivals.of(profile([
        {"x": 1}, {"x": 1}, {"x": 1}, {"x": True}, {"x": "2024-06-01"},
        {"x": "2024-06-01T08:00:00Z"}, {"x": {"k": "v"}}, {"x": [1, [2]]}, {"x": "é" * 100},
    ]))
    assert a.samples("x") == {
        "boolean": ("true",),
        "date": ('"2024-06-01"',),
        "timestamp": ('"2024-06-01T08:00:00Z"',),
        "record": ("{'k': 'v'}",),
        "long[][]": ("[1, [2]]",),
        "string": ('"' + "é" * 58 + "…",),  # cut to 60 characters, as a cell is
        "long": ("1",),  # the same value twice is sampled once
    }


def test_a_huge_text_is_cut_before_it_is_rendered() -> None:
    start = time.perf_counter()
    text = sample_text(Shape("string", 0), "x" * 50_000_000)
    assert time.perf_counter() - start < 0.5
    assert len(text) == SAMPLE_WIDTH and text.endswith("…")


def test_samples_are_bounded_per_type_and_per_batch() -> None:
    # 300 fields, each with 3 distinct values of 2 types: far more than a batch keeps
    rows = [{f"f{j}": (i if i < 3 else f"t{i}") for j in range(300)} for i in range(6)]
    a = Arrivals.of(profile(rows))
    texts = [t for per in a.sample_texts.values() for ts in per.values() for t in ts]
    assert len(texts) == BATCH_SAMPLES
    assert all(len(ts) <= SAMPLES_PER_DRIFT for per in a.sample_texts.values()
               for ts in per.values())
    # the budget goes round: every (field, type) gets one sample before any gets two
    assert {len(ts) for per in a.sample_texts.values() for ts in per.values()} == {1}


def test_a_type_new_to_the_table_counts_as_drift_when_known() -> None:
    """A field that drifted whole (longs yesterday, texts today) has the new type as its
    main one; knowing what arrived before finds it even in a wide batch."""
    day1 = {f"f{j:03d}": 1 for j in range(200)}
    day2 = [{**{f"f{j:03d}": 2 for j in range(200)}, "f150": f"v{i}"} for i in range(3)]
    before = Arrivals.of(profile([day1]))
    blind = Arrivals.of(profile(day2))
    assert blind.samples("f150") == {}  # 200 main types, budget spent on the first 100
    told = Arrivals.of(profile(day2), known=before)
    assert told.samples("f150") == {"string": ('"v0"', '"v1"')}
    assert len(told.sample_texts) == BATCH_SAMPLES - 1  # the rest still goes round


def test_a_main_type_the_table_holds_a_sample_of_is_not_sampled_again() -> None:
    """A steady table does not repeat its main types' samples in every batch."""
    day1 = Arrivals.of(profile([{"a": 1, "b": "x"}]))
    day2 = Arrivals.of(profile([{"a": 2, "b": "y"}, {"a": "two", "b": "z"}]), known=day1)
    assert day2.samples("a") == {"string": ('"two"',)}  # drift only: long is known
    assert day2.samples("b") == {}
    assert (day1 + day2).samples("a") == {"string": ('"two"',), "long": ("1",)}


def test_samples_round_trip_and_merge_latest_first() -> None:
    a = Arrivals.of(profile([{"a": 1}, {"a": 2}, {"a": "x"}]))
    b = Arrivals.of(profile([{"a": 3}, {"a": 4}, {"a": "y"}, {"a": "z"}]))
    c = Arrivals.of(profile([{"a": 5}, {"a": 6}, {"a": "w"}]))
    assert Arrivals.decode(a.encode()) == a
    assert Arrivals.decode(a.encode()).samples("a") == a.samples("a")
    assert (a + b).samples("a") == {"string": ('"y"', '"z"', '"x"'), "long": ("3", "1")}
    assert ((a + b) + c).samples("a") == (a + (b + c)).samples("a")
    assert all(len(ts) <= SAMPLES_KEPT for ts in (a + b + c).samples("a").values())
    assert (a + b).without_samples().samples("a") == {}
    assert (a + b).without_samples().arrived("a") == (a + b).arrived("a")


def old_encoding(doc: dict[str, Any]) -> str:
    """What the toolkit wrote before samples were recorded."""
    raw = json.dumps(doc, separators=(",", ":"), sort_keys=True).encode()
    return base64.b64encode(zlib.compress(raw, 9)).decode("ascii")


def test_arrivals_written_before_samples_decode_fine() -> None:
    old = old_encoding({"version": 1, "records": 3,
                        "fields": [[["a"], {"long": 2, "string": 1}, 0], [["b"], {}, 3]]})
    a = Arrivals.decode(old)
    assert a.arrived("a") == {"long": 2, "string": 1} and a.absent("b") == 3
    assert a.samples("a") == {} and a.sample_texts == {}
    # and the samples key is the only addition: an older reader's keys are all there
    new = json.loads(zlib.decompress(base64.b64decode(
        Arrivals.of(profile([{"a": 1}, {"a": "x"}])).encode())))
    assert set(new) == {"version", "records", "fields", "samples"}
    assert all(len(f) == 3 for f in new["fields"])


@pytest.mark.parametrize("samples", [
    [[5, {"long": ["1"]}]],  # no such field
    [[-1, {"long": ["1"]}]],
    [[0, {"long": [1]}]],  # not a text
    [[0, ["1"]]],  # not per type
], ids=["index", "negative", "text", "shape"])
def test_malformed_samples_are_refused(samples: Any) -> None:
    text = old_encoding({"version": 1, "records": 1, "fields": [[["a"], {"long": 1}, 0]],
                         "samples": samples})
    with pytest.raises(ValueError, match="not a record of arrivals"):
        Arrivals.decode(text)


def test_a_batch_of_5000_drifting_fields_stays_small() -> None:
    """Every field drifts (longs, and 80-character texts that do not compress): the
    samples are bounded, so the summary stays under LIMIT_5000_FIELDS."""
    rows = [
        {f"field_{j:04d}": (i * 7919 + j if i % 4 else f"{j}-{i}-" + "lorem ipsum " * 7)
         for j in range(5000)}
        for i in range(8)
    ]
    a = Arrivals.of(profile(rows))
    encoded = a.encode()
    texts = [t for per in a.sample_texts.values() for ts in per.values() for t in ts]
    assert len(texts) == BATCH_SAMPLES and all(len(t) <= SAMPLE_WIDTH for t in texts)
    assert len(encoded) < LIMIT_5000_FIELDS, len(encoded)
    # the samples cost a fraction of what the counts of 5,000 fields do
    assert len(encoded) - len(a.without_samples().encode()) < 12 * 1024
    assert Arrivals.decode(encoded) == a


def test_a_tables_panel_shows_samples_as_a_profiles_does() -> None:
    """The explorer renders the texts a table recorded as it renders a profile's values."""
    import datetime as dt

    from toolkit.iceberg.statistics import SnapshotStatistics, WrittenDataStatistics
    from toolkit.notebook.panels.explore.model import StatisticsModel

    rows: list[dict[str, Any]] = [
        {"x": 1}, {"x": 2}, {"x": 3}, {"x": 4}, {"x": "a " * 40}, {"x": {"k": "v" * 70}},
        {"x": [True]}, {"x": 2.5}, {"x": "2024-06-01"},
    ]
    p = profile(rows)
    at = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    stats = WrittenDataStatistics("db.t", 1, 9, 1, 0, (), (
        SnapshotStatistics(1, at, "append", "day1", 0, 1, 9, 0, 0, (), arrivals=Arrivals.of(p)),))
    profiled = StatisticsModel.from_profile(p).field("x")
    committed = StatisticsModel.from_statistics(stats).field("x")
    shown = {t.type: t.sample_texts for t in profiled.types}
    table = {t.type: t.sample_texts for t in committed.types}
    assert set(table) == set(shown)
    for t, texts in table.items():
        assert texts and set(texts) <= set(shown[t]), t
