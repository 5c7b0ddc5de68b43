"""toolkit.core.values.wording is the one place that joins words into a list and turns a value
into a cell's text: timestamps' sentences, the options' accepted values, the samples
ingest records and the notebook's cells all read through it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolkit.core.batch.arrivals import SAMPLE_WIDTH, sample_text
from toolkit.core.batch.options import option_doc
from toolkit.core.values import wording
from toolkit.core.values.timestamps import TimestampReport
from toolkit.core.values.types import Shape
from toolkit.core.values.wording import and_join, clip, or_join, value_text


@pytest.mark.parametrize(("words", "anded", "ored"), [
    ([], "", ""),
    (["a"], "a", "a"),
    (["a", "b"], "a and b", "a or b"),
    (["a", "b", "c"], "a, b and c", "a, b or c"),
])
def test_lists_of_words(words: list[str], anded: str, ored: str) -> None:
    assert and_join(words) == anded
    assert or_join(iter(words)) == ored  # any iterable, read once


def test_the_sentences_that_join_through_wording() -> None:
    report = TimestampReport(
        ("t",), {"iso_offset": 3, "iso_local": 2, "iso_date": 1}, {"s": 2, "ms": 1}, 4,
        time_field=True,
    )
    assert report.sentence() == (
        "t: 3 values are ISO date-times with an offset, 2 ISO date-times without an offset"
        " (read as UTC) and 1 ISO date; 2 whole numbers look like epoch seconds, 1 like epoch"
        " milliseconds and 4 like no epoch time of 2000-2100: mixed formats and units"
    )
    one = TimestampReport(("t",), {"iso_offset": 1}, time_field=True)
    assert one.sentence() == "t: 1 value is ISO date-time with an offset"
    assert option_doc("lattice").accepted == "Lattice, 'upsolver' or 'strict'"


# a string whose JSON text escapes many characters (\" \\ \n \u0000) around the cut
TRICKY = ['"\\\n\x00é😀' * 30, "x" * 59 + '"', "x" * 60 + "\n", "é" * 100, "", "a" * 61]


@pytest.mark.parametrize("width", [1, 2, 3, 10, 58, 59, 60, 61, 62, 200])
@pytest.mark.parametrize("text", TRICKY, ids=range(len(TRICKY)))
def test_a_long_text_cut_before_encoding_shows_what_its_whole_json_would(
    text: str, width: int
) -> None:
    assert value_text(text, width) == clip(json.dumps(text, ensure_ascii=False), width)


def test_a_huge_text_is_not_encoded_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    encoded: list[int] = []
    real = json.dumps

    def dumps(value: object, **kwargs: Any) -> str:
        encoded.append(len(value) if isinstance(value, str) else -1)
        return real(value, **kwargs)

    monkeypatch.setattr(json, "dumps", dumps)
    assert value_text("x" * 5_000_000) == '"' + "x" * 58 + "…"
    assert encoded == [wording.VALUE_WIDTH]  # what a cell can show, not 5 MB


def test_a_sample_is_a_value_as_a_cell_shows_it() -> None:
    for value in ("x" * 80, 7, 2.5, True, None, "2024-06-01", {"a": [1]}):
        assert sample_text(Shape("string", 0), value) == value_text(value, SAMPLE_WIDTH)
    # records and arrays arrive as the profile's repr texts, clipped and not quoted
    assert sample_text(Shape("long", 1), "[" + "1, " * 40 + "1]") == clip(
        "[" + "1, " * 40 + "1]", SAMPLE_WIDTH)
    assert SAMPLE_WIDTH == wording.VALUE_WIDTH
