"""What the maintenance panel shows, as data: the plan as a table of steps with their
sentences, what a run did, and why a run was refused, in plain words.

Pure: no widget, no Spark. The HTML is :mod:`toolkit.notebook.panels.maintenance.html`, the
shell :mod:`toolkit.notebook.panels.maintenance.widget`.

>>> from toolkit.core.maintenance.steps import MaintenancePlan
>>> from toolkit.core.evolution.state import TableState
>>> MaintenanceModel.from_plan(MaintenancePlan("db.t", TableState(0, 1), 0, ())).summary
'nothing to do for db.t: no step was chosen'
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import Literal, TypeAlias

from toolkit.core.evolution.state import TableState
from toolkit.core.maintenance.steps import (
    Compact,
    DropStagingTables,
    ExpireSnapshots,
    MaintenancePlan,
    MaintenanceReport,
    MaintenanceStep,
    RemoveOrphanFiles,
    RewriteManifests,
    size_text,
    time_text,
)
from toolkit.core.values.wording import counted
from toolkit.errors import StalePlanError
from toolkit.notebook.common import clip

__all__ = ["MaintenanceModel", "MaintenanceOutcome", "StepRow"]

#: the steps' titles, as the panel's table shows them
TITLES = {
    "compact": "Compact small files",
    "rewrite_manifests": "Rewrite manifests",
    "expire_snapshots": "Expire snapshots",
    "remove_orphan_files": "Remove orphan files",
    "drop_staging_tables": "Drop staging tables left behind",
}
#: how many names (snapshots, files) a step's details list
DETAILS = 8


@dataclass(frozen=True, slots=True)
class StepRow:
    """One step of the plan, as a row of the panel's table."""

    name: str
    title: str
    todo: bool
    numbers: str
    """The step's numbers in short: ``12 files -> about 1``."""
    sentence: str
    details: tuple[str, ...]
    """What the step acts on, line by line (snapshots kept and why, files), clipped."""

    @classmethod
    def of(cls, step: MaintenanceStep) -> StepRow:
        return cls(
            step.name, TITLES[step.name], step.todo, _numbers(step), step.sentence,
            _details(step),
        )


def _numbers(step: MaintenanceStep) -> str:
    if isinstance(step, Compact):
        return f"{step.files:,} of {counted(step.data_files, 'file')} -> about {step.into:,}"
    if isinstance(step, RewriteManifests):
        return f"{step.files:,} of {counted(step.manifests, 'manifest')} -> {step.into:,}"
    if isinstance(step, ExpireSnapshots):
        kept = "1 old one" if len(step.kept) == 1 else f"{len(step.kept):,} old ones"
        text = f"{len(step.expire):,} of {counted(step.total, 'snapshot')}; {kept} kept"
        lost = step.losing
        if lost:  # values readable nowhere after it: shown beside the counts, not only below
            # a bound where a count takes in deleted rows, "at least" where one is missing
            bound = ("at least " if any(c.values is None for c in lost)
                     else "up to " if any(c.at_most for c in lost) else "")
            values = sum(c.values or 0 for c in lost)
            text += (f"; {bound}{counted(values, 'value')} of {counted(len(lost), 'column')} "
                     "become unreadable")
        return text
    if isinstance(step, DropStagingTables):
        return counted(len(step.drop), "staging table")
    return counted(len(step.files), "file")


def _details(step: MaintenanceStep) -> tuple[str, ...]:
    lines: list[str]
    if isinstance(step, ExpireSnapshots):
        lines = [f"keep {k.snapshot_id}" + (f" (batch {k.batch_id})" if k.batch_id else "")
                 + f": {k.why}" for k in step.kept]
        lines += [f"expire {i}" for i in step.expire]
    elif isinstance(step, RemoveOrphanFiles):
        lines = [f"remove {f}" for f in step.files]
    elif isinstance(step, DropStagingTables):
        lines = [f"drop {t.identifier}: {counted(t.data_files, 'data file')}, "
                 f"{counted(t.rows, 'row')}, last updated {time_text(t.last_updated_ms)}"
                 for t in step.drop]
        lines += [f"keep {t.identifier}: updated {time_text(t.last_updated_ms)}"
                  for t in step.young]
    elif isinstance(step, Compact):
        lines = [f"target file size {size_text(step.target_file_size)}, at least "
                 f"{step.min_input_files} small files per partition"]
    else:
        lines = []
    more = len(lines) - DETAILS
    shown = [clip(line, 160) for line in lines[:DETAILS]]
    return tuple(shown + ([f"... and {more} more"] if more > 0 else []))


@dataclass(frozen=True, slots=True)
class MaintenanceModel:
    """A maintenance plan as the panel shows it."""

    table: str
    planned_at: str
    state: TableState
    rows: tuple[StepRow, ...]
    todo: bool

    @classmethod
    def from_plan(cls, plan: MaintenancePlan) -> MaintenanceModel:
        return cls(
            plan.table, time_text(plan.made_at_ms), plan.state,
            tuple(StepRow.of(s) for s in plan.steps), plan.todo,
        )

    @property
    def summary(self) -> str:
        if not self.rows:
            return f"nothing to do for {self.table}: no step was chosen"
        if not self.todo:
            return f"nothing to do for {self.table}: every step found its work done"
        steps = ", ".join(r.title.lower() for r in self.rows if r.todo)
        return f"{self.table}, planned {self.planned_at}: {steps}"


OutcomeKind: TypeAlias = Literal["done", "nothing", "stale", "error"]


@dataclass(frozen=True, slots=True)
class MaintenanceOutcome:
    """What applying the plan did, in plain words; errors keep their traceback."""

    kind: OutcomeKind
    title: str
    message: str
    results: tuple[tuple[str, str], ...] = ()
    """(step title, what it did) of each step that ran."""
    error_type: str | None = None
    traceback: str | None = None

    @property
    def ok(self) -> bool:
        return self.kind in ("done", "nothing")

    @property
    def plan_again(self) -> bool:
        """The plan no longer fits the table: only a new plan helps."""
        return self.kind == "stale"

    @classmethod
    def from_report(cls, report: MaintenanceReport) -> MaintenanceOutcome:
        if not report.results:
            return cls("nothing", "Nothing to do",
                       f"No step of the plan had work to do; {report.table} is unchanged.")
        results = tuple((TITLES[r.name], r.sentence) for r in report.results)
        done = "; ".join(text for _, text in results)
        return cls(
            "done", "Maintained",
            f"{report.table}: {done}. The table is now at snapshot {report.state.snapshot_id}.",
            results,
        )

    @classmethod
    def from_exception(cls, exc: BaseException) -> MaintenanceOutcome:
        tb = "".join(traceback.format_exception(exc))
        if isinstance(exc, StalePlanError):
            return cls(
                "stale", "The table changed",
                f"{_what_moved(exc)}. Nothing was done: plan again to see what maintenance "
                "would do now.",
                error_type=type(exc).__name__,
            )
        return cls(
            "error", "Maintenance failed", f"{type(exc).__name__}: {exc}",
            error_type=type(exc).__name__, traceback=tb,
        )


def _what_moved(exc: StalePlanError) -> str:
    """What moved, without the error's own advice ("preview or ingest again"): the panel
    says what was done and what helps.

    >>> from toolkit.core.evolution.state import TableState
    >>> _what_moved(StalePlanError("db.t", TableState(0, 1), TableState(0, 2)))
    'db.t moved since the plan was made (its snapshot went from 1 to 2)'
    """
    return f"{exc.table} moved since the plan was made ({exc.moved}){exc.detail}"
