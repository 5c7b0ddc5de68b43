"""The commands in-process (click's runner): their output as text and JSON, and the exit
codes of what they refuse. The installed script itself: test_console_script.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner, Result
from pyiceberg.catalog import Catalog

import toolkit
from toolkit.cli import cli
from toolkit.core.planfile import PlanFile, dumps, loads
from toolkit.core.state import ABSENT
from toolkit.core.types import Column, Struct
from toolkit.iceberg.catalog import embedded_folder
from toolkit.iceberg.schema import to_iceberg

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DATA = Path(toolkit.__file__).parent / "data"


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
    data = json.loads(invoke("profile", source, "--json").output)
    types = data["fields"][0]["types"]
    assert [(t["type"], t["values"], t["share"]) for t in types] == [
        ("long", 19_997, "19,997 of 20,000"), ("string", 3, "3 of 20,000")]
    assert json.loads(invoke("profile", source, "--sample", "10", "--json").output)[
        "records"] == 10


def test_preview_prints_the_plan_and_saves_a_plan_file(tmp_path: Path) -> None:
    source = shutil.copy(DATA / "sample_day1.jsonl", tmp_path / "day1.jsonl")
    lake, saved = tmp_path / "lake", tmp_path / "p.json"
    out = invoke("preview", source, "-t", "db.events", "--catalog", lake, "--policy", "widen",
                 "--batch-id", "b1", "--save", saved, "--json")
    assert out.exit_code == 0
    data = json.loads(out.output)
    assert (data["table"], data["batch_id"], data["changes_schema"]) == ("db.events", "b1", True)
    assert data["summary"][0].startswith("db.events, batch 1 (id b1): 8 columns added")
    planfile = loads(saved.read_text())
    assert planfile.options == {"policy": "widen", "on_incompatible": "quarantine",
                                "detect_dates": True}
    assert (planfile.state, planfile.catalog) == (ABSENT, str(lake))
    assert not toolkit.catalog(lake).list_namespaces()  # a preview changes nothing
    trino = invoke("export", saved, "--as", "trino", "--table", "ice.db.events")
    assert trino.output.startswith('CREATE SCHEMA IF NOT EXISTS "ice"."db";\n')
    code = invoke("export", saved, "--as", "pyiceberg", "--json")
    exec(json.loads(code.output)["code"], {"catalog": toolkit.catalog(lake)})
    assert [f.name for f in toolkit.catalog(lake).load_table("db.events").schema().fields][:2] == [
        "coordinates", "device"]


def test_the_rare_type_threshold_decides_which_types_are_set_aside(tmp_path: Path) -> None:
    # 3 of 100 amounts are text: a column of their own without a threshold, a rare type
    # set aside under a 5% threshold, not under 2% (3% is not under it)
    lines = [{"id": i, "amount": i} for i in range(97)] + [{"amount": "n/a"}] * 3
    source = tmp_path / "day1.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in lines))
    lake = tmp_path / "lake"

    def preview(*more: str) -> Result:
        return CliRunner().invoke(cli, ["preview", str(source), "-t", "db.t", "--catalog",
                                        str(lake), "--batch-id", "b1", *more])

    rare = ("- 3 of 100 values of `amount` arrived as strings (3%, under the 5% rare-type "
            "threshold); set aside instead of adding amount as string and amount_long")
    without = preview()
    assert without.exit_code == 0 and "+ amount_long: long" in without.output
    assert "rare" not in without.output
    assert preview("--rare-type-percent", "2").output == without.output
    under = preview("--rare-type-percent", "5", "--save", str(tmp_path / "p.json"))
    assert under.exit_code == 0, under.output
    assert under.output.splitlines()[0] == (
        "db.t, batch 1 (id b1): 2 columns added, 1 rare type set aside (against a table "
        "that does not exist yet)")
    assert rare in under.output.splitlines() and "amount_long" not in under.output.split("- 3")[0]
    # the plan file keeps the threshold, so `apply` ingests with it
    assert loads((tmp_path / "p.json").read_text()).options["rare_type_percent"] == 5
    for bad in ("0", "75", "nan"):
        out = preview("--rare-type-percent", bad)
        assert out.exit_code == 2
        assert "is out of range: give a share in percent above 0 and at most 50 (1 means " \
               "1%), or leave the option out for no threshold" in out.output
    widen = preview("--rare-type-percent", "1", "--policy", "widen")
    assert widen.exit_code == 2
    assert "only the upsolver policy has a rare-type threshold; leave it out with --policy " \
           "widen" in widen.output
    assert "a type that makes up less than this percent" in " ".join(
        preview("--help").output.split())


def test_a_plan_that_rewrites_data_is_not_exported(tmp_path: Path) -> None:
    sim = toolkit.simulate([[{"n": 1}], [{"n": "x"}]], policy="widen")
    plan = sim.plans[1]
    assert plan.rewrites
    (tmp_path / "p.json").write_text(dumps(PlanFile("db.t", plan, ABSENT, "b2")))
    out = CliRunner().invoke(cli, ["export", str(tmp_path / "p.json"), "--as", "spark-sql"])
    assert out.exit_code == 2
    assert "error: the plan rewrites data (n to string)" in out.output


def test_view_lineage_and_stats_read_a_table(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    cat = toolkit.catalog(lake)
    cat.create_namespace("db")
    cat.create_table("db.t", schema=to_iceberg(Struct((
        Column(1, "n", "long"), Column(2, "n_string", "string", "upsolver_evolved_from:n")))))
    sql = invoke("view", "db.t", "--catalog", lake, "--dialect", "trino", "--json")
    assert json.loads(sql.output)["sql"] == (
        'SELECT COALESCE("n_string", CAST("n" AS VARCHAR)) AS "n" FROM db.t')
    assert invoke("lineage", "db.t", "--catalog", lake).output == "db.t: no plan logged yet\n"
    assert json.loads(invoke("stats", "db.t", "--catalog", lake, "--json").output)[
        "records"] == 0
    missing = CliRunner().invoke(cli, ["stats", "db.t", "--catalog", tmp_path / "nowhere"])
    assert missing.exit_code == 2 and "no such catalog folder" in missing.output


@pytest.mark.spark
def test_require_approval_ingests_a_batch_that_changes_nothing(
    tmp_path: Path, lakehouse: Catalog, spark: SparkSession
) -> None:
    day1 = shutil.copy(DATA / "sample_day1.jsonl", tmp_path / "day1.jsonl")
    toolkit.ingest(day1, "cli.steady", lakehouse, spark, batch_id="day1")
    args = ["ingest", day1, "-t", "cli.steady", "--catalog", embedded_folder(lakehouse),
            "--require-approval", "--batch-id", "again", "--json"]
    out = invoke(*args)
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["rows_written"] == 20
    assert json.loads(invoke(*args).output)["already_applied"] is True
    assert not list(tmp_path.glob("*.plan.json"))


def test_a_plan_file_opens_in_the_notebook_preview_panel(tmp_path: Path) -> None:
    source = shutil.copy(DATA / "sample_day1.jsonl", tmp_path / "day1.jsonl")
    saved = tmp_path / "p.json"
    invoke("preview", source, "-t", "db.events", "--catalog", tmp_path / "lake",
           "--batch-id", "b1", "--save", saved)
    planfile = loads(saved.read_text())
    asked = []
    panel = toolkit.preview(plan=saved, commit=asked.append)
    assert (panel.preview.plan, panel.preview.state) == (planfile.plan, planfile.state)
    assert len(panel.preview.records) == 20
    panel.approve()  # what the button does: commits exactly the file's plan and batch
    assert [(r.table, r.batch_id, r.approved, r.expected) for r in asked] == [
        ("db.events", "b1", planfile.plan, planfile.state)]
