"""The evolution editor's widget (RULES 6), clicked in-process against a real catalog: add
operations, see the schema after and the plan, commit, undo
(toolkit.notebook.panels.editor.widget)."""

from __future__ import annotations

from pathlib import Path

import ipywidgets as widgets
import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.types import StringType

import toolkit
import toolkit.notebook
import toolkit.notebook.panels.editor.model
from tests.notebook.panel_tables import make_table
from toolkit.core.evolution.layout import TableLayout
from toolkit.core.evolution.operations import (
    AddField,
    AddPartitionField,
    MoveField,
    ReplaceSortOrder,
    SortKey,
)
from toolkit.core.evolution.state import ABSENT
from toolkit.core.values.types import Column, ListOf, Struct
from toolkit.iceberg import catalog
from toolkit.iceberg.lineage import lineage
from toolkit.notebook.build import edit_schema, editor_model
from toolkit.notebook.panels.editor.model import (
    OPERATION_KINDS,
    EvolutionEditorModel,
    EvolutionRequest,
    build_operation,
)
from toolkit.notebook.panels.editor.widget import EvolutionEditor

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


@pytest.fixture
def lake(tmp_path: Path) -> Catalog:
    return catalog(tmp_path / "lake")


PEOPLE = Struct((
    Column(1, "id", "long"),
    Column(2, "name", "string"),
    Column(3, "address", Struct((Column(4, "city", "string"),))),
    Column(5, "tags", ListOf(6, "string")),
))  # fmt: skip


# --- the widget, against a real catalog ---------------------------------------------------------


def test_the_public_names() -> None:
    assert toolkit.edit_schema is edit_schema
    assert toolkit.notebook.edit_schema is edit_schema
    assert toolkit.notebook.EvolutionEditor is EvolutionEditor


def test_pick_fill_add_commit_and_undo_on_a_real_table(lake: Catalog) -> None:
    make_table(lake)
    editor = edit_schema(lake, "db.people")
    assert "Evolution of db.people" in editor.header.value
    assert "no operation yet" in editor.header.value
    assert editor.commit_button.disabled  # nothing to commit yet
    bundle = editor._repr_mimebundle_()
    assert bundle[WIDGET_MIME]["model_id"] == editor.widget.model_id

    # what a user does: pick in the menu, fill the inputs, click "Add to plan"
    editor.kind.value = "rename"
    path, new_name = editor.form.children
    assert isinstance(path, widgets.Dropdown)
    assert ("address.city", ("address", "city")) in path.options
    path.value = ("name",)
    new_name.value = "full_name"
    editor.add_button.click()
    editor.choose("add column")
    editor.fill(parent="address", name="zip", type="string", doc="postal code")
    editor.add_button.click()
    editor.choose("move first")
    editor.fill(path="full_name")  # the renamed field is offered under its new name
    editor.add_button.click()

    assert editor.form_message.value == ""
    assert [label for label, _ in editor.operations.options] == [
        "1. ~ rename name -> full_name",
        "2. + add address.zip: string  doc='postal code'",
        "3. > move full_name first",
    ]
    after = editor.after.value
    assert '<span class="tknb-new">10: zip: string</span>' in after
    assert "2: full_name: string" in after and "2: name: string" in editor.before.value
    assert "&gt; move full_name first" in editor.plan.value
    assert not editor.commit_button.disabled

    # an operation that cannot apply is refused with the operation's own words, not added
    editor.choose("widen")
    editor.fill(path="id", to="boolean")
    editor.add_button.click()
    assert "operation 4 (widen id): id cannot widen from long to boolean" in (
        editor.form_message.value
    )
    assert len(editor.model.operations) == 3

    editor.commit_button.click()

    outcome = editor.outcome
    assert outcome is not None and outcome.kind == "committed", editor.message.value
    table = lake.load_table("db.people")
    assert [f.name for f in table.schema().fields][:2] == ["full_name", "id"]
    assert table.schema().find_field("full_name").field_id == 2  # renamed, same field
    assert table.schema().find_field("address.zip").doc == "postal code"
    rows = table.scan().to_arrow().to_pylist()
    assert sorted(r["full_name"] for r in rows) == ["Ada", "Bob"]  # the data stayed
    # the editor re-read the table: an empty plan, and the plan in the lineage
    assert not editor.model.operations and editor.commit_button.disabled
    (entry,) = lineage(table)
    assert f"logged as lineage entry #{entry.seq}" in editor.message.value
    assert "~ rename name -&gt; full_name" in editor.lineage_rows[entry.seq].entry.value
    assert list(editor.undo_buttons) == [entry.seq]

    editor.undo_buttons[entry.seq].click()

    assert editor.outcome is not None and editor.outcome.kind == "undone", editor.message.value
    table = lake.load_table("db.people")
    assert [f.name for f in table.schema().fields][:2] == ["id", "name"]
    assert "zip" not in str(table.schema())
    assert [e.seq for e in lineage(table)] == [entry.seq, entry.seq + 1]
    undone, undo = editor.lineage_rows[entry.seq], editor.lineage_rows[entry.seq + 1]
    assert f"#{entry.seq + 1} by user" in undo.entry.value
    # no Undo is offered: the entry was undone, and the undo dropped zip, which a schema
    # change cannot bring back; each row says why
    assert editor.undo_buttons == {}
    assert f"Already undone by entry {entry.seq + 1}." in undone.status.value
    assert "This change cannot be undone automatically: a drop cannot be undone" in (
        undo.status.value
    )


