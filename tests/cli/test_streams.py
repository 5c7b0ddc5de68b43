"""``toolkit stream`` a folder (toolkit.cli.streams): in-process (click's runner) on the
session's Spark, and as a scheduler runs it (a subprocess of the installed script stopped
by Ctrl+C)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner, Result
from pyiceberg.catalog import Catalog

import toolkit
from tests.cli.lakes import write_lines
from tests.reliability.children import short_lived_env
from toolkit.cli import cli
from toolkit.iceberg.catalog import embedded_folder

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DATA = Path(toolkit.__file__).parent / "data"
TOOLKIT = Path(sys.executable).with_name("toolkit")


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


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
def test_a_folder_of_files_spark_cannot_read_streams_once_given_a_schema(
    tmp_path: Path, lakehouse: Catalog, spark: SparkSession
) -> None:
    """Nanosecond Parquet timestamps, as pandas and Arrow write them: Spark cannot infer
    the stream's schema from them, and says so; with --schema the files are read by
    Arrow, every digit kept."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    landing = tmp_path / "landing"
    landing.mkdir()
    at = pa.array([1_700_000_000_123_456_789, None], pa.timestamp("ns", "UTC"))
    pq.write_table(pa.table({"t": at, "n": [1, 2]}), landing / "a.parquet")
    args = ["stream", landing, "-t", "cli.nanos", "--catalog", embedded_folder(lakehouse),
            "--once"]
    refused = CliRunner().invoke(cli, [str(a) for a in args])
    assert refused.exit_code == 2, refused.output
    assert ("a.parquet, column `t`: timestamps in nanoseconds, which Spark cannot read"
            in refused.stderr and "--schema on the command line" in refused.stderr)
    out = invoke(*args, "--schema", "t timestamp, n long")
    assert out.exit_code == 0, out.output
    assert out.output.startswith("ingest_cli_nanos:0: 2 rows written, 2 columns added")
    rows = lakehouse.load_table("cli.nanos").scan().to_arrow()
    assert "2023-11-14T22:13:20.123456789+00:00" in rows.column("t").to_pylist()


@pytest.mark.spark
def test_a_csv_micro_batch_that_is_not_utf8_fails_naming_the_line(
    tmp_path: Path, lakehouse: Catalog, spark: SparkSession
) -> None:
    """Spark's stream would read the byte as U+FFFD: the micro-batch fails instead, and a
    run after the file is mended resumes there."""
    landing = tmp_path / "landing"
    landing.mkdir()
    (landing / "a.csv").write_bytes(b"id,name\n1,caf\xe9\n")
    args = ["stream", landing, "-t", "cli.latin", "--catalog", embedded_folder(lakehouse),
            "--once"]
    out = CliRunner().invoke(cli, [str(a) for a in args])
    assert out.exit_code == 1, out.output
    assert "a.csv: line 2 holds bytes that are not UTF-8 (b'\\xe9' at byte 13)" in out.stderr
    assert not lakehouse.table_exists("cli.latin")
    (landing / "a.csv").write_bytes("id,name\n1,café\n".encode())
    again = invoke(*args)
    assert again.exit_code == 0, again.output
    assert lakehouse.load_table("cli.latin").scan().to_arrow().to_pylist() == [
        {"id": "1", "name": "café"}]


@pytest.mark.spark
def test_the_installed_script_streams_until_ctrl_c_and_stops_cleanly(tmp_path: Path) -> None:
    landing = tmp_path / "landing"
    landing.mkdir()
    shutil.copy(DATA / "sample_day1.jsonl", landing / "day1.jsonl")
    proc = subprocess.Popen(
        [str(TOOLKIT), "stream", str(landing), "--table", "db.live", "--catalog", "lake",
         "--every", "1s", "--json", "--conf", "spark.master=local[1]"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=short_lived_env(),  # its Spark lives for a few batches: the quick compiler only
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
