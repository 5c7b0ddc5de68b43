"""Evolution policies as objects: how a batch is planned and routed, what routing sets
aside, and whether the JVM router can route it, chosen once from ``Options.policy``.

``Options.policy`` holds the name a user types and every text calls it by (``"upsolver"``,
``"widen"``; the words around it live in one table,
:data:`toolkit.core.batch.options.POLICY_TERMS`, which :attr:`EvolutionPolicy.terms` reads);
:func:`policy_named` is the one place that name is looked up (:func:`policy_of` reads it
from options). Everything else asks the object.

>>> upsolver = policy_of(Options())
>>> upsolver.name, upsolver.sets_aside, upsolver.jvm_routes, upsolver.widens
('upsolver', False, True, False)
>>> widen = policy_of(Options(policy="widen"))
>>> widen.name, widen.sets_aside, widen.jvm_routes, widen.widens, widen.terms.title
('widen', True, False, True, 'the widen policy')

Adding a policy: one frozen subclass of :class:`EvolutionPolicy`, its name in
:data:`toolkit.core.batch.options.POLICIES` with its words in
:data:`~toolkit.core.batch.options.POLICY_TERMS` and an entry in :data:`BY_NAME`, plus its tests.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

from toolkit.core.batch.observe import Classifier, StructObservation, observe_struct
from toolkit.core.batch.observed import Observed
from toolkit.core.batch.options import POLICY_TERMS, Options, PolicyTerms
from toolkit.core.batch.quarantine import Quarantined
from toolkit.core.batch.routing import Router, rows_of, set_aside_rare
from toolkit.core.evolution.batch_plan import Plan
from toolkit.core.policies.upsolver_planner import plan_batch
from toolkit.core.policies.widen import WidenRouter, plan_widen, route_widen
from toolkit.core.values.types import Struct

__all__ = [
    "BY_NAME",
    "UPSOLVER",
    "WIDEN",
    "Columns",
    "EvolutionPolicy",
    "UpsolverPolicy",
    "WidenPolicy",
    "policy_named",
    "policy_of",
]

#: the values of each column of a schema, in order (None: every value null)
Columns = list[list[Any] | None]


class EvolutionPolicy(ABC):
    """One evolution policy: plan a batch, route its records, set aside what the table
    cannot take."""

    #: the name ``Options.policy`` holds
    name: ClassVar[str]
    #: whether routing may set records aside that observation accepted (values the table
    #: cannot take): every batch then needs the quarantine pass, and its rows are routed
    #: by :meth:`fit`
    sets_aside: ClassVar[bool]
    #: whether the JVM router (``toolkit.spark.router``) can route its batches
    jvm_routes: ClassVar[bool]
    #: whether its plans widen a key's one column (in place or by a rewrite) and a value
    #: lands only there (RULES 5), rather than adding suffixed columns to the key's family
    #: and landing in every compatible one (RULES 3)
    widens: ClassVar[bool]

    @property
    def terms(self) -> PolicyTerms:
        """How texts name it (``terms.title``: ``the upsolver policy``)."""
        return POLICY_TERMS[self.name]  # type: ignore[index]

    @abstractmethod
    def plan(
        self, schema: Struct, obs: Observed, options: Options, batch: int = 0,
        last_assigned: int = 0,
    ) -> Plan:
        """The plan of one batch; ``obs`` is an observation or a Spark summary of one,
        ``last_assigned`` the table's last assigned field ID."""

    @abstractmethod
    def route(
        self, plan: Plan, obs: StructObservation, options: Options, router: Router,
        batch: int | str = 0,
    ) -> tuple[Columns, int, list[Quarantined]]:
        """The observed records routed into ``plan.after``: its columns' values, how many
        rows, and the records set aside (with ``on_incompatible="fail"`` the first one
        raises instead)."""

    @abstractmethod
    def fit(
        self, plan: Plan, rows: list[dict[str, Any]], options: Options,
        classifier: Classifier, batch: int | str = 0,
    ) -> tuple[list[dict[str, Any]], list[Quarantined]]:
        """The rows (keyed by the column names of ``plan.after``) of the records the table
        takes under ``plan``, and the records set aside. ``rows`` hold only values the
        engine can type."""

    def sets_aside_under(self, plan: Plan) -> bool:
        """Whether routing may set records aside under ``plan``: always for a policy that
        :attr:`sets_aside`, else when the plan has rare types (the ``upsolver`` policy's
        rare-type threshold, docs/rules.md). Such a batch needs the quarantine pass and is
        routed by :meth:`fit` (on Spark: in the Python workers, never by the JVM router)."""
        return self.sets_aside or bool(plan.rare)

    def rejected(
        self, plan: Plan, rows: list[dict[str, Any]], options: Options,
        classifier: Classifier, batch: int | str = 0,
    ) -> list[Quarantined]:
        """The records of ``rows`` the table cannot take under ``plan`` (none, for a
        plan under which routing sets no record aside)."""
        if not self.sets_aside_under(plan):
            return []
        return self.fit(plan, rows, options, classifier, batch)[1]


