"""The maintenance panel: a thin ipywidgets shell over
:class:`~toolkit.notebook.panels.maintenance.model.MaintenanceModel`.

Example (notebook cells)::

    panel = toolkit.preview_maintenance("db.events", cat, spark=spark)
    panel              # the plan: one row per step, in plain words; "Apply this plan"
    panel.apply()      # what the button does; panel.outcome says what was done

Everything that touches the table is injected (``apply``, ``replan``), as the preview
panel injects its commit, so a test records what a click would do and a notebook run
headless calls the same methods as the buttons.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import ipywidgets as widgets

from toolkit.core.maintenance.steps import MaintenancePlan, MaintenanceReport
from toolkit.notebook.common import StaticHtmlPanel
from toolkit.notebook.panels.maintenance.html import maintenance_outcome_html, plan_html
from toolkit.notebook.panels.maintenance.model import MaintenanceModel, MaintenanceOutcome
from toolkit.notebook.report_html import maintenance_report_html

if TYPE_CHECKING:
    pass

__all__ = ["ApplyFunction", "MaintenancePanel"]

#: applies exactly the plan shown (the default calls ``toolkit.pipeline.maintain.maintain``)
ApplyFunction = Callable[[MaintenancePlan], MaintenanceReport]


class MaintenancePanel(StaticHtmlPanel):
    """A maintenance plan before anything changes, one row per step with what it will do
    and why; "Apply this plan" runs exactly it and shows what was done. If the table moved
    meanwhile nothing is done and "Plan again" makes a new plan.

    Without ``apply`` the panel is read-only; ``replan`` (optional) makes a fresh plan.
    """

    def __init__(
        self,
        plan: MaintenancePlan,
        apply: ApplyFunction | None = None,
        *,
        replan: Callable[[], MaintenancePlan] | None = None,
    ) -> None:
        self._apply = apply
        self._replan = replan
        self.outcome: MaintenanceOutcome | None = None
        self.plan_view = widgets.HTML()
        self.apply_button = widgets.Button(
            description="Apply this plan", button_style="warning", icon="wrench",
            tooltip="Runs exactly the steps shown; refused if the table moved since",
            layout={"width": "180px"},
        )
        self.plan_again_button = widgets.Button(
            description="Plan again", icon="refresh", layout={"width": "140px"}
        )
        self.message = widgets.HTML()
        self.apply_button.on_click(lambda _: self.apply())
        self.plan_again_button.on_click(lambda _: self.plan_again())
        self.widget = widgets.VBox(
            [self.plan_view, widgets.HBox([self.apply_button, self.plan_again_button]),
             self.message]
        )
        self.rebuild(plan)

    def rebuild(self, plan: MaintenancePlan) -> None:
        """Show ``plan`` (a new one after "Plan again"); the last outcome is cleared."""
        self.plan = plan
        self.model = MaintenanceModel.from_plan(plan)
        self.plan_view.value = plan_html(self.model)
        self.outcome = None
        self.message.value = ""
        self.apply_button.disabled = self._apply is None or not self.model.todo
        self.plan_again_button.disabled = self._replan is None

    def apply(self) -> MaintenanceOutcome:
        """Apply exactly the plan shown (the "Apply this plan" button). Errors become the
        outcome; a plan that was applied cannot be applied twice."""
        if self._apply is None:
            outcome = MaintenanceOutcome.from_exception(
                RuntimeError("this panel has no apply function; build it with "
                             "toolkit.preview_maintenance")
            )
        elif self.outcome is not None and self.outcome.ok:
            outcome = MaintenanceOutcome(
                "nothing", "Already applied",
                "This plan was applied already; plan again to see what is left to do.",
            )
        else:
            self.apply_button.disabled = True
            try:
                outcome = MaintenanceOutcome.from_report(self._apply(self.plan))
            except Exception as exc:  # shown in the panel, traceback kept in the outcome
                outcome = MaintenanceOutcome.from_exception(exc)
        self._show(outcome)
        return outcome

    def plan_again(self) -> None:
        """Plan against the table as it is now (the "Plan again" button)."""
        if self._replan is None:
            return
        try:
            fresh = self._replan()
        except Exception as exc:
            self._show(MaintenanceOutcome.from_exception(exc))
            return
        self.rebuild(fresh)

    def _show(self, outcome: MaintenanceOutcome) -> None:
        self.outcome = outcome
        self.message.value = maintenance_outcome_html(outcome)
        # applied, or refused as stale: this plan is done with; only a new one helps
        self.apply_button.disabled = (
            self._apply is None or outcome.ok or outcome.plan_again or not self.model.todo
        )

    def report_title(self) -> str:
        return f"Maintenance of {self.model.table}"

    def report_html(self) -> str:
        """The plan and, once applied, what was done (``panel.to_html()`` saves it)."""
        return maintenance_report_html(self.model, self.outcome)


