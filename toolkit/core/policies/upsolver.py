"""The ``upsolver`` policy (RULES 2-4): a type-suffixed column for each new type, every
record written, but for the records holding a rare type when ``rare_type_percent`` is set.

>>> from toolkit.core.batch.observe import observe_struct
>>> from toolkit.core.batch.options import Options
>>> from toolkit.core.values.types import Struct
>>> opts = Options(policy=UPSOLVER)
>>> plan = UPSOLVER.plan(Struct(), observe_struct([{"n": 1}, {"n": "one"}], opts), opts)
>>> [c.name for c in plan.after.fields], UPSOLVER.title
(['n', 'n_long'], 'the upsolver policy')
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

from toolkit.core.batch.contracts import contracted
from toolkit.core.batch.hint_plans import as_they_came, hinted_rows, lattice_view, real_types
from toolkit.core.batch.observe import observe_struct
from toolkit.core.batch.required import stored
from toolkit.core.batch.routing import Router, rows_of, set_aside_rare
from toolkit.core.policies.base import Columns, ComparisonRun, EvolutionPolicy
from toolkit.core.policies.upsolver_planner import plan_batch

if TYPE_CHECKING:
    from toolkit.core.batch.observe import Classifier, StructObservation
    from toolkit.core.batch.observed import Observed, Seen
    from toolkit.core.batch.quarantine import Quarantined
    from toolkit.core.batch.settings import Settings
    from toolkit.core.evolution.batch_plan import Plan
    from toolkit.core.values.types import Struct

__all__ = ["UPSOLVER", "UpsolverPolicy"]


@dataclass(frozen=True)
class UpsolverPolicy(EvolutionPolicy):
    """The ``upsolver`` policy (RULES 2-4): suffixed columns, every record written, but for
    the records holding a rare type when ``Options.rare_type_percent`` is set (they are
    set aside, ``plan.rare``) and those that leave a field the table requires empty
    (:mod:`toolkit.core.batch.required`)."""

    name: ClassVar[str] = "upsolver"
    does: ClassVar[str] = "a type-suffixed column for each new type"
    brief: ClassVar[str] = "suffixed columns"
    rules: ClassVar[str] = "RULES 2-4"
    rule: ClassVar[str] = "RULES 3"
    sets_aside: ClassVar[bool] = False
    jvm_routes: ClassVar[bool] = True
    widens: ClassVar[bool] = False
    takes_rare_type_threshold: ClassVar[bool] = True
    comparison: ClassVar[tuple[ComparisonRun, ...]] = (
        ComparisonRun(name, f"{name} ({brief})"),
    )

    def plan(
        self, schema: Struct, obs: Observed, options: Settings, batch: int = 0,
        last_assigned: int = 0, seen: Seen | None = None,
    ) -> Plan:
        # a hinted decimal column is planned as the decimal column evolution creates
        view = lattice_view(schema, options)
        plan = plan_batch(view, obs, options, batch, last_assigned, seen=seen)
        if view is schema:
            return plan
        return replace(plan, before=schema, after=real_types(plan.after, schema))

    def route(
        self, plan: Plan, obs: StructObservation, options: Settings, router: Router,
        batch: int | str = 0,
    ) -> tuple[Columns, int, list[Quarantined]]:
        obs, refused = contracted(plan, obs, router.classifier, batch)
        aside: list[Quarantined] = []
        if plan.rare:
            kept, aside = set_aside_rare(plan, obs, batch, options.on_incompatible)
            obs = observe_struct(kept, router.classifier)
        columns, n, unfilled = stored(plan.after, router.route_struct(plan.after, obs),
                                      obs.rows, router.classifier, batch,
                                      options.on_incompatible)
        return columns, n, refused.settled(aside + unfilled)

    def fit(
        self, plan: Plan, rows: list[dict[str, Any]], options: Settings,
        classifier: Classifier, batch: int | str = 0,
    ) -> tuple[list[dict[str, Any]], list[Quarantined]]:
        classifier.parsed.clear()
        hinted = hinted_rows(rows, options)  # (docs/rules.md, Type hints)
        obs = observe_struct(hinted, classifier)
        # (neither fails: the caller decides)
        obs, refused = contracted(plan, obs, classifier, batch, fail=False)
        kept, aside = set_aside_rare(plan, obs, batch)
        if aside:
            obs = observe_struct(kept, classifier)
        columns, n, unfilled = stored(
            plan.after, Router(options, classifier).route_struct(plan.after, obs), obs.rows,
            classifier, batch)
        return rows_of(plan.after, columns, n), as_they_came(
            refused.settled(aside + unfilled), hinted, rows)


UPSOLVER = UpsolverPolicy()