@dataclass(frozen=True)
class UpsolverPolicy(EvolutionPolicy):
    """The ``upsolver`` policy (RULES 2-4): suffixed columns, every record written, but for
    the records holding a rare type when ``Options.rare_type_percent`` is set (they are
    set aside, ``plan.rare``)."""

    name: ClassVar[str] = "upsolver"
    sets_aside: ClassVar[bool] = False
    jvm_routes: ClassVar[bool] = True
    widens: ClassVar[bool] = False

    def plan(
        self, schema: Struct, obs: Observed, options: Options, batch: int = 0,
        last_assigned: int = 0,
    ) -> Plan:
        return plan_batch(schema, obs, options, batch, last_assigned)

    def route(
        self, plan: Plan, obs: StructObservation, options: Options, router: Router,
        batch: int | str = 0,
    ) -> tuple[Columns, int, list[Quarantined]]:
        if not plan.rare:
            return router.route_struct(plan.after, obs), len(obs.rows), []
        kept, aside = set_aside_rare(plan, obs, batch, options.on_incompatible)
        written = observe_struct(kept, router.classifier)
        return router.route_struct(plan.after, written), len(kept), aside

    def fit(
        self, plan: Plan, rows: list[dict[str, Any]], options: Options,
        classifier: Classifier, batch: int | str = 0,
    ) -> tuple[list[dict[str, Any]], list[Quarantined]]:
        classifier.parsed.clear()
        obs = observe_struct(rows, classifier)
        kept, aside = set_aside_rare(plan, obs, batch)  # (never fails: the caller decides)
        if aside:
            obs = observe_struct(kept, classifier)
        columns = Router(options, classifier).route_struct(plan.after, obs)
        return rows_of(plan.after, columns, len(kept)), aside


@dataclass(frozen=True)
class WidenPolicy(EvolutionPolicy):
    """The ``widen`` policy (RULES 5): one column per key widened by the matrix, the
    records the table cannot take set aside (or failed)."""

    name: ClassVar[str] = "widen"
    sets_aside: ClassVar[bool] = True
    jvm_routes: ClassVar[bool] = False  # it routes by its own plan, in Python
    widens: ClassVar[bool] = True

    def plan(
        self, schema: Struct, obs: Observed, options: Options, batch: int = 0,
        last_assigned: int = 0,
    ) -> Plan:
        return plan_widen(schema, obs, options, batch, last_assigned)

    def route(
        self, plan: Plan, obs: StructObservation, options: Options, router: Router,
        batch: int | str = 0,
    ) -> tuple[Columns, int, list[Quarantined]]:
        kept, aside = route_widen(plan, obs.rows, options, batch, router.classifier)
        return [[r[c.name] for r in kept] for c in plan.after.fields], len(kept), aside

    def fit(
        self, plan: Plan, rows: list[dict[str, Any]], options: Options,
        classifier: Classifier, batch: int | str = 0,
    ) -> tuple[list[dict[str, Any]], list[Quarantined]]:
        return WidenRouter(plan, options, classifier).route(rows, batch)


UPSOLVER = UpsolverPolicy()
WIDEN = WidenPolicy()

#: every policy by the name ``Options.policy`` holds (the names of
#: :data:`~toolkit.core.batch.options.POLICIES`, in order)
BY_NAME: dict[str, EvolutionPolicy] = {p.name: p for p in (UPSOLVER, WIDEN)}


def policy_named(name: str) -> EvolutionPolicy:
    """The policy of a name ``Options.policy`` holds (the one place the name is looked
    up).

    >>> policy_named("widen") is WIDEN
    True
    """
    try:
        return BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown policy {name!r}; choose one of {', '.join(BY_NAME)}") from None


def policy_of(options: Options) -> EvolutionPolicy:
    """The policy ``options`` choose.

    >>> policy_of(Options()) is UPSOLVER
    True
    """
    return policy_named(options.policy)
