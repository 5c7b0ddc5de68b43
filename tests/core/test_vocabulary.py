"""One vocabulary of schema change (RULES 6): every operation carries its own JSON name and
form, the registry lists them, and a policy's changes (the planner's AddColumn, Retype,
MakeOptional) are operations of the same kinds, logged exactly as the plain ones."""

from __future__ import annotations

import pytest

from toolkit.core.batch.options import make_options
from toolkit.core.engine import Engine
from toolkit.core.evolution.batch_plan import AddColumn, Retype
from toolkit.core.evolution.layout import TableLayout
from toolkit.core.evolution.lineage import evolution_of_plan
from toolkit.core.evolution.operations import (
    OPERATIONS,
    AddField,
    Adding,
    MakeOptional,
    WidenField,
    Widening,
)
from toolkit.core.evolution.operations import MakeOptional as PlannerMakeOptional
from toolkit.core.evolution.plans import operation_from_json, plan_evolution
from toolkit.core.values.types import Column, Struct

TABLE = Struct(
    (Column(1, "id", "int", required=True), Column(2, "n", "long"),
     Column(3, "s", "string", required=True))
)  # fmt: skip


def test_the_registry_lists_every_operation_by_its_json_name() -> None:
    assert sorted(OPERATIONS) == sorted(
        ["add", "drop", "rename", "widen", "optional", "move", "partition", "unpartition", "sort",
         "doc", "identifier"]
    )
    assert all(cls.op == name for name, cls in OPERATIONS.items())


def test_unknown_json_operations_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown operation 'explode'"):
        operation_from_json({"op": "explode"})


def test_the_planner_and_the_operations_share_one_make_optional() -> None:
    assert PlannerMakeOptional is MakeOptional
    user, policy = MakeOptional(("id",)), MakeOptional(("id",), 1, "RULES 5: why")
    assert str(user) == "? make optional id"
    assert str(policy) == "? id: required -> optional (id 1)\n    RULES 5: why"
    assert (user.name, policy.name) == ("make optional id", "id")
    assert user.to_json() == policy.to_json() == {"op": "optional", "path": ["id"]}
    assert operation_from_json(policy.to_json()) == user


def test_policy_changes_are_operations_of_the_plain_kinds() -> None:
    layout = TableLayout(TABLE)
    added = AddColumn((), Column(7, "x", "long", "doc"), "x", "RULES 3.2: why")
    plain_add = AddField(("x",), "long", "doc")
    assert isinstance(added, Adding) and added.op == "add"
    assert added.to_json() == plain_add.to_json()
    assert added.apply_to(layout) == plain_add.apply_to(layout)
    assert added.inverse(layout) == plain_add.inverse(layout)
    assert added.name == plain_add.name and added.why_irreversible is None

    retype = Retype(("id",), 1, "int", "long", True, "RULES 5: why")
    plain_widen = WidenField(("id",), "long")
    assert isinstance(retype, Widening) and retype.op == "widen"
    assert retype.to_json() == plain_widen.to_json()
    assert retype.apply_to(layout) == plain_widen.apply_to(layout)
    assert retype.why_irreversible == plain_widen.why_irreversible
    assert retype.name == "id"  # as a plan shows it; errors name the operation
    # Iceberg: a widening to the type a field has is a no-op (issue 26)
    widened = plain_widen.apply_to(layout)
    assert Retype(("id",), 1, "long", "long", True, "").apply_to(widened) == widened


def test_a_plan_lists_its_changes_as_operations_with_their_reasons() -> None:
    engine = Engine(make_options(policy="widen"))
    records = [{"n": "text", "new": 1, "s": "a", "id": 1}, {"id": 2**40}]
    plan = engine.plan(TABLE, engine.observe(records), 1)
    assert [op.op for op in plan.operations] == ["add", "widen", "optional"]
    assert plan.operations == (*plan.changes, *(r for r in plan.retypes if r.in_place),
                               *plan.optionals)  # fmt: skip
    assert len(plan.reasons) == len(plan.operations)
    # each reason a sentence, its rule a footnote (issue 14, plain words)
    assert plan.reasons == (
        "This batch brought the new key `new` as a long (RULES 5)",
        "This batch had values of `id` that only a long column holds (RULES 5)",
        "1 of 2 records has no value for `s`, so it becomes optional (RULES 5)",
    )
    assert plan.rewrites and not set(plan.rewrites) & set(plan.operations)

    evo = evolution_of_plan(plan)
    assert evo.operations == plan.operations and evo.reasons == plan.reasons
    assert evo.decided_by == "RULES 5" and evo.inverse() is None
    with_rewrites = evolution_of_plan(plan, rewrites=True)
    assert with_rewrites.operations[-len(plan.rewrites):] == plan.rewrites
    assert [w.to_json() for w in with_rewrites.rewrites] == [r.to_json() for r in plan.rewrites]


def test_a_policy_change_replays_in_a_user_plan() -> None:
    added = AddColumn((), Column(3, "x", "string"), "x", "why")
    evo = plan_evolution(TABLE, [added, MakeOptional(("id",))])
    assert evo.inverse() is None
    assert evo.irreversible == ("a column may go from required to optional, never back (id)",)
    assert [c.name for c in evo.schema.fields] == ["id", "n", "s", "x"]
    undo = plan_evolution(TABLE, [added]).inverse()
    assert undo is not None and [str(op) for op in undo.operations] == ["- drop x"]
