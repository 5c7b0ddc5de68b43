"""Issue 28 in the notebook preview: the SQL view tab (and the static copy) say what each
field of the view folds to and what that costs, nested fields included."""

from __future__ import annotations

from pathlib import Path

import ipywidgets as widgets
import pytest
from pyiceberg.catalog import Catalog

from toolkit.iceberg import catalog
from toolkit.notebook.panels.preview.model import PlanModel
from toolkit.notebook.panels.preview.widget import PreviewPanel
from toolkit.notebook.report_html import preview_report_html
from toolkit.pipeline.preview import plan_preview

ORDERS = [
    {"address": {"zip": "0150", "city": "Oslo"}, "started": "2024-06-01T08:00:00Z"},
    {"address": {"zip": 150, "city": "Oslo"}, "started": 1717315254178},
    {"address": "12 Main St"},
]
SAID = [
    "address.zip: string and long fold into string (longs as text)",
    "address: record and string fold into string (records as JSON text)",
    "started: long and timestamp fold into timestamp (longs read as epoch s, ms, us or ns "
    "by their magnitude)",
]


@pytest.fixture
def lake(tmp_path: Path) -> Catalog:
    return catalog(tmp_path / "lake")


def test_the_model_says_what_each_field_folds_to(lake: Catalog) -> None:
    model = PlanModel.from_preview(plan_preview(ORDERS, "db.orders", lake))
    assert list(model.folds) == SAID
    for said in SAID:
        assert said in model.sql_for("duckdb")


def test_the_sql_tab_and_the_static_copy_show_it(lake: Catalog) -> None:
    panel = PreviewPanel(plan_preview(ORDERS, "db.orders", lake))
    tab = dict(zip(panel.tabs.titles, panel.tabs.children, strict=True))["SQL view"]
    assert isinstance(tab, widgets.Tab)
    for page in tab.children:
        assert isinstance(page, widgets.HTML)
        assert "What the view folds" in page.value and "<pre>SELECT" in page.value
        assert "address: record and string fold into string (records as JSON text)" in page.value
    report = preview_report_html(panel.model)
    assert "What the view folds" in report and "records as JSON text" in report


def test_a_view_without_folds_says_so(lake: Catalog) -> None:
    model = PlanModel.from_preview(plan_preview([{"a": 1}], "db.plain", lake))
    assert model.folds == ()
    assert "Every field of the view is its one column, as stored." in preview_report_html(model)
