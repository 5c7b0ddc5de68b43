"""Run notebooks/read_back.ipynb headless: Spark, PyIceberg and DuckDB read the same rows,
and the folding view gives the same rows in Spark and in DuckDB."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.notebooks.nbrun import execute

pytestmark = [pytest.mark.notebook, pytest.mark.spark]


def test_read_back_notebook_readers_and_views_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = execute("read_back.ipynb", tmp_path, monkeypatch)

    # run on its own, it ingested the three sample days first
    setup = run.text(run.cell("toolkit.spark_session"))
    assert "20 20 20 records" in setup
    assert re.findall(r"batch (\S+) wrote (\d+) rows", setup) == [
        ("sample-day1", "20"),
        ("sample-day2", "20"),
        ("sample-day3", "20"),
    ]
    assert "my_field_string: optional string (upsolver_evolved_from:my_field)" in setup

    readers = run.text(run.cell("read_table("))
    for reader in ("Spark", "PyIceberg", "DuckDB"):
        assert re.search(rf"^{reader}\s+60 rows$", readers, re.MULTILINE)
    assert "|my_field_string|" in readers.replace(" ", "")

    agree = run.text(run.cell("def canonical("))
    assert "Spark and PyIceberg agree: True" in agree
    assert "Spark and DuckDB agree: True" in agree

    views = run.cell("run_view(")
    text = run.text(views)
    assert "view rows: 60 60" in text
    assert "Spark view and DuckDB view agree: True" in text
    # the folded rows around the day 1 / day 2 boundary: numbers and text in one my_field
    (table,) = [o for o in views.outputs if o.output_type == "execute_result"]
    html = table.data["text/html"]
    assert "MF-" in html
    assert re.search(r"<td>\d+</td>", html)
