"""The evolution editor's lineage (RULES 6), clicked in-process against a real catalog
(SQLite, PyIceberg): each row carries its own "Undo" button; once used, or when the entry
has no inverse, the button is disabled and the row says why in plain words; an entry
already undone is not offered again."""

from __future__ import annotations

from pathlib import Path

import ipywidgets as widgets
import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.types import StringType

import toolkit
from tests.notebook.panel_tables import make_table
from toolkit.core.evolution.lineage import LineageEntry, undone_by
from toolkit.core.evolution.operations import AddField, RenameField
from toolkit.errors import AlreadyUndoneError
from toolkit.iceberg import catalog
from toolkit.iceberg.lineage import lineage
from toolkit.notebook.build import edit_schema, editor_model
from toolkit.notebook.panels.editor.model import LineageRow
from toolkit.notebook.panels.editor.widget import EvolutionEditor


@pytest.fixture
def lake(tmp_path: Path) -> Catalog:
    return catalog(tmp_path / "lake")


def row_cells(editor: EvolutionEditor, seq: int) -> tuple[str, widgets.Button, str]:
    """What one row of the lineage grid shows, read from the grid itself: the entry's
    text, the button on that row, and the text under the button."""
    grid = list(editor.lineage.children)[2:]  # after the two header cells
    rows = [grid[i : i + 2] for i in range(0, len(grid), 2)]
    for entry, undo in rows:
        assert isinstance(entry, widgets.HTML) and isinstance(undo, widgets.VBox)
        if f"<b>#{seq} by " in entry.value:
            button, status = undo.children
            assert isinstance(button, widgets.Button) and isinstance(status, widgets.HTML)
            return entry.value, button, status.value
    raise AssertionError(f"no row for entry {seq} in the lineage grid")


def lineage_text(editor: EvolutionEditor) -> str:
    """Every text of the lineage grid, buttons' labels and tooltips included."""
    out: list[str] = []
    todo: list[widgets.Widget] = [editor.lineage]
    while todo:
        w = todo.pop()
        if isinstance(w, widgets.HTML):
            out.append(w.value)
        elif isinstance(w, widgets.Button):
            out += [w.description, w.tooltip or ""]
        elif isinstance(w, widgets.Box):
            todo += list(w.children)
    return "\n".join(out)


def columns(cat: Catalog) -> list[str]:
    return [f.name for f in cat.load_table("db.people").schema().fields]


def test_undo_from_a_row_disables_that_rows_button_and_says_why(lake: Catalog) -> None:
    make_table(lake)
    editor = edit_schema(lake, "db.people")
    editor.add_operation(toolkit.ops.rename("name", "full_name"))
    editor.add_operation(toolkit.ops.add("zip", "string"))
    assert editor.commit().kind == "committed", editor.message.value

    entry, button, status = row_cells(editor, 1)
    assert "~ rename name -&gt; full_name" in entry and "+ add zip: string" in entry
    assert button.description == "Undo #1" and not button.disabled
    assert "Undo commits: - drop zip; ~ rename full_name -&gt; name" in status

    button.click()

    assert editor.outcome is not None and editor.outcome.kind == "undone", editor.message.value
    assert "Committed to db.people as lineage entry #2 (undo of lineage entry 1)" in (
        editor.message.value
    )
    assert "zip" not in columns(lake) and "name" in columns(lake)
    # the lineage was read again: the used row's button is disabled and says why
    _, button, status = row_cells(editor, 1)
    assert button.disabled and button.description == "Undone"
    assert button.tooltip == "Already undone by entry 2."
    assert "Already undone by entry 2." in status
    # the undo dropped zip: its own row cannot be undone, and says so in a sentence
    _, undo_row_button, undo_status = row_cells(editor, 2)
    assert undo_row_button.disabled and undo_row_button.description == "Cannot undo"
    assert "This change cannot be undone automatically: a drop cannot be undone" in undo_status
    assert (undo_row_button.tooltip or "").startswith("This change cannot be undone")
    assert "irreversible" not in lineage_text(editor)

    # a second undo is not offered: clicking the disabled button, or asking from code,
    # commits nothing
    button.click()
    again = editor.undo(1)
    assert again.kind == "refused"
    assert "Already undone by entry 2. Nothing was changed." in editor.message.value
    assert [e.seq for e in lineage(lake.load_table("db.people"))] == [1, 2]
    assert "zip" not in columns(lake)


def test_undoing_an_undo_redoes_it_and_offers_the_first_undo_again(lake: Catalog) -> None:
    make_table(lake)
    editor = edit_schema(lake, "db.people")
    editor.add_operation(toolkit.ops.rename("name", "full_name"))
    editor.commit()
    row_cells(editor, 1)[1].click()
    assert "name" in columns(lake)

    _, redo, status = row_cells(editor, 2)
    assert redo.description == "Undo #2" and not redo.disabled
    assert "Undo commits (this redoes entry 1): ~ rename name -&gt; full_name" in status
    assert row_cells(editor, 1)[1].disabled

    redo.click()

    assert "full_name" in columns(lake)
    assert row_cells(editor, 2)[1].disabled
    assert "Already undone by entry 3." in row_cells(editor, 2)[2]
    # entry 1 holds again (its undo was undone): its button is offered again
    _, first, status = row_cells(editor, 1)
    assert not first.disabled and "Undo commits: ~ rename full_name -&gt; name" in status


