"""A panel without its widget: what a notebook reopened without widget state, GitHub, nbviewer
or a saved ``panel.to_html()`` shows. Each panel's display bundle carries ``text/html`` (its
current state: tables, charts as inline SVG) next to the widget view, ``text/plain`` is a
title rather than the ``VBox(...)`` repr, and ``to_html()`` is a whole page with its own
styles, no script and nothing fetched."""

from __future__ import annotations

import base64
import re
import xml.etree.ElementTree as ET
from datetime import timedelta
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog

import toolkit
from tests.notebook.panel_tables import sample_day, write_batches
from toolkit.core.batch.quarantine import Quarantined
from toolkit.core.evolution.layout import TableLayout
from toolkit.core.evolution.state import ABSENT, TableState
from toolkit.core.maintenance.steps import MaintenancePlan, MaintenanceReport, StepResult
from toolkit.core.values.types import Column, Struct
from toolkit.iceberg import catalog
from toolkit.iceberg.ledger import BATCH_ID_PROPERTY
from toolkit.iceberg.quarantine import append_quarantined, quarantine
from toolkit.notebook import statistics_model
from toolkit.notebook.common import html_document, panel_bundle
from toolkit.notebook.figures import type_drift_figure, type_mix_figure
from toolkit.notebook.outcome import CommitOutcome
from toolkit.notebook.panels.editor.model import EvolutionEditorModel, build_operation
from toolkit.notebook.panels.explore.model import StatisticsModel
from toolkit.notebook.panels.maintenance.widget import MaintenancePanel
from toolkit.notebook.panels.policies.model import policy_comparison
from toolkit.notebook.panels.preview.model import PlanModel
from toolkit.notebook.panels.quarantine.widget import QuarantinePanel
from toolkit.notebook.report_html import (
    editor_report_html,
    policies_report_html,
    preview_report_html,
    type_drift_svg,
    type_mix_svg,
)
from toolkit.pipeline.maintain import plan_maintenance
from toolkit.pipeline.preview import plan_preview

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
TABLE = "db.events"


def days() -> list[list[dict[str, Any]]]:
    return [sample_day(n) for n in (1, 2, 3)]


class _Tags(HTMLParser):
    """The start tags of a page, and whether every one that needs an end tag got it."""

    VOID = {"meta", "br", "hr", "img", "input", "link"}

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.open and self.open[-1] == tag, f"</{tag}> closes <{self.open[-1:]}>"
        self.open.pop()


def assert_self_contained(page: str) -> None:
    """A whole HTML document that needs neither a script nor the network."""
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    parser = _Tags()
    parser.feed(page)
    assert not parser.open, f"unclosed: {parser.open}"
    assert parser.tags[:2] == ["html", "head"] and "body" in parser.tags and "style" in parser.tags
    lowered = page.lower()
    for banned in ("<script", "onclick", "src=", "href=", "@import", "url(", "<link"):
        assert banned not in lowered, banned
    # the only address is the SVG namespace, which nothing fetches
    assert set(re.findall(r"https?://[^\"' ]+", page)) <= {"http://www.w3.org/2000/svg"}
    for svg in re.findall(r"<svg.*?</svg>", page, re.S):
        ET.fromstring(svg)  # each chart is well-formed SVG


def text_of(html: str) -> str:
    """What a reader sees: the text without tags, entities decoded, spaces collapsed."""
    from html import unescape

    html = re.sub(r"<style>.*?</style>", " ", html, flags=re.S)
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


# --- the shared mechanism ---------------------------------------------------------------------


def test_panel_bundle_keeps_the_widget_view_and_adds_the_html() -> None:
    import ipywidgets as widgets

    box = widgets.VBox([widgets.HTML("live")])
    bundle = panel_bundle(box, "<p>the plan</p>", "Preview of db.t")
    assert bundle[WIDGET_VIEW]["model_id"] == box.model_id
    assert bundle["text/plain"] == "Preview of db.t"
    assert "<p>the plan</p>" in bundle["text/html"] and "VBox(" not in bundle["text/html"]
    assert bundle["text/html"].count("<style>") == 1
    page = html_document("Plan <of> db.t", "<p>x</p>")
    assert_self_contained(page)
    assert "<title>Plan &lt;of&gt; db.t</title>" in page


# --- the explore panel --------------------------------------------------------------------------


