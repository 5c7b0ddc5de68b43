"""The quickstart in a real JupyterLab, driven by a real browser (Debian's chromium through
Playwright): Run All, then a person's click on "Approve and commit" is what commits day 2.

The notebook served is a trimmed temp copy of notebooks/quickstart.ipynb, up to the cell that
previews day 2 (day 1 is previewed and approved by its own cells), so the click is the only
thing that commits day 2, the day whose drift adds the evolved columns. PyIceberg then checks
the table, and a screenshot is kept in artifacts/quickstart.png for a person to look at.

Then the notebook is saved, its kernel shut down and the page reloaded: with the widget
state saved (saveState, binder/overrides.json, as `make lab` and Binder set it) the plan and
the statistics still show (artifacts/quickstart-reloaded*.png). A copy saved without widget
state, untrusted (as one downloaded from GitHub), shows each panel's text/html instead
(artifacts/quickstart-reloaded-static.png).
The server and browser helpers are in lab.py; see ../../../shared/NOTEBOOK-TESTING.md
for why each setting there is.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import nbformat
import pytest

import toolkit
from tests.browser.lab import (
    ARTIFACTS,
    ROOT,
    TOKEN,
    api,
    chromium_page,
    jupyterlab,
    menu,
    open_notebook,
    require_browser,
    wait_idle,
)

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = [pytest.mark.browser, pytest.mark.spark]  # the kernel starts Spark

NOTEBOOK = ROOT / "notebooks" / "quickstart.ipynb"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
BUTTON = "Approve and commit"
#: Spark's JVM starts in the kernel, then day 1 is ingested: minutes on a slow machine
RUN_ALL_TIMEOUT_MS = 240_000


def trimmed_quickstart(dest: Path) -> int:
    """Write the quickstart up to the preview of day 2 (inclusive) to ``dest``; return how
    many "Approve and commit" panels it shows (one per ``toolkit.preview`` cell)."""
    nb = nbformat.read(NOTEBOOK, as_version=4)
    previews = [
        i
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code" and "toolkit.preview(" in c.source
    ]
    assert len(previews) >= 2, "the quickstart previews day 1 and day 2 with toolkit.preview"
    assert "day2" in nb.cells[previews[1]].source, "the second preview is day 2's"
    nb.cells = nb.cells[: previews[1] + 1]
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nbformat.write(nb, dest)
    return 2


def run_all_and_click(
    url: str, notebook: str, panels: int, screenshot: Path,
    then: Callable[[Page], None] | None = None,
) -> str:
    """Open ``notebook``, run all its cells, click the last "Approve and commit" button and
    wait for its panel to say "Committed"; return that cell's text. Saves ``screenshot``
    (after the click) and ``<stem>-preview.png`` next to it (the panel before the click).
    ``then`` is called with the page last (the browser is still open)."""
    from playwright.sync_api import expect

    with chromium_page(screenshot.with_stem(f"{screenshot.stem}-failure")) as page:
        open_notebook(page, url, notebook)
        menu(page, "Run", "Run All Cells")

        buttons = page.get_by_role("button", name=BUTTON)
        expect(buttons).to_have_count(panels, timeout=RUN_ALL_TIMEOUT_MS)
        wait_idle(page, RUN_ALL_TIMEOUT_MS)

        cell = page.locator(".jp-Cell").filter(has=page.get_by_role("button", name=BUTTON)).last
        expect(cell).not_to_contain_text("Committed")
        button = buttons.last
        expect(button).to_be_enabled()
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        # before: the plan of the last preview, from its header down
        cell.evaluate("e => e.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(500)
        page.screenshot(path=str(screenshot.with_stem(f"{screenshot.stem}-preview")))

        button.scroll_into_view_if_needed()
        button.click()
        expect(cell).to_contain_text("Committed", timeout=RUN_ALL_TIMEOUT_MS)
        expect(button).to_be_disabled()

        # after: the button, the outcome, and the table's statistics under them
        button.evaluate("e => e.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(1000)  # let plots and the panel settle before the picture
        page.screenshot(path=str(screenshot))
        text = cell.inner_text()
        if then is not None:
            then(page)
        return text


def save_and_reopen(url: str, work: Path, notebook: str, shots: Path) -> Callable[[Page], None]:
    """What a user does next: save the notebook, stop its kernel, reload the page; the plan
    and the statistics must still read (from the saved widget state). Then a copy without
    widget state, untrusted: each panel's text/html must read instead."""

    def reopen(page: Page) -> None:
        from playwright.sync_api import expect

        settings = api(url, "/lab/api/settings/@jupyter-widgets/jupyterlab-manager:plugin")
        # the override is the setting's default now (a user's own setting would still win)
        assert isinstance(settings, dict)
        assert settings["schema"]["properties"]["saveState"]["default"] is True

        path = work / notebook
        before = path.stat().st_mtime_ns
        page.locator(".lm-MenuBar-itemLabel", has_text="File").first.click()
        page.locator(".lm-Menu-itemLabel", has_text="Save Notebook").first.click()
        deadline = time.monotonic() + 30
        while path.stat().st_mtime_ns == before or WIDGET_STATE not in path.read_text():
            assert time.monotonic() < deadline, "the saved notebook holds no widget state"
            time.sleep(0.25)

        sessions = api(url, "/api/sessions")
        assert isinstance(sessions, list)
        for session in sessions:  # the kernel, and with it Spark, stops: no live widget left
            api(url, f"/api/sessions/{session['id']}", "DELETE")
        error = page.get_by_text("Error displaying widget")
        # day 1's panel (approved by its cell) and day 2's (the click) each show them
        statistics = page.locator(".jp-OutputArea-output").filter(
            has_text="Written data statistics of the table now"
        )
        # The saved file holds both panels' state, yet in some full runs (3 of 5 this stop)
        # a load after the kernel was stopped rendered one panel or none: the new kernel
        # the page auto-starts seems to race JupyterLab's restore of the saved state. A user
        # who meets it reloads; so does the test, at most twice, and says so.
        for attempt in range(3):
            page.reload()
            try:
                expect(statistics).to_have_count(2, timeout=45_000 if attempt < 2 else 90_000)
                break
            except AssertionError:
                if attempt == 2:
                    raise
                print(f"reopen: load {attempt + 1} rendered not every saved panel; reloading")
        statistics = statistics.last
        expect(statistics).to_be_visible()
        plans = page.locator(".jp-OutputArea-output").filter(has_text="Preview of db.events")
        expect(plans).to_have_count(2, timeout=30_000)
        expect(plans.last).to_contain_text("my_field_string")  # the column day 2 adds
        expect(statistics).to_contain_text("my_field_string")
        expect(error).to_have_count(0)
        plans.last.evaluate("e => e.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(1000)
        page.screenshot(path=str(shots / "quickstart-reloaded.png"))
        heading = statistics.get_by_text("Written data statistics of the table now")
        heading.evaluate("e => e.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(500)
        page.screenshot(path=str(shots / "quickstart-reloaded-statistics.png"))

        # saved without widget state and opened untrusted: the outputs' text/html shows
        nb = nbformat.read(path, as_version=4)
        nb.metadata.pop("widgets", None)
        nbformat.write(nb, work / "static.ipynb")
        page.goto(f"{url}/lab/tree/static.ipynb?reset&token={TOKEN}")
        explore = page.locator(".jp-OutputArea-output").filter(
            has_text="60 records in 3 batches, 11 fields"
        )
        expect(explore).to_be_visible(timeout=60_000)
        expect(explore).to_contain_text("A static copy of this toolkit panel")
        expect(explore).to_contain_text("my_field_string")
        expect(explore).not_to_contain_text("VBox(")
        # JupyterLab's sanitizer keeps only some values of some CSS properties inline: a
        # long family name (device_array_record.element.os_version) still wraps in its cell
        overflowing = explore.evaluate(
            "e => [...e.querySelectorAll('td')].filter(c => c.scrollWidth > c.clientWidth + 1)"
            ".map(c => c.textContent)")
        assert overflowing == [], overflowing
        chart = explore.locator("img[alt^='Type mix of']")
        expect(chart).to_be_visible()  # the sanitizer kept the chart, and it decodes
        assert chart.evaluate("e => e.complete && e.naturalWidth") > 0
        static_plans = page.locator(".jp-OutputArea-output").filter(
            has_text="A static copy of this toolkit panel"
        ).filter(has_text="Preview of db.events")
        expect(static_plans).to_have_count(2)
        expect(static_plans.last).to_contain_text("my_field_string")
        explore.evaluate("e => e.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(500)
        page.screenshot(path=str(shots / "quickstart-reloaded-static.png"))

    return reopen


@pytest.fixture()
def served(tmp_path: Path) -> tuple[Path, Path, int]:
    """A work folder holding the trimmed quickstart, and a home for JupyterLab's state."""
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    panels = trimmed_quickstart(work / "quickstart.ipynb")
    return work, home, panels


def test_click_approve_commits_the_evolved_schema(served: tuple[Path, Path, int]) -> None:
    require_browser()
    work, home, panels = served
    shot = ARTIFACTS / "quickstart.png"

    with jupyterlab(work, home) as url:
        reopen = save_and_reopen(url, work, "quickstart.ipynb", ARTIFACTS)
        text = run_all_and_click(url, "quickstart.ipynb", panels, shot, then=reopen)

    assert "Committed" in text
    table = toolkit.catalog(work / "lakehouse").load_table("db.events")
    names = [f.name for f in table.schema().fields]
    for column in ("my_field_string", "size_double", "started_long"):
        assert column in names
        assert table.schema().find_field(column).doc == (
            f"upsolver_evolved_from:{column.rsplit('_', 1)[0]}"
        )
    snapshots = table.snapshots()
    assert len(snapshots) == 2, "day 1 by its cell, day 2 by the click: one commit each"
    assert str(snapshots[-1].snapshot_id) in text, "the panel names the committed snapshot"
    assert shot.stat().st_size > 10_000
