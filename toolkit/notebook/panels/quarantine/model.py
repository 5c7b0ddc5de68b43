"""What the quarantine inspector shows, as data: groups of quarantined records with counts,
sample raw records, the field and types involved; and what a replay did, in plain words.

Pure: no widget, no Spark. The HTML is :mod:`toolkit.notebook.panels.quarantine.html`, the
shell :mod:`toolkit.notebook.panels.quarantine.widget`.

>>> from toolkit.iceberg.quarantine import Quarantine
>>> QuarantineModel.from_quarantine(Quarantine("db.t", "db.t__quarantine", False, ())).summary
'nothing was ever quarantined for db.t'
"""

from __future__ import annotations

import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias

from toolkit.core.batch.quarantine import Quarantine, QuarantineGroup, detail_text, group_label
from toolkit.core.evolution.state import TableState
from toolkit.core.values.wording import counted
from toolkit.errors import NotReplayableError, UnknownIdsError
from toolkit.notebook.common import clip
from toolkit.notebook.outcome import CommitOutcome
from toolkit.pipeline.replay import CannotLand, ReplayReport, cannot_land_text

if TYPE_CHECKING:
    from toolkit.core.evolution.batch_plan import Plan
    from toolkit.pipeline.replay import ReplayPreview

__all__ = [
    "GroupRow",
    "QuarantineModel",
    "ReplayOutcome",
    "ReplayPlan",
    "ReplayRequest",
]

#: how many characters of a raw record a sample shows
RAW_WIDTH = 160


@dataclass(frozen=True, slots=True)
class GroupRow:
    """One group of the inspector's table: records sharing a reason, field and types."""

    key: str
    """Stable within one model: what the selector returns."""
    reason: str
    field: str | None
    observed: str | None
    table_type: str | None
    count: int
    replayable: bool
    ids: tuple[str, ...]
    samples: tuple[str, ...]
    """Raw records (clipped JSON text), the first few of the group."""
    detail: str
    """The first record's detail: field, types and value in a sentence."""
    batches: tuple[str, ...]
    """The batch ids that set these records aside, in order of first appearance."""

    @property
    def label(self) -> str:
        """``incompatible type: flag (string into boolean) — 3``, for a selector."""
        text = group_label(self.reason, self.field, self.observed, self.table_type)
        return f"{text} — {self.count}"

    @classmethod
    def of(cls, key: str, group: QuarantineGroup, samples: int) -> GroupRow:
        return cls(
            key,
            group.reason,
            group.field,
            group.observed,
            group.table_type,
            group.count,
            group.replayable,
            group.ids,
            tuple(clip(r.raw, RAW_WIDTH) for r in group.rows[:samples]),
            detail_text(group.rows[0].detail) if group.rows else "",
            tuple(dict.fromkeys(r.batch_id for r in group.rows)),
        )


@dataclass(frozen=True, slots=True)
class QuarantineModel:
    """The quarantine of one table: groups largest first, counts per reason."""

    table: str
    quarantine_table: str
    exists: bool
    total: int
    counts: tuple[tuple[str, int], ...]
    """Records per reason, most frequent first."""
    groups: tuple[GroupRow, ...]

    @classmethod
    def from_quarantine(cls, q: Quarantine, *, samples: int = 3) -> QuarantineModel:
        groups = tuple(GroupRow.of(f"g{i}", g, samples) for i, g in enumerate(q.groups()))
        return cls(
            q.table, q.quarantine_table, q.exists, len(q), tuple(q.counts().items()), groups
        )

    @property
    def replayable(self) -> int:
        """Records that a replay can send back through ingest."""
        return sum(g.count for g in self.groups if g.replayable)

    @property
    def summary(self) -> str:
        if not self.exists:
            return f"nothing was ever quarantined for {self.table}"
        if not self.total:
            return f"the quarantine of {self.table} is empty"
        # the count per reason is left to the table, which gives each reason in words
        text = f"{counted(self.total, 'record')} in {counted(len(self.groups), 'group')}"
        stuck = self.total - self.replayable
        if stuck:
            text += f"; {stuck:,} cannot be replayed (not JSON objects)"
        return text

    def group(self, key: str) -> GroupRow:
        for g in self.groups:
            if g.key == key:
                return g
        raise KeyError(f"no group {key!r} in the quarantine of {self.table}")

    def selection(self, keys: Iterable[str]) -> tuple[GroupRow, ...]:
        wanted = set(keys)
        return tuple(g for g in self.groups if g.key in wanted)

    def replay_ids(self, keys: Iterable[str]) -> tuple[str, ...]:
        """The ids a replay of the groups ``keys`` sends (replayable groups only)."""
        return tuple(i for g in self.selection(keys) if g.replayable for i in g.ids)

    def discard_ids(self, keys: Iterable[str]) -> tuple[str, ...]:
        """The ids of the chosen groups that cannot be replayed (the only ones the panel
        offers to discard)."""
        return tuple(i for g in self.selection(keys) if not g.replayable for i in g.ids)