def test_widenings_say_in_plain_words_why_they_cannot_be_undone(lake: Catalog) -> None:
    make_table(lake)
    editor = edit_schema(lake, "db.people")
    editor.add_operation(toolkit.ops.widen("visits", "long"))  # in place
    editor.add_operation(toolkit.ops.widen("score", "string"))  # a rewrite
    assert editor.commit().kind == "committed", editor.message.value

    _, button, status = row_cells(editor, 1)
    assert button.disabled and button.description == "Cannot undo"
    assert status.count("This change cannot be undone automatically: ") == 1
    assert "visits" in status and "score was rewritten as string" in status
    assert "irreversible" not in lineage_text(editor) and "replayed" not in status
    assert editor.undo(1).kind == "refused"
    assert [e.seq for e in lineage(lake.load_table("db.people"))] == [1]


def test_an_entry_whose_column_changed_since_is_not_offered(lake: Catalog) -> None:
    make_table(lake)
    editor = edit_schema(lake, "db.people")
    editor.add_operation(toolkit.ops.rename("name", "full_name"))
    editor.commit()
    table = lake.load_table("db.people")
    with table.update_schema() as update:  # another writer renames it again
        update.rename_column("full_name", "nick")
        update.add_column("other", StringType())

    editor.reload()

    _, button, status = row_cells(editor, 1)
    assert button.disabled
    assert "It can no longer be undone automatically: the table changed since" in status
    assert "no field &#x27;full_name&#x27;" in status
    assert editor.undo(1).kind == "refused"
    assert "nick" in columns(lake) and len(lineage(lake.load_table("db.people"))) == 1


def test_an_added_column_dropped_and_added_again_elsewhere_is_not_dropped(lake: Catalog) -> None:
    """Undo of an add would drop the column by name: not once the name is another column."""
    make_table(lake)
    editor = edit_schema(lake, "db.people")
    editor.add_operation(toolkit.ops.add("x", "string"))
    editor.commit()
    with lake.load_table("db.people").update_schema() as update:  # another writer
        update.delete_column("x")
    with lake.load_table("db.people").update_schema() as update:
        update.add_column("x", StringType())

    editor.reload()

    _, button, status = row_cells(editor, 1)
    assert button.disabled and button.description == "Cannot undo"
    # the error's own sentence (UndoMovedError), less its "nothing was applied"
    assert (
        "It can no longer be undone automatically: the table changed since lineage entry 1; "
        "undoing it would drop x, now another column than the one this entry changed "
        "(field ID 11, not 10).</span>"
    ) in status
    assert "applied" not in status
    assert editor.undo(1).kind == "refused"
    assert "x" in columns(lake)


def entry(seq: int, reason: str | None = None) -> LineageEntry:
    rename = RenameField(("a",), "b")
    return LineageEntry(seq, 0, "user", None, reason, (rename,), (), (rename,), (), ())


def test_already_undone_agrees_with_the_command_line() -> None:
    """The editor and `toolkit undo` tell an entry already undone by the same log."""
    log = (
        entry(1), entry(2, "undo of lineage entry 1"), entry(3, "undo of lineage entry 2"),
        entry(4), entry(5, "undo of lineage entry 4"),
    )  # fmt: skip
    for e in log:
        row = LineageRow.of(e, log)
        later = undone_by(log, e.seq)
        assert row.undone_by == (None if later is None else later.seq), e.seq
        assert row.can_undo == (later is None)
    assert [LineageRow.of(e, log).undoes for e in log] == [None, 1, 2, None, 4]


def test_an_entry_logged_without_its_reverse_says_so_without_jargon() -> None:
    """Entries logged by older versions when the reverse could not be worked out."""
    logged = LineageEntry(
        7, 0, "RULES 3", "day2", None, (AddField(("x",), "long"),), (), None,
        ("the plan could not be replayed to compute its inverse: operation 1 (add x): "
         "x exists already",),
        (),
    )  # fmt: skip
    row = LineageRow.of(logged, (logged,))
    assert not row.can_undo and row.button_label == "Cannot undo"
    assert row.status == (
        "This change cannot be undone automatically: the toolkit could not work out how to "
        "reverse it when it was committed (operation 1 (add x): x exists already)."
    )


def test_a_read_only_editor_shows_the_lineage_without_offering_undo(lake: Catalog) -> None:
    make_table(lake)
    toolkit.evolve(lake, "db.people", [toolkit.ops.rename("name", "full_name")])
    editor = EvolutionEditor(editor_model(lake, "db.people"))  # no undo function given

    _, button, status = row_cells(editor, 1)
    assert button.disabled and editor.undo_buttons == {}
    assert "Read-only editor: open it with toolkit.edit_schema to undo." in status
    assert editor.undo(1).kind == "error"
    assert "full_name" in columns(lake)


def test_toolkit_undo_refuses_an_entry_already_undone_and_names_the_undo(
    lake: Catalog,
) -> None:
    """`toolkit.undo` follows the rule the editor's rows show (core.lineage.undo_plan):
    a second undo of the same entry is refused, naming the entry that undid it."""
    make_table(lake)
    toolkit.evolve(lake, "db.people", [toolkit.ops.rename("name", "full_name")])
    toolkit.undo(lake, "db.people", 1)
    with pytest.raises(AlreadyUndoneError, match="already undone by entry 2"):
        toolkit.undo(lake, "db.people", 1)
    assert "name" in columns(lake) and "full_name" not in columns(lake)
