"""The installed ``toolkit`` console script, run as a scheduler runs it (a subprocess):
plan files previewed, reviewed, applied once; stale plans refused; exit codes.

Each ``apply`` starts Spark in its subprocess (~10 s or more), so those are few: one per
test that must write. Refusals (stale, already applied, needs approval) answer before
Spark starts.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from pyiceberg.catalog import Catalog

import toolkit
from tests.integration.readers import read_pyiceberg
from tests.reliability.children import short_lived_env
from toolkit.core.evolution.state import TableState
from toolkit.iceberg.catalog import embedded_folder
from toolkit.iceberg.schema import from_iceberg

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

TOOLKIT = Path(sys.executable).with_name("toolkit")
DATA = Path(toolkit.__file__).parent / "data"
SPARK = ("--conf", "spark.master=local[1]")


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(TOOLKIT), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=600,
        env=short_lived_env(),  # its Spark lives for one command: the quick compiler only
    )


def days(tmp_path: Path) -> tuple[Path, Path]:
    for day in ("day1", "day2"):
        shutil.copy(DATA / f"sample_{day}.jsonl", tmp_path / f"{day}.jsonl")
    return tmp_path / "day1.jsonl", tmp_path / "day2.jsonl"


def state(catalog: Catalog, name: str) -> tuple[TableState, int]:
    table = catalog.load_table(name)
    return TableState.of(table), len(table.snapshots())


def same_table(a: Catalog, name_a: str, b: Catalog, name_b: str) -> None:
    ta, tb = a.load_table(name_a), b.load_table(name_b)
    assert from_iceberg(ta.schema()) == from_iceberg(tb.schema())  # IDs, names, types, docs
    assert read_pyiceberg(ta) == read_pyiceberg(tb)


@pytest.mark.spark
def test_a_plan_file_is_applied_once_as_ingest_would_and_a_stale_one_never(
    tmp_path: Path, lakehouse: Catalog, spark: SparkSession
) -> None:
    day1, day2 = days(tmp_path)
    new = ("--table", "db.events", "--catalog", "lake")
    assert run("preview", day1, *new, "--batch-id", "day1", "--save", "p1.json",
               cwd=tmp_path).returncode == 0
    # made against the same (absent) table: stale once p1 is applied
    assert run("preview", day2, *new, "--save", "p2.json", cwd=tmp_path).returncode == 0
    plan_file = json.loads((tmp_path / "p1.json").read_text())
    assert (plan_file["format"], plan_file["version"], plan_file["batch_id"]) == (
        "toolkit-plan", 1, "day1")
    assert plan_file["source"] == str(day1) and plan_file["catalog"] == str(tmp_path / "lake")

    applied = run("apply", "p1.json", *SPARK, "--json", cwd=tmp_path)
    assert applied.returncode == 0, applied.stderr
    assert json.loads(applied.stdout)["rows_written"] == 20
    cli_catalog = toolkit.catalog(tmp_path / "lake")
    toolkit.ingest(day1, "cli.events_ref", lakehouse, spark, batch_id="day1")
    same_table(cli_catalog, "db.events", lakehouse, "cli.events_ref")
    after_first = state(cli_catalog, "db.events")

    again = run("apply", "p1.json", cwd=tmp_path)  # the batch id is in the table already
    assert again.returncode == 0 and "already applied; nothing written" in again.stdout
    stale = run("apply", "p2.json", "--json", cwd=tmp_path)
    assert stale.returncode == 4, stale.stderr
    assert "moved since the plan was made (it was created)" in json.loads(stale.stdout)["error"]
    assert state(cli_catalog, "db.events") == after_first  # neither wrote anything

    # the plan file is the code it can be exported as
    sql = run("export", "p1.json", "--as", "spark-sql", cwd=tmp_path)
    assert sql.returncode == 0
    assert sql.stdout.startswith("CREATE SCHEMA IF NOT EXISTS `db`;\nCREATE TABLE `db`.`events`")


@pytest.mark.spark
def test_require_approval_stops_a_drifting_batch_and_its_plan_file_applies(
    tmp_path: Path, lakehouse: Catalog, spark: SparkSession
) -> None:
    day1, day2 = days(tmp_path)
    for name in ("cli.approve", "cli.approve_ref"):
        toolkit.ingest(day1, name, lakehouse, spark, batch_id="day1")
    folder = embedded_folder(lakehouse)
    before = state(lakehouse, "cli.approve")

    stopped = run("ingest", day2, "--table", "cli.approve", "--catalog", folder,
                  "--batch-id", "day2", "--require-approval", "--save", "day2.plan.json",
                  cwd=tmp_path)
    assert stopped.returncode == 3, stopped.stderr
    assert "needs approval: plan written to day2.plan.json" in stopped.stdout
    assert "+ my_field_string: string" in stopped.stdout
    assert state(lakehouse, "cli.approve") == before

    exported = run("export", "day2.plan.json", "--as", "spark-sql", cwd=tmp_path)
    assert exported.returncode == 0
    assert ("ALTER TABLE `cli`.`approve` ADD COLUMN `my_field_string` STRING COMMENT "
            "'upsolver_evolved_from:my_field';") in exported.stdout.splitlines()

    applied = run("apply", "day2.plan.json", *SPARK, cwd=tmp_path)
    assert applied.returncode == 0, applied.stderr
    assert applied.stderr == ""  # Spark started quietly
    toolkit.ingest(day2, "cli.approve_ref", lakehouse, spark, batch_id="day2")
    same_table(lakehouse, "cli.approve", lakehouse, "cli.approve_ref")


def test_bad_input_exits_2_with_a_clear_message(tmp_path: Path) -> None:
    day1, _ = days(tmp_path)
    typo = run("preview", day1, "--tabel", "db.t", cwd=tmp_path)
    assert typo.returncode == 2
    assert "No such option '--tabel'" in typo.stderr and "'--table'" in typo.stderr
    missing = run("preview", tmp_path / "nope.jsonl", "--table", "db.t", cwd=tmp_path)
    assert (missing.returncode, missing.stderr.strip()) == (
        2, f"error: Invalid value for SOURCE: {tmp_path / 'nope.jsonl'}: no such file or folder")
    no_plan = run("apply", "missing.plan.json", cwd=tmp_path)
    assert no_plan.returncode == 2 and "'missing.plan.json' does not exist" in no_plan.stderr
    (tmp_path / "other.json").write_text('{"format": "something"}')
    not_plan = run("export", "other.json", "--as", "trino", cwd=tmp_path)
    assert (not_plan.returncode, not_plan.stderr.strip()) == (
        2, 'error: other.json: not a toolkit plan file (no "format": "toolkit-plan")')
    assert not (tmp_path / "lakehouse").exists()  # nothing was created by a refused command


def test_python_dash_m_runs_the_same_command_line(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "toolkit", "export", "--help"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "--as [spark-sql|trino|pyiceberg]" in out.stdout
