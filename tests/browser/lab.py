"""What the browser tests share: a JupyterLab server serving a temp folder, and Debian's
chromium driven by Playwright on one of its notebooks.

See ../../../shared/NOTEBOOK-TESTING.md for why each setting below is there.
"""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from ipykernel.kernelspec import write_kernel_spec

from tests.reliability.children import short_lived_env

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

ROOT = Path(__file__).resolve().parents[2]
#: the JupyterLab settings `make lab` and Binder install (saveState: true)
OVERRIDES = ROOT / "binder" / "overrides.json"
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


def require_browser() -> None:
    """Skip the test when Debian's chromium or Playwright is missing."""
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is missing: apt-get install chromium")
    pytest.importorskip("playwright.sync_api", reason="pip install playwright (dev extra)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def jupyterlab(root: Path, home: Path) -> Iterator[str]:
    """JupyterLab serving ``root``, everything it writes kept under ``home``; yields its URL.

    The server is a direct child of this process; stopping it (SIGTERM, then SIGKILL)
    shuts its kernels down (and with them anything a kernel started, such as Spark's JVM)."""
    env = short_lived_env()  # a kernel's Spark lives for one test: the quick compiler only
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


def api(url: str, path: str, method: str = "GET") -> object:
    """A call to the server's REST API (JSON in, JSON out)."""
    request = urllib.request.Request(
        f"{url}{path}", method=method, headers={"Authorization": f"token {TOKEN}"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        body = response.read()
    return json.loads(body) if body else None


@contextmanager
def chromium_page(failure: Path) -> Iterator[Page]:
    """A page of Debian's chromium (1400 x 1000); when the body raises, what the page showed
    is saved to ``failure`` for the person reading the failure."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            yield page
        except BaseException:
            failure.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(failure))
            raise
        finally:
            browser.close()


def open_notebook(page: Page, url: str, notebook: str) -> None:
    """Open ``notebook`` and wait for its kernel; the file browser is hidden (room for the
    notebook)."""
    from playwright.sync_api import expect

    page.goto(f"{url}/lab/tree/{notebook}?token={TOKEN}")
    # "Run All" before the kernel is connected opens "Select Kernel" and runs nothing.
    expect(page.locator("#jp-main-statusbar")).to_contain_text("Idle", timeout=90_000)
    page.keyboard.press("Control+b")


def menu(page: Page, top: str, item: str) -> None:
    """Pick ``item`` in the menu bar's ``top`` menu (JupyterLab 4 has no Run All shortcut)."""
    page.locator(".lm-MenuBar-itemLabel", has_text=top).first.click()
    page.locator(".lm-Menu-itemLabel", has_text=item).first.click()


def wait_idle(page: Page, timeout_ms: int) -> None:
    """Every cell run: no "[*]" prompt left, the kernel idle again."""
    from playwright.sync_api import expect

    expect(page.locator(".jp-InputPrompt", has_text="*")).to_have_count(0, timeout=timeout_ms)
    expect(page.locator("#jp-main-statusbar")).to_contain_text("Idle", timeout=30_000)


def screenshot(page: Page, top: Locator, path: Path, settle_ms: int = 500) -> None:
    """Scroll ``top`` to the top of the notebook, let the page settle, save ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    top.evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(settle_ms)
    page.screenshot(path=str(path))
