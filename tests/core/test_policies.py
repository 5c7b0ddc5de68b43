"""Evolution policies as objects: one lookup from the option's name, and each policy plans
and routes exactly as its own functions do (RULES 3-4 and RULES 5)."""

from __future__ import annotations

import pytest

from toolkit.core.engine import Engine
from toolkit.core.observe import Classifier, observe_struct
from toolkit.core.options import POLICIES, Options
from toolkit.core.planner import plan_batch
from toolkit.core.policies import (
    AUTOMATIC,
    BY_NAME,
    WIDENING,
    UpsolverPolicy,
    WidenPolicy,
    policy_named,
    policy_of,
)
from toolkit.core.routing import Router
from toolkit.core.types import Column, Struct
from toolkit.core.widen_policy import plan_widen, route_widen

BATCH = [{"n": 7, "flag": True}, {"n": 8.5, "flag": 1}, {"n": "x"}]
TABLE = Struct((Column(1, "n", "long"), Column(2, "flag", "boolean")))


def test_every_policy_name_has_its_object() -> None:
    assert tuple(BY_NAME) == POLICIES
    assert policy_of(Options()) is AUTOMATIC
    assert policy_of(Options(policy="widen")) is WIDENING
    assert isinstance(AUTOMATIC, UpsolverPolicy) and isinstance(WIDENING, WidenPolicy)
    with pytest.raises(ValueError, match="unknown policy 'other'"):
        policy_named("other")


def test_what_each_policy_answers() -> None:
    assert (AUTOMATIC.sets_aside, AUTOMATIC.jvm_routes, AUTOMATIC.widens) == (False, True, False)
    assert (WIDENING.sets_aside, WIDENING.jvm_routes, WIDENING.widens) == (True, False, True)


def test_the_automatic_policy_plans_and_routes_as_rules_3() -> None:
    opts = Options()
    obs = observe_struct(BATCH, opts)
    plan = AUTOMATIC.plan(TABLE, obs, opts, 3, 9)
    assert plan == plan_batch(TABLE, obs, opts, 3, 9)
    router = Router(opts)
    columns, size, aside = AUTOMATIC.route(plan, obs, opts, router)
    assert (columns, size, aside) == (router.route_struct(plan.after, obs), 3, [])
    rows, aside = AUTOMATIC.fit(plan, BATCH, opts, Classifier(opts))
    assert rows == Engine(opts).run([BATCH], TABLE).rows and aside == []
    assert AUTOMATIC.rejected(plan, BATCH, opts, Classifier(opts)) == []


def test_the_widening_policy_plans_and_routes_as_rules_5() -> None:
    opts = Options(policy="widen")
    obs = observe_struct(BATCH, opts)
    plan = WIDENING.plan(TABLE, obs, opts, 3, 9)
    assert plan == plan_widen(TABLE, obs, opts, 3, 9)
    kept, expected_aside = route_widen(plan, BATCH, opts, 3)
    columns, size, aside = WIDENING.route(plan, obs, opts, Router(opts), 3)
    assert size == len(kept) and aside == expected_aside and aside
    assert columns == [[r[c.name] for r in kept] for c in plan.after.fields]
    rows, aside = WIDENING.fit(plan, BATCH, opts, Classifier(opts), 3)
    assert (rows, aside) == (kept, expected_aside)
    assert WIDENING.rejected(plan, BATCH, opts, Classifier(opts), 3) == expected_aside
