"""The evolution editor never destroys stored values on one click (docs/rules.md, "What asks
for a yes"): an "Undo" of an added column that holds values, or a plan that drops such a
column, commits nothing on the first click and asks again, naming the columns and their
value counts; "Cancel" commits nothing, "Drop the values" commits. A column holding no
values is dropped on one click. Clicked in-process against a real catalog."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog

import toolkit
from tests.notebook.panel_tables import make_table
from toolkit.iceberg import catalog
from toolkit.iceberg.lineage import lineage
from toolkit.notebook.build import edit_schema


@pytest.fixture
def lake(tmp_path: Path) -> Catalog:
    return catalog(tmp_path / "lake")


def with_gift(lake: Catalog) -> int:
    """db.people, then entry 1 adds ``gift``, which two new rows fill."""
    make_table(lake)
    entry = toolkit.evolve(lake, "db.people", [toolkit.ops.add("gift", "string")])
    table = lake.load_table("db.people")
    rows = [{"id": 3, "name": "Cy", "gift": "pen"}, {"id": 4, "name": "Dee", "gift": "mug"}]
    table.append(pa.Table.from_pylist(rows, schema=table.schema().as_arrow()))
    return entry.seq


def names(lake: Catalog) -> list[str]:
    return [f.name for f in lake.load_table("db.people").schema().fields]


def test_undo_asks_again_with_the_counts_and_cancel_commits_nothing(lake: Catalog) -> None:
    seq = with_gift(lake)
    editor = edit_schema(lake, "db.people")
    metadata = lake.load_table("db.people").metadata

    editor.undo_buttons[seq].click()

    assert editor.drop_question is not None
    assert "Undoing entry #1 drops 1 column holding 2 values of 4 rows" in editor.drop_question
    assert "gift (2 values)" in editor.drop_question
    assert "gift (2 values)" in editor.drop_text.value
    assert editor.drop_confirmation.layout.display == ""
    assert editor.undo_buttons == {}  # the answer is "Drop the values" or "Cancel"
    assert "Nothing was committed" in editor.message.value
    assert lake.load_table("db.people").metadata == metadata

    editor.drop_cancel_button.click()

    assert editor.drop_question is None and editor.drop_confirmation.layout.display == "none"
    assert "Cancelled." in editor.message.value
    assert lake.load_table("db.people").metadata == metadata
    assert seq in editor.undo_buttons  # offered again

    editor.undo_buttons[seq].click()
    editor.drop_button.click()

    assert editor.outcome is not None and editor.outcome.kind == "undone", editor.message.value
    assert "gift" not in names(lake)
    assert [e.seq for e in lineage(lake.load_table("db.people"))] == [1, 2]
    assert editor.drop_confirmation.layout.display == "none"


def test_a_plan_dropping_values_asks_before_it_commits(lake: Catalog) -> None:
    with_gift(lake)
    editor = edit_schema(lake, "db.people")
    editor.add_operation(toolkit.ops.drop("gift"))

    editor.commit_button.click()

    assert editor.drop_question is not None and "gift (2 values)" in editor.drop_question
    assert "gift" in names(lake)
    editor.drop_button.click()
    assert editor.outcome is not None and editor.outcome.kind == "committed"
    assert "gift" not in names(lake)


def test_an_empty_column_is_undone_on_one_click(lake: Catalog) -> None:
    make_table(lake)
    entry = toolkit.evolve(lake, "db.people", [toolkit.ops.add("note", "string")])
    editor = edit_schema(lake, "db.people")

    editor.undo_buttons[entry.seq].click()

    assert editor.drop_question is None
    assert editor.outcome is not None and editor.outcome.kind == "undone"
    assert "note" not in names(lake)
