"""The preview panel's view-model: what a plan would do before anything changes (the
schema before and after, new columns and why, widenings, records set aside, where sample
values land, the view's SQL), and what "Approve and commit" sends.

Pure: no widget. The HTML is :mod:`toolkit.notebook.panels.preview.html`; what a commit did is
:class:`~toolkit.notebook.outcome.CommitOutcome`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolkit.core.batch.conversion_warnings import conversion_warnings
from toolkit.core.batch.options import Options
from toolkit.core.batch.quarantine import Quarantined, fields_set_aside
from toolkit.core.engine import Engine
from toolkit.core.evolution.batch_plan import Plan, Retype
from toolkit.core.evolution.operations import MakeOptional
from toolkit.core.evolution.state import ABSENT, TableState
from toolkit.core.evolution.view_types import hinted_view_types, view_paths
from toolkit.core.policies import DEFAULT_POLICY, EvolutionPolicy
from toolkit.core.values.lookalikes import lookalike_warnings
from toolkit.core.values.types import iter_ids, type_to_str
from toolkit.core.values.wording import counted
from toolkit.core.views import DIALECTS, Dialect, coalesce_sql, view_folds
from toolkit.notebook.common import clip
from toolkit.notebook.landings import (
    LandingGrid,
    Look,
    RecordLandings,
    aside_landings,
    held_landings,
    landings_of,
    sample_records,
    widen_landings,
)
from toolkit.notebook.outcome import CommitOutcome, TableSize, rewrite_question
from toolkit.notebook.panels.explore.model import made_up_short_id
from toolkit.notebook.schema_tree import SchemaNode, schema_tree

if TYPE_CHECKING:
    from toolkit.pipeline.preview import Preview

__all__ = [
    "Approval",
    "CommitRequest",
    "NewColumn",
    "PlanModel",
    "QuarantinePreview",
    "QuarantineSample",
    "batch_text",
    "preview_batch_id",
]


@dataclass(frozen=True, slots=True)
class NewColumn:
    """A column the plan adds, and the rule that decided it."""

    path: tuple[str, ...]
    field_id: int
    type: str
    doc: str | None
    reason: str
    family: str

    @property
    def name(self) -> str:
        return ".".join(self.path)


@dataclass(frozen=True, slots=True)
class QuarantineSample:
    """One record that would be set aside: why, where, and the record itself."""

    index: int
    """Its position among the previewed records (from 0)."""
    reason: str
    field: str | None
    observed: str | None
    table_type: str | None
    detail: str
    raw: str
    """The record as clipped JSON text."""


@dataclass(frozen=True, slots=True)
class QuarantinePreview:
    """The records of a preview the table cannot take as they are (RULES 5): counted by
    reason, with the first few of each reason as samples. ``fails`` when the options say
    such a record fails the whole batch instead (``on_incompatible="fail"``)."""

    total: int
    by_reason: tuple[tuple[str, int], ...]
    samples: tuple[QuarantineSample, ...]
    fails: bool = False

    @classmethod
    def of(
        cls,
        items: Sequence[tuple[int, Quarantined]],
        *,
        per_reason: int = 5,
        fails: bool = False,
    ) -> QuarantinePreview:
        counts: dict[str, int] = {}
        samples: list[QuarantineSample] = []
        for index, q in items:
            counts[q.reason] = counts.get(q.reason, 0) + 1
            if counts[q.reason] <= per_reason:
                samples.append(QuarantineSample(
                    index, q.reason, q.field, q.observed, q.table_type, q.detail,
                    clip(q.raw, 200),
                ))
        ranked = tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
        return cls(len(items), ranked, tuple(samples), fails)


def preview_batch_id(table: str, records: Iterable[Mapping[str, Any]]) -> str:
    """A batch id derived from the table name and the records, key order aside.

    The table state is deliberately left out: approving the same records for the same
    table again, after a commit, reuses the id, and ``ingest`` then writes nothing twice.
    (The state is held separately: ``expected`` refuses a table that moved.)

    >>> preview_batch_id("db.t", [{"a": 1, "b": 2}]) == preview_batch_id("db.t", [{"b": 2, "a": 1}])
    True
    >>> preview_batch_id("db.t", [{"a": 1}]) == preview_batch_id("db.u", [{"a": 1}])
    False
    """
    digest = hashlib.sha256(table.encode())
    for r in records:
        digest.update(b"\n")
        digest.update(json.dumps(r, sort_keys=True, default=repr, ensure_ascii=False).encode())
    return f"preview-{digest.hexdigest()[:20]}"


def batch_text(batch_id: str, records: int) -> str:
    """A preview's batch as a person reads it: the id the user gave, else the records and
    a short id, which the table's statistics show again once it is committed (as
    :func:`~toolkit.notebook.panels.explore.model.batch_label` does).

    >>> batch_text("day-2", 20), batch_text("preview-c0dadcddb24bbb1e991a", 20)
    ('batch day-2', 'unnamed batch of 20 records (c0da)')
    """
    short = made_up_short_id(batch_id)
    if short is None:
        return f"batch {batch_id}"
    return f"unnamed batch of {counted(records, 'record')} ({short})"


@dataclass(frozen=True, slots=True)
class PlanModel:
    """What a preview shows: the plan, where sample values land, and the view's SQL."""

    table: str
    batch: int
    batch_id: str
    state: TableState
    records: int
    """Records the plan was made on (all of them, not only the samples)."""
    before: tuple[SchemaNode, ...]
    after: tuple[SchemaNode, ...]
    new_columns: tuple[NewColumn, ...]
    samples: tuple[RecordLandings, ...]
    sql: tuple[tuple[Dialect, str], ...]
    """The COALESCE view's SELECT over the table after the plan, per dialect."""
    policy: EvolutionPolicy = DEFAULT_POLICY
    widenings: tuple[Retype, ...] = ()
    """Columns the plan retypes (the ``widen`` policy): in place or by an approved rewrite."""
    pending: tuple[Retype, ...] = ()
    """Rewrites the data needs but that are not approved (``allow_rewrites=False``): the
    values needing them are set aside instead."""
    optionals: tuple[MakeOptional, ...] = ()
    quarantine: QuarantinePreview | None = None
    """Records the table cannot take (the ``widen`` policy) or whose values have no type; None
    when the ``upsolver`` policy sets none aside."""
    unlanded: tuple[str, ...] = ()
    """A sentence for each field every value of which is set aside: it gets no column,
    which the schema alone never says."""
    rare_type_percent: float | None = None
    """The ``upsolver`` policy's rare-type threshold in force, in percent (None: off)."""
    rare_types: tuple[str, ...] = ()
    """A sentence for each rare type the plan sets aside instead of evolving the schema for
    (which field, which type, how many of its values, what it would have added)."""
    missing: int = 0
    """Field-and-type pairs of the batch no sample record holds (:func:`cover_sample`)."""
    lookalikes: tuple[str, ...] = ()
    """A warning for each group of new names that look alike (the plan's, from
    :mod:`toolkit.core.values.lookalikes`): different fields a reviewer could take for one."""
    contracts: tuple[str, ...] = ()
    """A sentence for each field whose contract refuses values of the batch (``plan.held``,
    docs/rules.md, *Contracts*): how many, as what, and what the contract does."""
    folds: tuple[str, ...] = ()
    """What each field of the view folds to and what that costs, nested ones too
    (``address: record and string fold into string (records as JSON text)``)."""
    conversions: tuple[str, ...] = ()
    """A warning per field and type whose values the batch writes only as another kind of
    value (:mod:`toolkit.core.batch.conversion_warnings`): ``quantity: 3 booleans were written
    as numbers (true -> 1); ...``."""

    @property
    def new_table(self) -> bool:
        return self.state == ABSENT

    @property
    def changed(self) -> bool:
        return bool(self.new_columns or self.widenings or self.optionals)

    @property
    def rewrites(self) -> tuple[Retype, ...]:
        """The widenings that rewrite data: approving the plan approves them."""
        return tuple(w for w in self.widenings if not w.in_place)

    @property
    def widening(self) -> bool:
        """Planned under the widening policy (RULES 5)."""
        return self.policy.widens

    def sql_for(self, dialect: Dialect) -> str:
        return dict(self.sql)[dialect]

    @property
    def summary(self) -> str:
        """The plan in one sentence, naming the table (what ``print(model.summary)``
        shows)."""
        return self._sentence(self.table)

    @property
    def headline(self) -> str:
        """The plan in one sentence under a heading that names the table already
        ("Preview of db.events: 20 records planned against the table as it is ..."): the
        table is said once."""
        return self._sentence("the table")

    def _sentence(self, table: str) -> str:
        where = (
            f"{table} does not exist yet: it will be created"
            if self.new_table
            else f"{table} as it is now (schema id {self.state.schema_id}, "
            f"snapshot {self.state.snapshot_id})"
        )
        parts = [f"{counted(len(self.new_columns), 'column')} to add"] if self.new_columns else []
        if self.widenings:
            parts.append(
                f"{len(self.widenings):,} to widen ({len(self.rewrites):,} by rewrite)"
            )
        if self.optionals:
            parts.append(f"{len(self.optionals):,} to make optional")
        if self.pending:
            parts.append(f"{counted(len(self.pending), 'rewrite')} awaiting approval")
        change = ", ".join(parts) or "no schema change"
        q = self.quarantine
        if q is not None and q.total:
            fate = "would fail the batch" if q.fails else "to quarantine"
            change += f"; {counted(q.total, 'record')} {fate}"
        told = "".join(f"; {u}" for u in self.unlanded)
        if self.rare_type_percent is not None:
            told += f"; {self.rare_types_text}"
        told += "".join(f"; contract: {c}" for c in self.contracts)
        if self.new_table:
            return f"{counted(self.records, 'record')} planned; {where}; {change}{told}"
        return f"{counted(self.records, 'record')} planned against {where}; {change}{told}"

    @property
    def rare_types_text(self) -> str:
        """The rare-type threshold in force and what it sets aside, in words ("" when
        the threshold is off)."""
        if self.rare_type_percent is None:
            return ""
        head = f"rare-type threshold {self.rare_type_percent:g}%"
        if not self.rare_types:
            return f"{head}: no type of this batch is rare, nothing set aside for it"
        return f"{head}: " + "; ".join(self.rare_types)

    @property
    def batch_text(self) -> str:
        """The batch as a person reads it (:func:`batch_text`)."""
        return batch_text(self.batch_id, self.records)

    @property
    def landings(self) -> LandingGrid:
        """Where the sample values land, as one grid to filter and page."""
        return LandingGrid.of(self.samples, self.records, self.missing)

    @classmethod
    def from_preview(
        cls,
        preview: Preview,
        options: Options | None = None,
        *,
        sample: int = 20,
        batch_id: str | None = None,
    ) -> PlanModel:
        """``options`` must be those the preview was planned with (they decide routing and
        the view's SQL). The landings shown are those of the records picked so that every
        field shows with every type it arrives as (:func:`cover_sample`), and of the first
        records up to ``sample`` records in all."""
        opts = options or Options()
        plan = preview.plan
        before_ids = set(iter_ids(plan.before))
        new_ids = [i for i in iter_ids(plan.after) if i not in before_ids]
        new_columns = tuple(
            NewColumn(
                c.path, c.column.id, type_to_str(c.column.type), c.column.doc, c.reason, c.family
            )
            for c in plan.changes
        )
        engine = Engine(opts)
        numbers = preview.numbers
        quarantine: QuarantinePreview | None = None
        # records set aside before planning (values with no type...), then what the
        # contracts refuse, then under a policy that sets records aside those the table
        # cannot take, or the records holding a rare type
        aside, held = preview.set_aside(opts, engine)
        obs = preview.observation or engine.observe(preview.records, plan.batch)
        policy = opts.policy
        picked, missing = sample_records(preview, obs, max(sample, 0))
        look = Look.of(plan, preview.state == ABSENT, engine.classifier)
        before = dict(preview.aside)
        planned = {n: i for i, n in enumerate(numbers)}
        samples = []
        for n in picked:
            if n - 1 in before:
                samples.append(aside_landings(n, before[n - 1]))
                continue
            i = planned[n]
            r = preview.records[i]
            if i in held:
                samples.append(held_landings(n, r, held[i], look))
            elif policy.widens:  # a value lands in its key's one column, or nowhere
                row = policy.fit(plan, [r], opts, engine.classifier, plan.batch)[0][0]
                samples.append(widen_landings(n, r, plan, row, look))
            else:
                samples.append(landings_of(n, r, plan, engine.router, look))
        if aside or policy.sets_aside:
            quarantine = QuarantinePreview.of(aside, fails=opts.on_incompatible == "fail")
        unlanded = tuple(
            f"every value of field {name!r} is set aside, so it gets no column: {q.detail}"
            for name, q in fields_set_aside(plan.after, (q for _, q in aside)).items()
        )
        sql: tuple[tuple[Dialect, str], ...] = ()
        # a hinted field reads as its hint's type (the options' hints, once they exist:
        # toolkit.core.batch.hints); hints for fields with no column yet are not the view's
        paths = view_paths(plan.after)
        hinted = {p: t for p, t in hinted_view_types(None, opts.hints).items()
                  if p in paths}
        if plan.after.fields:
            sql = tuple(
                (
                    d,
                    coalesce_sql(
                        plan.after, preview.table, d, lattice=opts.lattice,
                        timestamp_unit=opts.timestamp_unit, pretty=True,
                        long_timestamp_unit=opts.long_timestamp_unit, view_types=hinted,
                    ),
                )
                for d in DIALECTS
            )
        folds = tuple(str(f) for f in view_folds(
            plan.after, lattice=opts.lattice, timestamp_unit=opts.timestamp_unit,
            long_timestamp_unit=opts.long_timestamp_unit, view_types=hinted,
        ))
        return cls(
            preview.table,
            plan.batch,
            batch_id or preview_batch_id(preview.table, preview.records),
            preview.state,
            len(preview.records) + len(preview.aside),
            schema_tree(plan.before),
            schema_tree(plan.after, new_ids),
            new_columns,
            tuple(samples),
            sql,
            opts.policy,
            plan.retypes,
            plan.pending,
            plan.optionals,
            quarantine,
            unlanded,
            # (the plan's own threshold when ``options`` were left out)
            plan.rare[0].percent if plan.rare else opts.rare_type_percent,
            tuple(str(r) for r in plan.rare),
            missing,
            lookalike_warnings(plan.before, plan.after),
            tuple(str(b) for b in plan.held),
            folds,
            tuple(str(w) for w in conversion_warnings(plan, preview.profile, opts,
                                                      [q for _, q in aside])),
        )


