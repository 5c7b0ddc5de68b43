"""``toolkit maintain`` (toolkit.cli.upkeep) prints its plan and applies it only once
approved (``--yes``): in-process (click's runner) on the session's Spark, and as the
installed script."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pytest
from click.testing import CliRunner, Result
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import NamespaceAlreadyExistsError

from tests.cli.lakes import left_staging_table
from tests.reliability.children import short_lived_env
from toolkit.cli import cli
from toolkit.iceberg.catalog import embedded_folder

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

TOOLKIT = Path(sys.executable).with_name("toolkit")


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(TOOLKIT), *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=300, env=short_lived_env())


def snapshots(cat: Catalog, table: str) -> int:
    return len(cat.load_table(table).snapshots())


@pytest.mark.spark
def test_maintain_prints_its_plan_and_applies_it_only_with_yes(
    tmp_path: Path, lakehouse: Catalog, spark: SparkSession
) -> None:
    with contextlib.suppress(NamespaceAlreadyExistsError):
        lakehouse.create_namespace("cli")
    tbl = lakehouse.create_table("cli.kept", schema=pa.schema([pa.field("n", pa.int64())]))
    for i in range(4):
        tbl.append(pa.table({"n": pa.array([i], pa.int64())}))
    lake = embedded_folder(lakehouse)
    args = ("maintain", "cli.kept", "--catalog", lake, "--steps", "expire_snapshots",
            "--older-than", "0s", "--retain-last", "1")

    # as a scheduler runs it: the plan, exit 3, nothing done
    asked = run(*args, cwd=tmp_path)
    assert asked.returncode == 3, asked.stderr
    assert "expire_snapshots: Expire 3 of 4 snapshots" in asked.stdout
    assert "This plan needs approval: review it, then run it again with --yes" in asked.stdout
    assert asked.stderr == ""
    assert snapshots(lakehouse, "cli.kept") == 4
    dry = json.loads(invoke(*args, "--dry-run", "--json").output)
    assert (dry["todo"], dry["applied"], snapshots(lakehouse, "cli.kept")) == (True, False, 4)

    applied = invoke(*args, "--yes", "--json")
    assert applied.exit_code == 0, applied.output
    result = json.loads(applied.output)["results"][0]
    assert (result["name"], result["counts"]["expired_snapshots"]) == ("expire_snapshots", 3)
    assert snapshots(lakehouse, "cli.kept") == 1
    assert len(lakehouse.load_table("cli.kept").scan().to_arrow()) == 4  # no row lost
    nothing = invoke(*args)
    assert nothing.exit_code == 0 and nothing.output.endswith("cli.kept: nothing to do\n")


@pytest.mark.spark
def test_maintain_lists_a_leftover_staging_table_and_drops_it_only_with_yes(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    with contextlib.suppress(NamespaceAlreadyExistsError):
        lakehouse.create_namespace("cli")
    lakehouse.create_table("cli.landed", schema=pa.schema([pa.field("n", pa.int64())]))
    left = left_staging_table(lakehouse, "cli.landed", 2)
    args = ("maintain", "cli.landed", "--catalog", embedded_folder(lakehouse),
            "--steps", "drop_staging_tables", "--staging-older-than", "0s")

    asked = invoke(*args)
    assert asked.exit_code == 3, asked.output
    assert (f"drop_staging_tables: Drop 1 staging table a stopped ingest left ({left}, 1 data "
            "file, 2 rows never published)") in asked.output
    assert "This plan needs approval" in asked.output
    assert lakehouse.table_exists(left)  # nothing dropped

    applied = invoke(*args, "--yes", "--json")
    assert applied.exit_code == 0, applied.output
    result = json.loads(applied.output)["results"][0]
    assert (result["name"], result["counts"]["staging_tables_dropped"]) == (
        "drop_staging_tables", 1)
    assert not lakehouse.table_exists(left) and lakehouse.table_exists("cli.landed")