def test_the_explore_panel_displays_its_statistics_as_html_too() -> None:
    panel = toolkit.explore(days())
    bundle = panel._repr_mimebundle_()
    assert bundle[WIDGET_VIEW]["model_id"] == panel.widget.model_id
    assert bundle["text/plain"] == "Statistics of 60 records in 3 batches"
    html = bundle["text/html"]
    assert "VBox(" not in html
    # the charts as SVG images (sanitizing front ends drop inline SVG, keep images): the
    # very SVG the saved page draws inline
    charts = [
        base64.b64decode(data).decode()
        for data in re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', html)
    ]
    assert len(charts) == 2 and "<svg" not in html
    assert charts == re.findall(r"<svg.*?</svg>", panel.to_html(), re.S)
    assert "<title>my_field: 30 values as string</title>" in charts[0]
    shown = text_of(html)
    assert "60 records in 3 batches, 11 fields; 5 drifted, 4 evolved" in shown
    assert shown.count("60 records") == 1 and "(es)" not in shown
    # every field with its types and counts, and the columns of its family
    assert "my_field evolved drifted long: 30 (50%) string: 30 (50%)" in shown
    assert "my_field my_field_string" in shown and "size size_double" in shown


def test_the_explore_html_follows_the_filter_and_the_picked_field() -> None:
    panel = toolkit.explore(days())
    panel.filter("size")
    panel.select("size")
    shown = text_of(panel.report_html())
    assert "1 of 11 fields" in shown
    assert "size evolved drifted double: 40 (67%) long: 20 (33%)" in shown
    assert "my_field" not in shown
    assert "size: types per batch" in shown


def test_the_charts_plot_the_numbers_of_the_plotly_figures() -> None:
    model = StatisticsModel.from_profile(toolkit.profile([r for d in days() for r in d]))
    mix, fig = type_mix_svg(model, 5), type_mix_figure(model, 5)
    for trace in fig.data:
        for field, count in zip(trace.y, trace.x, strict=True):
            if count:
                assert f"<title>{field}: {count} values as {trace.name}</title>" in mix
    batches = statistics_model([[{"my_field": 1}, {"my_field": 2}],
                                [{"my_field": "a"}, {"my_field": 3}]])
    drift, fig = type_drift_svg(batches, "my_field"), type_drift_figure(batches, "my_field")
    drawn = re.findall(r"<title>batch (\d+): (\d+) values as (\w+)</title>", drift)
    plotted = [
        (str(b), str(n), t.name) for t in fig.data for b, n in zip(t.x, t.y, strict=True) if n
    ]
    assert sorted(drawn) == sorted(plotted) == [
        ("1", "2", "long"), ("2", "1", "long"), ("2", "1", "string")
    ]


def test_explore_to_html_is_a_page_to_send_and_escapes_data() -> None:
    panel = toolkit.explore([[{"<script>alert(1)</script>": 1, "n": 2}], [{"n": "x"}]])
    page = panel.to_html()
    assert_self_contained(page)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    shown = text_of(page)
    assert "Statistics of 2 records in 2 batches" in shown
    assert "n evolved drifted long: 1 (50%) string: 1 (50%)" in shown


def test_a_committed_table_statistics_page(tmp_path: Path) -> None:
    cat = catalog(tmp_path / "lake")
    cat.create_namespace("db")
    table = write_batches(cat, TABLE, days())
    page = toolkit.explore(table).to_html()
    assert_self_contained(page)
    shown = text_of(page)
    assert "values written per column" in shown and "my_field_string" in shown
    assert "values written" in shown and "<svg" in page


# --- the maintenance panel ----------------------------------------------------------------------


@pytest.fixture
def small_files(tmp_path: Path) -> Catalog:
    cat = catalog(tmp_path / "lake")
    cat.create_namespace("db")
    schema = pa.schema([pa.field("id", pa.int64())])
    table = cat.create_table(TABLE, schema=schema)
    for i in range(1, 6):
        table.append(pa.table({"id": [i]}, schema=schema),
                     snapshot_properties={BATCH_ID_PROPERTY: f"b{i}"})
    return cat


def maintenance_plan(cat: Catalog) -> MaintenancePlan:
    return plan_maintenance(
        TABLE, cat, None, older_than=timedelta(0), retain_last=2, min_input_files=3,
        steps=["compact", "rewrite_manifests", "expire_snapshots"],
    )


def test_the_maintenance_page_shows_the_plan_then_what_was_done(small_files: Catalog) -> None:
    def apply(plan: MaintenancePlan) -> MaintenanceReport:
        done = StepResult("expire_snapshots", True, (("expired_snapshots", 3),),
                          "expired 3 snapshots")
        return MaintenanceReport(plan.table, plan, (done,), TableState(0, 99))

    panel = MaintenancePanel(maintenance_plan(small_files), apply)
    bundle = panel._repr_mimebundle_()
    assert bundle[WIDGET_VIEW]["model_id"] == panel.widget.model_id
    assert bundle["text/plain"] == f"Maintenance of {TABLE}"
    page = panel.to_html()
    assert_self_contained(page)
    shown = text_of(page)
    for step, numbers in (("Compact small files", "5 of 5 files -> about 1"),
                          ("Rewrite manifests", "5 of 5 manifests -> 1"),
                          ("Expire snapshots", "3 of 5 snapshots; 2 old ones kept")):
        assert f"{step} yes {numbers}" in shown
    assert "Outcome" not in shown
    panel.apply()
    assert "expired 3 snapshots" in text_of(panel.to_html())


