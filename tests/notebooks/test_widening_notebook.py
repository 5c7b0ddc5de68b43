"""Run notebooks/widening.ipynb headless (in a temp folder) and check what it showed: the
widening preview with a rewrite and a quarantine, the approved commit, the quarantine by
reason, the policies side by side, and the evolution editor's commit and undo."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import toolkit
from tests.notebooks.nbrun import execute

pytestmark = [pytest.mark.notebook, pytest.mark.spark]


def test_widening_notebook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = execute("widening.ipynb", tmp_path, monkeypatch)

    assert "batch day1 wrote 3 rows" in run.text(run.cell("toolkit.ingest("))

    # the preview: a widget panel whose tabs show the rewrite and the quarantine
    (view,) = run.views(run.cell("toolkit.preview("))
    assert run.widget_state[view]["model_name"] == "VBoxModel"
    tabs = [t for t in run.widgets("TabModel") if "Widenings (1, 1 rewrite)" in t["titles"]]
    assert tabs and "Quarantine (1)" in tabs[0]["titles"]
    shown = run.text(run.cell("m = panel.model"))
    assert "widen score: long -> string, REWRITE: 3 rows," in shown
    assert "quarantine by reason: {'incompatible': 1}" in shown
    assert "record 3: active arrived as string, the column is boolean" in shown

    approved = run.text(run.cell("panel.approve()"))
    assert re.search(r"Committed snapshot \d+ to db\.accounts: 2 rows written", approved)
    assert "1 column widened: score (rewritten)." in approved
    assert "1 record set aside in db.accounts__quarantine" in approved
    rows = run.text(run.cell("SELECT id, name, score"))
    assert re.search(r"\|\s*1\|\s*Ada\|\s*10\|", rows)  # the old long, rewritten as text
    assert re.search(r"\|\s*5\|\s*Eve\|\s*n/a\|", rows)
    assert "Fay" not in rows

    aside = run.text(run.cell("toolkit.quarantine("))
    assert "db.accounts__quarantine: 1 record" in aside
    assert 'incompatible: active (string into boolean) {"id":6' in aside

    compared = run.text(run.cell("toolkit.compare_policies("))
    assert "upsolver (suffixed columns)" in compared and "widen, no rewrites" in compared
    assert re.search(r"records quarantined\s+0\s+1 record: a value its column cannot take, "
                     r"even widened\s+3 records — 2: a value needs a column rewrite nobody "
                     r"approved; 1: a value its", compared)
    assert any("values converted" in w["value"] for w in run.widgets("HTMLModel"))

    # the editor: displayed, then driven by the next cell as its buttons would
    assert len(run.views(run.cell("toolkit.edit_schema("))) == 1
    edited = run.text(run.cell('editor.choose("rename")'))
    assert "~ rename name -> full_name" in edited and "> move full_name first" in edited
    assert "Committed to db.accounts in one commit, logged as lineage entry" in edited
    assert "|full_name|active| id|score|" in edited  # renamed, moved first, data kept
    assert "|      Ada|  true|  1|   10|" in edited
    undone = run.text(run.cell("editor.undo("))
    assert "undo: = sort by nothing (unsorted); > move full_name after id; ~ rename full_name" \
        in undone
    assert re.search(r"Committed to db\.accounts as lineage entry #\d+ \(undo of", undone)

    table = toolkit.catalog(run.workdir / "lakehouse").load_table("db.accounts")
    assert [f.name for f in table.schema().fields] == ["active", "id", "name", "score"]
    assert str(table.schema().find_field("score").field_type) == "string"
    assert [f.source_id for f in table.sort_order().fields] == []  # the sort order undone too
