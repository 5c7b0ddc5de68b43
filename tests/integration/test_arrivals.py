"""What arrived, per field and type, recorded at ingest and read back from metadata alone
(issue 14: ``toolkit.statistics(table).arrived(path)``)."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.serializers import FromInputFile
from pyiceberg.table import Table
from pyspark.sql import SparkSession

import toolkit
from toolkit.iceberg.statistics import EXPIRED_ARRIVALS_PROPERTY, SNAPSHOT_ARRIVALS_PREFIX
from toolkit.spark import maintenance as procedures

pytestmark = pytest.mark.spark


def drifting_batch() -> list[dict[str, Any]]:
    """30 longs, 10 strings and 5 nulls of ``price``, and 5 records without it; a list
    field ``tags`` in 20 records; ``device.os`` nested, a string in each record."""
    out: list[dict[str, Any]] = []
    for i in range(50):
        r: dict[str, Any] = {"id": i, "device": {"os": "linux"}}
        if i < 30:
            r["price"] = i
        elif i < 40:
            r["price"] = f"{i}.5 EUR"
        elif i < 45:
            r["price"] = None
        if i % 5 < 2:
            r["tags"] = ["a", "b", "c"][: 1 + i % 3]
        out.append(r)
    return out


def test_arrived_counts_come_from_metadata_alone(
    lakehouse: Catalog, spark: SparkSession,
) -> None:
    name = "arrivals.events"
    toolkit.ingest(drifting_batch(), name, lakehouse, spark, batch_id="day1")
    table = lakehouse.load_table(name)

    stats = toolkit.statistics(table)

    assert stats.arrived("price") == {"long": 30, "string": 10}
    assert stats.absent("price") == 10  # 5 nulls and 5 missing
    shares = stats.arrivals.shares("price")
    assert shares == {"long": 0.75, "string": 0.25}
    assert sum(shares.values()) == pytest.approx(1.0)
    assert stats.arrived("tags") == {"string[]": 20}
    assert stats.arrived(("device", "os")) == {"string": 50}
    assert stats.arrived("device.os") == {"string": 50}
    assert stats.arrived("nowhere") == {}
    # the column, by contrast, counts what it was written: a first batch mixing longs and
    # texts made one string column of price (RULES 3), which holds all 40
    assert stats["price"].type == "string" and stats["price"].values == 40
    # the text form (toolkit stats) says the same, a value counted once
    text = str(stats).split("What arrived")[1]
    assert re.search(r"\nprice +long +30 +75% +10 ", text)
    assert re.search(r"\n +string +10 +25% ", text)

    # a second batch adds up, and each batch's own arrivals are kept with its time
    toolkit.ingest([{"id": 99, "price": "free"}], name, lakehouse, spark, batch_id="day2")
    stats = toolkit.statistics(lakehouse.load_table(name))
    assert stats.arrived("price") == {"long": 30, "string": 11}
    history = stats.arrival_history("price")
    assert [(s.batch_id, counts) for s, counts in history] == [
        ("day1", {"long": 30, "string": 10}), ("day2", {"string": 1})]
    assert all(isinstance(s.timestamp, dt.datetime) for s, _ in history)

    # a skipped re-run of a batch id adds nothing
    toolkit.ingest([{"id": 99, "price": "free"}], name, lakehouse, spark, batch_id="day2")
    assert toolkit.statistics(lakehouse.load_table(name)).arrived("price") == {
        "long": 30, "string": 11}

    # from metadata alone: with every data file gone, the counts are still there
    data = Path(urlparse(table.location()).path, "data")
    files = list(data.rglob("*.parquet"))
    assert files
    for f in files:
        f.unlink()
    assert toolkit.statistics(lakehouse.load_table(name)).arrived("price") == {
        "long": 30, "string": 11}


def folded_and_kept(table: Table) -> list[tuple[int, ...]]:
    """Per metadata version of ``table`` (those its log keeps, then the current one): the
    snapshots folded into the expired arrivals that still had their own arrivals property
    in that version."""
    versions = [FromInputFile.table_metadata(table.io.new_input(e.metadata_file))
                for e in table.metadata.metadata_log]
    out = []
    for meta in [*versions, table.metadata]:
        head = meta.properties.get(EXPIRED_ARRIVALS_PROPERTY, "").partition(":")[0]
        out.append(tuple(int(i) for i in head.split(",") if i
                         and f"{SNAPSHOT_ARRIVALS_PREFIX}{i}" in meta.properties))
    return out


def test_arrivals_outlive_snapshot_expiry(lakehouse: Catalog, spark: SparkSession) -> None:
    name = "arrivals.expired"
    for i in range(4):
        toolkit.ingest([{"n": i}, {"n": f"x{i}"}], name, lakehouse, spark, batch_id=f"d{i}")
    before = toolkit.statistics(lakehouse.load_table(name)).arrived("n")
    assert before == {"long": 4, "string": 4}

    report = toolkit.maintain(name, lakehouse, spark, older_than=dt.timedelta(0),
                              retain_last=1, steps=("expire_snapshots",))
    table = lakehouse.load_table(name)
    assert len(table.snapshots()) < 4, report
    stats = toolkit.statistics(table)
    assert stats.arrived("n") == before
    # every snapshot left is either folded or counted from its own summary, never both
    assert sum(s.arrivals is not None for s in stats.snapshots) == 1
    assert f"{SNAPSHOT_ARRIVALS_PREFIX}{table.current_snapshot().snapshot_id}" in \
        table.metadata.properties
    # the expired snapshots' own properties went with them (their counts are folded)
    assert [k for k in table.metadata.properties if k.startswith(SNAPSHOT_ARRIVALS_PREFIX)] \
        == [f"{SNAPSHOT_ARRIVALS_PREFIX}{table.current_snapshot().snapshot_id}"]
    # ... in the very commit that folded them: no version of the table kept both
    assert set(folded_and_kept(table)) == {()}

    # expiring again folds only what is new
    toolkit.ingest([{"n": 9}], name, lakehouse, spark, batch_id="d9")
    toolkit.maintain(name, lakehouse, spark, older_than=dt.timedelta(0), retain_last=1,
                     steps=("expire_snapshots",))
    assert toolkit.statistics(lakehouse.load_table(name)).arrived("n") == {
        "long": 5, "string": 4}


def test_arrivals_outlive_an_expiry_that_fails_or_expires_fewer(
    lakehouse: Catalog, spark: SparkSession, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Maintenance folds what the snapshots to expire brought in one commit, and Spark
    expires them in another: whatever Spark does, each batch is counted once."""
    name = "arrivals.expiry_fails"
    for i in range(3):
        toolkit.ingest([{"n": i}, {"n": f"x{i}"}], name, lakehouse, spark, batch_id=f"d{i}")
    table = lakehouse.load_table(name)
    snapshots = [s.snapshot_id for s in table.snapshots()]
    assert toolkit.statistics(table).arrived("n") == {"long": 3, "string": 3}

    def expire() -> Any:
        return toolkit.maintain(name, lakehouse, spark, older_than=dt.timedelta(0),
                                retain_last=1, steps=("expire_snapshots",))

    def fails(*args: Any, **kwargs: Any) -> dict[str, int]:
        raise RuntimeError("the expiry failed")

    monkeypatch.setattr(procedures, "expire_snapshots", fails)
    with pytest.raises(RuntimeError, match="the expiry failed"):
        expire()
    table = lakehouse.load_table(name)
    assert [s.snapshot_id for s in table.snapshots()] == snapshots  # all still there
    stats = toolkit.statistics(table)
    assert stats.arrived("n") == {"long": 3, "string": 3}
    assert [s.batch_id for s in stats.snapshots if s.arrivals is not None] == ["d2"]

    # an expiry that leaves some (say, a tag was added meanwhile) counts the rest once too
    monkeypatch.undo()
    real = procedures.expire_snapshots
    monkeypatch.setattr(procedures, "expire_snapshots",
                        lambda spark, catalog, table, ids: real(spark, catalog, table, ids[:1]))
    expire()
    table = lakehouse.load_table(name)
    assert [s.snapshot_id for s in table.snapshots()] == snapshots[1:]
    assert toolkit.statistics(table).arrived("n") == {"long": 3, "string": 3}

    # and a later expiry that succeeds neither loses nor adds any
    monkeypatch.undo()
    toolkit.ingest([{"n": 9}], name, lakehouse, spark, batch_id="d9")
    expire()
    table = lakehouse.load_table(name)
    assert len(table.snapshots()) == 1
    assert toolkit.statistics(table).arrived("n") == {"long": 4, "string": 3}


def test_a_replay_adds_nothing_to_what_arrived(lakehouse: Catalog, spark: SparkSession) -> None:
    """Records set aside were counted when they arrived; replaying them writes them, but
    they do not arrive twice."""
    name = "arrivals.replayed"
    toolkit.ingest([{"flag": True}, {"flag": "maybe"}], name, lakehouse, spark,
                   batch_id="day1", policy="widen")
    before = toolkit.statistics(lakehouse.load_table(name)).arrived("flag")
    assert before == {"boolean": 1, "string": 1}
    report = toolkit.replay(lakehouse, name, spark)  # the automatic policy takes the text
    assert report.written == 1 and len(report.replayed) == 1, report
    stats = toolkit.statistics(lakehouse.load_table(name))
    assert stats.arrived("flag") == before
    assert [counts for _, counts in stats.arrival_history("flag")] == [before, {}]
