"""Thin ipywidgets shells over the view-models (ipywidgets 8).

A panel keeps its model (``panel.model``), assigns HTML rendered by
:mod:`toolkit.notebook.render` and figures built by :mod:`toolkit.notebook.figures`, and
wires buttons to plain methods, so a notebook run headless (or a test) calls
``panel.approve()`` exactly as the button does. Figures go into an ``Output`` widget as
plotly's own mime bundle: a plain ``go.Figure``, no ``FigureWidget``.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import plotly.graph_objects as go
import plotly.io as pio

from toolkit.core.options import Options
from toolkit.notebook.figures import type_drift_figure, type_mix_figure
from toolkit.notebook.models import (
    CommitOutcome,
    CommitRequest,
    Page,
    PlanModel,
    StatisticsModel,
)
from toolkit.notebook.render import (
    field_table_html,
    landings_html,
    new_columns_html,
    outcome_html,
    plan_header_html,
    quarantine_preview_html,
    schema_tree_html,
    sql_html,
    widenings_html,
)

if TYPE_CHECKING:
    from toolkit.iceberg.statistics import WrittenDataStatistics
    from toolkit.notebook.policies import PolicyComparison
    from toolkit.pipeline.ingest import IngestReport
    from toolkit.pipeline.preview import Preview

__all__ = [
    "CommitFunction", "ExplorePanel", "PolicyComparisonPanel", "PreviewPanel", "figure_output",
]

#: commits an approved preview (the default calls ``toolkit.pipeline.ingest``)
CommitFunction = Callable[[CommitRequest], "IngestReport"]

PLOTLY_MIME = "application/vnd.plotly.v1+json"


def figure_output(fig: go.Figure) -> dict[str, Any]:
    """A figure as one ``display_data`` output (what ``fig.show()`` sends with plotly's
    mime renderer), to be assigned to an ``Output`` widget without a running kernel."""
    title = fig.layout.title.text or "Figure"
    return {
        "output_type": "display_data",
        "data": {
            PLOTLY_MIME: json.loads(pio.to_json(fig, validate=False)),
            "text/plain": f"<plotly figure: {title}>",
        },
        "metadata": {},
    }


def _show(out: widgets.Output, *figures: go.Figure) -> None:
    out.outputs = tuple(figure_output(f) for f in figures)


def _display(on: bool) -> str:
    return "" if on else "none"


class ExplorePanel:
    """Fields and their types: a search box, a paged table (evolved fields highlighted),
    the type mix of the most drifted fields and the drift of one field across batches."""

    def __init__(self, model: StatisticsModel, *, page_size: int = 25, top: int = 20) -> None:
        self.base = model
        self.model = model
        self.page_size = page_size
        self.top = top
        self.page_number = 0
        self.mix_figure: go.Figure | None = None
        self.drift_figure: go.Figure | None = None
        self._quiet = False

        self.header = widgets.HTML()
        self.search = widgets.Text(
            placeholder="filter: words in a field name, a type or a column",
            description="Filter",
            continuous_update=True,
            layout=widgets.Layout(width="420px"),
        )
        self.evolved_only = widgets.Checkbox(description="evolved only", indent=False)
        self.drifted_only = widgets.Checkbox(description="drifted only", indent=False)
        self.previous_button = widgets.Button(description="◀ Previous", layout={"width": "110px"})
        self.next_button = widgets.Button(description="Next ▶", layout={"width": "110px"})
        self.position = widgets.Label()
        self.table = widgets.HTML()
        self.field_picker = widgets.Dropdown(description="Drift of", layout={"width": "420px"})
        self.charts = widgets.Output()

        for control in (self.search, self.evolved_only, self.drifted_only):
            control.observe(self._on_filter, names="value")
        self.previous_button.on_click(lambda _: self.show_page(self.page_number - 1))
        self.next_button.on_click(lambda _: self.show_page(self.page_number + 1))
        self.field_picker.observe(self._on_pick, names="value")

        self.widget = widgets.VBox(
            [
                self.header,
                widgets.HBox([self.search, self.evolved_only, self.drifted_only]),
                widgets.HBox([self.previous_button, self.next_button, self.position]),
                self.table,
                self.field_picker,
                self.charts,
            ]
        )
        self._refresh()

    # --- what the controls do (callable headless) -------------------------------------

    def filter(
        self, text: str = "", *, evolved_only: bool = False, drifted_only: bool = False
    ) -> None:
        """Set the search box and check boxes, as a user would."""
        self._quiet = True
        try:
            self.search.value = text
            self.evolved_only.value = evolved_only
            self.drifted_only.value = drifted_only
        finally:
            self._quiet = False
        self._on_filter()

    def show_page(self, number: int) -> None:
        self.page_number = self.model.page(number, self.page_size).number
        self._render_page()

    def select(self, field: str) -> None:
        """Show the drift of ``field`` (a dotted field name, or a column of its family)."""
        name = self.model.field(field).name
        options = list(self.field_picker.options)
        if name not in options:
            self._quiet = True
            try:
                self.field_picker.options = [*options, name]
            finally:
                self._quiet = False
        if self.field_picker.value == name:
            self._render_charts()
        else:
            self.field_picker.value = name  # the observer redraws the charts

    @property
    def page(self) -> Page:
        return self.model.page(self.page_number, self.page_size)

    # --- rendering -------------------------------------------------------------------------

    def _on_filter(self, change: object = None) -> None:
        if self._quiet:
            return
        self.model = self.base.filter(
            self.search.value,
            evolved_only=self.evolved_only.value,
            drifted_only=self.drifted_only.value,
        )
        self.page_number = 0
        self._refresh()

    def _on_pick(self, change: object = None) -> None:
        if not self._quiet:
            self._render_charts()

    def _refresh(self) -> None:
        m = self.base
        matching = len(self.model.rows)
        shown = str(m.total) if matching == m.total else f"{matching} of {m.total}"
        self.header.value = (
            f"<b>{html.escape(m.source)}</b>: {m.records} records, {len(m.batches)} batch(es), "
            f"{shown} fields; {m.drifted} drifted, {m.evolved} evolved"
        )
        self._render_page()

    def _render_page(self) -> None:
        page = self.page
        self.table.value = field_table_html(page, committed=self.model.committed)
        self.position.value = str(page)
        self.previous_button.disabled = page.number == 0
        self.next_button.disabled = page.number >= page.pages - 1
        # the drift chart offers the most drifted fields and those on the page
        names = [r.name for r in (*self.model.top_drifted(self.top), *page.rows)]
        options = list(dict.fromkeys(names))
        current = self.field_picker.value
        self._quiet = True
        try:
            self.field_picker.options = options
            self.field_picker.value = current if current in options else (
                options[0] if options else None
            )
        finally:
            self._quiet = False
        self._render_charts()

    def _render_charts(self) -> None:
        self.mix_figure = type_mix_figure(self.model, self.top)
        picked = self.field_picker.value
        self.drift_figure = None if picked is None else type_drift_figure(self.model, picked)
        figures = [self.mix_figure] + ([self.drift_figure] if self.drift_figure else [])
        _show(self.charts, *figures)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)


class PreviewPanel:
    """A plan before anything changes: the schema before and after (field IDs, new fields
    marked), the new columns and why, where each sample value lands, the view's SQL per
    dialect, the profile; then "Approve and commit", and what the commit did.

    ``commit`` receives a :class:`~toolkit.notebook.models.CommitRequest` (the approved
    plan, the table state it was made against, a stable batch id) and returns an
    ``IngestReport``; without one the panel is read-only. ``statistics`` (optional) returns
    the table's written data statistics after a commit; ``repreview`` (optional) makes a new
    preview when the table moved.
    """

    def __init__(
        self,
        preview: Preview,
        commit: CommitFunction | None = None,
        *,
        options: Options | None = None,
        sample: int = 20,
        batch_id: str | None = None,
        statistics: Callable[[], WrittenDataStatistics] | None = None,
        repreview: Callable[[], Preview] | None = None,
    ) -> None:
        self.options = options or Options()
        self.sample = sample
        self._batch_id = batch_id
        self._commit = commit
        self._statistics = statistics
        self._repreview = repreview
        self.outcome: CommitOutcome | None = None
        self.statistics: WrittenDataStatistics | None = None
        self.statistics_panel: ExplorePanel | None = None

        self.header = widgets.HTML()
        self.tabs = widgets.Tab()
        self.approve_button = widgets.Button(
            description="Approve and commit",
            button_style="success",
            icon="check",
            layout={"width": "200px"},
        )
        self.progress = widgets.HBox(
            [
                widgets.IntProgress(value=1, min=0, max=1, bar_style="info",
                                    layout={"width": "160px"}),
                widgets.Label("Committing: profiling, committing the schema, writing rows…"),
            ],
            layout={"display": "none"},
        )
        self.preview_again_button = widgets.Button(
            description="Preview again", icon="refresh", layout={"display": "none"}
        )
        self.message = widgets.HTML()
        self.result = widgets.VBox()
        self.approve_button.on_click(lambda _: self.approve())
        self.preview_again_button.on_click(lambda _: self.preview_again())

        self.widget = widgets.VBox(
            [
                self.header,
                self.tabs,
                widgets.HBox([self.approve_button, self.preview_again_button, self.progress]),
                self.message,
                self.result,
            ]
        )
        self.rebuild(preview)

    # --- the model ------------------------------------------------------------------------

    def rebuild(self, preview: Preview) -> None:
        """Show ``preview`` (a new one after "Preview again"); the last outcome is cleared."""
        self.preview = preview
        self.model = PlanModel.from_preview(
            preview, self.options, sample=self.sample, batch_id=self._batch_id
        )
        self.outcome = None
        self.statistics = None
        self.statistics_panel = None
        m = self.model
        self.header.value = plan_header_html(m)
        self.profile_panel = ExplorePanel(
            StatisticsModel.from_profile(
                preview.profile, preview.plan.after, source=f"{m.records} previewed records"
            ),
            page_size=15,
        )
        sql = widgets.Tab(
            children=[widgets.HTML(sql_html(text, d)) for d, text in m.sql],
            titles=[d for d, _ in m.sql],
        )
        # RULES 5: under the widening policy, the retypes and the records set aside too
        widen: list[tuple[str, widgets.Widget]] = []
        if m.widening:
            q = m.quarantine
            widen = [
                (
                    f"Widenings ({len(m.widenings)}, {len(m.rewrites)} rewrite(s))",
                    widgets.HTML(widenings_html(m.widenings, m.pending, m.optionals)),
                ),
                (
                    f"Quarantine ({0 if q is None else q.total})",
                    widgets.HTML(quarantine_preview_html(q)),
                ),
            ]
        pages: list[tuple[str, widgets.Widget]] = [
            (
                "Schema",
                widgets.HBox(
                    [
                        widgets.HTML(schema_tree_html(m.before, title="Before")),
                        widgets.HTML(schema_tree_html(m.after, title="After")),
                    ],
                    layout={"grid_gap": "40px"},
                ),
            ),
            (f"New columns ({len(m.new_columns)})", widgets.HTML(new_columns_html(m.new_columns))),
            *widen,
            ("Where values land", widgets.HTML(landings_html(m.samples, m.records))),
            ("SQL view", sql if m.sql else widgets.HTML("(no columns: no view)")),
            ("Profile", self.profile_panel.widget),
        ]
        self.tabs.children = [w for _, w in pages]
        self.tabs.titles = [t for t, _ in pages]
        self.message.value = "" if self._commit else (
            "<i>Read-only preview: no commit function was given.</i>"
        )
        self.result.children = []
        self.approve_button.disabled = self._commit is None
        self.preview_again_button.layout.display = "none"

    @property
    def request(self) -> CommitRequest:
        """What "Approve and commit" sends to the commit function."""
        return CommitRequest(
            self.model.table,
            self.model.batch_id,
            self.preview.plan,
            self.preview.state,
            self.preview.records,
        )

    # --- the buttons ----------------------------------------------------------------------

    def approve(self) -> CommitOutcome:
        """Commit the previewed plan and data; what the "Approve and commit" button does.

        Errors are not raised: they become the outcome, shown in plain words (with the
        traceback folded underneath) and returned.
        """
        if self._commit is None:
            outcome = CommitOutcome.from_exception(
                RuntimeError("this preview has no commit function; build it with toolkit.preview")
            )
            self._show_outcome(outcome)
            return outcome
        self.approve_button.disabled = True
        self.preview_again_button.layout.display = "none"
        self.progress.layout.display = ""
        self.message.value = ""
        try:
            outcome = CommitOutcome.from_report(self._commit(self.request))
        except Exception as exc:  # shown in the panel; the traceback stays in the outcome
            outcome = CommitOutcome.from_exception(exc)
        finally:
            self.progress.layout.display = "none"
        self._show_outcome(outcome)
        return outcome

    def preview_again(self) -> None:
        """Plan again against the table as it is now (the "Preview again" button)."""
        if self._repreview is None:
            return
        try:
            fresh = self._repreview()
        except Exception as exc:
            self._show_outcome(CommitOutcome.from_exception(exc))
            return
        self.rebuild(fresh)

    def _show_outcome(self, outcome: CommitOutcome) -> None:
        self.outcome = outcome
        self.message.value = outcome_html(outcome)
        children: list[widgets.Widget] = []
        if outcome.kind == "committed" and self._statistics is not None:
            try:
                self.statistics = self._statistics()
            except Exception as exc:  # the commit stands; only the statistics are missing
                failed = replace(
                    CommitOutcome.from_exception(exc),
                    title="The statistics of the table could not be read",
                )
                children.append(widgets.HTML(outcome_html(failed)))
            else:
                self.statistics_panel = ExplorePanel(
                    StatisticsModel.from_statistics(self.statistics), page_size=15
                )
                children += [
                    widgets.HTML("<b>Written data statistics of the table now</b>"),
                    self.statistics_panel.widget,
                ]
        self.result.children = children
        # a plan that no longer fits is never retried as is: only a new preview helps
        again = outcome.preview_again and self._repreview is not None
        self.preview_again_button.layout.display = _display(again)
        self.approve_button.disabled = outcome.ok or outcome.preview_again

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)


class PolicyComparisonPanel:
    """What each policy would do with one sample, side by side (columns added, widenings,
    rewrites, values converted, records quarantined), and one policy's schema and plans."""

    def __init__(self, model: PolicyComparison) -> None:
        from toolkit.notebook.policies import comparison_html, outcome_html

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

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)
