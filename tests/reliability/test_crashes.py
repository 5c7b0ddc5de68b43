"""Crashes: the ingest process is killed at each stage, then the same batch is ingested
again; every row must be in the table exactly once, and the table must equal
``toolkit.simulate`` of the batches.

The kill comes from the child's own script (``crash_child.py``), which wraps the
pipeline's functions; SIGKILL goes to the child's whole process group, so Spark's JVM
dies with it and nothing gets to clean up. One child per stage crashes (they run at the
same time, each on its own table of one catalog), then one child re-runs the crashed
batch and the next one on every table.

Sizes: the ingest tests' three small batches in ``make test``; ``TOOLKIT_RELIABILITY=long``
repeats every record 50 times.
"""

from __future__ import annotations

import json
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

import toolkit
from tests.integration.readers import canonical, read_duckdb, schema_summary
from tests.integration.test_ingest import CORPUS
from tests.reliability import children
from toolkit.core.values.types import Struct
from toolkit.iceberg.ledger import batch_id_of
from toolkit.iceberg.schema import from_iceberg

pytestmark = pytest.mark.spark

SCALE = 50 if children.LONG_RUN else 1
STAGES = ("profiled", "schema", "writing", "committed")
#: three drifting batches (the ingest tests' corpus), each record repeated SCALE times
BATCHES = [
    {"id": f"b{i}", "records": [dict(r, copy=k) for k in range(SCALE) for r in batch]}
    for i, batch in enumerate(CORPUS)
]


def records(upto: int) -> list[list[dict[str, Any]]]:
    return [b["records"] for b in BATCHES[:upto]]


@dataclass(frozen=True)
class Crashed:
    """A table as the crashed child left it."""

    exit_code: int
    batch_ids: list[str | None]
    schema: Struct
    orphan_files: int  # data files in the table's folder that no snapshot references
    log: str


@dataclass(frozen=True)
class Run:
    folder: Path
    crashed: dict[str, Crashed]
    recovery_log: str


def table_name(stage: str) -> str:
    return f"db.crash_{stage}"


def orphan_files(table: Any) -> int:
    folder = Path(urlparse(table.location()).path) / "data"
    on_disk = {p.name for p in folder.rglob("*.parquet")}
    table.refresh()
    used = {Path(urlparse(t.file.file_path).path).name for t in table.scan().plan_files()}
    return len(on_disk - used)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    work = tmp_path_factory.mktemp("crashes")
    folder = work / "lake"
    toolkit.catalog(folder)
    spec = work / "batches.json"
    spec.write_text(json.dumps(BATCHES))
    crashing = [
        children.start(
            "crash_child.py",
            [str(folder), str(spec), f"{table_name(s)}:0", f"{table_name(s)}:1:{s}"],
            work,
            f"crash-{s}",
        )
        for s in STAGES
    ]
    # the re-run's interpreter and JVM start now; its steps once the crashed tables are read
    steps = [f"{table_name(s)}:{i}" for s in STAGES for i in (1, 2)]
    go = work / "rerun.go"
    recovery = children.start("crash_child.py", [str(folder), str(spec), *steps], work, "rerun",
                              go=go)
    try:
        codes = children.wait(crashing, timeout=240)
        cat = toolkit.catalog(folder)
        crashed = {}
        for stage, child, code in zip(STAGES, crashing, codes, strict=True):
            table = cat.load_table(table_name(stage))
            crashed[stage] = Crashed(
                code,
                [batch_id_of(s) for s in table.snapshots()],
                from_iceberg(table.schema()),
                orphan_files(table),
                child.output(),
            )
        go.touch()
        (code,) = children.wait([recovery], timeout=240)
    finally:
        recovery.kill()
    assert code == 0, f"the re-run failed ({code}):\n{recovery.output()[-6000:]}"
    return Run(folder, crashed, recovery.output())


@pytest.mark.parametrize("stage", STAGES)
def test_killed_where_intended(run: Run, stage: str) -> None:
    crash = run.crashed[stage]
    assert crash.exit_code == -signal.SIGKILL, crash.log[-4000:]
    # the crash hit the stage it was meant to hit, as the table shows it
    landed = ["b0", "b1"] if stage == "committed" else ["b0"]
    assert crash.batch_ids == landed
    schema_after = 1 if stage == "profiled" else 2
    assert crash.schema == toolkit.simulate(records(schema_after)).table_schema
    if stage == "writing":
        assert crash.orphan_files > 0, "no data file was written before the kill"


@pytest.mark.parametrize("stage", STAGES)
def test_rerun_after_a_crash_gives_every_row_once(run: Run, stage: str) -> None:
    table = toolkit.catalog(run.folder).load_table(table_name(stage))
    assert [batch_id_of(s) for s in table.snapshots()] == ["b0", "b1", "b2"]
    skipped = f"{table_name(stage)} b1: skipped={stage == 'committed'}"
    assert skipped in run.recovery_log
    sim = toolkit.simulate(records(3))
    assert schema_summary(table.schema()) == schema_summary(sim.schema)
    assert read_duckdb(table) == canonical(sim.rows)
