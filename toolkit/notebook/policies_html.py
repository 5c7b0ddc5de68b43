"""The policy comparison panel's HTML: the side-by-side table, and one policy in detail."""

from __future__ import annotations

from html import escape

from toolkit.core.wording import counted
from toolkit.notebook.common import cell_box, fixed_table, wrap
from toolkit.notebook.policies_model import PolicyComparison, PolicyOutcome

__all__ = ["comparison_html", "outcome_html"]


def comparison_html(c: PolicyComparison) -> str:
    """The side-by-side table, one column per policy; a cell listing many columns
    scrolls in its own box, so a sample of 5,000 fields keeps the table readable."""
    where = f" against <code>{escape(c.table)}</code>" if c.table else " on a new table"
    columns = [("", "16%"), *((escape(o.label), "") for o in c.outcomes)]
    rows = (
        f"<tr><td><b>{escape(name)}</b></td>"
        + "".join(f"<td>{cell_box(escape(cell))}</td>" for cell in cells)
        + "</tr>"
        for name, cells in c.rows()
    )
    return wrap(
        f"<p><b>{counted(c.records, 'record')} in {counted(c.batches, 'batch')}</b>{where}: "
        "what each policy would do (from <code>toolkit.simulate</code>)</p>"
        f"{fixed_table(columns, rows)}"
    )


def outcome_html(o: PolicyOutcome) -> str:
    """One policy in detail: the schema it ends with and each batch's plan."""
    plans = "\n\n".join(o.plans)
    return wrap(f"<b>{escape(o.label)}</b><pre>{escape(o.schema)}</pre><pre>{escape(plans)}</pre>")