# --- the quarantine inspector -------------------------------------------------------------------


def test_the_quarantine_page_shows_the_groups_and_their_records(tmp_path: Path) -> None:
    cat = catalog(tmp_path / "lake")
    cat.create_namespace("db")
    cat.create_table(TABLE, schema=toolkit.simulate([[{"id": 0, "flag": True}]]).schema)
    items = [
        Quarantined({"id": i, "flag": v}, "incompatible", "flag", "string", "boolean", "day2",
                    f"flag: a string ({v!r}) cannot go into a boolean column")
        for i, v in enumerate(("yes", "no", "<script>alert(1)</script>"), 1)
    ]
    append_quarantined(cat, TABLE, items, "day2")
    panel = QuarantinePanel(quarantine(cat, TABLE))  # read-only: no replay function
    bundle = panel._repr_mimebundle_()
    assert bundle[WIDGET_VIEW]["model_id"] == panel.widget.model_id
    assert bundle["text/plain"] == f"Quarantine of {TABLE}"
    page = panel.to_html()
    assert_self_contained(page)
    shown = text_of(page)
    assert "3 records in 1 group." in shown  # the count per reason is the table's
    assert "incompatible type: flag (string into boolean) — 3" in shown  # the selector
    # the table's reason reads as words (the key, which reason= takes, shows on hover)
    assert "a value its column cannot take, even widened flag string → boolean 3 day2" in shown
    assert '{"id":3,"flag":"<script>alert(1)</script>"}' in shown  # a sample, as text
    assert "Replaying" not in shown
    panel.choose("g0")
    assert "Replaying 3 records will apply" in text_of(panel.to_html())


# --- the panels the lead wires: their HTML from their models --------------------------------------


def test_the_preview_report_shows_the_plan(tmp_path: Path) -> None:
    cat = catalog(tmp_path / "lake")
    cat.create_namespace("db")
    write_batches(cat, TABLE, [sample_day(1)])
    preview = plan_preview(sample_day(2), TABLE, cat)
    model = PlanModel.from_preview(preview)
    profile = StatisticsModel.from_profile(preview.profile, preview.plan.after)
    outcome = CommitOutcome("committed", "Committed", "Committed snapshot 42 to db.events")
    html = preview_report_html(
        model, profile=profile, code=preview.plan.to_sql("spark", TABLE), outcome=outcome
    )
    page = html_document(f"Preview of {TABLE}", html)
    assert_self_contained(page)
    shown = text_of(page)
    # the heading names the table, the sentence after it does not again
    assert f"Preview of {TABLE}" in shown and model.headline in shown
    assert TABLE not in model.headline
    assert model.summary.startswith(f"20 records planned against {TABLE} as it is now (")
    # the new columns with their field IDs, the types and the rule that made them
    assert "my_field_string 16 string my_field" in shown
    assert "started_long 18 long started" in shown
    assert "COALESCE" in shown and "ALTER TABLE" in shown
    assert "Profile" in shown and "<svg" in html  # the profile's charts
    assert "Committed snapshot 42 to db.events" in shown


def test_the_editor_report_shows_the_plan_and_the_trees() -> None:
    schema = Struct((Column(1, "id", "long"), Column(2, "name", "string")))
    model = EvolutionEditorModel(TABLE, TableLayout(schema), ABSENT).with_operation(
        build_operation("rename", {"path": "name", "new_name": "full_name"})
    )
    page = html_document(f"Evolution of {TABLE}", editor_report_html(model))
    assert_self_contained(page)
    shown = text_of(page)
    assert "~ rename name -> full_name" in shown
    assert "Before" in shown and "After" in shown and "full_name" in shown
    assert "No plan was logged in this table yet." in shown


def test_the_policies_report_shows_every_policy() -> None:
    comparison = policy_comparison(days())
    page = html_document("Policies", policies_report_html(comparison))
    assert_self_contained(page)
    shown = text_of(page)
    for o in comparison.outcomes:
        assert f"Details of {o.label}" in shown
        assert " ".join(o.schema.split())[:60] in shown  # the schema it ends with
    assert "60 records in 3 batches" in shown


def test_docstring_examples() -> None:
    import doctest

    import toolkit.notebook.report_html as report_module

    result = doctest.testmod(report_module)
    assert result.attempted > 0 and result.failed == 0