# --- what an approved preview commits ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CommitRequest:
    """What an approved preview asks to commit: the injected commit function's input."""

    table: str
    batch_id: str
    approved: Plan
    expected: TableState
    records: tuple[dict[str, Any], ...]


# --- approving: where it stands -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Approval:
    """Where approving a preview stands: the question asked before a plan that rewrites
    data files is committed (RULES 5; None: none is asked now) and what the last commit
    did (None: nothing yet). The panel shows it; each button makes the next one.

    >>> asked = Approval().asked("db.t", TableSize(3, 1, 2048))
    >>> asked.question
    'This rewrites every data file of db.t: 3 rows in 1 file, 2 kB. Rewrite?'
    >>> asked.answered().question is None
    True
    """

    question: str | None = None
    outcome: CommitOutcome | None = None

    def asked(self, table: str, size: TableSize | None) -> Approval:
        """Asked whether to rewrite ``table``'s data files (``size``: what that touches)."""
        return Approval(rewrite_question(table, size), self.outcome)

    def answered(self) -> Approval:
        """The question answered (rewrite, or cancel): none is asked any more."""
        return Approval(None, self.outcome)

    def ended(self, outcome: CommitOutcome) -> Approval:
        """A commit (or its refusal, or a cancel) ended with ``outcome``."""
        return Approval(self.question, outcome)


def commit_request(model: PlanModel, preview: Preview) -> CommitRequest:
    """What "Approve and commit" sends to the commit function: the previewed plan, the
    table state it was made against, the records, under the model's batch id."""
    return CommitRequest(
        model.table, model.batch_id, preview.plan, preview.state, preview.records
    )


def rewrite_size(preview: Preview, measured: TableSize | None) -> TableSize | None:
    """What a rewrite touches, as the question states it: the table's current snapshot
    (``measured``), else the rows and bytes the plan's rewrites carry (files unknown),
    when they all carry the same."""
    if measured is not None:
        return measured
    costs = {(r.rows, r.bytes) for r in preview.plan.rewrites}
    if len(costs) == 1:
        ((rows, size),) = costs
        if rows is not None and size is not None:
            return TableSize(rows, None, size)
    return None
