"""Issue 28: a field the table keeps a type hint for (its ``toolkit.hints`` property)
reads as the hint's type in the view, in DuckDB and from the command line; a
``view_types`` entry given to the view wins over it."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from click.testing import CliRunner
from pyiceberg.table import Table

from toolkit.cli import cli
from toolkit.core.evolution.view_types import HINTS_PROPERTY
from toolkit.core.values.types import Column, Struct
from toolkit.iceberg.catalog import catalog
from toolkit.iceberg.duckdb import run_view
from toolkit.iceberg.schema import to_iceberg

SCHEMA = Struct((Column(1, "id", "long"), Column(2, "quantity", "long"),
                 Column(3, "quantity_string", "string", "upsolver_evolved_from:quantity")))


@pytest.fixture
def table(tmp_path: Path) -> Table:
    cat = catalog(tmp_path / "lake")
    cat.create_namespace("db")
    t = cat.create_table("db.orders", schema=to_iceberg(SCHEMA),
                         properties={HINTS_PROPERTY: json.dumps({"quantity": "long"})})
    rows = [{"id": 1, "quantity": 2, "quantity_string": "2"},
            {"id": 2, "quantity": None, "quantity_string": "two"}]
    t.append(pa.Table.from_pylist(rows, schema=t.schema().as_arrow()))
    return t


def test_a_hinted_field_reads_as_its_hint(table: Table) -> None:
    rows = sorted(run_view(table), key=lambda r: r["id"])
    assert [r["quantity"] for r in rows] == [2, None]  # "two" is not a long: NULL, as said
    chosen = sorted(run_view(table, view_types={"quantity": "string"}), key=lambda r: r["id"])
    assert [r["quantity"] for r in chosen] == ["2", "two"]


def test_the_command_line_view_reads_the_hint(table: Table, tmp_path: Path) -> None:
    out = CliRunner().invoke(cli, ["view", "db.orders", "--catalog", str(tmp_path / "lake"),
                                   "--dialect", "duckdb", "--json"], catch_exceptions=False)
    assert "quantity: long and string read as long" in json.loads(out.output)["sql"]