def test_widen_sort_then_partition(lake: Catalog) -> None:
    make_table(lake)
    editor = edit_schema(lake, "db.people")
    for kind, values in (
        ("widen", {"path": "visits", "to": "long"}),
        ("widen", {"path": "score", "to": "string"}),
        ("sort order", {"key": "id", "direction": "desc"}),
    ):
        editor.choose(kind)
        editor.fill(**values)
        assert editor.add() is None, editor.form_message.value
    assert "REWRITE (2 rows," in editor.plan.value
    assert "committing this plan approves rewriting 1 column;" in editor.plan.value
    assert "sorted by id desc nulls-last" in editor.plan.value

    outcome = editor.commit()

    assert outcome.kind == "committed", editor.message.value
    table = lake.load_table("db.people")
    assert str(table.schema().find_field("visits").field_type) == "long"
    assert str(table.schema().find_field("score").field_type) == "string"
    assert sorted(r["score"] for r in table.scan().to_arrow().to_pylist()) == ["10", "20"]
    assert [(f.source_id, str(f.direction).lower()) for f in table.sort_order().fields] == [
        (1, "desc"),
    ]
    # widenings cannot be undone: no Undo button, the reason shown instead
    assert editor.undo_buttons == {}
    (widened,) = editor.lineage_rows.values()
    assert widened.button.disabled
    assert "This change cannot be undone automatically:" in widened.status.value

    # then a partition field, which "Undo" removes again
    editor.choose("add partition field")
    editor.fill(source="signup", transform="day")
    assert editor.add() is None
    assert "partitioned by day(signup) as signup_day" in editor.plan.value
    assert editor.commit().kind == "committed", editor.message.value
    assert [f.name for f in lake.load_table("db.people").spec().fields] == ["signup_day"]
    editor.choose("remove partition field")
    assert editor.inputs["name"].options == (("signup_day", "signup_day"),)
    (seq,) = editor.undo_buttons
    assert editor.undo(seq).kind == "undone", editor.message.value
    assert lake.load_table("db.people").spec().fields == ()


def test_a_table_that_moved_is_refused_and_nothing_is_applied(lake: Catalog) -> None:
    table = make_table(lake)
    editor = edit_schema(lake, "db.people")
    editor.add_operation(toolkit.ops.rename("name", "full_name"))
    with table.update_schema() as update:  # another writer, meanwhile
        update.add_column("other", StringType())

    outcome = editor.commit()

    assert outcome.kind == "stale"
    assert "Reload the table" in editor.message.value
    assert lake.load_table("db.people").schema().find_field("name").field_id == 2
    editor.reload()  # read the table again, the plan kept and checked again
    assert "other" in editor.after.value
    assert editor.commit().kind == "committed"
    assert lake.load_table("db.people").schema().find_field("full_name").field_id == 2


def test_an_injected_commit_receives_the_checked_plan_and_state(lake: Catalog) -> None:
    make_table(lake)
    requests: list[EvolutionRequest] = []

    def commit(request: EvolutionRequest) -> object:
        requests.append(request)
        raise ConnectionError("catalog unreachable")

    model = editor_model(lake, "db.people")
    editor = EvolutionEditor(model, commit=commit)  # type: ignore[arg-type]
    editor.add_operation(toolkit.ops.move_after("id", "name"))
    editor.add_operation(toolkit.ops.sort_by("name"))
    editor.commit_button.click()
    (request,) = requests
    assert request.expected == model.state and request.table == "db.people"
    assert [type(op) for op in request.plan.operations] == [MoveField, ReplaceSortOrder]
    assert request.plan.before == model.layout
    assert editor.outcome is not None and editor.outcome.kind == "error"
    assert "ConnectionError: catalog unreachable" in editor.message.value
    assert not editor.commit_button.disabled  # may be retried


def test_a_read_only_editor_cannot_commit() -> None:
    editor = EvolutionEditor(EvolutionEditorModel("db.t", TableLayout(PEOPLE), ABSENT))
    editor.add_operation(AddField(("x",), "long"))
    editor.add_operation(AddPartitionField(("id",), "bucket[4]"))
    editor.add_operation(ReplaceSortOrder((SortKey(("x",)),)))
    assert editor.commit_button.disabled
    assert editor.commit().kind == "error"
    assert "no commit function" in editor.message.value
    with pytest.raises(ValueError, match="'nope' is not offered"):
        editor.choose("drop")
        editor.fill(path="nope")
    with pytest.raises(KeyError, match="drop has no input 'new_name'"):
        editor.fill(new_name="y")


def test_every_form_builds_an_operation_of_the_core_vocabulary() -> None:
    """The editor's menu names operations in plain words; what each form builds is one of
    the core's operations, by the name the core gives it (one vocabulary)."""
    from toolkit.core.evolution.operations import OPERATIONS
    from toolkit.notebook.panels.editor.model import FORM_OPERATION

    assert set(FORM_OPERATION) == set(OPERATION_KINDS)
    assert set(FORM_OPERATION.values()) == set(OPERATIONS)
    filled = {
        "rename": {"path": ("a",), "new_name": "b"},
        "drop": {"path": ("a",)},
        "move first": {"path": ("a",)},
        "move before": {"path": ("a",), "anchor": ("b",)},
        "move after": {"path": ("a",), "anchor": ("b",)},
        "make optional": {"path": ("a",)},
        "widen": {"path": ("a",), "to": "long"},
        "add column": {"name": "c", "type": "string"},
        "add partition field": {"source": ("a",), "transform": "identity"},
        "remove partition field": {"name": "a"},
        "sort order": {"key": ("a",), "direction": "asc"},
        "change doc": {"path": ("a",), "doc": "why"},
        "identifier fields": {"key": ("a",)},
    }
    for kind in OPERATION_KINDS:
        op = build_operation(kind, filled[kind])
        assert op.op == FORM_OPERATION[kind], kind
        assert type(op) is OPERATIONS[op.op]
