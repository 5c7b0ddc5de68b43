"""The preview panel's view-model: what a plan would do before anything changes (the
schema before and after, new columns and why, widenings, records set aside, where sample
values land, the view's SQL), and what "Approve and commit" sends.

Pure: no widget. The HTML is :mod:`toolkit.notebook.preview_html`; what a commit did is
:class:`~toolkit.notebook.outcome.CommitOutcome`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolkit.core.engine import Engine
from toolkit.core.options import Options
from toolkit.core.planner import MakeOptional, Plan, Retype
from toolkit.core.policies import policy_named, policy_of
from toolkit.core.quarantine import Quarantined, fields_set_aside
from toolkit.core.routing import Router, explain_record, set_aside_rare
from toolkit.core.state import ABSENT, TableState
from toolkit.core.types import iter_ids, type_to_str
from toolkit.core.views import DIALECTS, Dialect, coalesce_sql
from toolkit.core.widen_policy import WidenRouter, primary_columns
from toolkit.notebook.common import clip, value_text
from toolkit.notebook.schema_tree import SchemaNode, schema_tree

if TYPE_CHECKING:
    from toolkit.pipeline.preview import Preview

__all__ = [
    "CommitRequest",
    "LandingRow",
    "NewColumn",
    "PlanModel",
    "QuarantinePreview",
    "QuarantineSample",
    "RecordLandings",
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
class LandingRow:
    """Where one input value lands, and how the column holds it."""

    key: str
    value: Any
    kind: str
    """The observed kind, as text: ``long``, ``string``, ``record[]``."""
    column: str
    stored: Any
    converted: bool

    @property
    def value_text(self) -> str:
        return value_text(self.value)

    @property
    def stored_text(self) -> str:
        return value_text(self.stored)


@dataclass(frozen=True, slots=True)
class RecordLandings:
    """The landings of one sample record."""

    index: int
    """Its position among the previewed records (from 0)."""
    record: str
    """The record as clipped JSON text."""
    landings: tuple[LandingRow, ...]
    unwritten: tuple[str, ...] = ()
    """Keys of the record that land nowhere (null values: RULES 3.5)."""
    quarantined: str | None = None
    """Why the whole record would be set aside instead (widening policy, RULES 5; a rare
    type under the automatic policy's rare-type threshold)."""


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
    policy: str = "upsolver"
    widenings: tuple[Retype, ...] = ()
    """Columns the plan retypes (widening policy): in place or by an approved rewrite."""
    pending: tuple[Retype, ...] = ()
    """Rewrites the data needs but that are not approved (``allow_rewrites=False``): the
    values needing them are set aside instead."""
    optionals: tuple[MakeOptional, ...] = ()
    quarantine: QuarantinePreview | None = None
    """Records the table cannot take (widening policy) or whose values have no type; None
    when the automatic policy sets none aside."""
    unlanded: tuple[str, ...] = ()
    """A sentence for each field every value of which is set aside: it gets no column,
    which the schema alone never says."""
    rare_type_percent: float | None = None
    """The automatic policy's rare-type threshold in force, in percent (None: off)."""
    rare_types: tuple[str, ...] = ()
    """A sentence for each rare type the plan sets aside instead of evolving the schema for
    (which field, which type, how many of its values, what it would have added)."""

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
        return policy_named(self.policy).widens

    def sql_for(self, dialect: Dialect) -> str:
        return dict(self.sql)[dialect]

    @property
    def summary(self) -> str:
        where = (
            f"{self.table} does not exist yet: it will be created"
            if self.new_table
            else f"{self.table} (schema id {self.state.schema_id}, "
            f"snapshot {self.state.snapshot_id})"
        )
        parts = [f"{len(self.new_columns)} column(s) to add"] if self.new_columns else []
        if self.widenings:
            parts.append(
                f"{len(self.widenings)} to widen ({len(self.rewrites)} by rewrite)"
            )
        if self.optionals:
            parts.append(f"{len(self.optionals)} to make optional")
        if self.pending:
            parts.append(f"{len(self.pending)} rewrite(s) awaiting approval")
        change = ", ".join(parts) or "no schema change"
        q = self.quarantine
        if q is not None and q.total:
            fate = "would fail the batch" if q.fails else "to quarantine"
            change += f"; {q.total} record(s) {fate}"
        told = "".join(f"; {u}" for u in self.unlanded)
        if self.rare_type_percent is not None:
            told += f"; {self.rare_types_text}"
        return f"{self.records} records planned against {where}; {change}{told}"

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
        the view's SQL); ``sample`` limits the records whose landings are shown."""
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
        shown = preview.records[: max(sample, 0)]
        quarantine: QuarantinePreview | None = None
        # records set aside before planning (values with no type...), then, under a policy
        # that sets records aside, those the table cannot take
        aside = list(preview.aside)
        if policy_of(opts).sets_aside:
            widen_router = WidenRouter(plan, opts, engine.classifier)
            aside += [
                (i, q)
                for i, r in enumerate(preview.records)
                for q in widen_router.route([r], plan.batch, "quarantine")[1]
            ]
            samples = tuple(_widen_landings(i, r, plan, widen_router) for i, r in enumerate(shown))
        else:
            rare: dict[int, Quarantined] = {}
            if plan.rare:  # records holding a rare type are set aside (docs/rules.md)
                obs = engine.observe(preview.records, plan.batch)
                at = {id(r): i for i, r in enumerate(obs.rows)}
                for q in set_aside_rare(plan, obs, plan.batch)[1]:
                    rare[at[id(q.record)]] = q
                aside = sorted([*aside, *rare.items()], key=lambda a: a[0])
            samples = tuple(
                RecordLandings(i, value_text(r, 200), (), (), rare[i].detail) if i in rare
                else _landings(i, r, plan, engine.router)
                for i, r in enumerate(shown)
            )
        if aside or policy_of(opts).sets_aside:
            quarantine = QuarantinePreview.of(aside, fails=opts.on_incompatible == "fail")
        unlanded = tuple(
            f"every value of field {name!r} is set aside, so it gets no column: {q.detail}"
            for name, q in fields_set_aside(plan.after, (q for _, q in aside)).items()
        )
        sql: tuple[tuple[Dialect, str], ...] = ()
        if plan.after.fields:
            sql = tuple(
                (
                    d,
                    coalesce_sql(
                        plan.after, preview.table, d, lattice=opts.lattice,
                        timestamp_unit=opts.timestamp_unit, pretty=True,
                    ),
                )
                for d in DIALECTS
            )
        return cls(
            preview.table,
            plan.batch,
            batch_id or preview_batch_id(preview.table, preview.records),
            preview.state,
            len(preview.records) + len(preview.aside),
            schema_tree(plan.before),
            schema_tree(plan.after, new_ids),
            new_columns,
            samples,
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
        )


def _landings(
    index: int, record: Mapping[str, Any], plan: Plan, router: Router
) -> RecordLandings:
    found = explain_record(router, plan.after, dict(record))
    # grouped by key in the record's order (a key's columns stay in schema order), so each
    # value reads with every column it lands in
    position = {k: i for i, k in enumerate(record)}
    found.sort(key=lambda x: position.get(x.key, len(position)))
    rows = tuple(
        LandingRow(x.key, x.value, str(x.kind.shape), x.column, x.stored, x.converted)
        for x in found
    )
    landed = {x.key for x in found}
    return RecordLandings(
        index, value_text(record, 200), rows, tuple(k for k in record if k not in landed)
    )


def _widen_landings(
    index: int, record: Mapping[str, Any], plan: Plan, router: WidenRouter
) -> RecordLandings:
    """Under the widening policy a value lands in the one column named for its key, or its
    whole record is set aside."""
    text = value_text(record, 200)
    rows, aside = router.route([record], plan.batch, "quarantine")
    if aside:
        return RecordLandings(index, text, (), (), aside[0].detail)
    row = rows[0]
    primary = primary_columns(plan.after)
    landed, unwritten = [], []
    for key, value in record.items():
        col = primary.get(key)
        if value is None or col is None:
            unwritten.append(key)
            continue
        kind = router.classifier.kind(value, (key,))
        stored = row[col.name]
        converted = type(stored) is not type(value) or stored != value
        shape = "-" if kind is None else str(kind.shape)
        landed.append(LandingRow(key, value, shape, col.name, stored, converted))
    return RecordLandings(index, text, tuple(landed), tuple(unwritten))


# --- what an approved preview commits ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CommitRequest:
    """What an approved preview asks to commit: the injected commit function's input."""

    table: str
    batch_id: str
    approved: Plan
    expected: TableState
    records: tuple[dict[str, Any], ...]
