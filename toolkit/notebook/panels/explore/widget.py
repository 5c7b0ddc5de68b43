"""The explore panel: a thin ipywidgets shell (ipywidgets 8) over
:class:`~toolkit.notebook.panels.explore.model.StatisticsModel`.

The panel keeps its model (``panel.model``), assigns the HTML of
:mod:`toolkit.notebook.panels.explore.html` and the figures of :mod:`toolkit.notebook.figures`,
and wires its controls to plain methods, so a notebook run headless (or a test) calls
``panel.filter(...)`` exactly as the search box does. Figures go into an ``Output`` widget
as plotly's own mime bundle: a plain ``go.Figure``, no ``FigureWidget``.
"""

from __future__ import annotations

import ipywidgets as widgets
import plotly.graph_objects as go

from toolkit.core.values.wording import visible
from toolkit.notebook.common import StaticHtmlPanel
from toolkit.notebook.figures import figure_output, type_drift_figure, type_mix_figure
from toolkit.notebook.paging_widget import Filters, Pager
from toolkit.notebook.panels.explore.html import field_table_html, statistics_header_html
from toolkit.notebook.panels.explore.model import FieldRow, Page, StatisticsModel
from toolkit.notebook.report_html import explore_report_html

__all__ = ["ExplorePanel"]


#: a row of controls that wraps when the notebook is narrow
WRAP = {"flex_flow": "row wrap"}


def _choice(name: str) -> tuple[str, str]:
    """A field in the picker: its name shown with invisible and bidi characters written
    out, picked as itself."""
    return visible(name), name


def _show(out: widgets.Output, *figures: go.Figure) -> None:
    out.outputs = tuple(figure_output(f) for f in figures)


class ExplorePanel(StaticHtmlPanel):
    """Fields and their types: a search box, a paged table (evolved fields highlighted),
    the type mix of the most drifted fields and the drift of one field across batches.
    Displayed, it also carries its current state as static HTML (``panel.to_html()``)."""

    def __init__(self, model: StatisticsModel, *, page_size: int = 25, top: int = 20) -> None:
        self.base = model
        self.model = model
        self.page_size = page_size
        self.top = top
        self.mix_figure: go.Figure | None = None
        self.drift_figure: go.Figure | None = None

        self.header = widgets.HTML()
        self.search = widgets.Text(
            placeholder="filter: words in a field name, a type or a column",
            description="Filter",
            continuous_update=True,
            layout=widgets.Layout(width="420px", max_width="100%"),
        )
        # as wide as their labels (a check box takes 300 px by default)
        self.evolved_only = widgets.Checkbox(
            description="evolved only", indent=False, layout={"width": "auto"}
        )
        self.drifted_only = widgets.Checkbox(
            description="drifted only", indent=False, layout={"width": "auto"}
        )
        self.pager: Pager[FieldRow] = Pager(
            lambda number: self.model.page(number, self.page_size), self._render_page
        )
        self.previous_button, self.next_button, self.position = self.pager.controls
        self.table = widgets.HTML()
        self.field_picker = widgets.Dropdown(
            description="Drift of", layout={"width": "420px", "max_width": "100%"}
        )
        self.charts = widgets.Output()

        self.filters = Filters((self.search, self.evolved_only, self.drifted_only),
                               self._on_filter)
        self.picking = Filters((self.field_picker,), self._render_charts)

        self.widget = widgets.VBox(
            [
                self.header,
                # rows of controls wrap rather than widen a narrow notebook
                widgets.HBox([self.search, self.evolved_only, self.drifted_only], layout=WRAP),
                widgets.HBox(self.pager.controls, layout=WRAP),
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
        with self.filters.setting():
            self.search.value = text
            self.evolved_only.value = evolved_only
            self.drifted_only.value = drifted_only

    def show_page(self, number: int) -> None:
        """Show page ``number`` (from 0, clamped), as Previous and Next do."""
        self.pager.show(number)

    def select(self, field: str) -> None:
        """Show the drift of ``field`` (a dotted field name, or a column of its family)."""
        name = self.model.field(field).name
        options = list(self.field_picker.options)
        with self.picking.setting():  # one redraw of the charts
            if name not in [value for _, value in options]:
                self.field_picker.options = [*options, _choice(name)]
            self.field_picker.value = name

    @property
    def page_number(self) -> int:
        """The page shown, from 0."""
        return self.pager.number

    @property
    def page(self) -> Page[FieldRow]:
        return self.pager.page

    # --- rendering -------------------------------------------------------------------------

    def _on_filter(self) -> None:
        self.model = self.base.filter(
            self.search.value,
            evolved_only=self.evolved_only.value,
            drifted_only=self.drifted_only.value,
        )
        self._refresh()

    def _refresh(self) -> None:
        """The header and the first page of the rows as filtered now."""
        self.header.value = statistics_header_html(self.base, len(self.model.rows))
        self.pager.show(0)

    def _render_page(self, page: Page[FieldRow]) -> None:
        self.table.value = field_table_html(page, committed=self.model.committed)
        # the drift chart offers the most drifted fields and those on the page
        names = [r.name for r in (*self.model.top_drifted(self.top), *page.rows)]
        options = list(dict.fromkeys(names))
        current = self.field_picker.value
        with self.picking.setting():  # the charts, once, whether the pick changed or not
            self.field_picker.options = [_choice(n) for n in options]
            self.field_picker.value = current if current in options else (
                options[0] if options else None
            )

    def _render_charts(self) -> None:
        self.mix_figure = type_mix_figure(self.model, self.top)
        picked = self.field_picker.value
        self.drift_figure = None if picked is None else type_drift_figure(self.model, picked)
        figures = [self.mix_figure] + ([self.drift_figure] if self.drift_figure else [])
        _show(self.charts, *figures)

    # --- static HTML (what shows where the widget cannot) -----------------------------------

    def report_title(self) -> str:
        return f"Statistics of {self.base.what}"

    def report_html(self) -> str:
        """The header, every field matching the filter, the charts as SVG."""
        return explore_report_html(
            self.model, base=self.base, top=self.top, field=self.field_picker.value
        )
