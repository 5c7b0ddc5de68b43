"""The policy comparison panel's HTML: the side-by-side table, and one policy in detail."""

from __future__ import annotations

from toolkit.core.values.wording import counted
from toolkit.notebook.common import cell_box, fixed_table, text_html, wrap
from toolkit.notebook.panels.policies.model import PolicyComparison, PolicyOutcome

__all__ = ["comparison_html", "outcome_html"]


def comparison_html(c: PolicyComparison) -> str:
    """The side-by-side table, one column per policy; a cell listing many columns
    scrolls in its own box, so a sample of 5,000 fields keeps the table readable."""
    where = f" against <code>{text_html(c.table)}</code>" if c.table else " on a new table"
    columns = [("", "16%"), *((text_html(o.label), "") for o in c.outcomes)]
    rows = (
        f"<tr><td><b>{text_html(name)}</b></td>"
        + "".join(f"<td>{cell_box(text_html(cell))}</td>" for cell in cells)
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
    return wrap(f"<b>{text_html(o.label)}</b><pre>{text_html(o.schema)}</pre>"
                f"<pre>{text_html(plans)}</pre>")
