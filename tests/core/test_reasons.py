"""Why a plan changes a table, in plain words (issue 14): each reason a sentence naming the
field and its types in words, then the RULES section that decided it as a footnote; one
parser reads it back, and reads the form older versions stored the same way."""

from __future__ import annotations

import pytest

import toolkit
from toolkit.core.evolution.reasons import RuleReason, because, read_reason, reason_text
from toolkit.core.policies import UPSOLVER, WIDEN, decided_by_text, policy_of_reasons
from toolkit.core.values.types import Shape
from toolkit.core.values.wording import a_shape, counted, ordinal, plural, shape_words


def reasons(batches: list[list[dict[str, object]]], **options: object) -> list[list[str]]:
    sim = toolkit.simulate(batches, **options)
    return [[c.reason for c in (*p.changes, *p.retypes, *p.optionals)] for p in sim.plans]


@pytest.mark.parametrize(
    ("batches", "expected"),
    [
        ([[{"size": [[[1]]]}]], [[
            "The first batch had `size` as a list of lists of lists of longs (RULES 3.2)",
        ]]),
        ([[{"n": 4}, {"n": 2.5}]], [[
            "The first batch had `n` as a double and a long; the column `n` holds the widest "
            "of them, doubles (RULES 3.2)",
        ]]),
        ([[{"t": 5}, {"t": "2024-05-01T10:00:00Z"}]], [[
            "The first batch had `t` as a long and a timestamp; the column `t` holds the "
            "widest of them, longs (RULES 3.2)",
            "The first batch also had `t` as a timestamp, from record 2, which gets its own "
            "column (RULES 3.2)",
        ]]),
        ([[{"e": []}]], [[
            "The first batch had `e` only as an empty list, with no value to type: the column "
            "`e` holds lists of strings (RULES 3.2)",
        ]]),
        ([[{"n": True}], [{"n": "2024-05-01"}]], [
            ["The first batch had `n` as a boolean (RULES 3.2)"],
            ["This batch had `n` as a date, which none of its columns holds: `n` holds "
             "booleans (RULES 3.3)",
             "`n` now has booleans and dates: a column of strings, their common denominator, "
             "holds them all (RULES 3.3)"],
        ]),
    ],
    ids=["nested-lists", "widest-type", "long-and-timestamp", "empty-list", "later-batch"],
)
def test_the_upsolver_policy_says_why_in_sentences(
    batches: list[list[dict[str, object]]], expected: list[list[str]]
) -> None:
    assert reasons(batches) == expected


def test_the_widen_policy_says_why_in_sentences() -> None:
    got = reasons([[{"n": 1, "s": "a"}], [{"n": "x"}]], policy="widen")
    assert got == [
        ["This batch brought the new key `n` as a long (RULES 5)",
         "This batch brought the new key `s` as a string (RULES 5)"],
        ["This batch had values of `n` that only a string column holds (RULES 5)"],
    ]


def test_no_reason_shows_type_notation_or_leads_with_its_rule() -> None:
    batches = [[{"c": [[[1]]], "d": {"x": 1}, "m": [1]}], [{"c": "a", "d": [{"y": 2}], "m": 1.5}]]
    for plan in reasons(batches):
        for r in plan:
            assert not r.startswith("RULES") and r.endswith(")")
            assert "[]" not in r and "::" not in r, r


@pytest.mark.parametrize(
    ("stored", "sentence", "section"),
    [
        ("The first batch had `a` as a long (RULES 3.2)", "The first batch had `a` as a long",
         "3.2"),
        ("RULES 3.2: first batch saw long[][][]", "first batch saw long[][][]", "3.2"),
        ("RULES 5: values of n arrived that only string holds",
         "values of n arrived that only string holds", "5"),
        ("undo of lineage entry 3", "undo of lineage entry 3", None),
        ("", "", None),
    ],
    ids=["today", "older-upsolver", "older-widen", "no-rule", "empty"],
)
def test_one_parser_reads_every_stored_reason(
    stored: str, sentence: str, section: str | None
) -> None:
    assert read_reason(stored) == RuleReason(sentence, section)
    assert reason_text(stored) == (sentence if section is None
                                   else f"{sentence} (RULES {section})")
    assert reason_text(reason_text(stored)) == reason_text(stored)  # today's form is stable


def test_who_decided_is_named_by_the_policy_word() -> None:
    assert because("x", "5") == "x (RULES 5)"
    assert policy_of_reasons([because("x", "3.3"), None]) == UPSOLVER.rule == "RULES 3"
    assert policy_of_reasons(["RULES 5: old", because("x", "3.2")]) == WIDEN.rule == "RULES 5"
    assert decided_by_text(UPSOLVER.rule) == "the upsolver policy (RULES 3)"
    assert decided_by_text(WIDEN.rule) == "the widen policy (RULES 5)"
    assert decided_by_text("cleanup job") == "cleanup job"


@pytest.mark.parametrize(
    ("got", "expected"),
    [
        (counted(1, "batch"), "1 batch"), (counted(2, "batch"), "2 batches"),
        (counted(5000, "column"), "5,000 columns"), (counted(0, "record"), "0 records"),
        (counted(3, "entry"), "3 entries"), (plural("micro-batch"), "micro-batches"),
        (ordinal(1), "1st"), (ordinal(12), "12th"), (ordinal(22), "22nd"),
        (a_shape(Shape("int", 0)), "an int"), (a_shape(Shape("record", 2)),
                                               "a list of lists of records"),
        (shape_words(Shape(None, 2)), "empty list of lists"),
        (shape_words(Shape("record", 1, "string"), many=True),
         "lists of mixes of records and strings"),
    ],
)
def test_words_for_counts_and_types(got: str, expected: str) -> None:
    assert got == expected


def test_a_declared_type_outside_the_lattice_is_named_in_a_reason() -> None:
    """A table made elsewhere: its int, decimal and map columns are named by their types,
    where the reasons said they held an "empty value"."""
    from pyiceberg.schema import Schema
    from pyiceberg.types import DecimalType, IntegerType, MapType, NestedField, StringType

    schema = Schema(
        NestedField(1, "d", DecimalType(10, 2)), NestedField(2, "i", IntegerType()),
        NestedField(3, "m", MapType(4, StringType(), 5, IntegerType(), value_required=False)),
    )
    sim = toolkit.simulate([[{"d": 1.5, "i": 3, "m": {"k": "x"}}]], schema)
    said = [c.reason for c in sim.plans[0].changes]
    assert any("`d` holds decimal(10, 2) values" in r for r in said), said
    assert any("`i` holds int values" in r for r in said), said
    assert any("`m` holds map<string, int> values" in r for r in said), said
    assert not any("empty" in r for r in said), said
