"""What an action of a panel did, in plain words: the outcome of committing a preview
(:class:`CommitOutcome`, whose words the quarantine inspector reuses for a replay) and
the HTML of any panel's outcome (:func:`outcome_html`). Errors keep their traceback.

Before an action that rewrites every data file of a table (a widening Iceberg cannot do
in place, RULES 5), the panels ask once more, with what the rewrite touches
(:class:`TableSize`, read from the table's current snapshot summary, no data file read):

>>> print(rewrite_question("db.events", TableSize(1_234_567, 42, 3_435_973_837)))
This rewrites every data file of db.events: 1,234,567 rows in 42 files, 3.2 GB. Rewrite?
>>> print(rewrite_question("db.t", TableSize(1, None, 596)))
This rewrites every data file of db.t: 1 row, 596 B. Rewrite?
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, TypeAlias, cast

from toolkit.core.evolution.state import ABSENT, TableState
from toolkit.core.maintenance.steps import size_text
from toolkit.core.values.wording import and_join, counted
from toolkit.errors import (
    MalformedLineError,
    NotARecordError,
    NotARecordLineError,
    PlanChangedError,
    StalePlanError,
)
from toolkit.notebook.common import clip, text_html, value_text, wrap

if TYPE_CHECKING:
    from pyiceberg.table import Table

    from toolkit.pipeline.ingest import IngestReport

__all__ = [
    "CommitOutcome",
    "Outcome",
    "OutcomeKind",
    "TableSize",
    "headline_html",
    "outcome_html",
    "rewrite_question",
    "rewrite_question_html",
]

OutcomeKind: TypeAlias = Literal[
    "committed", "skipped", "cancelled", "stale", "plan_changed", "malformed",
    "not_a_record", "error",
]


@dataclass(frozen=True, slots=True)
class CommitOutcome:
    """What approving a preview did, in plain words; errors keep their traceback."""

    kind: OutcomeKind
    title: str
    message: str
    table: str | None = None
    batch_id: str | None = None
    snapshot_id: int | None = None
    rows_written: int = 0
    columns_added: tuple[str, ...] = ()
    error_type: str | None = None
    error: str | None = None
    """The exception's own message."""
    traceback: str | None = None

    @property
    def ok(self) -> bool:
        return self.kind in ("committed", "skipped", "cancelled")

    @property
    def preview_again(self) -> bool:
        """The plan no longer fits the table or the data: only a new preview helps."""
        return self.kind in ("stale", "plan_changed")

    @classmethod
    def cancelled(cls, table: str) -> CommitOutcome:
        """What "Cancel" at a rewrite's question did: nothing."""
        return cls("cancelled", "Cancelled", f"Nothing was committed to {table}.", table)

    @classmethod
    def from_report(cls, report: IngestReport) -> CommitOutcome:
        added = tuple(".".join(c.path) for c in report.plan.changes)
        widened = tuple(
            f"{'.'.join(r.path)} ({'in place' if r.in_place else 'rewritten'})"
            for r in report.plan.retypes
        )
        aside = report.quarantined
        if report.skipped:
            kind: OutcomeKind = "skipped"
            title = "Already committed"
            message = (
                f"Batch {report.batch_id} was already ingested into {report.table}: "
                "nothing was written again."
            )
        elif report.snapshot_id is None:
            kind, title = "committed", "Nothing to write"
            message = f"The batch held no records; {report.table} is unchanged."
        else:
            kind, title = "committed", "Committed"
            columns = (
                f"{counted(len(added), 'column')} added: {', '.join(added)}."
                if added
                else "No column was added."
            )
            message = (
                f"Committed snapshot {report.snapshot_id} to {report.table}: "
                f"{counted(report.rows_written, 'row')} written (batch {report.batch_id}). "
                f"{columns}"
            )
            if widened:
                message += f" {counted(len(widened), 'column')} widened: {', '.join(widened)}."
        if aside and not report.skipped:
            message += (
                f" {counted(aside, 'record')} set aside in {report.quarantine_table}: see "
                f"toolkit.quarantine(catalog, {report.table!r})."
            )
        for warning in report.warnings:  # values written only as another kind (issue #28)
            message += f" Warning: {warning}."
        return cls(
            kind, title, message, report.table, report.batch_id, report.snapshot_id,
            report.rows_written, added,
        )

    @classmethod
    def from_exception(cls, exc: BaseException) -> CommitOutcome:
        kind, title, message, table = _explain(exc)
        return cls(
            kind, title, message, table,
            error_type=type(exc).__name__,
            error=str(exc),
            traceback="".join(traceback.format_exception(exc)),
        )


