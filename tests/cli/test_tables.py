"""The commands that only read (toolkit.cli.tables): ``profile`` a source, a table's
``view``, ``lineage`` and ``stats``; in-process (click's runner), their output as text and
JSON."""

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


def test_profile_names_a_rare_type_by_its_count_never_a_rounded_zero(tmp_path: Path) -> None:
    lines = [{"n": i} for i in range(19_997)] + [{"n": "n/a"}] * 3
    source = tmp_path / "rare.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in lines))
    text = invoke("profile", source)
    assert text.exit_code == 0
    assert "n: 3 of 20,000 values are strings (19,997 longs)" in text.output
    assert "0%" not in text.output.replace("100%", "")
    assert text.output.startswith("20,000 records profiled")
    data = json.loads(invoke("profile", source, "--json").output)
    types = data["fields"][0]["types"]
    assert [(t["type"], t["values"], t["share"]) for t in types] == [
        ("long", 19_997, "19,997 of 20,000"), ("string", 3, "3 of 20,000")]
    assert json.loads(invoke("profile", source, "--sample", "10", "--json").output)[
        "records"] == 10


def test_profile_of_one_record_says_so_in_the_singular(tmp_path: Path) -> None:
    source = tmp_path / "one.jsonl"
    source.write_text('{"n": 1}\n{"n": 2, "n": 3}\n')
    text = invoke("profile", source)
    assert text.exit_code == 0
    assert text.output.startswith("1 record profiled\n"), text.output
    assert "1 line set aside, not profiled:" in text.output


def test_profile_of_a_field_that_is_always_null_shows_it_as_null(tmp_path: Path) -> None:
    """A key other systems send as null only (``{"a": null}``, a map entry of no value)."""
    source = tmp_path / "nulls.jsonl"
    source.write_text('{"a": null, "b": 1}\n{"a": null, "b": "x"}\n')
    text = invoke("profile", source)
    assert text.exit_code == 0, text.output
    rows = [line.split() for line in text.output.splitlines()]
    assert ["a", "null", "0", "-", "2"] in rows
    assert "b: 1 of 2 values is a long (1 string)" in text.output
    assert "a:" not in text.output  # nothing drifts in a field of nulls


def test_view_lineage_and_stats_read_a_table(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    cat = toolkit.catalog(lake)
    cat.create_namespace("db")
    cat.create_table("db.t", schema=to_iceberg(Struct((
        Column(1, "n", "long"), Column(2, "n_string", "string", "upsolver_evolved_from:n")))))
    sql = invoke("view", "db.t", "--catalog", lake, "--dialect", "trino", "--json")
    assert json.loads(sql.output)["sql"] == (
        'SELECT COALESCE("n_string", CAST("n" AS VARCHAR)) AS "n" /* n: long and string fold '
        'into string (longs as text) */ FROM db.t')
    assert invoke("lineage", "db.t", "--catalog", lake).output == "db.t: no plan logged yet\n"
    assert json.loads(invoke("stats", "db.t", "--catalog", lake, "--json").output)[
        "records"] == 0
    missing = CliRunner().invoke(cli, ["stats", "db.t", "--catalog", tmp_path / "nowhere"])
    assert missing.exit_code == 2 and "no such catalog folder" in missing.output
