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
See ../../../shared/NOTEBOOK-TESTING.md for why each setting below is there.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import nbformat
import pytest
from ipykernel.kernelspec import write_kernel_spec

import toolkit

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = [pytest.mark.browser, pytest.mark.spark]  # the kernel starts Spark

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "quickstart.ipynb"
#: the JupyterLab settings `make lab` and Binder install (saveState: true)
OVERRIDES = ROOT / "binder" / "overrides.json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
ARTIFACTS = ROOT / "artifacts"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
TOKEN = "toolkit-browser-test"
BUTTON = "Approve and commit"
#: Spark's JVM starts in the kernel, then day 1 is ingested: minutes on a slow machine
RUN_ALL_TIMEOUT_MS = 240_000
#: lab user settings: start the kernel without asking, no news toast, every cell in the DOM
SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {
        "autoStartDefaultKernel": True,
        "windowingMode": "none",
    },
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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


@contextmanager
def jupyterlab(root: Path, home: Path) -> Iterator[str]:
    """JupyterLab serving ``root``, everything it writes kept under ``home``; yields its URL.

    The server is a direct child of this process; stopping it (SIGTERM, then SIGKILL)
    shuts its kernels down (and with them the kernel's Spark JVM)."""
    env = dict(os.environ)
    env.pop("JUPYTER_PATH", None)
    dirs = {
        "HOME": home,
        "JUPYTER_CONFIG_DIR": home / "config",
        "JUPYTER_DATA_DIR": home / "data",
        "JUPYTER_RUNTIME_DIR": home / "runtime",
        "IPYTHONDIR": home / "ipython",
    }
    for name, path in dirs.items():
        path.mkdir(parents=True, exist_ok=True)
        env[name] = str(path)
    # The kernel is this interpreter (the project's venv): a "python3" spec naming it.
    write_kernel_spec(str(dirs["JUPYTER_DATA_DIR"] / "kernels" / "python3"))
    for rel, values in SETTINGS.items():
        path = dirs["JUPYTER_CONFIG_DIR"] / "lab" / "user-settings" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))

    # JupyterLab's app settings, as `make lab` installs them into the venv (overrides.d)
    app_settings = home / "app-settings"
    (app_settings / "overrides.d").mkdir(parents=True, exist_ok=True)
    shutil.copy(OVERRIDES, app_settings / "overrides.d" / "toolkit.json")

    port = free_port()
    log = (home / "jupyterlab.log").open("wb")
    server = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "jupyter-lab"),
            "--no-browser",
            "--allow-root",
            "--ip=127.0.0.1",
            f"--port={port}",
            f"--ServerApp.token={TOKEN}",
            f"--ServerApp.root_dir={root}",
            f"--LabApp.app_settings_dir={app_settings}",
        ],
        cwd=root,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if server.poll() is not None:
                raise RuntimeError(f"jupyter lab exited ({server.returncode}): see {log.name}")
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=2):
                    break
            except (urllib.error.URLError, ConnectionError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.25)
        yield url
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
        log.close()


def run_all_and_click(
    url: str, notebook: str, panels: int, screenshot: Path,
    then: Callable[[Page], None] | None = None,
) -> str:
    """Open ``notebook``, run all its cells, click the last "Approve and commit" button and
    wait for its panel to say "Committed"; return that cell's text. Saves ``screenshot``
    (after the click) and ``<stem>-preview.png`` next to it (the panel before the click).
    ``then`` is called with the page last (the browser is still open)."""
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            page.goto(f"{url}/lab/tree/{notebook}?token={TOKEN}")
            status = page.locator("#jp-main-statusbar")
            # "Run All" before the kernel is connected opens "Select Kernel" and runs nothing.
            expect(status).to_contain_text("Idle", timeout=90_000)
            page.keyboard.press("Control+b")  # hide the file browser: room for the notebook

            page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
            page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()

            buttons = page.get_by_role("button", name=BUTTON)
            expect(buttons).to_have_count(panels, timeout=RUN_ALL_TIMEOUT_MS)
            # every cell done: no "[*]" prompt left, the kernel idle again
            prompts = page.locator(".jp-InputPrompt", has_text="*")
            expect(prompts).to_have_count(0, timeout=RUN_ALL_TIMEOUT_MS)
            expect(status).to_contain_text("Idle", timeout=30_000)

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
        except Exception:
            # what the page showed when it went wrong, for the person reading the failure
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screenshot.with_stem(f"{screenshot.stem}-failure")))
            raise
        finally:
            browser.close()


def api(url: str, path: str, method: str = "GET") -> object:
    request = urllib.request.Request(
        f"{url}{path}", method=method, headers={"Authorization": f"token {TOKEN}"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        body = response.read()
    return json.loads(body) if body else None


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
        page.reload()

        error = page.get_by_text("Error displaying widget")
        # day 1's panel (approved by its cell) and day 2's (the click) each show them
        statistics = page.locator(".jp-OutputArea-output").filter(
            has_text="Written data statistics of the table now"
        )
        expect(statistics).to_have_count(2, timeout=90_000)
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
            has_text="60 records, 3 batch(es), 11 fields"
        )
        expect(explore).to_be_visible(timeout=60_000)
        expect(explore).to_contain_text("A static copy of this toolkit panel")
        expect(explore).to_contain_text("my_field_string")
        expect(explore).not_to_contain_text("VBox(")
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
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is missing: apt-get install chromium")
    pytest.importorskip("playwright.sync_api", reason="pip install playwright (dev extra)")
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
