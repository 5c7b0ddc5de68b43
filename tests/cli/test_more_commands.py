"""The commands that keep a table going: ``stream`` a folder, ``undo`` a logged change,
list and ``replay`` the ``quarantine``, ``maintain`` once approved. In-process (click's
runner) on the session's Spark, and as a scheduler runs them (a subprocess of the
installed script: exit codes, a stream stopped by Ctrl+C)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pytest
from click.testing import CliRunner, Result
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import NamespaceAlreadyExistsError

import toolkit
from toolkit.cli import cli
from toolkit.core.values.types import Column, Struct
from toolkit.iceberg.catalog import embedded_folder
from toolkit.iceberg.schema import to_iceberg

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DATA = Path(toolkit.__file__).parent / "data"
TOOLKIT = Path(sys.executable).with_name("toolkit")


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(TOOLKIT), *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def renamed_table(folder: Path) -> Catalog:
    """db.t (name, n) with two logged plans: #1 renames name to full_name, #2 drops n."""
    cat = toolkit.catalog(folder)
    cat.create_namespace("db")
    cat.create_table("db.t", schema=to_iceberg(Struct((
        Column(1, "name", "string"), Column(2, "n", "long")))))
    for op in (toolkit.ops.rename("name", "full_name"), toolkit.ops.drop("n")):
        p = toolkit.preview_evolution(cat, "db.t", [op])
        toolkit.evolve(cat, "db.t", p.plan, expected=p.state)
    return cat


def names(cat: Catalog, table: str) -> list[str]:
    return [f.name for f in cat.load_table(table).schema().fields]


