"""The second question a panel asks before it commits a plan that rewrites data files
(RULES 5: a rewrite runs only when approved, and the approval is a deliberate one)."""

from __future__ import annotations

import ipywidgets as widgets

__all__ = ["rewrite_confirmation"]


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
