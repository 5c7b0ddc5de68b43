"""Layouts that hold with 200-character names and 5,000 fields, in a real browser.

A table of 5,000 fields (some named with 200 characters, some drifting from long to
string) feeds every panel; each panel's static page (``panel.to_html()``, what a notebook
shows without its widget and what a user saves) opens in Debian's chromium through
Playwright at 1200 px wide, and must not scroll sideways: long names wrap inside their
column, long lists scroll in their own box. A screenshot of each page is kept in
artifacts/wide-<panel>.png for a person to look at.
See ../../../shared/NOTEBOOK-TESTING.md for the browser's flags.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_type_hints

import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog

import toolkit
from tests.browser.lab import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS
from tests.notebook.panel_tables import write_batches
from toolkit.core.batch.quarantine import Quarantined
from toolkit.iceberg import catalog
from toolkit.iceberg.quarantine import append_quarantined, quarantine
from toolkit.notebook import compare_policies, explore, preview
from toolkit.notebook.build import edit_schema
from toolkit.notebook.common import StaticHtmlPanel
from toolkit.notebook.panels.editor.widget import EvolutionEditor
from toolkit.notebook.panels.explore.widget import ExplorePanel
from toolkit.notebook.panels.maintenance.widget import MaintenancePanel
from toolkit.notebook.panels.policies.widget import PolicyComparisonPanel
from toolkit.notebook.panels.preview.widget import PreviewPanel
from toolkit.notebook.panels.quarantine.widget import QuarantinePanel
from toolkit.pipeline.maintain import plan_maintenance

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.browser

WIDTH = 1200
TABLE = "db.wide"
FIELDS = 5_000
#: every 500th field has a 200-character name; every 250th drifts from long to string
LONG_EVERY, DRIFT_EVERY = 500, 250


def field_name(i: int) -> str:
    if i % LONG_EVERY:
        return f"field_{i:05d}"
    # one word with no space to break at: the hardest name to fit
    return f"f{i}_" + ("customer_lifetime_value_" * 10)[: 200 - len(f"f{i}_")]


LONG_NAME = field_name(0)


def day(n: int, fields: int = FIELDS) -> list[dict[str, Any]]:
    """Three records of ``fields`` fields; on day 2 the drifting ones arrive as strings."""
    return [
        {
            field_name(i): f"v{r + i}" if n == 2 and i % DRIFT_EVERY == 0 else r + i
            for i in range(fields)
        }
        for r in range(3)
    ]


@dataclass(frozen=True)
class Wide:
    """A catalog holding ``db.wide`` (the schema of the two days, no data, its quarantine
    holding one group per drifting field) and the two days of records."""

    catalog: Catalog
    days: list[list[dict[str, Any]]]


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> Wide:
    assert len(LONG_NAME) == 200
    cat = catalog(tmp_path_factory.mktemp("wide") / "lake")
    cat.create_namespace("db")
    days = [day(1), day(2)]
    # no rows: PyIceberg takes minutes to append to 5,000 columns
    cat.create_table(TABLE, schema=toolkit.simulate(days).schema)
    aside = [
        Quarantined(
            {"id": i, field_name(i): "maybe"}, "incompatible", field_name(i), "string",
            "boolean", "day3", f"{field_name(i)}: a string cannot go into a boolean column",
        )
        for i in range(0, FIELDS, DRIFT_EVERY)
    ]
    append_quarantined(cat, TABLE, aside, "day3")
    return Wide(cat, days)


def explore_panel(w: Wide) -> ExplorePanel:
    panel = explore(w.days)
    panel.select(LONG_NAME)  # its drift chart too
    return panel


def table_statistics_panel(w: Wide) -> ExplorePanel:
    # a table's statistics come from written data: 250 fields keep the appends quick
    table = write_batches(w.catalog, "db.written", [day(1, 250), day(2, 250)])
    return explore(table)


def preview_panel(w: Wide) -> PreviewPanel:
    # a new table: 5,000 new columns, both schema trees, where every value lands
    return preview(w.days[1], "db.fresh", w.catalog)


def maintenance_panel(w: Wide) -> MaintenancePanel:
    # a plan names no field: its long name is the table's
    name = f"db.{LONG_NAME}"
    schema = pa.schema([pa.field("id", pa.int64())])
    table = w.catalog.create_table(name, schema=schema)
    for i in range(4):
        table.append(pa.table({"id": [i]}, schema=schema))
    plan = plan_maintenance(
        name, w.catalog, None, older_than=timedelta(0), retain_last=1, min_input_files=2,
        steps=["compact", "rewrite_manifests", "expire_snapshots"],
    )
    return MaintenancePanel(plan)


def quarantine_panel(w: Wide) -> QuarantinePanel:
    return QuarantinePanel(quarantine(w.catalog, TABLE))


def policies_panel(w: Wide) -> PolicyComparisonPanel:
    return compare_policies([day(1), day(2)])


def editor_panel(w: Wide) -> EvolutionEditor:
    editor = edit_schema(w.catalog, TABLE)
    editor.choose("rename")
    editor.fill(path=LONG_NAME, new_name=LONG_NAME[::-1])
    assert editor.add() is None
    return editor


#: (name, how the panel is built): every function of this module named ``<name>_panel``,
#: in the order they are written; ``test_every_panel_of_the_package_is_built`` checks that
#: together they build every panel the notebook package defines
PANELS: list[tuple[str, Callable[[Wide], StaticHtmlPanel]]] = [
    (name.removesuffix("_panel").replace("_", "-"), build)
    for name, build in list(globals().items())
    if name.endswith("_panel") and inspect.isfunction(build)
]


def panel_classes() -> set[type]:
    """Every panel the notebook package defines (a subclass of ``StaticHtmlPanel``), found
    by walking the package."""
    import toolkit.notebook

    found: set[type] = set()
    for info in pkgutil.walk_packages(toolkit.notebook.__path__, "toolkit.notebook."):
        module = importlib.import_module(info.name)
        found |= {
            c for _, c in inspect.getmembers(module, inspect.isclass)
            if issubclass(c, StaticHtmlPanel) and c is not StaticHtmlPanel
            and c.__module__ == info.name
        }
    return found


def test_every_panel_of_the_package_is_built() -> None:
    built = {get_type_hints(build)["return"] for _, build in PANELS}
    missing = panel_classes() - built
    assert not missing, f"no <name>_panel builds {sorted(c.__name__ for c in missing)}"
    assert len(PANELS) >= len(built) >= 6


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.skip("needs Debian's chromium (apt install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.mark.parametrize(("name", "build"), PANELS, ids=[n for n, _ in PANELS])
def test_the_panel_holds_its_width(
    name: str, build: Callable[[Wide], StaticHtmlPanel], wide: Wide, browser: Browser,
    tmp_path: Path,
) -> None:
    page_file = tmp_path / f"{name}.html"
    page_file.write_text(build(wide).to_html(), encoding="utf-8")
    page = browser.new_page(viewport={"width": WIDTH, "height": 900})
    try:
        page.goto(page_file.as_uri())
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"wide-{name}.png"))
        scroll_width, inner = page.evaluate(
            "[document.documentElement.scrollWidth, window.innerWidth]"
        )
        wider = page.evaluate(
            """() => [...document.querySelectorAll('body *')]
                .filter(e => e.getBoundingClientRect().right > window.innerWidth)
                .slice(0, 5).map(e => `${e.tagName}.${e.className}`)"""
        )
        assert scroll_width <= inner, f"{name} is {scroll_width}px wide: {wider}"
        assert LONG_NAME in page.inner_text("body"), f"{name} does not show the long name"
    finally:
        page.close()
