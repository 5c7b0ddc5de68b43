"""The second question a panel asks before it commits a plan that rewrites data files
(RULES 5: a rewrite runs only when approved, and the approval is a deliberate one), or one
that destroys stored values (it drops columns holding values: docs/rules.md)."""

from __future__ import annotations

import ipywidgets as widgets

from toolkit.notebook.common import text_html, wrap

__all__ = ["drop_confirmation", "drop_question", "drop_question_html", "rewrite_confirmation"]


def rewrite_confirmation() -> tuple[widgets.HTML, widgets.Button, widgets.Button, widgets.Box]:
    """The question's text, its "Rewrite" and "Cancel" buttons, and the box holding them
    (hidden until a rewrite is about to be committed).

    The buttons sit under the question, where the eye ends after reading it, not at the
    far end of a long line; the box is framed in the rewrite's colour so the question
    stands apart from the panel's other messages."""
    text = widgets.HTML()
    rewrite = widgets.Button(
        description="Rewrite", button_style="danger", icon="check",
        tooltip="Commit the plan, rewriting every data file of the table",
    )
    cancel = widgets.Button(description="Cancel", icon="times", tooltip="Commit nothing")
    box = widgets.VBox(
        [text, widgets.HBox([rewrite, cancel])],
        layout={"display": "none", "border": "1px solid #d9822b", "padding": "4px 12px 8px",
                "margin": "6px 0", "width": "fit-content", "max_width": "100%"},
    )
    return text, rewrite, cancel, box


def drop_confirmation() -> tuple[widgets.HTML, widgets.Button, widgets.Button, widgets.Box]:
    """The second question before a plan or an undo destroys stored values (it drops
    columns holding values; docs/rules.md, "What asks for a yes"): its text (the columns
    and their value counts), its "Drop the values" and "Cancel" buttons, and the box
    holding them (hidden until such a commit was refused for want of a yes)."""
    text = widgets.HTML()
    drop = widgets.Button(
        description="Drop the values", button_style="danger", icon="trash",
        tooltip="Commit it: the values of these columns are no longer readable from the table",
        layout={"width": "auto"},
    )
    cancel = widgets.Button(description="Cancel", icon="times", tooltip="Commit nothing")
    box = widgets.VBox(
        [text, widgets.HBox([drop, cancel])],
        layout={"display": "none", "border": "1px solid #c23030", "padding": "4px 12px 8px",
                "margin": "6px 0", "width": "fit-content", "max_width": "100%"},
    )
    return text, drop, cancel, box


def drop_question(table: str, what: str, destruction: object) -> str:
    """What a panel asks before it drops columns holding values.

    >>> from toolkit.core.evolution.destruction import Destruction, DroppedColumn
    >>> d = Destruction((DroppedColumn(("gift",), 3, 2, None),), rows=5)
    >>> print(drop_question("db.t", "Undoing entry #1", d))
    Undoing entry #1 drops 1 column holding 2 values of 5 rows: gift (2 values). Those \
values will no longer be readable from db.t. Drop them?
    """
    return (f"{what} {destruction}. Those values will no longer be readable from {table}. "
            "Drop them?")


def drop_question_html(table: str, what: str, destruction: object) -> str:
    """The question, then what stays (older snapshots) and that nothing is committed yet."""
    detail = ("Snapshots before the drop keep the values until they expire. Nothing is "
              "committed until you click Drop the values.")
    return wrap(
        f'<p class="tknb-rewrite">{text_html(drop_question(table, what, destruction))}</p>'
        f'<p class="tknb-muted">{text_html(detail)}</p>'
    )
