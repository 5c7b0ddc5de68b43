"""Issue 28 in the terminal: the preview says what each field of the view folds to and
what that costs; ``toolkit view --view-type`` reads a field as a chosen type."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

import toolkit
from toolkit.cli import cli
from toolkit.core.values.types import Column, Struct
from toolkit.iceberg.schema import to_iceberg


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_the_preview_says_what_the_view_folds(tmp_path: Path) -> None:
    source = tmp_path / "orders.jsonl"
    lines = [{"address": {"zip": "0150", "city": "Oslo"}}, {"address": "12 Main St"}]
    source.write_text("".join(json.dumps(r) + "\n" for r in lines))
    lake = tmp_path / "lake"
    out = invoke("preview", source, "-t", "db.orders", "--catalog", lake, "--batch-id", "b1")
    assert out.exit_code == 0, out.output
    assert "The view (toolkit view) folds each field into one column:" in out.output
    assert "  address: record and string fold into string (records as JSON text)" in \
        out.output.splitlines()
    data = json.loads(invoke("preview", source, "-t", "db.orders", "--catalog", lake,
                             "--batch-id", "b1", "--json").output)
    assert data["view_folds"] == [
        "address: record and string fold into string (records as JSON text)"]


def test_view_reads_a_field_as_the_type_given(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    cat = toolkit.catalog(lake)
    cat.create_namespace("db")
    cat.create_table("db.t", schema=to_iceberg(Struct((
        Column(1, "n", "long"), Column(2, "n_string", "string", "upsolver_evolved_from:n")))))
    out = invoke("view", "db.t", "--catalog", lake, "--dialect", "duckdb",
                 "--view-type", "n=long", "--json")
    sql = json.loads(out.output)["sql"]
    assert sql == ('SELECT COALESCE("n", TRY_CAST("n_string" AS BIGINT)) AS "n" /* n: long and '
                   'string read as long (strings that do not read as long are NULL) */ FROM db.t')
    bad = CliRunner().invoke(cli, ["view", "db.t", "--catalog", str(lake),
                                   "--view-type", "n=integer"])
    assert bad.exit_code != 0
    assert "field 'n' cannot be read as 'integer'" in bad.output
