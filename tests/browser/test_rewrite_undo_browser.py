"""The evolution editor in a real JupyterLab, driven by a real browser (Debian's chromium
through Playwright): a rewrite is approved through its confirmation, then a change is
undone from its lineage row.

The notebook is written by the test: a small table (a real SQLite catalog in the served
folder, 5 rows in 2 data files), the editor (``toolkit.edit_schema``) with a widening
Iceberg cannot do in place (score: long -> string, RULES 5), and a cell that prints the
table's schema and lineage. In the page, as a person would:

1. "Commit" asks first, stating the rows, files and bytes it rewrites; "Rewrite" commits.
2. The form adds a rename (the "Operation" menu, the field's dropdown, the new name),
   "Add to plan", "Commit": no rewrite, so no question.
3. "Undo #2" on the rename's row commits its inverse; that row's button is then disabled
   and the row says why in words; the rewrite's row says why it has no undo at all.
4. The last cell, run again in the same kernel, prints the table rewritten, then undone;
   PyIceberg, from the test, reads the same.

Screenshots, each looked at by a person when the panel changes: artifacts/rewrite-plan.png,
rewrite-confirm.png, rewrite-committed.png, undo-row.png, undo-done.png, undo-state.png.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import toolkit
from tests.browser.lab import (
    ARTIFACTS,
    chromium_page,
    jupyterlab,
    menu,
    open_notebook,
    require_browser,
    screenshot,
    wait_idle,
)
from toolkit.core.maintenance.steps import size_text

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

pytestmark = [pytest.mark.browser]  # no Spark: PyIceberg rewrites the data files itself

NOTEBOOK = "rewrite_undo.ipynb"
#: the kernel starts and imports the toolkit, PyIceberg and ipywidgets: no Spark
RUN_ALL_TIMEOUT_MS = 90_000
#: one commit (a rewrite of 5 rows, or a schema change) and the panel redrawn
CLICK_TIMEOUT_MS = 30_000

SETUP = """\
import pyarrow as pa
import toolkit

# a real catalog (SQLite) in this folder, and a small table in two data files
lake = toolkit.catalog("lake")
lake.create_namespace_if_not_exists("db")
people = lake.create_table("db.people", schema=pa.schema([
    pa.field("id", pa.int64()), pa.field("name", pa.string()), pa.field("score", pa.int64()),
]))
people.append(pa.table({"id": [1, 2, 3], "name": ["Ada", "Bob", "Cy"],
                        "score": [10, 20, 30]}, schema=people.schema().as_arrow()))
people.append(pa.table({"id": [4, 5], "name": ["Dee", "Eve"], "score": [40, 50]},
                       schema=people.schema().as_arrow()))"""

EDITOR = """\
editor = toolkit.edit_schema(lake, "db.people")
# long -> string: Iceberg cannot widen it in place, committing it rewrites every data file
editor.add_operation(toolkit.ops.widen("score", "string"))
editor"""

STATE = """\
table = lake.load_table("db.people")
print("columns:", ", ".join(f"{f.name}: {f.field_type}" for f in table.schema().fields))
print("scores:", sorted(table.scan().to_arrow().column("score").to_pylist()))
for entry in toolkit.lineage(table):
    print(f"entry #{entry.seq}:", entry.reason or "-", "|",
          "; ".join(str(op).strip() for op in entry.operations))"""


def write_notebook(path: Path) -> None:
    cells: list[dict[str, object]] = [
        {"cell_type": "markdown", "metadata": {}, "source": "# Rewrite, then undo"}
    ]
    for source in (SETUP, EDITOR, STATE):
        cells.append({"cell_type": "code", "execution_count": None, "metadata": {},
                      "outputs": [], "source": source})
    for i, cell in enumerate(cells):
        cell["id"] = f"cell-{i}"
    nb = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "cells": cells,
    }
    path.write_text(json.dumps(nb, indent=1))


def row_of(editor: Locator, seq: int) -> tuple[Locator, Locator]:
    """Lineage entry ``seq``'s row: its entry cell, and its undo cell (button and why)."""
    entry = editor.locator(".widget-gridbox > .widget-html").filter(has_text=f"#{seq} by ")
    undo = entry.locator("xpath=following-sibling::*[1]")
    return entry, undo


def button(scope: Page | Locator, label: str) -> Locator:
    """The button labelled ``label`` (its accessible name starts with its icon's glyph)."""
    return scope.get_by_role("button", name=re.compile(rf"^\W?\s*{re.escape(label)}$"))


def click(page: Page, button: Locator) -> None:
    button.scroll_into_view_if_needed()
    button.click()


