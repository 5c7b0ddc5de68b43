"""The policy comparison panel: a thin ipywidgets shell (ipywidgets 8) over
:class:`~toolkit.notebook.panels.policies.model.PolicyComparison`, showing the HTML of
:mod:`toolkit.notebook.panels.policies.html`."""

from __future__ import annotations

import ipywidgets as widgets

from toolkit.notebook.common import StaticHtmlPanel
from toolkit.notebook.panels.policies.html import comparison_html, outcome_html
from toolkit.notebook.panels.policies.model import PolicyComparison
from toolkit.notebook.report_html import policies_report_html

__all__ = ["PolicyComparisonPanel"]


class PolicyComparisonPanel(StaticHtmlPanel):
    """What each policy would do with one sample, side by side (columns added, widenings,
    rewrites, values converted, records quarantined), and one policy's schema and plans."""

    def __init__(self, model: PolicyComparison) -> None:
        self.model = model
        self._detail_html = outcome_html
        self.table = widgets.HTML(comparison_html(model))
        self.picker = widgets.Dropdown(
            description="Details of",
            options=[(o.label, o.key) for o in model.outcomes],
            style={"description_width": "initial"},
        )
        self.detail = widgets.HTML()
        self.picker.observe(lambda _: self.show(self.picker.value), names="value")
        self.widget = widgets.VBox([self.table, self.picker, self.detail])
        self.show(self.picker.value)

    def show(self, key: str) -> None:
        """Show one policy's schema and plans (what the "Details of" menu does)."""
        if self.picker.value != key:
            self.picker.value = key  # the observer comes back here
            return
        self.detail.value = self._detail_html(self.model.outcome(key))

    def report_title(self) -> str:
        return "What each policy would do"

    def report_html(self) -> str:
        return policies_report_html(self.model)

    def report_text(self) -> str:
        """The side-by-side table as text: a notebook shows the panel, a text-only front
        end (a terminal, a test reading outputs) this, so no cell need print it too."""
        return str(self.model)

