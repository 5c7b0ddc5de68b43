"""The evolution editor's HTML: the plan (or the error that stops it), the schema trees
before and after, and the cells of the table's lineage rows (the widget puts each row's
"Undo" button beside them)."""

from __future__ import annotations

from toolkit.core.values.wording import counted
from toolkit.notebook.common import text_html, wrap
from toolkit.notebook.panels.editor.model import EvolutionEditorModel, LineageRow
from toolkit.notebook.schema_tree import schema_tree_html

__all__ = [
    "lineage_entry_html",
    "lineage_status_html",
    "no_lineage_html",
    "plan_html",
    "trees_html",
]


def plan_html(model: EvolutionEditorModel) -> str:
    """The plan's operations (rewrites marked, with what they touch), or the error that
    stops it, and the table's layout after it."""
    if model.error is not None:
        body = (
            f'<p class="tknb-error"><b>The plan cannot apply.</b> {text_html(model.error)}</p>'
            "<p class='tknb-muted'>Remove or fix that operation; nothing is committed "
            "until the whole plan applies.</p>"
        )
    else:
        body = f"<pre>{text_html(model.plan_text)}</pre>"
        if model.rewrites:
            body += (
                "<p class='tknb-rewrite'>REWRITE: committing this plan approves rewriting "
                f"{counted(len(model.rewrites), 'column')}; older snapshots keep the old values. "
                "Commit asks once more, stating the rows and files it rewrites.</p>"
            )
    after = model.current
    extra = [line for line in str(after).splitlines() if line.startswith(("partitioned", "sorted"))]
    layout = "<br>".join(text_html(line) for line in extra) or "unpartitioned, unsorted"
    return wrap(f"{body}<p class='tknb-muted'>After: {layout}</p>")


def trees_html(model: EvolutionEditorModel) -> tuple[str, str]:
    return (
        schema_tree_html(model.before_tree, title="Before"),
        schema_tree_html(model.after_tree, title="After"),
    )


def lineage_entry_html(row: LineageRow) -> str:
    """A lineage row's entry: who decided it, when, and its operations, each with why (a
    sentence, its rule as a footnote) when it was logged with one."""
    whys = (*row.reasons, *(None,) * len(row.operations))
    ops = "".join(
        f"<div><code>{text_html(o)}</code>"
        + (f"<br><span class='tknb-doc'>{text_html(why)}</span>" if why else "")
        + "</div>"
        for o, why in zip(row.operations, whys, strict=False)
    ) or "(no operation)"
    return wrap(
        f"<b>{text_html(row.title)}</b> <span class='tknb-muted'>{text_html(row.at)}</span>{ops}"
    )


def lineage_status_html(row: LineageRow, why_not: str | None = None) -> str:
    """What the row's "Undo" button commits, or in a sentence why it is not offered
    (``why_not``: the panel's own reason, say a read-only editor)."""
    if why_not is None and row.can_undo:
        return wrap(f"<span class='tknb-muted'>{text_html(row.status)}</span>")
    return wrap(f"<span class='tknb-doc'>{text_html(why_not or row.status)}</span>")


def no_lineage_html() -> str:
    return wrap('<p class="tknb-muted">No plan was logged in this table yet.</p>')
