"""The evolution editor's words, as a user reads them (clicked in-process against a real
catalog: SQLite, PyIceberg): an outcome's bold title and its message are read as one line,
so the message never starts by repeating the title; the heading names the table once; a
table that moved is explained in the editor's own words, and "Reload table" reads it
again with the plan kept."""

from __future__ import annotations

import re
from pathlib import Path

import ipywidgets as widgets
import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.types import StringType

import toolkit
from tests.notebook.panel_tables import make_table
from toolkit.iceberg import catalog
from toolkit.notebook.build import edit_schema
from toolkit.notebook.panels.editor.model import EvolutionOutcome
from toolkit.notebook.panels.editor.widget import EvolutionEditor


@pytest.fixture
def lake(tmp_path: Path) -> Catalog:
    return catalog(tmp_path / "lake")


def shown(editor: EvolutionEditor) -> str:
    """The outcome line as the page shows it (a traceback stays folded under it): tags
    dropped, entities read."""
    line = editor.message.value.split("<details>", 1)[0]
    text = re.sub(r"<style>.*?</style>|<[^>]+>", "", line, flags=re.S)
    return text.replace("&gt;", ">").replace("&#x27;", "'").strip()


def assert_not_doubled(outcome: EvolutionOutcome | None) -> None:
    assert outcome is not None
    title = outcome.title.lower()
    first = " ".join(outcome.message.lower().split()[: len(title.split())])
    assert first != title, f"{outcome.title!r} then {outcome.message!r}"
    assert not outcome.message.lower().startswith(title.split()[0] + " "), outcome


def test_every_outcome_reads_without_repeating_its_title(lake: Catalog) -> None:
    make_table(lake)
    editor = edit_schema(lake, "db.people")
    editor.add_operation(toolkit.ops.rename("name", "full_name"))

    editor.commit_button.click()
    assert_not_doubled(editor.outcome)
    assert shown(editor) == (
        "Done. Committed to db.people in one commit, logged as lineage entry #1: "
        "~ rename name -> full_name."
    )

    editor.lineage_rows[1].button.click()
    assert_not_doubled(editor.outcome)
    assert shown(editor).startswith("Undone. Committed to db.people as lineage entry #2")

    editor.undo(1)  # refused: already undone
    assert_not_doubled(editor.outcome)
    assert shown(editor) == "Entry #1 not undone. Already undone by entry 2. Nothing was changed."

    editor.add_operation(toolkit.ops.widen("score", "string"))
    editor.commit_button.click()
    editor.cancel_button.click()
    assert_not_doubled(editor.outcome)
    assert shown(editor) == "Cancelled. Nothing was committed to db.people."


def test_the_heading_names_the_table_once(lake: Catalog) -> None:
    make_table(lake)
    editor = edit_schema(lake, "db.people")
    editor.add_operation(toolkit.ops.widen("score", "string"))

    heading = re.sub(r"<style>.*?</style>|<[^>]+>", "", editor.header.value, flags=re.S)
    state = editor.model.state
    assert heading == (
        f"Evolution of db.people: schema id {state.schema_id}, snapshot {state.snapshot_id}; "
        "1 operation, ready to commit, 1 rewrite"
    )


def test_a_table_that_moved_is_explained_and_reload_keeps_the_plan(lake: Catalog) -> None:
    table = make_table(lake)
    editor = edit_schema(lake, "db.people")
    editor.add_operation(toolkit.ops.rename("name", "full_name"))
    with table.update_schema() as update:  # another writer, meanwhile
        update.add_column("other", StringType())

    editor.commit_button.click()

    assert editor.outcome is not None and editor.outcome.kind == "stale"
    assert_not_doubled(editor.outcome)
    text = shown(editor)
    assert text.startswith(
        "The table changed. Since the editor read db.people, its schema went from id 0 to 1. "
        "Nothing was applied. Reload the table (the plan is kept) and check the plan again."
    ), text
    assert text.count("applied") == 1 and "preview or ingest" not in text
    assert editor.outcome.traceback is not None  # the error itself, folded under the text

    assert not editor.reload_button.disabled
    editor.reload_button.click()

    reloaded = editor.outcome
    assert reloaded is not None and reloaded.kind == "reloaded"
    state = editor.model.state
    assert shown(editor) == (
        f"Reloaded. db.people as it is now: schema id 1, snapshot {state.snapshot_id}. "
        "The plan applies to it."
    )
    assert [str(op).strip() for op in editor.model.operations] == ["~ rename name -> full_name"]
    assert editor.commit().kind == "committed"
    names = [f.name for f in lake.load_table("db.people").schema().fields]
    assert "full_name" in names and "other" in names


def test_the_rewrite_question_puts_its_buttons_under_it(lake: Catalog) -> None:
    make_table(lake)
    editor = edit_schema(lake, "db.people")
    editor.add_operation(toolkit.ops.widen("score", "string"))

    editor.commit_button.click()

    box = editor.rewrite_confirmation
    assert isinstance(box, widgets.VBox) and box.layout.display == ""
    text, buttons = box.children
    assert text is editor.rewrite_text and "Rewrite?" in text.value
    assert list(buttons.children) == [editor.rewrite_button, editor.cancel_button]
    assert editor.rewrite_button.description == "Rewrite"
    assert editor.cancel_button.description == "Cancel"


def test_a_read_only_editor_offers_no_reload(lake: Catalog) -> None:
    from toolkit.notebook.build import editor_model

    make_table(lake)
    editor = EvolutionEditor(editor_model(lake, "db.people"))

    assert editor.reload_button.disabled
    editor.reload()  # nothing to read with: nothing happens
    assert editor.outcome is None
