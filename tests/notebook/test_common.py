"""What keeps a panel to its width, without a browser (tests/browser/test_wide_layouts_browser.py
opens the pages): long names cut in the middle on chart axes, long lists in bounded boxes,
tables with fixed column widths; and outcomes that never say the same words twice."""

from __future__ import annotations

import doctest
import re

import toolkit
import toolkit.notebook.outcome as outcome_module
from toolkit.core.evolution.state import TableState
from toolkit.errors import StalePlanError
from toolkit.notebook import statistics_model
from toolkit.notebook.common import PANEL_CLASS, STYLE, clip_middle, fixed_table, scroll_box
from toolkit.notebook.figures import TICK_WIDTH, type_drift_figure, type_mix_figure
from toolkit.notebook.outcome import CommitOutcome, headline_html, outcome_html
from toolkit.notebook.panels.editor.model import EvolutionOutcome
from toolkit.notebook.panels.explore.model import StatisticsModel
from toolkit.notebook.panels.maintenance.html import maintenance_outcome_html
from toolkit.notebook.panels.maintenance.model import MaintenanceOutcome
from toolkit.notebook.panels.policies.model import policy_comparison
from toolkit.notebook.report_html import explore_report_html, type_drift_svg, type_mix_svg
from toolkit.notebook.schema_tree import schema_tree, schema_tree_html

LONG = "customer_lifetime_value_" * 8 + "x" * 8  # 200 characters, nowhere to break


def headline(html: str) -> str:
    """The text of an outcome's first paragraph (its headline, without the traceback)."""
    paragraph = re.search(r"<p\b.*?</p>", html, re.S)
    assert paragraph is not None
    return re.sub(r"<[^>]+>", "", paragraph.group(0))


def wide_model(fields: int = 300) -> StatisticsModel:
    names = [LONG, *(f"f{i:04d}" for i in range(1, fields))]
    days = [[{n: 1 for n in names}], [{n: "a" for n in names[:3]}]]
    return statistics_model(days)


def test_the_stylesheet_lets_long_words_break_and_tabs_keep_their_titles() -> None:
    assert len(LONG) == 200
    assert ".tknb{max-width:100%;overflow-wrap:anywhere" in STYLE
    assert "table.tknb-fixed{table-layout:fixed;width:100%}" in STYLE
    assert ".tknb pre{" in STYLE and "white-space:pre-wrap" in STYLE
    assert f".{PANEL_CLASS} .jupyter-widgets.jupyter-widget-tab>.lm-TabBar .lm-TabBar-tab" in STYLE
    table = fixed_table([("name", "30%"), ("rest", "")], ["<tr><td>a</td><td>b</td></tr>"])
    assert 'style="table-layout:fixed;width:100%"' in table  # kept without the stylesheet
    assert '<th style="width:30%">name</th><th>rest</th>' in table
    assert 'style="max-height:480px;overflow:auto"' in scroll_box("x")


def test_a_displayed_panel_carries_the_class_its_styles_need() -> None:
    panel = toolkit.explore([[{"a": 1}], [{"a": "x"}]])
    assert PANEL_CLASS not in panel.widget._dom_classes
    panel._repr_mimebundle_()
    panel._repr_mimebundle_()
    assert list(panel.widget._dom_classes).count(PANEL_CLASS) == 1


def test_the_explore_page_shows_200_of_5000_fields_in_a_box_and_says_so() -> None:
    model = wide_model(5_000)
    html = explore_report_html(model)
    assert "5,000 fields" in html
    assert "Showing the first 200 of 5,000 fields" in html
    assert html.count("<tr") == 201  # the header and 200 fields, not 5,000
    assert 'class="tknb-scroll"' in html and 'class="tknb-fixed"' in html


def test_chart_axes_cut_long_names_in_the_middle_and_hovers_keep_them() -> None:
    model = wide_model()
    fig = type_mix_figure(model, 5)
    axis = fig.layout.yaxis
    assert LONG in axis.tickvals and LONG in fig.data[0].y
    assert clip_middle(LONG, TICK_WIDTH) in axis.ticktext
    assert max(len(t) for t in axis.ticktext) <= TICK_WIDTH
    assert "Type mix of 5 fields (3 drifted)" in fig.layout.title.text  # what it shows
    drift = type_drift_figure(model, LONG)
    assert len(drift.layout.title.text) < 100 and drift.layout.title.text.endswith(
        ": types per batch"
    )
    mix = type_mix_svg(model, 5)
    assert f"<title>{LONG}: 1 values as long</title>" in mix  # the tooltip: the whole name
    assert clip_middle(LONG, 34) in mix
    assert f"<title>{drift.layout.title.text}</title>" in type_drift_svg(model, LONG)


def test_a_schema_tree_of_5000_fields_scrolls_in_its_box() -> None:
    schema = toolkit.simulate([[{f"f{i}": i for i in range(5_000)}]]).schema
    from toolkit.iceberg.schema import from_iceberg

    html = schema_tree_html(schema_tree(from_iceberg(schema)), title="After")
    assert html.count("<li>") == 5_000 and 'class="tknb-scroll"' in html


def test_an_outcome_never_says_its_title_twice() -> None:
    assert doctest.testmod(outcome_module).failed == 0
    committed = CommitOutcome("committed", "Committed", "Committed snapshot 42 to db.t: 3 rows")
    assert "Committed. Committed" not in outcome_html(committed)
    assert "Committed snapshot 42 to db.t: 3 rows" in outcome_html(committed)
    stale = CommitOutcome.from_exception(
        StalePlanError("db.t", TableState(0, 1), TableState(0, 2))
    )
    shown = headline(outcome_html(stale))
    assert shown.count("The table changed") == 1
    assert shown.startswith("The table changed since this preview: new data was committed")
    # the editor's outcomes go through the same words
    editor = EvolutionOutcome("committed", "Committed", "Committed to db.t in one commit.")
    assert headline(outcome_html(editor)).count("Committed") == 1
    assert headline_html(True, "Replayed", "3 record(s) written.") == (
        '<p class="tknb-ok"><b>Replayed.</b> 3 record(s) written.</p>'
    )


def test_a_stale_maintenance_plan_says_what_moved_once() -> None:
    exc = StalePlanError("db.t", TableState(0, 1), TableState(0, 2))
    outcome = MaintenanceOutcome.from_exception(exc)
    assert headline(maintenance_outcome_html(outcome)) == (
        "The table changed. db.t moved since the plan was made (its snapshot went from 1 to "
        "2). Nothing was done: plan again to see what maintenance would do now."
    )


def test_compare_policies_shows_its_table_once_as_text() -> None:
    panel = toolkit.compare_policies([[{"size": 4}], [{"size": 2.3}]])
    bundle = panel._repr_mimebundle_()
    # a text-only front end prints the text table; no cell needs to print it as well
    assert bundle["text/plain"] == str(panel.model)
    assert bundle["text/html"].count("values converted") == 1


def test_comparing_many_fields_indexes_each_struct_once() -> None:
    names = [f"f{i}" for i in range(2_000)]
    comparison = policy_comparison([[{n: 1 for n in names}], [{n: "a" for n in names[:2]}]])
    upsolver = comparison.outcome("upsolver")
    assert (upsolver.values, upsolver.values_converted) == (2_002, 0)
