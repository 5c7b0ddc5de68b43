"""The second question a panel asks before it commits a plan that rewrites data files
(RULES 5: a rewrite runs only when approved, and the approval is a deliberate one)."""

from __future__ import annotations

import ipywidgets as widgets

__all__ = ["rewrite_confirmation"]


def rewrite_confirmation() -> tuple[widgets.HTML, widgets.Button, widgets.Button, widgets.HBox]:
    """The question's text, its "Rewrite" and "Cancel" buttons, and the row holding them
    (hidden until a rewrite is about to be committed)."""
    text = widgets.HTML()
    rewrite = widgets.Button(
        description="Rewrite", button_style="danger", icon="check",
        tooltip="Commit the plan, rewriting every data file of the table",
    )
    cancel = widgets.Button(description="Cancel", icon="times", tooltip="Commit nothing")
    row = widgets.HBox([text, rewrite, cancel],
                       layout={"display": "none", "align_items": "center"})
    return text, rewrite, cancel, row