@dataclass(frozen=True, slots=True)
class ReplayPlan:
    """What replaying a selection will change in the target, before anything changes:
    the records that can land now (``ids``: the only ones "Replay selected" sends) and
    the plan made with them alone; ``cannot``: the others, each with why."""

    ids: tuple[str, ...]
    changes: str
    """The plan's changes in words, or ``no schema change``."""
    approved: Plan | None
    expected: TableState | None
    cannot: tuple[CannotLand, ...] = ()

    @classmethod
    def from_preview(cls, ids: Sequence[str], preview: ReplayPreview) -> ReplayPlan:
        lands = preview.ids if preview.ids or preview.cannot else tuple(ids)
        return cls(
            lands, preview.plan.describe_changes() or "no schema change",
            preview.plan, preview.state, preview.cannot,
        )

    @property
    def cannot_text(self) -> str:
        """The records that cannot land now, in a sentence ("" when none)."""
        return cannot_land_text(self.cannot)


@dataclass(frozen=True, slots=True)
class ReplayRequest:
    """What "Replay selected" asks the injected replay function to do."""

    ids: tuple[str, ...]
    approved: Plan | None = None
    """The plan shown to the user (None: no plan was shown; ingest plans as usual)."""
    expected: TableState | None = None


ReplayKind: TypeAlias = Literal[
    "replayed", "nothing", "not_replayable", "stale", "plan_changed", "error"
]


@dataclass(frozen=True, slots=True)
class ReplayOutcome:
    """What a replay (or a discard) did, in plain words; errors keep their traceback."""

    kind: ReplayKind
    title: str
    message: str
    replayed: int = 0
    written: int = 0
    requarantined: int = 0
    error: str | None = None
    traceback: str | None = None

    @property
    def ok(self) -> bool:
        return self.kind in ("replayed", "nothing")

    @classmethod
    def from_report(cls, report: ReplayReport) -> ReplayOutcome:
        if not report.replayed:
            return cls("nothing", "Nothing replayed", str(report))
        return cls(
            "replayed", "Replayed", str(report), len(report.replayed), report.written,
            report.requarantined,
        )

    @classmethod
    def discarded(cls, table: str, count: int) -> ReplayOutcome:
        return cls(
            "nothing", "Discarded",
            f"{counted(count, 'record')} removed from the quarantine of {table} for good.",
        )

    @classmethod
    def from_exception(cls, exc: BaseException) -> ReplayOutcome:
        tb = "".join(traceback.format_exception(exc))
        if isinstance(exc, NotReplayableError | UnknownIdsError):
            kind: ReplayKind = "not_replayable" if isinstance(exc, NotReplayableError) else "error"
            return cls(kind, "Not replayed", str(exc), error=str(exc), traceback=tb)
        commit = CommitOutcome.from_exception(exc)  # same words as the preview panel's
        mapped: ReplayKind = (
            commit.kind if commit.kind in ("stale", "plan_changed") else "error"
        )
        title = "The replay failed" if mapped == "error" else commit.title
        return cls(mapped, title, commit.message, error=str(exc), traceback=tb)
