"""The quarantine inspector: a thin ipywidgets shell over
:class:`~toolkit.notebook.panels.quarantine.model.QuarantineModel`.

Example (notebook cells)::

    panel = toolkit.inspect_quarantine(cat, "db.events", spark=spark)
    panel                      # groups by reason / field / types, sample records
    panel.choose("g0")         # what the selector does; shows the plan a replay needs
    panel.replay_selected()    # what "Replay selected" does; panel.outcome says what happened

Everything that touches a table is injected (``reload``, ``plan``, ``replay``,
``discard``), as the preview panel injects its commit, so a test records what a click
would do and a notebook run headless calls the same methods as the buttons.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import ipywidgets as widgets

from toolkit.core.batch.quarantine import Quarantine
from toolkit.notebook.common import StaticHtmlPanel
from toolkit.notebook.panels.quarantine.html import (
    groups_html,
    replay_outcome_html,
    replay_plan_html,
    samples_html,
)
from toolkit.notebook.panels.quarantine.model import (
    QuarantineModel,
    ReplayOutcome,
    ReplayPlan,
    ReplayRequest,
)
from toolkit.notebook.report_html import quarantine_report_html
from toolkit.pipeline.replay import ReplayReport

if TYPE_CHECKING:

    from toolkit.pipeline.replay import ReplayPreview

__all__ = ["QuarantinePanel"]

#: replays the chosen records (the default calls ``toolkit.iceberg.quarantine.replay``)
ReplayFunction = Callable[[ReplayRequest], ReplayReport]
#: plans a replay of ids without changing anything (the default: ``replay_preview``)
PlanFunction = Callable[[Sequence[str]], "ReplayPreview"]
#: removes ids from the quarantine for good; returns how many
DiscardFunction = Callable[[Sequence[str]], int]


class QuarantinePanel(StaticHtmlPanel):
    """Groups of quarantined records, a selector, their samples, the plan a replay of the
    selection needs, and "Replay selected" (plus "Discard selected" for records that can
    never be replayed).

    ``reload`` reads the quarantine again after a replay or a discard; ``plan`` (optional)
    plans a replay of the selected ids and the button then approves exactly that plan;
    without ``replay`` the panel is read-only.
    """

    def __init__(
        self,
        quarantine: Quarantine,
        replay: ReplayFunction | None = None,
        *,
        reload: Callable[[], Quarantine] | None = None,
        plan: PlanFunction | None = None,
        discard: DiscardFunction | None = None,
        samples: int = 3,
    ) -> None:
        self.samples = samples
        self._replay = replay
        self._reload = reload
        self._plan = plan
        self._discard = discard
        self.replay_plan: ReplayPlan | None = None
        self.plan_error: str | None = None
        self.outcome: ReplayOutcome | None = None

        self.table = widgets.HTML()
        self.selector = widgets.SelectMultiple(
            description="Groups", rows=6, layout={"width": "640px", "max_width": "100%"}
        )
        self.details = widgets.HTML()
        self.plan_view = widgets.HTML()
        self.replay_button = widgets.Button(
            description="Replay selected", button_style="success", icon="repeat",
            layout={"width": "180px"},
        )
        self.discard_button = widgets.Button(
            description="Discard selected", button_style="danger", icon="trash",
            tooltip="Only records that cannot be replayed (malformed, not JSON objects)",
            layout={"width": "180px"},
        )
        self.message = widgets.HTML()
        self.selector.observe(lambda _: self._on_select(), names="value")
        self.replay_button.on_click(lambda _: self.replay_selected())
        self.discard_button.on_click(lambda _: self.discard_selected())
        self.widget = widgets.VBox(
            [
                self.table,
                self.selector,
                self.details,
                self.plan_view,
                widgets.HBox([self.replay_button, self.discard_button]),
                self.message,
            ]
        )
        self.rebuild(quarantine)

    # --- the model ------------------------------------------------------------------------

    def rebuild(self, quarantine: Quarantine) -> None:
        """Show ``quarantine`` (read again after a replay); the selection is cleared."""
        self.quarantine = quarantine
        self.model = QuarantineModel.from_quarantine(quarantine, samples=self.samples)
        self.table.value = groups_html(self.model)
        self.selector.options = [(g.label, g.key) for g in self.model.groups]
        self.selector.value = ()
        self._on_select()

    @property
    def selected(self) -> tuple[str, ...]:
        return tuple(self.selector.value)

    def choose(self, *keys: str) -> None:
        """Select groups by key (``g0`` is the largest), as a user does in the selector."""
        for key in keys:
            self.model.group(key)  # a clear error for an unknown key
        self.selector.value = keys

    # --- the buttons ----------------------------------------------------------------------

    def replay_selected(self) -> ReplayOutcome:
        """Replay the records of the selected groups that can land now, under the plan
        shown; what the "Replay selected" button does. Errors become the outcome."""
        ids = self.model.replay_ids(self.selected)
        if self.replay_plan is not None and self.replay_plan.approved is not None:
            ids = self.replay_plan.ids  # the records that land now: the plan is theirs
        if self._replay is None:
            outcome = ReplayOutcome.from_exception(
                RuntimeError("this panel has no replay function; build it with "
                             "toolkit.inspect_quarantine")
            )
        elif not ids:
            why = "" if self.replay_plan is None else self.replay_plan.cannot_text
            outcome = ReplayOutcome(
                "nothing", "Nothing replayed",
                f"None of the chosen records can land now: {why}." if why else
                "Choose at least one group of records that can be replayed.",
            )
        else:
            plan = self.replay_plan
            request = ReplayRequest(
                ids,
                None if plan is None else plan.approved,
                None if plan is None else plan.expected,
            )
            self.replay_button.disabled = True
            try:
                outcome = ReplayOutcome.from_report(self._replay(request))
            except Exception as exc:  # shown in the panel, traceback kept in the outcome
                outcome = ReplayOutcome.from_exception(exc)
            if outcome.ok and self._reload is not None:
                self.rebuild(self._reload())
        self._show(outcome)
        return outcome

    def discard_selected(self) -> ReplayOutcome:
        """Remove the selected records that can never be replayed, for good."""
        ids = self.model.discard_ids(self.selected)
        if self._discard is None or not ids:
            outcome = ReplayOutcome(
                "nothing", "Nothing discarded",
                "Only records that cannot be replayed (malformed lines, JSON that is not "
                "an object) can be discarded here; choose such a group.",
            )
        else:
            try:
                outcome = ReplayOutcome.discarded(self.model.table, self._discard(ids))
            except Exception as exc:
                outcome = ReplayOutcome.from_exception(exc)
            if outcome.ok and self._reload is not None:
                self.rebuild(self._reload())
        self._show(outcome)
        return outcome

    # --- rendering -------------------------------------------------------------------------

    def _on_select(self) -> None:
        chosen = self.model.selection(self.selected)
        self.details.value = samples_html(chosen)
        ids = self.model.replay_ids(self.selected)
        self.replay_plan, self.plan_error = None, None
        if ids and self._plan is not None:
            try:
                self.replay_plan = ReplayPlan.from_preview(ids, self._plan(ids))
            except Exception as exc:  # e.g. the target is unreadable: say so, keep going
                self.plan_error = f"{type(exc).__name__}: {exc}"
        elif ids:
            self.replay_plan = ReplayPlan(ids, "whatever ingest plans for them", None, None)
        self.plan_view.value = replay_plan_html(self.replay_plan, self.plan_error)
        lands = ids if self.replay_plan is None else self.replay_plan.ids
        self.replay_button.disabled = self._replay is None or not lands
        self.discard_button.disabled = (
            self._discard is None or not self.model.discard_ids(self.selected)
        )

    def _show(self, outcome: ReplayOutcome) -> None:
        self.outcome = outcome
        self.message.value = replay_outcome_html(outcome)

    def report_title(self) -> str:
        return f"Quarantine of {self.model.table}"

    def report_html(self) -> str:
        """The groups, the selection's samples and replay plan, the last outcome
        (``panel.to_html()`` saves it)."""
        return quarantine_report_html(
            self.model, self.selected, plan=self.replay_plan, plan_error=self.plan_error,
            outcome=self.outcome,
        )


