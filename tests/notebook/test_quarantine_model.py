"""The quarantine inspector's view-model (toolkit.notebook.panels.quarantine.model) and its HTML,
over a real quarantine table in a real SQLite catalog."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest
from pyiceberg.catalog import Catalog

import toolkit
import toolkit.notebook.panels.quarantine.model as model_module
from toolkit.core.batch.quarantine import Quarantine, Quarantined
from toolkit.iceberg import catalog
from toolkit.iceberg.quarantine import append_quarantined, quarantine
from toolkit.notebook.panels.quarantine.html import groups_html, samples_html
from toolkit.notebook.panels.quarantine.model import QuarantineModel

TABLE = "db.events"


def flag(i: int, value: str) -> Quarantined:
    return Quarantined(
        {"id": i, "flag": value}, "incompatible", "flag", "string", "boolean", "day2",
        f"flag: a string ({value!r}) cannot go into a boolean column",
    )


ITEMS = [
    flag(1, "yes"),
    flag(2, "no"),
    flag(3, "<script>alert(1)</script>"),
    flag(4, "maybe"),
    Quarantined('{"id": 5, "flag": tru', "malformed", None, None, None, "day2", "not JSON"),
    Quarantined(
        {"id": 6, "size": "b64:AAE="}, "incompatible", "size", "bytes", "long", "day3",
        "size: bytes cannot go into a long column",
    ),
]


@pytest.fixture
def lake(tmp_path: Path) -> Catalog:
    cat = catalog(tmp_path / "lake")
    cat.create_namespace("db")
    # the target: flag is a boolean column, so string flags were set aside
    cat.create_table(TABLE, schema=toolkit.simulate([[{"id": 0, "flag": True}]]).schema)
    append_quarantined(cat, TABLE, ITEMS[:5], "day2")
    append_quarantined(cat, TABLE, ITEMS[5:], "day3")
    return cat


# --- the view-model ---------------------------------------------------------------------------


def test_the_model_groups_by_reason_with_counts_and_samples(lake: Catalog) -> None:
    m = QuarantineModel.from_quarantine(quarantine(lake, TABLE), samples=2)
    assert m.exists and m.total == 6 and m.replayable == 5
    assert m.counts == (("incompatible", 5), ("malformed", 1))
    assert [(g.key, g.label, g.replayable) for g in m.groups] == [
        ("g0", "incompatible type: flag (string into boolean) — 4", True),
        ("g1", "incompatible type: size (bytes into long) — 1", True),
        ("g2", "not valid JSON — 1", False),
    ]
    first = m.groups[0]
    assert first.samples == ('{"id":1,"flag":"yes"}', '{"id":2,"flag":"no"}')
    assert first.detail == "flag: a string ('yes') cannot go into a boolean column"
    assert first.batches == ("day2",) and m.groups[1].batches == ("day3",)
    # the count per reason is the table's, in words
    assert m.summary == "6 records in 3 groups; 1 cannot be replayed (not JSON objects)"
    q = quarantine(lake, TABLE)
    assert set(m.replay_ids(["g0", "g2"])) == set(q.select(field="flag").ids)
    assert m.discard_ids(["g0", "g2"]) == q.select(reason="malformed").ids
    with pytest.raises(KeyError, match="no group 'g9'"):
        m.group("g9")


def test_the_model_of_an_empty_quarantine(lake: Catalog) -> None:
    none = QuarantineModel.from_quarantine(quarantine(lake, "db.clean"))
    assert none.summary == "nothing was ever quarantined for db.clean" and none.groups == ()
    assert "nothing was ever quarantined" in groups_html(none)
    empty = QuarantineModel.from_quarantine(Quarantine(TABLE, "db.events__quarantine", True, ()))
    assert empty.summary == "the quarantine of db.events is empty"


def test_the_html_escapes_what_came_from_data(lake: Catalog) -> None:
    m = QuarantineModel.from_quarantine(quarantine(lake, TABLE), samples=5)
    table = groups_html(m)
    assert "<script>" not in table  # the sample of g0 is its first record only
    samples = samples_html(m.groups[:1])
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in samples and "<script>" not in samples
    assert "(cannot be replayed)" in table and "<td>day3</td>" in table
    # a group's label in words, its key (what reason= takes) on hover
    assert '<b title="incompatible">incompatible type: flag (string into boolean) — 4</b>' in (
        samples)


def test_docstring_examples() -> None:
    result = doctest.testmod(model_module)
    assert result.attempted > 0 and result.failed == 0
