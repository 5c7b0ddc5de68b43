"""Evolution policies as objects: one lookup from the option's name (``Options`` hold the
object), and each policy plans and routes exactly as its own functions do (RULES 3-4 and
RULES 5)."""

from __future__ import annotations

import pytest

from toolkit.core.batch.observe import Classifier, observe_struct
from toolkit.core.batch.options import Options, make_options, option_doc
from toolkit.core.batch.routing import Router
from toolkit.core.engine import Engine
from toolkit.core.policies import (
    POLICIES,
    UPSOLVER,
    WIDEN,
    UpsolverPolicy,
    WidenPolicy,
    policy_named,
    policy_names,
)
from toolkit.core.policies.upsolver_planner import plan_batch
from toolkit.core.policies.widen import plan_widen, route_widen
from toolkit.core.values.types import Column, Struct

BATCH = [{"n": 7, "flag": True}, {"n": 8.5, "flag": 1}, {"n": "x"}]
TABLE = Struct((Column(1, "n", "long"), Column(2, "flag", "boolean")))


def test_every_policy_name_has_its_object() -> None:
    assert POLICIES == [UPSOLVER, WIDEN] and policy_names() == ("upsolver", "widen")
    assert Options().policy is UPSOLVER
    assert Options(policy="widen").policy is WIDEN == make_options(policy="widen").policy
    assert Options(policy=WIDEN) == Options(policy="widen")
    assert option_doc("policy").choices == policy_names()
    assert isinstance(UPSOLVER, UpsolverPolicy) and isinstance(WIDEN, WidenPolicy)
    with pytest.raises(ValueError, match="unknown policy 'other'"):
        policy_named("other")


def test_each_policy_has_one_name_the_word_a_user_types() -> None:
    """Every text names a policy by the word ``policy=`` takes (issue 14, plain words):
    each policy declares its words, the RULES sections of each."""
    assert [(p.title, p.rules) for p in POLICIES] == [
        ("the upsolver policy", "RULES 2-4"), ("the widen policy", "RULES 5"),
    ]
    with pytest.raises(ValueError, match=r"an option of the upsolver policy \(policy='upsolver'\)"):
        make_options(policy="widen", rare_type_percent=1)


def test_what_each_policy_answers() -> None:
    assert (UPSOLVER.sets_aside, UPSOLVER.jvm_routes, UPSOLVER.widens) == (False, True, False)
    assert (WIDEN.sets_aside, WIDEN.jvm_routes, WIDEN.widens) == (True, False, True)
    assert (UPSOLVER.takes_rare_type_threshold, WIDEN.takes_rare_type_threshold) == (True, False)


def test_the_automatic_policy_plans_and_routes_as_rules_3() -> None:
    opts = Options()
    obs = observe_struct(BATCH, opts)
    plan = UPSOLVER.plan(TABLE, obs, opts, 3, 9)
    assert plan == plan_batch(TABLE, obs, opts, 3, 9)
    router = Router(opts)
    columns, size, aside = UPSOLVER.route(plan, obs, opts, router)
    assert (columns, size, aside) == (router.route_struct(plan.after, obs), 3, [])
    rows, aside = UPSOLVER.fit(plan, BATCH, opts, Classifier(opts))
    assert rows == Engine(opts).run([BATCH], TABLE).rows and aside == []
    assert UPSOLVER.rejected(plan, BATCH, opts, Classifier(opts)) == []


def test_the_widening_policy_plans_and_routes_as_rules_5() -> None:
    opts = Options(policy="widen")
    obs = observe_struct(BATCH, opts)
    plan = WIDEN.plan(TABLE, obs, opts, 3, 9)
    assert plan == plan_widen(TABLE, obs, opts, 3, 9)
    kept, expected_aside = route_widen(plan, BATCH, opts, 3)
    columns, size, aside = WIDEN.route(plan, obs, opts, Router(opts), 3)
    assert size == len(kept) and aside == expected_aside and aside
    assert columns == [[r[c.name] for r in kept] for c in plan.after.fields]
    rows, aside = WIDEN.fit(plan, BATCH, opts, Classifier(opts), 3)
    assert (rows, aside) == (kept, expected_aside)
    assert WIDEN.rejected(plan, BATCH, opts, Classifier(opts), 3) == expected_aside
