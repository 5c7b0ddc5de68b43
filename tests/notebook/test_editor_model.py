"""The evolution editor's pure model (RULES 6): forms, choices, the checked plan, errors in
the operations' own words (toolkit.notebook.panels.editor.model)."""

from __future__ import annotations

import doctest

import pytest

import toolkit
import toolkit.notebook
import toolkit.notebook.panels.editor.model
from toolkit.core.evolution.layout import TableLayout
from toolkit.core.evolution.state import ABSENT
from toolkit.core.values.types import Column, ListOf, Struct
from toolkit.errors import OperationError
from toolkit.notebook.panels.editor.model import (
    OPERATION_KINDS,
    EvolutionEditorModel,
    build_operation,
    form_of,
)

PEOPLE = Struct((
    Column(1, "id", "long"),
    Column(2, "name", "string"),
    Column(3, "address", Struct((Column(4, "city", "string"),))),
    Column(5, "tags", ListOf(6, "string")),
))  # fmt: skip


def test_docstring_examples() -> None:
    result = doctest.testmod(toolkit.notebook.panels.editor.model, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


# --- the pure model ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "values", "text"),
    [
        ("rename", {"path": ("name",), "new_name": "full_name"}, "~ rename name -> full_name"),
        ("drop", {"path": "address.city"}, "- drop address.city"),
        ("move first", {"path": ("name",)}, "> move name first"),
        ("move before", {"path": ("name",), "anchor": ("id",)}, "> move name before id"),
        ("move after", {"path": ("id",), "anchor": ("name",)}, "> move id after name"),
        ("make optional", {"path": ("id",)}, "? make optional id"),
        ("widen", {"path": ("tags", "element"), "to": "string"}, "^ widen tags.element -> string"),
        ("add column", {"parent": (), "name": "age", "type": "int", "doc": "years"},
         "+ add age: int  doc='years'"),
        ("add column", {"parent": ("address",), "name": "zip", "type": "string", "doc": ""},
         "+ add address.zip: string"),
        ("add partition field", {"source": ("id",), "transform": "bucket", "width": "8"},
         "+ partition by bucket[8](id)"),
        ("add partition field",
         {"source": ("id",), "transform": "identity", "width": "", "partition_name": "by_id"},
         "+ partition by identity(id) as by_id"),
        ("remove partition field", {"name": "id_bucket_8"}, "- partition field id_bucket_8"),
        ("sort order", {"key": ("name",), "direction": "desc", "then": ("id",),
                        "then_direction": "asc"},
         "= sort by name desc nulls-last, id asc nulls-first"),
        ("sort order", {"key": "", "direction": "asc", "then": "", "then_direction": "asc"},
         "= sort by nothing (unsorted)"),
    ],
)  # fmt: skip


def test_a_filled_form_is_an_operation(kind: str, values: dict[str, object], text: str) -> None:
    assert str(build_operation(kind, values)) == text


@pytest.mark.parametrize(
    ("kind", "values", "message"),
    [
        ("rename", {"path": ("name",), "new_name": ""}, "rename: give the new name"),
        ("drop", {"path": ""}, "drop: choose the field"),
        ("move after", {"path": ("id",), "anchor": ""}, "choose the field to move it next to"),
        ("widen", {"path": ("id",), "to": " "}, "widen: give the type to widen to"),
        ("add column", {"name": "", "type": "int"}, "give the new column's name"),
        ("add column", {"name": "age", "type": ""}, "give the type of age"),
        ("add column", {"name": "age", "type": "integer"}, "add age: "),
        ("add partition field", {"source": ("id",), "transform": "bucket", "width": "x"},
         "bucket needs a positive number of buckets, got 'x'"),
        ("remove partition field", {"name": ""}, "choose the partition field to remove"),
    ],
)  # fmt: skip


def test_an_incomplete_form_says_what_is_missing(
    kind: str, values: dict[str, object], message: str
) -> None:
    with pytest.raises(OperationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build_operation(kind, values)


def test_every_operation_kind_has_a_form() -> None:
    assert set(OPERATION_KINDS) == {
        "rename", "drop", "move first", "move before", "move after", "make optional",
        "widen", "add column", "add partition field", "remove partition field", "sort order",
        "change doc", "identifier fields",
    }
    for kind in OPERATION_KINDS:
        assert form_of(kind)
    with pytest.raises(ValueError, match="unknown operation 'explode'"):
        form_of("explode")


def test_the_model_checks_the_plan_and_offers_the_fields_as_the_plan_leaves_them() -> None:
    m = EvolutionEditorModel("db.people", TableLayout(PEOPLE), ABSENT)
    path = form_of("rename")[0]
    assert [label for label, _ in m.choices(path)] == ["id", "name", "address", "address.city",
                                                       "tags"]
    widen = form_of("widen")[0]
    assert [label for label, _ in m.choices(widen)] == [
        "id", "name", "address.city", "tags.element",
    ]
    parent = form_of("add column")[0]
    assert m.choices(parent) == (("(top level)", ()), ("address", ("address",)))

    m = m.with_operation(build_operation("rename", {"path": "name", "new_name": "full_name"}))
    m = m.with_operation(build_operation("add column", {"name": "age", "type": "int"}))
    assert m.error is None and m.can_commit
    # the next operation sees the renamed field under its new name
    assert ("full_name", ("full_name",)) in m.choices(path)
    assert ("name", ("name",)) not in m.choices(path)
    after = {n.full_name: (n.field_id, n.new) for root in m.after_tree for n in root.walk()}
    assert after["full_name"] == (2, False) and after["age"] == (7, True)
    assert "~ rename name -> full_name" in m.plan_text and "+ add age: int" in m.plan_text

    # an operation that cannot apply: the plan says which one and why, in the ops' words
    broken = m.with_operation(build_operation("drop", {"path": "name"}))
    assert broken.error == "operation 3 (drop name): no field 'name' (fields: id, full_name, "\
        "address, tags, age)"
    assert not broken.can_commit and broken.plan is None
    assert broken.plan_text.startswith("The plan cannot apply: operation 3")
    with pytest.raises(OperationError, match="operation 3"):
        _ = broken.request
    assert broken.without(2) == m and broken.cleared().operations == ()


def test_a_rewrite_shows_the_rows_and_bytes_it_touches() -> None:
    m = EvolutionEditorModel(
        "db.people", TableLayout(PEOPLE), ABSENT, rewrite_cost=(1200, 34567)
    ).with_operation(build_operation("widen", {"path": ("id",), "to": "string"}))
    (rewrite,) = m.rewrites
    assert rewrite.rewrite and (rewrite.rows, rewrite.bytes) == (1200, 34567)
    assert "^ widen id -> string  REWRITE (1,200 rows, 34,567 bytes)" in m.plan_text
    assert "1 operation, ready to commit, 1 rewrite" in m.summary
