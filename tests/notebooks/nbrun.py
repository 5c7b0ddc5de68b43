"""Run a notebook of notebooks/ headless in a real Jupyter kernel, in a temp working folder,
and read what it printed and displayed (widgets included)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import pytest
from ipykernel.kernelspec import write_kernel_spec
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell

from tests.reliability.children import SHORT_LIVED_SUBMIT_ARGS

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
#: a cell run first, so the test can check the kernel is this interpreter (the project's venv)
PROBE = "import sys; print('KERNEL', sys.prefix)"
#: a cell run last: stop the notebook's Spark session, if any, and let its JVM exit (it does
#: when its stdin closes) before the kernel is shut down; else the JVM gets the kernel's
#: SIGTERM mid-cleanup and logs long "Failed to delete" traces
STOP_SPARK = """import sys
if "pyspark" in sys.modules:
    from pyspark import SparkContext
    from pyspark.sql import SparkSession
    if (session := SparkSession.getActiveSession()) is not None:
        session.stop()
    if (gateway := SparkContext._gateway) is not None and getattr(gateway, "proc", None):
        gateway.proc.stdin.close()
        gateway.proc.wait(60)"""


def _output_text(out: Any) -> str:
    if out.get("output_type") == "stream":
        return str(out.get("text", ""))
    if out.get("output_type") in ("execute_result", "display_data"):
        data = out.get("data", {})
        return str(data.get("text/plain", "")) + "\n" + str(data.get("text/html", ""))
    if out.get("output_type") == "error":
        return "\n".join(out.get("traceback", []))
    return ""


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a widget model's state (nested lists and dicts included)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


@dataclass
class Executed:
    """An executed copy of a notebook and the folder it ran in."""

    nb: nbformat.NotebookNode
    workdir: Path

    @property
    def code(self) -> list[nbformat.NotebookNode]:
        """The notebook's own code cells (the probe and the Spark stop left out)."""
        return [c for c in self.nb.cells if c.cell_type == "code"][1:-1]

    def cell(self, contains: str) -> nbformat.NotebookNode:
        """The first code cell whose source contains ``contains``."""
        for c in self.code:
            if contains in c.source:
                return c
        raise KeyError(contains)

    def text(self, cell: nbformat.NotebookNode | None = None) -> str:
        """What ``cell`` (default: every code cell) printed and displayed, as text."""
        cells = self.code if cell is None else [cell]
        return "\n".join(_output_text(out) for c in cells for out in c.outputs)

    @property
    def widget_state(self) -> dict[str, Any]:
        """Model id -> {model_name, model_module, state} as nbclient stored it."""
        widgets = self.nb.metadata.get("widgets", {}).get(WIDGET_STATE, {})
        return dict(widgets.get("state", {}))

    def views(self, cell: nbformat.NotebookNode | None = None) -> list[str]:
        """Model ids of the widget views ``cell`` (default: every code cell) displayed."""
        cells = self.code if cell is None else [cell]
        return [
            out["data"][WIDGET_VIEW]["model_id"]
            for c in cells
            for out in c.outputs
            if out.get("output_type") in ("execute_result", "display_data")
            and WIDGET_VIEW in out.get("data", {})
        ]

    def widgets(self, model_name: str) -> list[dict[str, Any]]:
        """The stored states of every model named ``model_name`` (``ButtonModel``...)."""
        return [m["state"] for m in self.widget_state.values() if m["model_name"] == model_name]

    def widget_text(self) -> str:
        """Every string in every widget model's state (labels, HTML, Output contents...)."""
        return "\n".join(s for m in self.widget_state.values() for s in _strings(m["state"]))


def execute(
    name: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    after: Mapping[str, str] | None = None,
    timeout: int = 300,
) -> Executed:
    """Copy ``notebooks/<name>`` into a temp folder and run it there with widget state kept.

    ``after`` maps a piece of cell source to code run in a cell of its own right after the
    first code cell holding that piece (checks a test adds; they are not saved anywhere).

    Relative paths in the notebook (its ``lakehouse`` folder) land in that folder, never in
    the repo. Asserts the notebook was committed with outputs stripped and that its kernel
    is this interpreter; a failing cell raises ``CellExecutionError`` with its traceback."""
    source = NOTEBOOKS / name
    nb = nbformat.read(source, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), (
        f"commit {name} with its outputs stripped"
    )
    workdir = tmp_path / "work"
    workdir.mkdir()
    shutil.copy(source, workdir / name)

    # The kernel must be this interpreter, whatever kernelspecs the user or the system has:
    # a "python3" spec whose argv names sys.executable, found first because JUPYTER_PATH
    # outranks every other kernelspec folder.
    write_kernel_spec(str(tmp_path / "jupyter" / "kernels" / "python3"))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    # the kernel's Spark lives for one notebook: its JVM with the quick compiler only
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", SHORT_LIVED_SUBMIT_ARGS)

    for marker, code in (after or {}).items():
        at = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code" and marker in c.source)
        nb.cells.insert(at + 1, new_code_cell(code))
    nb.cells.insert(0, new_code_cell(PROBE))
    nb.cells.append(new_code_cell(STOP_SPARK))
    NotebookClient(
        nb,
        kernel_name="python3",
        timeout=timeout,
        store_widget_state=True,
        resources={"metadata": {"path": str(workdir)}},
    ).execute()
    executed = Executed(nb, workdir)
    probe = [c for c in nb.cells if c.cell_type == "code"][0]
    assert executed.text(probe).strip() == f"KERNEL {sys.prefix}"
    return executed
