"""The evolution editor's HTML: the plan (or the error that stops it), the schema trees
before and after, and the table's lineage."""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

from toolkit.notebook.common import wrap
from toolkit.notebook.editor_model import EvolutionEditorModel, LineageRow
from toolkit.notebook.schema_tree import schema_tree_html

__all__ = ["lineage_html", "plan_html", "trees_html"]


def plan_html(model: EvolutionEditorModel) -> str:
    """The plan's operations (rewrites marked, with what they touch), or the error that
    stops it, and the table's layout after it."""
    if model.error is not None:
        body = (
            f'<p class="tknb-error"><b>The plan cannot apply.</b> {escape(model.error)}</p>'
            "<p class='tknb-muted'>Remove or fix that operation; nothing is committed "
            "until the whole plan applies.</p>"
        )
    else:
        body = f"<pre>{escape(model.plan_text)}</pre>"
        if model.rewrites:
            body += (
                "<p class='tknb-rewrite'>REWRITE: committing this plan approves rewriting "
                f"{len(model.rewrites)} column(s); older snapshots keep the old values.</p>"
            )
    after = model.current
    extra = [line for line in str(after).splitlines() if line.startswith(("partitioned", "sorted"))]
    layout = "<br>".join(escape(line) for line in extra) or "unpartitioned, unsorted"
    return wrap(f"{body}<p class='tknb-muted'>After: {layout}</p>")


def trees_html(model: EvolutionEditorModel) -> tuple[str, str]:
    return (
        schema_tree_html(model.before_tree, title="Before"),
        schema_tree_html(model.after_tree, title="After"),
    )


def lineage_html(rows: Iterable[LineageRow]) -> str:
    """Every logged plan, newest first, with what undoes it or why nothing can."""
    rows = sorted(rows, key=lambda r: -r.seq)
    if not rows:
        return wrap('<p class="tknb-muted">No plan was logged in this table yet.</p>')
    items = []
    for r in rows:
        ops = "<br>".join(escape(o) for o in r.operations)
        if r.undo is not None:
            undo = "undo: " + escape("; ".join(r.undo) or "nothing")
        else:
            undo = "irreversible: " + escape("; ".join(r.irreversible))
        items.append(
            f"<tr><td>{escape(r.title)}<br><span class='tknb-muted'>{escape(r.at)}</span></td>"
            f"<td><code>{ops}</code></td><td class='tknb-muted'>{undo}</td></tr>"
        )
    return wrap(
        "<table><tr><th>entry</th><th>operations</th><th>undo</th></tr>"
        + "".join(items) + "</table>"
    )
