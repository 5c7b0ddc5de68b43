"""Run notebooks/quickstart.ipynb headless in a real Jupyter kernel and check what it prints."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest
from ipykernel.kernelspec import write_kernel_spec
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell

pytestmark = pytest.mark.notebook

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "quickstart.ipynb"


def _text(outputs: list[nbformat.NotebookNode]) -> str:
    parts = []
    for out in outputs:
        if out.output_type == "stream":
            parts.append(out.text)
        elif out.output_type in ("execute_result", "display_data"):
            parts.append(out.data.get("text/plain", ""))
        elif out.output_type == "error":
            parts.append("\n".join(out.traceback))
    return "\n".join(parts)


def test_quickstart_runs_and_shows_the_drift(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The kernel must be this interpreter (the project's .venv), whatever kernelspecs the
    # user or the system has: a "python3" spec whose argv names sys.executable, found first
    # because JUPYTER_PATH outranks every other kernelspec folder.
    write_kernel_spec(str(tmp_path / "jupyter" / "kernels" / "python3"))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))

    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), (
        "commit the notebook with its outputs stripped"
    )
    nb.cells.insert(0, new_code_cell("import sys; print('KERNEL', sys.prefix)"))

    NotebookClient(
        nb,
        kernel_name="python3",
        timeout=300,
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    ).execute()

    code = [c for c in nb.cells if c.cell_type == "code"]
    assert _text(code[0].outputs).strip() == f"KERNEL {sys.prefix}"
    text = _text([out for c in code for out in c.outputs])
    assert "20 20 20 records" in text
    # simulate: the drifting fields got typed sibling columns
    for column in ("my_field_string", "size_double", "started_long"):
        assert column in text
    # profile and the coalescing SQL
    assert "60 records" in text
    assert "FROM db.events" in text
    assert "COALESCE(" in text
