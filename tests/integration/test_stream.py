"""Streaming ingest: JSON-lines files dropped into a folder in three waves, each wave run
to completion (trigger availableNow) on one checkpoint, give the same table as three
``ingest`` calls of the same files and as ``simulate`` of the same three batches; a
restarted query never writes a micro-batch twice."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.table import Table
from pyiceberg.types import ListType, NestedField, StructType

import toolkit
from toolkit.errors import CheckpointLostError
from toolkit.iceberg.duckdb import duckdb_connection, read_table
from toolkit.iceberg.ledger import batch_id_of
from toolkit.pipeline.ingest import IngestReport, ingest
from toolkit.pipeline.stream import StreamLog, reports, stream

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

DATA = Path(toolkit.__file__).parent / "data"
STREAMED = "stream_test.events"
INGESTED = "stream_test.events_ingested"
QUERY = "stream_test_events"
AVAILABLE_NOW = {"availableNow": True}


def waves() -> list[list[list[str]]]:
    """Three waves (the three sample days) of files (lists of JSON lines); the second wave
    comes as two files, which still make one micro-batch."""
    days = [
        [line for line in (DATA / f"sample_day{i}.jsonl").read_text().splitlines() if line]
        for i in (1, 2, 3)
    ]
    return [[days[0]], [days[1][:8], days[1][8:]], [days[2]]]


def drop(folder: Path, name: str, lines: list[str]) -> Path:
    """Write a file next to the folder, then move it in whole (what a stream needs)."""
    tmp = folder.parent / f".{name}.tmp"
    tmp.write_text("\n".join(lines) + "\n")
    return Path(shutil.move(tmp, folder / name))


def shape(fields: tuple[NestedField, ...] | list[NestedField]) -> list[tuple[Any, ...]]:
    """Names, types and docs of a schema, recursively (field IDs left out)."""

    def of(t: Any) -> Any:
        if isinstance(t, StructType):
            return shape(t.fields)
        if isinstance(t, ListType):
            return ("list", of(t.element_type))
        return str(t)

    return [(f.name, of(f.field_type), f.doc) for f in fields]


def canonical(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()  # ZoneInfo("UTC") and timezone.utc print alike
    raise TypeError(type(value))


def multiset(rows: list[dict[str, Any]]) -> Counter[str]:
    return Counter(json.dumps(r, sort_keys=True, default=canonical) for r in rows)


def snapshot_batch_ids(table: Table) -> list[str | None]:
    return [batch_id_of(s) for s in table.snapshots()]


@dataclass
class Streamed:
    landing: Path
    checkpoint: Path
    logs: list[StreamLog]
    seen: list[IngestReport] = field(default_factory=list)  # what on_batch received


def run(spark: SparkSession, lakehouse: Catalog, state: Streamed) -> StreamLog:
    query = stream(
        state.landing,
        STREAMED,
        lakehouse,
        spark,
        checkpoint=state.checkpoint,
        trigger=AVAILABLE_NOW,
        query_name=QUERY,
        on_batch=state.seen.append,
    )
    query.awaitTermination(120)
    assert not query.isActive and query.exception() is None
    log = reports(query)
    state.logs.append(log)
    return log


@pytest.fixture(scope="module")
def streamed(
    lakehouse: Catalog, spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> Streamed:
    """Three waves, one availableNow query each, on one checkpoint."""
    root = tmp_path_factory.mktemp("stream")
    state = Streamed(root / "landing", root / "checkpoint", [])
    state.landing.mkdir()
    for w, files in enumerate(waves()):
        for f, lines in enumerate(files):
            drop(state.landing, f"wave{w}-{f}.jsonl", lines)
        run(spark, lakehouse, state)
    return state


def test_each_wave_is_one_snapshot_with_its_batch_id(
    streamed: Streamed, lakehouse: Catalog
) -> None:
    table = lakehouse.load_table(STREAMED)
    assert snapshot_batch_ids(table) == [f"{QUERY}:0", f"{QUERY}:1", f"{QUERY}:2"]
    assert [len(log) for log in streamed.logs[:3]] == [1, 1, 1]
    lasts = [log.last for log in streamed.logs[:3]]
    assert [r.batch_id for r in lasts if r] == [f"{QUERY}:{e}" for e in range(3)]
    assert [r.rows_written for r in lasts if r] == [20, 20, 20]
    assert streamed.seen[:3] == lasts
    assert [s.snapshot_id for s in table.snapshots()] == [r.snapshot_id for r in lasts if r]


def test_stream_equals_ingest_and_simulate(
    streamed: Streamed, lakehouse: Catalog, spark: SparkSession
) -> None:
    for w in range(3):
        ingest(
            str(streamed.landing / f"wave{w}-*.jsonl"),
            INGESTED,
            lakehouse,
            spark,
            batch_id=f"wave{w}",
        )
    batches = [[json.loads(line) for f in files for line in f] for files in waves()]
    sim = toolkit.simulate(batches)

    by_stream = lakehouse.load_table(STREAMED)
    by_ingest = lakehouse.load_table(INGESTED)
    assert shape(by_stream.schema().fields) == shape(by_ingest.schema().fields)
    assert shape(by_stream.schema().fields) == shape(sim.schema.fields)
    assert by_stream.schema() == sim.schema  # field IDs too
    names = [f.name for f in sim.schema.fields]
    assert "my_field_string" in names and "device_array_record" in names  # it did drift

    # Rows read by DuckDB: PyIceberg 0.12 reads a null list<struct> as [].
    con = duckdb_connection()
    rows = multiset(read_table(by_stream, con))
    assert rows == multiset(read_table(by_ingest, con))
    assert rows == multiset(sim.rows)
    assert sum(rows.values()) == 60
    pyiceberg_rows = multiset(by_stream.scan().to_arrow().to_pylist())
    assert pyiceberg_rows == multiset(by_ingest.scan().to_arrow().to_pylist())


def test_restart_without_new_files_writes_nothing(
    streamed: Streamed, lakehouse: Catalog, spark: SparkSession
) -> None:
    before = snapshot_batch_ids(lakehouse.load_table(STREAMED))
    log = run(spark, lakehouse, streamed)
    assert len(log) == 0 and log.last is None
    assert snapshot_batch_ids(lakehouse.load_table(STREAMED)) == before


def test_replayed_micro_batch_is_not_written_twice(
    streamed: Streamed, lakehouse: Catalog, spark: SparkSession
) -> None:
    # A crash after the Iceberg commit but before Spark recorded the epoch as done:
    # Spark replays the epoch on restart, and ingest skips its batch id.
    commits = streamed.checkpoint / "commits"
    last = max(int(p.name) for p in commits.iterdir() if p.name.isdigit())
    for name in (str(last), f".{last}.crc"):  # the commit and Hadoop's checksum of it
        (commits / name).unlink(missing_ok=True)
    before = snapshot_batch_ids(lakehouse.load_table(STREAMED))
    log = run(spark, lakehouse, streamed)
    assert [(r.batch_id, r.skipped, r.rows_written) for r in log] == [(f"{QUERY}:{last}", True, 0)]
    assert snapshot_batch_ids(lakehouse.load_table(STREAMED)) == before
    assert (commits / str(last)).is_file()


def test_lost_checkpoint_is_refused(
    streamed: Streamed, lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    # A new checkpoint would restart epochs at 0, and ingest would skip them all.
    with pytest.raises(CheckpointLostError, match="stream_test_events:0"):
        stream(
            streamed.landing,
            STREAMED,
            lakehouse,
            spark,
            checkpoint=tmp_path / "new",
            query_name=QUERY,
        )
    assert not [q for q in spark.streams.active if q.name == QUERY]
