"""Spark's progress under a notebook cell (toolkit.notebook.progress): its HTML and text,
one display output per block updated in place, and its installation by ``import toolkit``
in a kernel only."""

from __future__ import annotations

import doctest
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any

import nbformat
import pytest

from toolkit.notebook import progress as notebook_progress
from toolkit.notebook.progress import NotebookReporter, ProgressLine, progress_html
from toolkit.spark.progress import Progress

RUNNING = Progress("k1", "Ingesting batch <b7> into db.events", "Profiling", 3, 8, 37, 1.5)


def test_a_running_block_is_a_bar_at_its_percentage_and_its_words_escaped() -> None:
    html = progress_html(RUNNING)
    assert 'class="toolkit-progress"' in html
    assert "width:37%" in html
    assert "Ingesting batch &lt;b7&gt; into db.events: Profiling 37% (3 of 8 tasks, 1.5 s)" in html
    assert "<b7>" not in html


def test_a_block_without_known_tasks_shows_its_words_and_no_bar() -> None:
    html = progress_html(replace(RUNNING, percent=None, done=0, total=0, elapsed=0.3))
    assert "width:" not in html
    assert "Ingesting batch &lt;b7&gt; into db.events: Profiling..." in html


@pytest.mark.parametrize(
    ("state", "note", "mark", "words"),
    [
        ("done", "Wrote batch b7: 1,000 rows", "✓", "Wrote batch b7: 1,000 rows (2.1 s)"),
        ("done", "", "✓", "Ingesting batch &lt;b7&gt; into db.events: done (2.1 s)"),
        ("failed", "", "✗", "Ingesting batch &lt;b7&gt; into db.events: failed after 2.1 s"),
    ],
    ids=["done-with-note", "done", "failed"],
)
def test_the_final_line_replaces_the_bar(state: Any, note: str, mark: str, words: str) -> None:
    html = progress_html(replace(RUNNING, state=state, note=note, elapsed=2.1))
    assert "width:" not in html
    assert f"{mark}</span> {words}</div>" in html


def test_the_display_carries_html_and_plain_text() -> None:
    bundle = ProgressLine(RUNNING)._repr_mimebundle_()
    assert bundle["text/plain"] == RUNNING.line
    assert bundle["text/html"] == progress_html(RUNNING)
    assert repr(ProgressLine(RUNNING)) == RUNNING.line


class FakeHandle:
    def __init__(self, shown: list[tuple[int, str]], number: int) -> None:
        self.shown, self.number = shown, number

    def update(self, line: ProgressLine) -> None:
        self.shown.append((self.number, repr(line)))


def test_each_block_is_one_output_updated_in_place_until_its_final_line() -> None:
    shown: list[tuple[int, str]] = []
    handles: list[FakeHandle] = []

    def display(line: ProgressLine, *, display_id: bool) -> FakeHandle:
        assert display_id is True
        handles.append(FakeHandle(shown, len(handles)))
        shown.append((handles[-1].number, repr(line)))
        return handles[-1]

    report = NotebookReporter(display)
    other = Progress("k2", "Starting Spark...")
    report(replace(RUNNING, percent=None, done=0, total=0, elapsed=0.1))
    report(other)
    report(RUNNING)
    report(replace(RUNNING, state="done", note="Wrote batch b7: 8 rows", elapsed=2.0))
    report(replace(other, state="done", note="Spark ready", elapsed=4.0))
    assert shown == [
        (0, "Ingesting batch <b7> into db.events: Profiling..."),
        (1, "Starting Spark..."),
        (0, "Ingesting batch <b7> into db.events: Profiling 37% (3 of 8 tasks, 1.5 s)"),
        (0, "Wrote batch b7: 8 rows (2.0 s)"),
        (1, "Spark ready (4.0 s)"),
    ]
    # a block seen for the first time at its end (it started before the reporter) shows
    # its final line once
    report(Progress("k3", "Compacting", state="done", elapsed=1.0))
    assert shown[-1] == (2, "Compacting: done (1.0 s)")
    assert report._shown == {}


#: a fake kernel: IPython loaded, with a shell that has a kernel; then ``import toolkit``
IN_A_KERNEL = """
import sys, types
shell = types.SimpleNamespace(kernel=object())
sys.modules["IPython"] = types.SimpleNamespace(get_ipython=lambda: shell)
import toolkit
from toolkit.spark.progress import reporter
print(type(reporter()).__name__)
"""
OUTSIDE = """
import sys
import toolkit
from toolkit.spark.progress import reporter
print(reporter(), "toolkit.notebook.progress" in sys.modules, "IPython" in sys.modules)
"""


@pytest.mark.parametrize(
    ("code", "printed"),
    [(IN_A_KERNEL, "NotebookReporter"), (OUTSIDE, "None False False")],
    ids=["in-a-kernel", "outside"],
)
def test_import_toolkit_installs_the_reporter_in_a_kernel_only(code: str, printed: str) -> None:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], check=True,
                         capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == printed


@pytest.mark.notebook
def test_a_real_kernel_shows_the_final_line_in_place_of_the_running_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ipykernel.kernelspec import write_kernel_spec
    from nbclient import NotebookClient
    from nbformat.v4 import new_code_cell, new_notebook

    write_kernel_spec(str(tmp_path / "jupyter" / "kernels" / "python3"))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    code = textwrap.dedent("""
        import time
        import toolkit
        from toolkit.spark.progress import tracking
        with tracking(None, "Waiting", every=0.05) as track:
            time.sleep(1.2)
            track.finish("Waited")
        """)
    nb = new_notebook(cells=[new_code_cell(code)])  # type: ignore[no-untyped-call]
    NotebookClient(nb, kernel_name="python3", timeout=120).execute()
    outputs = nb.cells[0].outputs
    assert len(outputs) == 1, outputs
    data = outputs[0]["data"]
    assert data["text/plain"].startswith("Waited (1.")
    assert "✓</span> Waited (1." in data["text/html"]
    nbformat.validate(nb)  # raises when the updated outputs are not a valid notebook


def test_the_docstring_examples() -> None:
    assert doctest.testmod(notebook_progress, optionflags=doctest.ELLIPSIS).failed == 0
