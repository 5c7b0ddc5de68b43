"""The maintenance panel's HTML: the plan as a table of steps, and what a run did."""

from __future__ import annotations

from toolkit.notebook.common import fixed_table, text_html, wrap
from toolkit.notebook.outcome import headline_html
from toolkit.notebook.panels.maintenance.model import MaintenanceModel, MaintenanceOutcome

__all__ = ["maintenance_outcome_html", "plan_html"]


def plan_html(model: MaintenanceModel) -> str:
    """The steps in run order: what each will do, its numbers, a sentence in plain words
    and, folded, what it acts on; a step with nothing to do is greyed."""
    # the summary names the table already: a title naming it again would read it twice
    head = f"<p><b>Maintenance</b>: {text_html(model.summary)}.</p>"
    if not model.rows:
        return wrap(head)
    rows = []
    for n, r in enumerate(model.rows, 1):
        css = "" if r.todo else ' class="tknb-muted"'
        details = (
            "<details><summary>details</summary><ul>"
            + "".join(f"<li><code>{text_html(d)}</code></li>" for d in r.details)
            + "</ul></details>"
            if r.details
            else ""
        )
        rows.append(
            f"<tr{css}><td>{n}</td><td>{text_html(r.title)}</td>"
            f"<td>{'yes' if r.todo else 'nothing to do'}</td><td>{text_html(r.numbers)}</td>"
            f"<td>{text_html(r.sentence)}{details}</td></tr>"
        )
    columns = [("#", "2.5em"), ("step", "16%"), ("runs", "10%"), ("numbers", "22%"),
               ("what it does", "")]
    return wrap(head + fixed_table(columns, rows))


def maintenance_outcome_html(outcome: MaintenanceOutcome) -> str:
    """What the run did, step by step; an error keeps its traceback, folded."""
    text = headline_html(outcome.ok, outcome.title, outcome.message)
    if outcome.results:
        text += "<ul>" + "".join(
            f"<li><b>{text_html(title)}</b>: {text_html(done)}</li>"
            for title, done in outcome.results
        ) + "</ul>"
    if outcome.traceback:
        text += (
            f"<details><summary>{text_html(outcome.error_type or 'error')}: details</summary>"
            f"<pre>{text_html(outcome.traceback)}</pre></details>"
        )
    return wrap(text)