def test_approve_a_rewrite_then_undo_from_a_row(tmp_path: Path) -> None:
    require_browser()
    from playwright.sync_api import expect

    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    write_notebook(work / NOTEBOOK)
    shots = ARTIFACTS

    with jupyterlab(work, home) as url, chromium_page(shots / "rewrite-undo-failure.png") as page:
        open_notebook(page, url, NOTEBOOK)
        menu(page, "Run", "Run All Cells")
        commit = button(page, "Commit")
        # the editor, or the traceback of a cell that failed (shown as the failure)
        errors = page.locator(".jp-OutputArea-output[data-mime-type*='stderr']")
        expect(commit.or_(errors).first).to_be_visible(timeout=RUN_ALL_TIMEOUT_MS)
        assert errors.count() == 0, errors.first.inner_text()
        expect(commit).to_be_enabled()
        wait_idle(page, RUN_ALL_TIMEOUT_MS)
        cells = page.locator(".jp-Notebook .jp-Cell")
        editor = cells.nth(2).locator(".jp-OutputArea-output")
        state = cells.nth(3).locator(".jp-OutputArea-output")
        expect(state).to_contain_text("columns: id: long, name: string, score: long")
        expect(editor).to_contain_text("Evolution of db.people")
        expect(editor).to_contain_text("No plan was logged in this table yet.")

        # the plan says it rewrites, before anything is asked
        editor.locator(".lm-TabBar-tab", has_text="Plan").click()
        expect(editor).to_contain_text("REWRITE: committing this plan approves rewriting")
        screenshot(page, editor, shots / "rewrite-plan.png")

        # 1. "Commit" asks first, with what the rewrite touches; nothing is committed yet
        click(page, commit)
        table = toolkit.catalog(work / "lake").load_table("db.people")
        size = size_text(sum(t.file.file_size_in_bytes for t in table.scan().plan_files()))
        question = f"This rewrites every data file of db.people: 5 rows in 2 files, {size}."
        expect(editor).to_contain_text(question, timeout=CLICK_TIMEOUT_MS)
        expect(editor).to_contain_text("Columns rewritten: score -> string.")
        expect(commit).to_be_disabled()
        rewrite = button(editor, "Rewrite")
        cancel = button(editor, "Cancel")
        expect(rewrite).to_be_visible()
        expect(cancel).to_be_visible()
        assert toolkit.lineage(table) == ()
        screenshot(page, editor.locator(".widget-tab"), shots / "rewrite-confirm.png")

        click(page, rewrite)
        expect(editor).to_contain_text(
            "Done. Committed to db.people in one commit, logged as lineage entry #1: "
            "^ widen score -> string REWRITE (5 rows",
            timeout=CLICK_TIMEOUT_MS,
        )
        expect(rewrite).to_be_hidden()
        expect(editor).not_to_contain_text(question)
        _, rewritten = row_of(editor, 1)
        expect(rewritten.get_by_role("button")).to_have_text("Cannot undo")
        expect(rewritten.get_by_role("button")).to_be_disabled()
        expect(rewritten).to_contain_text(
            "This change cannot be undone automatically: score was rewritten as string"
        )
        screenshot(page, commit, shots / "rewrite-committed.png")

        # 2. a rename through the form: it rewrites nothing, so "Commit" commits at once
        expect(editor.get_by_label("Operation")).to_have_value("rename")
        editor.get_by_label("field", exact=True).select_option(label="name")
        editor.get_by_label("new name", exact=True).fill("full_name")
        click(page, button(editor, "Add to plan"))
        expect(editor.get_by_role("listbox")).to_contain_text("1. ~ rename name -> full_name")
        click(page, commit)
        expect(editor).to_contain_text("logged as lineage entry #2", timeout=CLICK_TIMEOUT_MS)
        expect(rewrite).to_be_hidden()  # no question for a plan that rewrites nothing
        entry, undo_cell = row_of(editor, 2)
        expect(entry).to_contain_text("~ rename name -> full_name")
        undo = button(undo_cell, "Undo #2")
        expect(undo).to_be_enabled()
        expect(undo_cell).to_contain_text("Undo commits: ~ rename full_name -> name")
        screenshot(page, commit, shots / "undo-row.png")

        # 3. "Undo #2" on its row: the inverse is committed and logged as entry 3
        click(page, undo)
        expect(editor).to_contain_text(
            "Undone. Committed to db.people as lineage entry #3 (undo of lineage entry 2): "
            "~ rename full_name -> name.",
            timeout=CLICK_TIMEOUT_MS,
        )
        entry, undone_cell = row_of(editor, 2)
        used = undone_cell.get_by_role("button")
        expect(used).to_have_text("Undone")
        expect(used).to_be_disabled()
        expect(used).to_have_attribute("title", "Already undone by entry 3.")
        expect(undone_cell).to_contain_text("Already undone by entry 3.")
        _, redo_cell = row_of(editor, 3)
        expect(button(redo_cell, "Undo #3")).to_be_enabled()
        expect(redo_cell).to_contain_text("Undo commits (this redoes entry 2)")
        screenshot(page, commit, shots / "undo-done.png")

        # 4. the table, read again in the same kernel: rewritten, then the rename undone
        cells.nth(3).locator(".jp-InputArea-editor").click()
        page.keyboard.press("Control+Enter")  # run it, stay on it
        expect(state).to_contain_text("columns: id: long, name: string, score: string",
                                      timeout=CLICK_TIMEOUT_MS)
        expect(state).to_contain_text("scores: ['10', '20', '30', '40', '50']")
        expect(state).to_contain_text("entry #1: - | ^ widen score -> string")
        expect(state).to_contain_text("entry #2: - | ~ rename name -> full_name")
        expect(state).to_contain_text(
            "entry #3: undo of lineage entry 2 | ~ rename full_name -> name"
        )
        wait_idle(page, CLICK_TIMEOUT_MS)
        screenshot(page, cells.nth(3), shots / "undo-state.png")

    # the same, read by PyIceberg from the test: one rewrite, one rename, its undo
    table = toolkit.catalog(work / "lake").load_table("db.people")
    assert [(f.name, str(f.field_type)) for f in table.schema().fields] == [
        ("id", "long"), ("name", "string"), ("score", "string"),
    ]
    assert sorted(table.scan().to_arrow().column("score").to_pylist()) == [
        "10", "20", "30", "40", "50",
    ]
    assert [(e.seq, e.reason) for e in toolkit.lineage(table)] == [
        (1, None), (2, None), (3, "undo of lineage entry 2"),
    ]
