"""The preview panel's static HTML stays small whatever the plan: a plan adding 5,000 columns
(the browser test's wide table, tests/browser/test_wide_layouts_browser.py) saves as a page
of kilobytes, not megabytes (it was 2.7 MB, 5.5 MB as a notebook's ``text/html``). Long
lists show their first rows in a box that scrolls and say how many there are, as the
explore panel's table does; the live panel's tabs still list everything."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest

from toolkit.core.values.types import Column, Struct
from toolkit.iceberg import catalog
from toolkit.notebook import preview
from toolkit.notebook.panels.preview.html import (
    code_report_html,
    new_columns_html,
    schema_tree_report_html,
    sql_report_html,
)
from toolkit.notebook.panels.preview.widget import PreviewPanel
from toolkit.notebook.schema_tree import schema_tree

FIELDS = 5_000
LIMIT = 500_000  # bytes, for the saved page and for the notebook's text/html
LONG = "f0_" + ("customer_lifetime_value_" * 10)[:197]  # 200 characters, no space


def field_name(i: int) -> str:
    return LONG if i == 0 else f"field_{i:05d}"


def text_of(html: str) -> str:
    """What a reader sees: the text without tags, entities decoded, spaces collapsed."""
    html = re.sub(r"<style>.*?</style>", " ", html, flags=re.S)
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> PreviewPanel:
    """A preview of three records of 5,000 fields against a table that does not exist."""
    cat = catalog(tmp_path_factory.mktemp("wide") / "lake")
    records = [{field_name(i): r + i for i in range(FIELDS)} for r in range(3)]
    return preview(records, "db.fresh", cat)


def test_a_plan_adding_5000_columns_saves_as_a_small_page(wide: PreviewPanel) -> None:
    assert len(wide.model.new_columns) == FIELDS
    page = wide.to_html()
    shown = wide._repr_mimebundle_()["text/html"]  # what a notebook saves besides the widget
    sizes = {"to_html()": len(page.encode()), "text/html": len(shown.encode())}
    assert all(size < LIMIT for size in sizes.values()), sizes


def test_the_page_says_how_many_it_leaves_out(wide: PreviewPanel) -> None:
    page = wide.to_html()
    text = text_of(page)
    assert re.search(r"5,000 column(\(s\)|s) to add", text)  # the header counts them all
    assert (
        "Showing the first 200 of 5,000 new columns; the interactive panel lists all of them."
        in text
    )
    assert "Showing the first 200 of 5,000 fields" in text  # the schema after the plan
    assert "Showing the first 200 of 5,000 fields; the interactive panel pages" in text  # profile
    for dialect in ("spark", "trino", "duckdb", "athena"):
        assert re.search(rf"Showing the first 200 of 5,0\d\d lines of the {dialect} view", text)
    # a new table's CREATE TABLE is one line naming every column: cut by its characters
    assert re.search(r"Showing the first 20,000 of \d{2,3},\d{3} characters of the code", text)
    # the first columns are there (the long name too), the last ones are counted only
    assert LONG in text and "field_00199" in text
    assert "field_04999" not in page
    # the lists keep the layout of the other panels: fixed widths, in boxes that scroll
    assert page.count('class="tknb-scroll"') >= 3 and 'class="tknb-fixed"' in page


def test_the_live_panel_still_lists_every_new_column(wide: PreviewPanel) -> None:
    tab = wide.tabs.children[wide.tabs.titles.index(f"New columns ({FIELDS:,})")]
    assert "field_04999" in tab.value and "Showing the first" not in tab.value
    assert 'class="tknb-scroll"' in tab.value  # in a box that scrolls


def test_short_lists_are_shown_whole(tmp_path: Path) -> None:
    small = preview([{"a": 1, "b": {"c": "x"}}], "db.small", catalog(tmp_path / "lake"))
    page = small.to_html()
    assert "Showing the first" not in page
    assert "<code>a</code>" in page and "<code>b</code>" in page


def nested() -> Struct:
    inner = Struct(tuple(Column(10 + i, f"c{i}", "long") for i in range(4)))
    return Struct((Column(1, "a", "long"), Column(2, "rec", inner), Column(3, "z", "long")))


def test_a_tree_is_cut_after_its_first_fields_nested_ones_counting() -> None:
    nodes = schema_tree(nested(), [3])
    html = schema_tree_report_html(nodes, title="After", rows=4)
    assert "Showing the first 4 of 7 fields" in text_of(html)
    assert [name for name in ("a", "rec", "c0", "c1", "c2", "z") if f": {name}:" in html] == [
        "a", "rec", "c0", "c1",
    ]
    whole = schema_tree_report_html(nodes, title="After", rows=7)
    assert "Showing the first" not in whole and ": z:" in whole


def test_empty_lists_say_so() -> None:
    assert "No column is added" in new_columns_html(())
    assert "(no columns: no view)" in sql_report_html(())


def test_long_texts_are_cut_by_lines_then_by_characters() -> None:
    sql = "\n".join(f"  `c{i}`," for i in range(300))
    html = sql_report_html([("spark", sql)], rows=200)
    assert "Showing the first 200 of 300 lines of the spark view" in text_of(html)
    assert "`c199`" in html and "`c200`" not in html
    line = "CREATE TABLE t (" + ", ".join(f"c{i} BIGINT" for i in range(3_000)) + ")"
    html = code_report_html(line, chars=1_000)
    assert f"Showing the first 1,000 of {len(line):,} characters of the code" in text_of(html)
    assert len(html) < 5_000