def test_undo_reverses_a_rename_once_and_refuses_what_it_cannot(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    cat = renamed_table(lake)
    done = invoke("undo", "db.t", "1", "--catalog", lake)
    assert done.exit_code == 0, done.output
    assert done.output == "db.t: undid lineage entry 1 as entry 3: ~ rename full_name -> name\n"
    assert names(cat, "db.t") == ["name"]
    assert "#3 by user: undo of lineage entry 1" in invoke("lineage", "db.t", "--catalog",
                                                            lake).output

    again = CliRunner().invoke(cli, ["undo", "db.t", "1", "--catalog", str(lake)])
    assert again.exit_code == 1
    assert ("lineage entry 1 was already undone by entry 3; nothing was changed (to redo it, "
            "run: toolkit undo db.t 3)") in again.output
    drop = CliRunner().invoke(cli, ["undo", "db.t", "2", "--catalog", str(lake), "--json"])
    assert drop.exit_code == 2
    error = json.loads(drop.stdout)["error"]
    assert error.startswith("lineage entry 2 cannot be undone: a drop cannot be undone")
    assert error.endswith("nothing was changed")
    missing = CliRunner().invoke(cli, ["undo", "db.t", "9", "--catalog", str(lake)])
    assert missing.exit_code == 2
    assert "db.t has no lineage entry 9: its entries are 1 to 3" in missing.output
    assert names(cat, "db.t") == ["name"]  # none of the refusals changed anything

    redo = json.loads(invoke("undo", "db.t", "3", "--catalog", lake, "--json").output)
    assert (redo["undone"]["seq"], redo["entry"]["seq"]) == (3, 4)
    assert names(cat, "db.t") == ["full_name"]
    # entry 1's undo was itself undone: entry 1 can be undone again
    assert invoke("undo", "db.t", "1", "--catalog", lake).exit_code == 0
    assert names(cat, "db.t") == ["name"]


def test_bad_durations_steps_and_folders_are_refused_before_anything_runs(
    tmp_path: Path,
) -> None:
    lake = tmp_path / "lake"
    renamed_table(lake)
    for args, says in [
        (["maintain", "db.t", "--older-than", "5x"], "'5x' is not a duration: write it as 5d"),
        (["maintain", "db.t", "--steps", "compact,vacuum"],
         "unknown maintenance step 'vacuum'; the steps are compact, rewrite_manifests"),
        (["maintain", "db.t", "--orphans-older-than", "12h"], "12h is too recent"),
        (["maintain", "db.nope"], "no table db.nope in catalog"),
        (["stream", tmp_path / "nowhere", "-t", "db.t"], "nowhere: no such folder"),
        (["stream", tmp_path, "-t", "db.t", "--once", "--for", "1m"],
         "--once processes what is there and exits"),
        (["replay", "db.t"], None),  # nothing was ever quarantined: done, exit 0
    ]:
        out = CliRunner().invoke(cli, [*map(str, args), "--catalog", str(lake)])
        if says is None:
            assert (out.exit_code, out.output) == (0, "db.t: nothing to replay\n")
        else:
            assert out.exit_code == 2, (args, out.output)
            assert says in out.output, (args, out.output)


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


@pytest.mark.spark
def test_stream_once_prints_a_line_per_micro_batch_and_resumes_where_it_left(
    tmp_path: Path, lakehouse: Catalog, spark: SparkSession
) -> None:
    landing = tmp_path / "landing"
    landing.mkdir()
    shutil.copy(DATA / "sample_day1.jsonl", landing / "a_day1.jsonl")
    shutil.copy(DATA / "sample_day2.jsonl", landing / "b_day2.jsonl")
    write_lines(landing / "c_bad.jsonl", ['{"event": "x", "my_field": 1}', "{oops"])
    for age, name in enumerate(["c_bad", "b_day2", "a_day1"]):  # Spark reads oldest first
        os.utime(landing / f"{name}.jsonl", (time.time() - 60 * (age + 1),) * 2)
    args = ["stream", landing, "-t", "cli.streamed", "--catalog", embedded_folder(lakehouse),
            "--once", "--max-files-per-trigger", "1", "--query-name", "landing"]
    out = invoke(*args, "--maintain-every", "3")
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[0].startswith("landing:0: 20 rows written, 8 columns added (+ coordinates:")
    assert lines[1] == (
        "landing:1: 20 rows written, 4 columns added (+ device.os_version: string; "
        "+ my_field_string: string; + size_double: double; + started_long: long), "
        "0 quarantined")
    assert lines[2] == "landing:2: 1 row written, no schema change, 1 quarantined"
    assert lines[3].startswith("  maintenance: ")  # after the third micro-batch
    assert lines[4] == ("cli.streamed: 3 micro-batches, 41 rows written, 2 schema changes, "
                        "1 quarantined; every file there was processed")
    assert len(lakehouse.load_table("cli.streamed").scan().to_arrow()) == 41

    # a scheduler's next run: only the new file, as JSON lines
    write_lines(landing / "d_more.jsonl", ['{"event": "y", "my_field": "late"}'])
    again = invoke(*args, "--json")
    assert again.exit_code == 0, again.output
    events = [json.loads(line) for line in again.output.splitlines()]
    assert [(e["event"], e.get("batch_id"), e["rows_written"]) for e in events] == [
        ("batch", "landing:3", 1), ("summary", None, 1)]
    assert len(lakehouse.load_table("cli.streamed").scan().to_arrow()) == 42


@pytest.mark.spark
def test_a_failed_micro_batch_exits_1_naming_the_field_and_value(
    tmp_path: Path, lakehouse: Catalog, spark: SparkSession
) -> None:
    landing = tmp_path / "landing"
    landing.mkdir()
    write_lines(landing / "a.jsonl", ['{"flag": true}'])
    write_lines(landing / "b.jsonl", ['{"flag": "maybe"}'])
    os.utime(landing / "a.jsonl", (time.time() - 60,) * 2)
    out = CliRunner().invoke(cli, [
        "stream", str(landing), "-t", "cli.strict", "--catalog", str(embedded_folder(lakehouse)),
        "--policy", "widen", "--on-incompatible", "fail", "--once",
        "--max-files-per-trigger", "1", "--json"])
    assert out.exit_code == 1, out.output
    first, error = map(json.loads, out.stdout.splitlines())  # JSON lines, the error too
    assert (first["batch_id"], first["rows_written"]) == ("ingest_cli_strict:0", 1)
    says = ("a micro-batch failed: IncompatibleRecordError: batch ingest_cli_strict:1: field "
            "'flag': value 'maybe' observed as string does not fit column type boolean")
    assert says in error["error"] and says in out.stderr
    assert (error["event"], error["exit_code"]) == ("error", 1)
    assert len(lakehouse.load_table("cli.strict").scan().to_arrow()) == 1


@pytest.mark.spark
def test_quarantine_lists_records_and_replay_sends_them_back(
    tmp_path: Path, lakehouse: Catalog, spark: SparkSession
) -> None:
    toolkit.ingest([{"flag": True, "n": 1}], "cli.flags", lakehouse, spark, batch_id="d1",
                   policy="widen")
    day2 = write_lines(tmp_path / "d2.jsonl", [
        '{"flag": "maybe", "n": 2}', '{"flag": false, "n": 3}', "{oops"])
    toolkit.ingest(day2, "cli.flags", lakehouse, spark, batch_id="d2", policy="widen")
    lake = embedded_folder(lakehouse)

    listed = invoke("quarantine", "cli.flags", "--catalog", lake)
    assert listed.exit_code == 0
    lines = listed.output.splitlines()
    assert lines[0] == "cli.flags__quarantine: 2 records, 1 replayable"
    assert [re.split(r"\s{2,}", line) for line in lines[1:4]] == [
        ["batch", "field", "reason", "types", "value", "count"],
        ["d2", "flag", "a value its column cannot take, even widened", "string into boolean",
         '"maybe"', "1"],
        ["d2", "-", "a line that is not valid JSON (cannot be replayed)", "-", "{oops", "1"]]
    data = json.loads(invoke("quarantine", "cli.flags", "--catalog", lake, "--json").output)
    assert [(g["field"], g["reason"], g["count"], g["replayable"]) for g in data["groups"]] == [
        ("flag", "incompatible", 1, True), (None, "malformed", 1, False)]

    nope = CliRunner().invoke(cli, ["replay", "cli.flags", "--catalog", lake, "--batch-id",
                                    "d9"])
    assert nope.exit_code == 2
    assert "cli.flags__quarantine holds no record of batch d9" in nope.output
    dry = invoke("replay", "cli.flags", "--catalog", lake, "--batch-id", "d2", "--dry-run")
    assert dry.exit_code == 0
    assert "would need: batch 3: 1 column added\n+ flag_string: string" in dry.output
    assert names(lakehouse, "cli.flags") == ["flag", "n"]  # a dry run changes nothing

    done = invoke("replay", "cli.flags", "--catalog", lake, "--batch-id", "d2", "--json")
    assert done.exit_code == 0, done.output
    report = json.loads(done.output)
    assert (report["replayed"], report["rows_written"], report["requarantined"]) == (1, 1, 0)
    assert len(report["not_replayable"]) == 1
    assert names(lakehouse, "cli.flags") == ["flag", "n", "flag_string"]
    rows = lakehouse.load_table("cli.flags").scan().to_arrow().to_pylist()
    assert {"flag": None, "n": 2, "flag_string": "maybe"} in rows
    left = invoke("replay", "cli.flags", "--catalog", lake)
    assert left.output == ("cli.flags: nothing to replay; 1 record cannot be replayed "
                           "(malformed or not a JSON object) and stay in the quarantine\n")


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
def test_the_installed_script_streams_until_ctrl_c_and_stops_cleanly(tmp_path: Path) -> None:
    landing = tmp_path / "landing"
    landing.mkdir()
    shutil.copy(DATA / "sample_day1.jsonl", landing / "day1.jsonl")
    proc = subprocess.Popen(
        [str(TOOLKIT), "stream", str(landing), "--table", "db.live", "--catalog", "lake",
         "--every", "1s", "--json", "--conf", "spark.master=local[1]"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stdout is not None
        first = json.loads(proc.stdout.readline())  # blocks until the first micro-batch
        assert (first["event"], first["batch_id"], first["rows_written"]) == (
            "batch", "ingest_db_live:0", 20)
        # files appear whole: written elsewhere, then moved in
        shutil.move(shutil.copy(DATA / "sample_day2.jsonl", tmp_path / "day2.jsonl"),
                    landing / "day2.jsonl")
        second = json.loads(proc.stdout.readline())
        assert (second["batch_id"], second["rows_written"]) == ("ingest_db_live:1", 20)
        time.sleep(1)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    summary = json.loads(out.splitlines()[-1])
    assert (summary["event"], summary["micro_batches"], summary["rows_written"],
            summary["stopped"]) == ("summary", 2, 40, "stopped as asked")
    assert "SIGINT: stopping after the micro-batch under way" in err
    assert len(toolkit.catalog(tmp_path / "lake").load_table("db.live").scan().to_arrow()) == 40
