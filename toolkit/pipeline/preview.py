"""Preview: plan sample records against a table as it is now, without Spark and without
changing anything (RULES 6: what a user approves is exactly what is committed).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from pyiceberg.catalog import Catalog

from toolkit.core.batch.contracts import enforce_contracts
from toolkit.core.batch.observe import StructObservation
from toolkit.core.batch.options import Options, make_options, obeyed, takes_options
from toolkit.core.batch.profile import Profile, profile_of
from toolkit.core.batch.quarantine import Quarantined
from toolkit.core.batch.routing import set_aside_rare
from toolkit.core.batch.summary import summarize
from toolkit.core.engine import Engine, make_plan
from toolkit.core.evolution.batch_plan import Plan
from toolkit.core.evolution.state import TableState
from toolkit.core.values.scalars import plain_record
from toolkit.core.values.types import Struct
from toolkit.iceberg.catalog import load_table
from toolkit.iceberg.operations import rewrite_cost
from toolkit.iceberg.schema import from_iceberg
from toolkit.pipeline.sources import kind_of

__all__ = ["Preview", "plan_preview"]


@dataclass(frozen=True)
class Preview:
    """A plan made on sample records against a table as it is now, before anything changes."""

    table: str
    plan: Plan
    state: TableState  # what the plan was made against (refused later if the table moved)
    profile: Profile
    records: tuple[dict[str, Any], ...]
    #: records set aside before planning (not records, or values with no type), with their
    #: position in the input: ingest sets the same records aside
    aside: tuple[tuple[int, Quarantined], ...] = ()
    #: the engine's observation of ``records`` the plan was made on, kept so the panel
    #: reads each record's types without observing them again (None: observe them)
    observation: StructObservation | None = field(default=None, compare=False, repr=False)

    @property
    def numbers(self) -> tuple[int, ...]:
        """Each record's number in the input, counting from 1: a record set aside before
        planning keeps its number, so the others keep theirs too (what a user counts in
        the file).

        >>> from toolkit.core.batch.quarantine import Quarantined
        >>> q = Quarantined(5, "not-a-record", None, None, None, 0, "not a record")
        >>> Preview("t", None, None, None, ({"a": 1}, {"a": 2}), ((1, q),)).numbers
        (1, 3)
        """
        skipped = {i for i, _ in self.aside}
        total = len(self.records) + len(self.aside)
        return tuple(i + 1 for i in range(total) if i not in skipped)

    def set_aside(
        self, options: Options, engine: Engine | None = None
    ) -> tuple[list[tuple[int, Quarantined]], dict[int, Quarantined]]:
        """The records the batch would set aside, with their position in the input, in
        order: those set aside before planning, then what the field contracts refuse (as
        in routing, docs/rules.md), then under a policy that sets records aside those the
        table cannot take, or the records holding a rare type; and the planned records
        among them, by position among :attr:`records`."""
        engine = engine or Engine(options)
        plan, numbers = self.plan, self.numbers
        aside = list(self.aside)
        held: dict[int, Quarantined] = {}
        obs = self.observation or engine.observe(self.records, plan.batch)
        at = {id(r): i for i, r in enumerate(obs.rows)}
        for q in enforce_contracts(plan.held, obs, plan.batch, fail=False).aside:
            held[at[id(q.record)]] = q
            aside.append((numbers[at[id(q.record)]] - 1, q))
        policy = options.policy
        if policy.sets_aside:
            for i, r in enumerate(self.records):
                if i in held:
                    continue
                for q in policy.fit(plan, [r], options, engine.classifier, plan.batch)[1]:
                    held[i] = q
                    aside.append((numbers[i] - 1, q))
        if not policy.sets_aside and plan.rare:
            for q in set_aside_rare(plan, obs, plan.batch)[1]:
                if at[id(q.record)] in held:
                    continue
                held[at[id(q.record)]] = q
                aside.append((numbers[at[id(q.record)]] - 1, q))
        aside.sort(key=lambda a: a[0])
        return aside, held


@takes_options
def plan_preview(
    records: Any, table: str, catalog: Catalog, *, format: str | None = None, **options: Any
) -> Preview:
    """Plan ``records`` (a source of any kind, all its records as one batch: Python
    records, a frame, a JSON-lines path...) against ``table`` (absent: a new table)
    without Spark and without changing anything; pass the result's ``plan`` and
    ``state`` to :func:`ingest` as ``approved`` and ``expected`` to commit exactly that."""
    existing = load_table(catalog, table)
    # the field contracts and hints the table keeps, when none are given (docs/rules.md,
    # Contracts, Type hints)
    engine = Engine(obeyed(make_options(**options),
                           None if existing is None else existing.properties))
    batch = 0 if existing is None else len(existing.snapshots())
    rows, aside = _typed(engine, kind_of(records, format).records(records), batch)
    obs = engine.observe(rows, batch)
    current = Struct() if existing is None else from_iceberg(existing.schema())
    assigned = 0 if existing is None else existing.metadata.last_column_id
    seen = profile_of(obs, batch)
    plan = make_plan(current, obs, engine.options, batch, assigned, seen=seen)
    if plan.rewrites and existing is not None:  # RULES 5: show what a rewrite touches
        n, size = rewrite_cost(existing)
        plan = replace(plan, retypes=tuple(
            r if r.in_place else replace(r, rows=n, bytes=size) for r in plan.retypes
        ))
    return Preview(
        table, plan, TableState.of(existing), seen, tuple(rows), aside, obs
    )


def _typed(
    engine: Engine, batches: list[list[Any]], batch: int
) -> tuple[list[dict[str, Any]], tuple[tuple[int, Quarantined], ...]]:
    """The records every value of which the engine types, and the others set aside with
    their position, as ingest sets them aside (``on_incompatible="fail"``: the error)."""
    items = [r for b in batches for r in b]
    records, not_records = engine.admit(items, batch)
    at = [i for i, r in enumerate(items) if not isinstance(r, Mapping)]
    # values made plain up front (a preview's records are few), so the records the engine
    # sets aside are these very dicts and keep their position
    plain = [plain_record(r) for r in records]
    places = (i for i, r in enumerate(items) if isinstance(r, Mapping))
    position = {id(r): i for r, i in zip(plain, places, strict=True)}

    def typed(good: list[dict[str, Any]]) -> list[dict[str, Any]]:
        summarize(engine.observe(good, batch))  # observation is lazy below the top level
        return good

    rows, invalid = engine.tolerant(plain, batch, typed)
    aside = [*zip(at, not_records, strict=True), *((position[id(q.record)], q) for q in invalid)]
    return rows, tuple(sorted(aside, key=lambda a: a[0]))