def _explain(exc: BaseException) -> tuple[OutcomeKind, str, str, str | None]:
    """(kind, title, plain-words message, table) of an exception."""
    if isinstance(exc, StalePlanError):
        return (
            "stale",
            "The table changed",
            f"The table changed since this preview: "
            f"{_moved(cast(TableState, exc.planned), cast(TableState, exc.now))}. "
            "Nothing was applied. Preview again to plan against the table as it is now.",
            exc.table,
        )
    if isinstance(exc, PlanChangedError):
        return (
            "plan_changed",
            "The data needs another plan",
            "The data needs other schema changes than the plan you approved "
            f"(approved: {exc.approved.describe_changes() or 'no change'}; needed now: "
            f"{exc.needed.describe_changes() or 'no change'}). Nothing was applied. "
            "Preview again.",
            exc.table,
        )
    if isinstance(exc, NotARecordLineError):
        where = f"Line {exc.number}" if exc.number is not None else "A line"
        return (
            "not_a_record",
            "Not a record",
            f"{where} of the input is not a JSON object but a {type(exc.value).__name__} "
            f"({value_text(exc.value, 60)}). Every record must be an object such as "
            '{"key": value}. Nothing was committed. Fix or remove that line, then preview '
            "again.",
            None,
        )
    if isinstance(exc, MalformedLineError):
        where = f"Line {exc.number}" if exc.number is not None else "A line"
        return (
            "malformed",
            "Malformed input",
            f"{where} of the input is not valid JSON: {clip(exc.line.strip(), 80)!r}. "
            "Nothing was committed. Fix or remove that line, then preview again.",
            None,
        )
    if isinstance(exc, NotARecordError):
        return (
            "not_a_record",
            "Not a record",
            f"Record {exc.index + 1} of the input is not a JSON object but a "
            f"{type(exc.value).__name__} ({value_text(exc.value, 60)}). Every record must "
            'be an object such as {"key": value}. Nothing was committed.',
            None,
        )
    return "error", "The commit failed", f"{type(exc).__name__}: {exc}", None


def _moved(planned: TableState, now: TableState) -> str:
    if planned == ABSENT and now != ABSENT:
        return "another writer created it"
    if now == ABSENT:
        return "it was dropped"
    parts = []
    if planned.schema_id != now.schema_id:
        parts.append(f"its schema changed (schema id {planned.schema_id} -> {now.schema_id})")
    if planned.snapshot_id != now.snapshot_id:
        parts.append(
            f"new data was committed (snapshot {planned.snapshot_id} -> {now.snapshot_id})"
        )
    return and_join(parts) or "another writer committed first"


# --- HTML ---------------------------------------------------------------------------------


class Outcome(Protocol):
    """What any action of a panel did: committing a preview, an evolution, a replay."""

    @property
    def ok(self) -> bool: ...
    @property
    def title(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def error_type(self) -> str | None: ...
    @property
    def traceback(self) -> str | None: ...


def headline_html(ok: bool, title: str, message: str) -> str:
    """``title`` in bold, then ``message``, coloured as a success or a failure. A message
    that opens with the title's words stands alone, so no reader meets them twice
    ("Committed. Committed snapshot 7 ...").

    >>> headline_html(True, "Committed", "Committed snapshot 7 to db.t.")
    '<p class="tknb-ok">Committed snapshot 7 to db.t.</p>'
    >>> headline_html(False, "Refused", "No plan.")
    '<p class="tknb-error"><b>Refused.</b> No plan.</p>'
    """
    css = "tknb-ok" if ok else "tknb-error"
    if message.casefold().startswith(title.casefold()):
        return f'<p class="{css}">{text_html(message)}</p>'
    return f'<p class="{css}"><b>{text_html(title)}.</b> {text_html(message)}</p>'


def outcome_html(outcome: Outcome) -> str:
    """The outcome in plain words; an error keeps its traceback, folded."""
    text = headline_html(outcome.ok, outcome.title, outcome.message)
    if outcome.traceback:
        text += (
            f"<details><summary>{text_html(outcome.error_type or 'error')}: details</summary>"
            f"<pre>{text_html(outcome.traceback)}</pre></details>"
        )
    return wrap(text)


# --- before a rewrite: what it touches --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TableSize:
    """The rows, data files and bytes of a table's current snapshot: what a rewrite of
    every data file touches. ``files`` is None when only the rows and bytes are known."""

    rows: int
    files: int | None
    bytes: int

    @classmethod
    def of(cls, table: Table) -> TableSize:
        """From the current snapshot's summary (``total-records``, ``total-data-files``,
        ``total-files-size``); no data file is read. A table without data: all zero."""
        snap = table.current_snapshot()
        summary = None if snap is None else snap.summary

        def total(key: str) -> int:
            return 0 if summary is None else int(summary.get(key) or 0)

        return cls(total("total-records"), total("total-data-files"), total("total-files-size"))

    def __str__(self) -> str:
        rows = counted(self.rows, "row")
        files = "" if self.files is None else f" in {counted(self.files, 'file')}"
        return f"{rows}{files}, {size_text(self.bytes)}"


def rewrite_question(table: str, size: TableSize | None) -> str:
    """What a panel asks before committing a plan that rewrites data files."""
    what = "" if size is None else f": {size}"
    return f"This rewrites every data file of {table}{what}. Rewrite?"


def rewrite_question_html(table: str, size: TableSize | None, columns: list[str]) -> str:
    """The question, then the columns rewritten (``"score: long -> string"``)."""
    detail = (
        f"Columns rewritten: {', '.join(columns)}. Snapshots before the rewrite keep "
        "the old values. Nothing is committed until you click Rewrite."
    )
    return wrap(
        f'<p class="tknb-rewrite">{text_html(rewrite_question(table, size))}</p>'
        f'<p class="tknb-muted">{text_html(detail)}</p>'
    )
