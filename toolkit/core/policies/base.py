"""What every evolution policy declares and does: its name, its words, its RULES section and
its capabilities; it plans a batch, routes its records, and sets aside what the table
cannot take.

A policy is one frozen subclass of :class:`EvolutionPolicy` in its own module of
``toolkit/core/policies/`` and one line of :data:`toolkit.core.policies.POLICIES`. The rest
of the toolkit asks the object (``options.policy``) what it can do, never its name.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from toolkit.core.batch.observe import Classifier, StructObservation
    from toolkit.core.batch.observed import Observed, Seen
    from toolkit.core.batch.quarantine import Quarantined
    from toolkit.core.batch.routing import Router
    from toolkit.core.batch.settings import Settings
    from toolkit.core.evolution.batch_plan import Plan
    from toolkit.core.values.types import Struct

__all__ = ["Columns", "ComparisonRun", "EvolutionPolicy"]

#: the values of each column of a schema, in order (None: every value null)
Columns = list[list[Any] | None]


@dataclass(frozen=True)
class ComparisonRun:
    """One column of the notebook's policy comparison: its key, its label, and the options
    it runs with besides the policy itself (``allow_rewrites=False``)."""

    key: str
    label: str
    options: Mapping[str, Any] = field(default_factory=dict)


class EvolutionPolicy(ABC):
    """One evolution policy: plan a batch, route its records, set aside what the table
    cannot take. Subclasses are frozen dataclasses without fields; their class variables
    declare the policy."""

    #: the name ``policy=`` and ``--policy`` take, and every text calls it by
    name: ClassVar[str]
    #: what it does, in a phrase
    does: ClassVar[str]
    #: the same in two or three words (a column heading's)
    brief: ClassVar[str]
    #: the sections of ``spec/RULES.md`` that define it (``RULES 2-4``)
    rules: ClassVar[str]
    #: who decided its plans, as the lineage logs it (``RULES 3``): a reason of this
    #: section's number marks a plan as this policy's
    rule: ClassVar[str]
    #: whether routing may set records aside that observation accepted (values the table
    #: cannot take): every batch then needs the quarantine pass, and its rows are routed
    #: by :meth:`fit`
    sets_aside: ClassVar[bool]
    #: whether the JVM router (``toolkit.spark.router``) can route its batches
    jvm_routes: ClassVar[bool]
    #: whether its plans widen a key's one column (in place or by a rewrite) and a value
    #: lands only there (RULES 5), rather than adding suffixed columns to the key's family
    #: and landing in every compatible one (RULES 3); observation then keeps a typed
    #: source's narrow types (int, float) apart, for the matrix to widen
    widens: ClassVar[bool]
    #: whether it takes ``rare_type_percent`` (docs/rules.md, *Rare types*)
    takes_rare_type_threshold: ClassVar[bool] = False
    #: how the notebook's policy comparison runs it: one column per run
    comparison: ClassVar[tuple[ComparisonRun, ...]]

    @property
    def title(self) -> str:
        """What a sentence calls it: ``the upsolver policy``."""
        return f"the {self.name} policy"

    @property
    def line(self) -> str:
        """``upsolver: a type-suffixed column for each new type (RULES 2-4)``."""
        return f"{self.name}: {self.does} ({self.rules})"

    @abstractmethod
    def plan(
        self, schema: Struct, obs: Observed, options: Settings, batch: int = 0,
        last_assigned: int = 0, seen: Seen | None = None,
    ) -> Plan:
        """The plan of one batch; ``obs`` is an observation or a Spark summary of one,
        ``last_assigned`` the table's last assigned field ID, ``seen`` the batch's profile
        (reasons then say where in the batch a new field starts)."""

    @abstractmethod
    def route(
        self, plan: Plan, obs: StructObservation, options: Settings, router: Router,
        batch: int | str = 0,
    ) -> tuple[Columns, int, list[Quarantined]]:
        """The observed records routed into ``plan.after``: its columns' values, how many
        rows, and the records set aside (with ``on_incompatible="fail"`` the first one
        raises instead)."""

    @abstractmethod
    def fit(
        self, plan: Plan, rows: list[dict[str, Any]], options: Settings,
        classifier: Classifier, batch: int | str = 0,
    ) -> tuple[list[dict[str, Any]], list[Quarantined]]:
        """The rows (keyed by the column names of ``plan.after``) of the records the table
        takes under ``plan``, and the records set aside. ``rows`` hold only values the
        engine can type."""

    def sets_aside_under(self, plan: Plan) -> bool:
        """Whether routing may set records aside under ``plan``: always for a policy that
        :attr:`sets_aside`, else when the plan has rare types (a rare-type threshold,
        docs/rules.md) or values its field contracts refuse (``plan.held``, docs/rules.md,
        *Contracts*), or a table that requires a field (a record may leave it empty:
        :mod:`toolkit.core.batch.required`). Such a batch needs the quarantine pass and is
        routed by :meth:`fit` (on Spark: in the Python workers, never by the JVM router)."""
        from toolkit.core.batch.required import requires

        return self.sets_aside or bool(plan.rare) or bool(plan.held) or requires(plan.after)

    def rejected(
        self, plan: Plan, rows: list[dict[str, Any]], options: Settings,
        classifier: Classifier, batch: int | str = 0,
    ) -> list[Quarantined]:
        """The records of ``rows`` the table cannot take under ``plan`` (none, for a
        plan under which routing sets no record aside)."""
        if not self.sets_aside_under(plan):
            return []
        return self.fit(plan, rows, options, classifier, batch)[1]
