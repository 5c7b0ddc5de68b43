"""The preview panel's "Copy as code" control: a language dropdown (Spark SQL, Trino,
PyIceberg), and a button that shows the plan's code in a read-only text area and copies it
in the browser; or, when the plan cannot be exported, the reason instead of the button.
In-process: the code a user would copy is read out of the HTML the panel shows. One test
clicks the button in a real browser (Debian's chromium), in the box's HTML inserted as the
ipywidgets HTML view inserts it (``innerHTML``, where a ``<script>`` would not run)."""

from __future__ import annotations

import functools
import http.server
import json
import re
import threading
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

from tests.notebook.panel_tables import sample_day, write_batches
from toolkit.errors import ExportError
from toolkit.iceberg import catalog
from toolkit.notebook import preview


@pytest.fixture
def lake(tmp_path: Path) -> Catalog:
    return catalog(tmp_path / "lake")


def shown_code(html: str) -> str | None:
    """The text in the panel's code box, as the browser shows and copies it."""
    m = re.search(r"<textarea[^>]*>(.*?)</textarea>", html, re.S)
    return None if m is None else unescape(m.group(1))


def test_the_code_shown_is_the_plans_export_in_each_language(lake: Catalog) -> None:
    write_batches(lake, "db.events", [sample_day(1)])
    panel = preview(sample_day(2), "db.events", lake)
    plan = panel.preview.plan
    assert [label for label, _ in panel.code_language.options] == [
        "Spark SQL", "Trino", "PyIceberg",
    ]
    # Spark SQL first: the button, and the code in a read-only text area
    assert panel.code_language.value == "spark"
    box = panel.code_box.value
    assert ">Copy as code</button>" in box and "navigator.clipboard.writeText(box.value)" in box
    assert re.search(r"<textarea[^>]*\breadonly\b", box)
    assert shown_code(box) == plan.to_sql("spark", "db.events") == panel.code
    assert "ADD COLUMN `my_field_string` STRING COMMENT 'upsolver_evolved_from:my_field'" in (
        shown_code(box) or ""
    )

    # choosing another language in the dropdown redraws the box with that code
    panel.code_language.value = "trino"
    assert shown_code(panel.code_box.value) == plan.to_sql("trino", "db.events")
    assert "The plan as Trino;" in panel.code_box.value
    panel.code_language.value = "pyiceberg"
    pyiceberg = shown_code(panel.code_box.value)
    assert pyiceberg == plan.to_pyiceberg("db.events")
    assert "update.add_column(('size_double',), DoubleType()" in (pyiceberg or "")

    # the Python side returns what the button copies, and selects the language
    assert panel.copy_as_code("spark") == plan.to_sql("spark", "db.events")
    assert panel.code_language.value == "spark"
    assert shown_code(panel.code_box.value) == panel.copy_as_code()
    with pytest.raises(ValueError, match="unknown code language 'duckdb': choose one of 'spark'"):
        panel.copy_as_code("duckdb")  # type: ignore[arg-type]
    assert panel.code_language.value == "spark"


def test_a_plan_that_cannot_be_exported_shows_why_instead_of_the_button(
    lake: Catalog,
) -> None:
    lake.create_namespace_if_not_exists("db")
    table = lake.create_table("db.t", schema=Schema(NestedField(1, "score", LongType())))
    table.append(pa.Table.from_pylist([{"score": 10}], schema=table.schema().as_arrow()))
    # score arriving as text is a rewrite (long -> string), which no ALTER TABLE expresses
    panel = preview([{"score": "high"}], "db.t", lake, policy="widen")
    plan = panel.preview.plan
    assert plan.rewrites

    for language in ("spark", "trino", "pyiceberg"):
        panel.code_language.value = language
        with pytest.raises(ExportError) as refused:
            panel.copy_as_code()
        box = panel.code_box.value
        assert "Copy as code" not in box and shown_code(box) is None
        assert panel.code is None and panel.code_refusal == str(refused.value)
        assert unescape(box).count(str(refused.value)) == 1
        assert "code to copy</b>: " in box
    assert (panel.code_refusal or "").startswith("the plan rewrites data (score to string)")
    assert "<b>No PyIceberg code to copy</b>" in panel.code_box.value


def test_a_plan_that_changes_nothing_has_no_code_to_copy(lake: Catalog) -> None:
    write_batches(lake, "db.events", [sample_day(1)])
    panel = preview(sample_day(1), "db.events", lake)
    assert not panel.preview.plan.changed
    assert panel.code is None and panel.code_refusal is None
    assert "The plan changes nothing: no code to copy." in panel.code_box.value
    assert "Copy as code" not in panel.code_box.value


def test_code_from_data_is_escaped_in_the_box(lake: Catalog) -> None:
    write_batches(lake, "db.events", [sample_day(1)])
    panel = preview([{"</textarea><b>x": 1}], "db.events", lake)
    box = panel.code_box.value
    assert "</textarea><b>" not in box
    code = shown_code(box)
    assert code == panel.preview.plan.to_sql("spark", "db.events")
    assert "`</textarea><b>x` BIGINT" in (code or "")


CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]  # fmt: skip


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A folder served on 127.0.0.1 (a secure context, as JupyterLab on localhost is)."""
    handler = functools.partial(
        http.server.SimpleHTTPRequestHandler, directory=str(tmp_path)
    )
    handler.log_message = lambda *args: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield tmp_path, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        thread.join()


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (/usr/bin/chromium)")
def test_clicking_copy_as_code_shows_the_code_and_puts_it_on_the_clipboard(
    lake: Catalog, served: tuple[Path, str]
) -> None:
    from playwright.sync_api import sync_playwright

    write_batches(lake, "db.events", [sample_day(1)])
    panel = preview(sample_day(2), "db.events", lake)
    panel.code_language.value = "pyiceberg"
    folder, base = served
    (folder / "index.html").write_text(
        "<html><body><div id='box'></div><script>document.getElementById('box').innerHTML = "
        f"{json.dumps(panel.code_box.value)};</script></body></html>"
    )
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
            page = context.new_page()
            page.goto(f"{base}/index.html")
            box = page.locator("textarea")
            assert box.is_hidden()  # the code shows when the button is clicked
            page.get_by_role("button", name="Copy as code").click()
            assert box.is_visible()
            page.get_by_role("button", name="Copied").wait_for()
            assert page.evaluate("navigator.clipboard.readText()") == panel.code
            assert panel.code == panel.preview.plan.to_pyiceberg("db.events")
            # without the Clipboard API (a page on plain http elsewhere): the browser's copy
            # command, and the code stays selected for a manual copy
            page.goto(f"{base}/index.html")
            page.evaluate("Object.defineProperty(navigator, 'clipboard', {value: undefined})")
            page.get_by_role("button", name="Copy as code").click()
            selected = page.evaluate(
                "(() => {const t = document.querySelector('textarea'); "
                "return t.value.substring(t.selectionStart, t.selectionEnd)})()"
            )
            assert selected == panel.code
        finally:
            browser.close()
