"""Type drift as plotly figures: pure functions from the view-models to ``go.Figure``
(the same numbers as inline SVG, for a panel's static HTML: :mod:`toolkit.notebook.report_html`).

A figure is data too (``fig.data``, ``fig.layout``), so tests read its traces; a panel
only hands it to the front end (:func:`figure_output`). No ``FigureWidget`` (it needs
anywidget since plotly 6).
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio

from toolkit.core.values.wording import visible
from toolkit.notebook.common import clip_middle
from toolkit.notebook.panels.explore.model import StatisticsData, TypeCount, as_statistics_model
from toolkit.notebook.report_html import TYPE_COLORS, drift_title, type_color, type_legend

__all__ = [
    "PLOTLY_MIME",
    "TYPE_COLORS",
    "chart_text",
    "figure_output",
    "type_color",
    "type_drift_figure",
    "type_mix_figure",
]

#: how many characters of a field name the type-mix chart's axis shows
TICK_WIDTH = 40

#: array dimensions are told apart by a pattern over the type's colour
DIM_PATTERNS = ("", "/", "x", "+")


def chart_text(text: str) -> str:
    """``text`` from data as plotly shows it literally: plotly reads its texts (titles,
    ticks, legend and hover texts) as markup of its own, so ``<a href=...>`` would be a live
    link and ``<br>`` a line break, and reads ``%{...}`` in a hover template as a value.
    ``<``, ``>``, ``&`` and ``%`` become entities (which plotly shows as the characters),
    and control, invisible and bidi characters are written out (:func:`visible`). Every
    figure here passes each name, label and title through it.

    >>> chart_text('<a href="https://evil.example">LOGIN</a> 50%{y}')
    '&lt;a href="https://evil.example"&gt;LOGIN&lt;/a&gt; 50&#37;{y}'
    """
    return escape(visible(text), quote=False).replace("%", "&#37;")


def _pattern(type_text: str) -> str:
    dim = type_text.count("[]")
    return DIM_PATTERNS[min(dim, len(DIM_PATTERNS) - 1)]


def _bar(t: TypeCount, **values: object) -> go.Bar:
    return go.Bar(
        name=chart_text(t.label),
        marker={"color": type_color(t.type), "pattern": {"shape": _pattern(t.type)}},
        **values,
    )


def type_mix_figure(data: StatisticsData, top: int = 20, *, title: str | None = None) -> go.Figure:
    """A stacked horizontal bar per field: its values per observed type, for the ``top``
    fields with the most values outside their main type (most drifted at the top)."""
    model = as_statistics_model(data)
    rows = model.top_drifted(top)
    unit = "values written" if model.committed else "values"
    fig = go.Figure()
    for t in type_legend(rows):
        counts = [r.types[r.labels.index(t.label)] if t.label in r.labels else None for r in rows]
        fig.add_trace(
            _bar(
                t,
                orientation="h",
                y=[chart_text(r.name) for r in rows],
                x=[0 if c is None else c.count for c in counts],
                customdata=[
                    ("0", 0.0) if c is None else (c.count_text, round(c.share * 100, 1))
                    for c in counts
                ],
                hovertemplate=f"%{{y}}: %{{customdata[0]}} {unit} as {chart_text(t.label)} "
                "(%{customdata[1]}%)<extra></extra>",
            )
        )
    names = [chart_text(r.name) for r in rows]
    fig.update_layout(
        title=chart_text(title or f"{model.type_mix_title(top)} ({clip_middle(model.what, 60)})"),
        barmode="stack",
        height=max(260, 110 + 26 * len(rows)),
        xaxis_title=unit,
        # the axis shows names cut in the middle (a 200-character name would squeeze the
        # bars to nothing); the hover keeps the whole name
        yaxis={
            "autorange": "reversed", "type": "category", "tickmode": "array",
            "tickvals": names,
            "ticktext": [chart_text(clip_middle(r.name, TICK_WIDTH)) for r in rows],
        },
        legend_title_text="column (type)" if model.committed else "type",
        margin={"l": 10, "r": 10, "t": 50, "b": 40},
    )
    if not rows:
        fig.add_annotation(text="no fields match", showarrow=False, x=0.5, y=0.5,
                           xref="paper", yref="paper")
    return fig


def type_drift_figure(data: StatisticsData, field: str, *, title: str | None = None) -> go.Figure:
    """Per batch, the values ``field`` brought per type (for a committed table: the values
    each column of the family received per snapshot). ``field`` is a dotted field name or,
    for a table, the name of any column of the family."""
    model = as_statistics_model(data)
    row = model.field(field)
    batches = [chart_text(b.batch) for b in row.by_batch]
    unit = "values written" if model.committed else "values"
    fig = go.Figure()
    for t in type_legend((row,)):
        fig.add_trace(
            _bar(
                t,
                x=batches,
                y=[b.count(t.label) for b in row.by_batch],
                # where in the batch the type arrived (a profile's): records 1,501-2,000
                customdata=[chart_text(b.records_text(t.label)) for b in row.by_batch],
                hovertemplate=f"batch %{{x}}: %{{y}} {unit} as {chart_text(t.label)}"
                " %{customdata}<extra></extra>",
            )
        )
    fig.update_layout(
        title=chart_text(title or drift_title(row.name)),
        barmode="stack",
        height=320,
        xaxis={"title": "snapshot (batch)" if model.committed else "batch", "type": "category"},
        yaxis_title=unit,
        legend_title_text="column (type)" if model.committed else "type",
        margin={"l": 10, "r": 10, "t": 50, "b": 40},
    )
    return fig


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
