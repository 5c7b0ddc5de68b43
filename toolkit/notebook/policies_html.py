"""The policy comparison panel's HTML: the side-by-side table, and one policy in detail."""

from __future__ import annotations

from html import escape

from toolkit.notebook.common import STYLE
from toolkit.notebook.policies_model import PolicyComparison, PolicyOutcome

__all__ = ["comparison_html", "outcome_html"]


def comparison_html(c: PolicyComparison) -> str:
    """The side-by-side table, one column per policy."""
    where = f" against <code>{escape(c.table)}</code>" if c.table else " on a new table"
    head = "<tr><th></th>" + "".join(f"<th>{escape(o.label)}</th>" for o in c.outcomes) + "</tr>"
    body = "".join(
        f"<tr><td><b>{escape(name)}</b></td>"
        + "".join(f"<td>{escape(cell)}</td>" for cell in cells)
        + "</tr>"
        for name, cells in c.rows()
    )
    return (
        f'{STYLE}<div class="tknb"><p><b>{c.records} records in {c.batches} batch(es)</b>'
        f"{where}: what each policy would do (from <code>toolkit.simulate</code>)</p>"
        f"<table>{head}{body}</table></div>"
    )


def outcome_html(o: PolicyOutcome) -> str:
    """One policy in detail: the schema it ends with and each batch's plan."""
    plans = "\n\n".join(o.plans)
    return (
        f'{STYLE}<div class="tknb"><b>{escape(o.label)}</b>'
        f"<pre>{escape(o.schema)}</pre><pre>{escape(plans)}</pre></div>"
    )
