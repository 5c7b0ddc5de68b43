"""The ingest ledger: one batch id lands once, however many processes race on it, and
stays known after its snapshot is expired (toolkit.iceberg.ledger).

The race test runs two OS processes (``race_child.py``, each with its own Spark JVM) on
one embedded catalog; for every batch id both wait at a barrier and then ingest it at the
same moment. ``TOOLKIT_RELIABILITY=long`` races 100 ids instead of 12.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyiceberg.catalog import Catalog

import toolkit
from tests.integration.readers import read_duckdb
from tests.reliability import children
from toolkit.iceberg.ledger import (
    BATCH_ID_PROPERTY,
    WRITE_ID_PROPERTY,
    batch_id_of,
    decode,
    encode,
    ingested_batches,
    main_snapshots,
    publish,
    remember_batches,
)
from toolkit.spark.batches import WAP_ID

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

RACES = 100 if children.LONG_RUN else 12


@given(st.sets(st.text(min_size=1, max_size=30), max_size=40))
def test_the_ledger_property_keeps_every_batch_id(ids: set[str]) -> None:
    assert decode(encode(ids)) == ids


@pytest.mark.spark
def test_two_processes_racing_on_each_batch_id_land_each_once(
    tmp_path: Path, lakehouse: Catalog
) -> None:
    folder = tmp_path / "lake"
    toolkit.catalog(folder)  # both children open the same embedded catalog
    procs = [
        children.start("race_child.py",
                       [str(folder), "db.raced", str(RACES), f"{me}.json", me, other],
                       tmp_path, f"racer-{me}")
        for me, other in (("a", "b"), ("b", "a"))
    ]
    codes = children.wait(procs, timeout=180 + 6 * RACES)
    assert codes == [0, 0], "\n".join(p.output()[-3000:] for p in procs)

    reports = [json.loads((tmp_path / f"{me}.json").read_text()) for me in "ab"]
    for i in range(RACES):
        a, b = reports[0][i], reports[1][i]
        # exactly one of the two wrote batch i, the other was told it was there already
        assert sorted([a["skipped"], b["skipped"]]) == [False, True], (i, a, b)
        assert a["rows"] + b["rows"] == 3

    table = toolkit.catalog(folder).load_table("db.raced")
    rows = read_duckdb(table)
    assert Counter((r["batch"], r["n"]) for r in rows) == Counter(
        {(f"b{i}", n): 1 for i in range(RACES) for n in range(3)}
    )
    published = [batch_id_of(s) for s in main_snapshots(table)]
    assert sorted(published) == sorted(f"b{i}" for i in range(RACES))


def _stage(spark: SparkSession, cat: Catalog, name: str, batch: str, write_id: str) -> None:
    """What an ingest's append does before publishing: a staged snapshot of one row."""
    frame = spark.createDataFrame([(batch,)], "k string")
    spark.conf.set(WAP_ID, write_id)
    try:
        (frame.writeTo(f"{cat.name}.{name}")
         .option(f"snapshot-property.{BATCH_ID_PROPERTY}", batch)
         .option(f"snapshot-property.{WRITE_ID_PROPERTY}", write_id).append())
    finally:
        spark.conf.unset(WAP_ID)


@pytest.mark.spark
def test_a_batch_staged_before_another_writer_published_is_appended_on_top(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    """The other way a race ends: this process staged its rows, another published a
    different batch meanwhile; publishing then appends the staged files on top of it
    (no fast-forward over the other batch), and drops the staged snapshot."""
    name = "ledger.picked"
    toolkit.ingest([{"k": "b0"}], name, lakehouse, spark, batch_id="b0")
    _stage(spark, lakehouse, name, "late", "w-late")
    toolkit.ingest([{"k": "b1"}], name, lakehouse, spark, batch_id="b1")
    table = lakehouse.load_table(name)
    assert "late" not in ingested_batches(table)  # staged: no reader sees it yet
    assert sorted(r["k"] for r in read_duckdb(table)) == ["b0", "b1"]

    snap = publish(table, "w-late", "late")
    assert snap is not None and batch_id_of(snap) == "late"
    assert sorted(r["k"] for r in read_duckdb(table)) == ["b0", "b1", "late"]
    assert [batch_id_of(s) for s in table.snapshots()] == ["b0", "b1", "late"]

    _stage(spark, lakehouse, name, "late", "w-again")  # the same batch id, once more
    assert publish(lakehouse.load_table(name), "w-again", "late") is None
    table = lakehouse.load_table(name)
    assert sorted(r["k"] for r in read_duckdb(table)) == ["b0", "b1", "late"]
    assert [batch_id_of(s) for s in table.snapshots()] == ["b0", "b1", "late"]


@pytest.mark.spark
def test_a_batch_id_stays_known_after_its_snapshot_is_expired(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    name = "ledger.expired"
    for i in range(3):
        toolkit.ingest([{"n": i}], name, lakehouse, spark, batch_id=f"day{i}")
    table = remember_batches(lakehouse.load_table(name))
    old = [s.snapshot_id for s in table.snapshots()[:-1]]
    table.maintenance.expire_snapshots().by_ids(old).commit()
    table = lakehouse.load_table(name)
    assert [batch_id_of(s) for s in table.snapshots()] == ["day2"]

    again = toolkit.ingest([{"n": 0}], name, lakehouse, spark, batch_id="day0")
    assert again.skipped and again.rows_written == 0
    assert sorted(r["n"] for r in read_duckdb(lakehouse.load_table(name))) == [0, 1, 2]
    fresh = toolkit.ingest([{"n": 3}], name, lakehouse, spark, batch_id="day3")
    assert fresh.rows_written == 1
