"""The quarantine inspector's HTML: the groups, sample records, the plan a replay needs
and what a replay did."""

from __future__ import annotations

from collections.abc import Iterable

from toolkit.core.batch.quarantine import reason_words
from toolkit.core.values.wording import counted
from toolkit.notebook.common import fixed_table, scroll_box, text_html, wrap
from toolkit.notebook.outcome import headline_html
from toolkit.notebook.panels.quarantine.model import (
    GroupRow,
    QuarantineModel,
    ReplayOutcome,
    ReplayPlan,
)

__all__ = ["groups_html", "replay_outcome_html", "replay_plan_html", "samples_html"]


def groups_html(model: QuarantineModel) -> str:
    """The groups as a table: reason, field, observed type into table type, count,
    batches, a sample record; groups that cannot be replayed are marked."""
    head = f"<b>Quarantine of {text_html(model.table)}</b>: {text_html(model.summary)}."
    if not model.groups:
        return wrap(f"<p>{head}</p>")
    rows = []
    for n, g in enumerate(model.groups, 1):
        note = "" if g.replayable else ' <span class="tknb-error">(cannot be replayed)</span>'
        sample = g.samples[0] if g.samples else ""
        rows.append(
            "<tr>"
            f'<td>{n}</td><td title="{text_html(g.reason)}">{text_html(reason_words(g.reason))}'
            f"{note}</td>"
            f"<td><code>{text_html(g.field or '—')}</code></td>"
            f"<td>{text_html(g.observed or '—')} → {text_html(g.table_type or '—')}</td>"
            f"<td>{g.count:,}</td><td>{text_html(', '.join(g.batches))}</td>"
            f"<td><code>{text_html(sample)}</code></td>"
            "</tr>"
        )
    columns = [("#", "2.5em"), ("reason", "20%"), ("field", "18%"), ("observed → table", "14%"),
               ("records", "8%"), ("batches", "12%"), ("sample", "")]
    return wrap(f"<p>{head}</p>{scroll_box(fixed_table(columns, rows))}")


def samples_html(groups: Iterable[GroupRow]) -> str:
    """Sample raw records of the chosen groups, with each group's detail."""
    parts = []
    for g in groups:
        records = "".join(f"<li><code>{text_html(s)}</code></li>" for s in g.samples)
        more = g.count - len(g.samples)
        tail = f'<li class="tknb-muted">… and {more} more</li>' if more > 0 else ""
        parts.append(
            f'<p><b title="{text_html(g.reason)}">{text_html(g.label)}</b><br>'
            f'<span class="tknb-muted">{text_html(g.detail)}</span></p><ul>{records}{tail}</ul>'
        )
    if not parts:
        return wrap('<p class="tknb-muted">Choose a group to see its records.</p>')
    return wrap(scroll_box("".join(parts)))


def replay_plan_html(plan: ReplayPlan | None, error: str | None = None) -> str:
    """What replaying the selection will change in the target table."""
    if error is not None:
        return wrap(f'<p class="tknb-error">Cannot plan the replay: {text_html(error)}</p>')
    cannot = (
        "" if plan is None or not plan.cannot
        else f'<p class="tknb-error">{text_html(plan.cannot_text)}.</p>'
    )
    if plan is None or not plan.ids:
        return wrap(cannot or '<p class="tknb-muted">No replayable record is selected.</p>')
    return wrap(
        f"<p>Replaying {counted(len(plan.ids), 'record')} will apply: "
        f"<b>{text_html(plan.changes)}</b>. The button approves exactly this plan.</p>{cannot}"
    )


def replay_outcome_html(outcome: ReplayOutcome) -> str:
    """What the last replay or discard did; an error keeps its traceback, folded."""
    text = headline_html(outcome.ok, outcome.title, outcome.message)
    if outcome.traceback and outcome.kind == "error":
        text += (
            f"<details><summary>details</summary><pre>{text_html(outcome.traceback)}</pre>"
            "</details>"
        )
    return wrap(text)
