"""A plan that rewrites every data file (a widening Iceberg cannot do in place, RULES 5) is
never committed by one click: the first click asks, stating the rows, data files and bytes
of the table's current snapshot; "Cancel" commits nothing; "Rewrite" commits. Clicked
in-process against a real catalog (SQLite, PyIceberg); the preview panel's commit is
injected and records what it would commit."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.table import Table

import toolkit
from tests.notebook.panel_tables import make_table
from tests.notebook.test_widen_preview import BATCH, RecordingCommit, declared_table
from toolkit.core.maintenance.steps import size_text
from toolkit.iceberg import catalog
from toolkit.iceberg.lineage import lineage
from toolkit.notebook.build import edit_schema
from toolkit.notebook.outcome import TableSize
from toolkit.notebook.panels.preview.widget import PreviewPanel
from toolkit.pipeline.preview import plan_preview

MORE = [
    {"id": 3, "name": "Cy", "visits": 1, "score": 30, "signup": None, "address": None,
     "tags": None},
    {"id": 4, "name": "Dee", "visits": 2, "score": 40, "signup": None, "address": None,
     "tags": ["b"]},
    {"id": 5, "name": "Eve", "visits": 4, "score": 50, "signup": None, "address": None,
     "tags": []},
]  # fmt: skip


@pytest.fixture
def lake(tmp_path: Path) -> Catalog:
    return catalog(tmp_path / "lake")


def data_files(table: Table) -> tuple[int, int, int]:
    """(rows, files, bytes) of the data files the table's manifests list now."""
    files = [task.file for task in table.scan().plan_files()]
    return (
        sum(f.record_count for f in files), len(files), sum(f.file_size_in_bytes for f in files),
    )


def people_in_three_files(lake: Catalog) -> Table:
    table = make_table(lake)  # 2 rows in one file
    for row in MORE[:2], MORE[2:]:
        table.append(pa.Table.from_pylist(row, schema=table.schema().as_arrow()))
    return lake.load_table("db.people")


# --- the evolution editor -------------------------------------------------------------------


def test_the_editor_asks_before_a_rewrite_and_cancel_commits_nothing(lake: Catalog) -> None:
    table = people_in_three_files(lake)
    rows, files, size = data_files(table)
    assert (rows, files) == (5, 3)
    editor = edit_schema(lake, "db.people")
    editor.add_operation(toolkit.ops.widen("score", "string"))
    editor.add_operation(toolkit.ops.rename("name", "full_name"))

    editor.commit_button.click()

    expected = (
        f"This rewrites every data file of db.people: 5 rows in 3 files, {size_text(size)}. "
        "Rewrite?"
    )
    assert editor.question == expected
    assert expected in editor.rewrite_text.value
    assert "Columns rewritten: score -&gt; string." in editor.rewrite_text.value
    assert editor.rewrite_confirmation.layout.display == ""
    assert editor.commit_button.disabled  # the answer is Rewrite or Cancel
    assert lake.load_table("db.people").metadata == table.metadata  # nothing committed yet

    editor.cancel_button.click()

    assert editor.question is None and editor.rewrite_confirmation.layout.display == "none"
    assert "Cancelled." in editor.message.value and "Nothing was committed" in editor.message.value
    after = lake.load_table("db.people")
    assert after.metadata == table.metadata and lineage(after) == ()
    assert str(after.schema().find_field("score").field_type) == "long"
    assert len(editor.model.operations) == 2 and not editor.commit_button.disabled

    # the plan stays: asked again, the second click ("Rewrite") commits it
    editor.commit_button.click()
    assert editor.question == expected
    editor.rewrite_button.click()

    assert editor.outcome is not None and editor.outcome.kind == "committed", editor.message.value
    after = lake.load_table("db.people")
    assert str(after.schema().find_field("score").field_type) == "string"
    assert sorted(r["score"] for r in after.scan().to_arrow().to_pylist()) == [
        "10", "20", "30", "40", "50",
    ]
    assert [e.seq for e in lineage(after)] == [1]
    assert editor.question is None and editor.rewrite_confirmation.layout.display == "none"


