"""``toolkit quarantine`` lists what was set aside and ``toolkit replay`` sends it back
(toolkit.cli.quarantined), in-process (click's runner) on the session's Spark."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner, Result
from pyiceberg.catalog import Catalog

import toolkit
from tests.cli.lakes import names, write_lines
from toolkit.cli import cli
from toolkit.iceberg.catalog import embedded_folder

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


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
