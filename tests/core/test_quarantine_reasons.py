"""Every quarantine reason has plain words for the faces (its key stays what data, JSON and
``reason=`` hold): a sentence where there is room, a short name where there is not."""

from __future__ import annotations

from typing import get_args

from toolkit.core.batch.quarantine import (
    REASON_NAMES,
    REASON_WORDS,
    REASONS,
    Quarantined,
    Reason,
    group_label,
    reason_name,
    reason_words,
    set_aside_line,
)
from toolkit.core.values.types import Struct


def test_every_reason_key_has_words_and_a_name() -> None:
    # a reason added to the keys without words would show as its key in every face
    assert set(get_args(Reason)) == set(REASONS)
    assert set(REASON_WORDS) == set(REASONS) == set(REASON_NAMES)


def test_the_words_and_names_are_words_not_keys() -> None:
    for key in REASONS:
        words, name = REASON_WORDS[key], REASON_NAMES[key]
        assert " " in words and " " in name and "-" not in name, key
        assert len(name) < len(words), key  # the name is what fits where words do not
    # a selector tells groups apart by their names
    assert len(set(REASON_NAMES.values())) == len(REASONS)
    assert len(set(REASON_WORDS.values())) == len(REASONS)


def test_a_key_from_another_version_shows_as_it_is() -> None:
    assert reason_words("from-a-later-version") == "from-a-later-version"
    assert reason_name("from-a-later-version") == "from-a-later-version"
    assert group_label("from-a-later-version", "f", None, None) == "from-a-later-version: f"


def test_what_was_set_aside_is_counted_by_name() -> None:
    items = [
        Quarantined({"n": "x"}, "incompatible", "n", "string", "long", 0, "..."),
        Quarantined({"n": "y"}, "incompatible", "n", "string", "long", 0, "..."),
        Quarantined("{oops", "malformed", None, None, None, 0, "..."),
    ]
    assert set_aside_line(10, Struct(), items).startswith(
        "3 of 10 records were set aside (incompatible type: 2, not valid JSON: 1); "
    )