def test_a_plan_without_rewrites_commits_with_one_click(lake: Catalog) -> None:
    make_table(lake)
    editor = edit_schema(lake, "db.people")
    editor.add_operation(toolkit.ops.widen("visits", "long"))  # in place: no rewrite

    editor.commit_button.click()

    assert editor.question is None and editor.rewrite_confirmation.layout.display == "none"
    assert editor.outcome is not None and editor.outcome.kind == "committed"
    field = lake.load_table("db.people").schema().find_field("visits")
    assert str(field.field_type) == "long"


def test_changing_the_plan_withdraws_the_question(lake: Catalog) -> None:
    table = make_table(lake)
    editor = edit_schema(lake, "db.people")
    editor.add_operation(toolkit.ops.widen("score", "string"))
    editor.commit_button.click()
    assert editor.question is not None

    editor.remove(0)  # the question was about another plan

    assert editor.question is None and editor.rewrite_confirmation.layout.display == "none"
    editor.rewrite_button.click()  # a stale answer commits nothing
    assert lake.load_table("db.people").metadata == table.metadata


# --- the preview panel ----------------------------------------------------------------------


def test_the_preview_asks_before_a_rewrite_and_cancel_commits_nothing(lake: Catalog) -> None:
    declared_table(lake, "db.t")
    table = lake.load_table("db.t")
    table.append(pa.Table.from_pylist(
        [{"id": 9, "n": 9, "score": 90, "flag": True}], schema=table.schema().as_arrow()
    ))
    rows, files, size = data_files(lake.load_table("db.t"))
    assert (rows, files) == (3, 2)
    commit = RecordingCommit()
    panel = PreviewPanel(
        plan_preview(BATCH, "db.t", lake, policy="widen"),
        commit,
        table_size=lambda: TableSize.of(lake.load_table("db.t")),
    )
    assert [r.name for r in panel.preview.plan.rewrites] == ["score"]

    panel.approve_button.click()

    expected = (
        f"This rewrites every data file of db.t: 3 rows in 2 files, {size_text(size)}. Rewrite?"
    )
    assert panel.question == expected and expected in panel.rewrite_text.value
    assert "Columns rewritten: score: long -&gt; string." in panel.rewrite_text.value
    assert panel.rewrite_confirmation.layout.display == ""
    assert panel.approve_button.disabled
    assert commit.requests == [] and panel.outcome is None

    panel.cancel_button.click()

    assert commit.requests == [] and panel.outcome is None
    assert "Nothing was committed to db.t." in panel.message.value
    assert panel.rewrite_confirmation.layout.display == "none"
    assert not panel.approve_button.disabled

    panel.approve_button.click()
    panel.rewrite_button.click()

    (request,) = commit.requests
    assert request.approved is panel.preview.plan
    assert [r.path for r in request.approved.rewrites] == [("score",)]
    assert panel.outcome is not None and panel.outcome.kind == "committed"
    assert panel.question is None and panel.approve_button.disabled
    panel.rewrite_button.click()  # the question is gone: nothing more is committed
    assert len(commit.requests) == 1


def test_without_the_tables_size_the_preview_states_the_rows_and_bytes_of_the_plan(
    lake: Catalog,
) -> None:
    declared_table(lake, "db.t")
    rows, _, size = data_files(lake.load_table("db.t"))
    commit = RecordingCommit()
    panel = PreviewPanel(plan_preview(BATCH, "db.t", lake, policy="widen"), commit)

    panel.approve_button.click()

    assert panel.question == (
        f"This rewrites every data file of db.t: {rows} rows, {size_text(size)}. Rewrite?"
    )
    assert commit.requests == []
    panel.rewrite_button.click()
    assert len(commit.requests) == 1


def test_a_preview_without_rewrites_commits_with_one_click(lake: Catalog) -> None:
    declared_table(lake, "db.t")
    commit = RecordingCommit()
    panel = PreviewPanel(
        plan_preview([{"id": 9, "n": 7, "score": 1, "flag": False}], "db.t", lake,
                     policy="widen"),
        commit,
    )  # fmt: skip
    assert panel.preview.plan.rewrites == ()

    panel.approve_button.click()

    assert len(commit.requests) == 1 and panel.question is None
    assert panel.rewrite_confirmation.layout.display == "none"
