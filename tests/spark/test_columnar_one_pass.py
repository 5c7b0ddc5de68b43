"""Typed sources in one pass (toolkit.pipeline.typed, toolkit.iceberg.new_tables): a new
table is made under a staging name from the plan of the batch's usual kinds, and kept only
when the batch's own counts plan the same table; the JVM counts classes as Spark's own
aggregation counts them. Whichever way a batch goes, the table is the simulation of the
same rows, and no staging table or file of one is left."""

from __future__ import annotations

import datetime as dt
import itertools
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

import pandas as pd
import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog

import toolkit
from tests.integration.readers import assert_table_is_the_simulation
from toolkit.iceberg.ledger import ingested_batches, main_snapshots
from toolkit.iceberg.new_tables import STAGING_MARK
from toolkit.pipeline import ingest as ingest_module
from toolkit.pipeline import typed as typed_module
from toolkit.pipeline.ingest import ingest
from toolkit.pipeline.sources import records_of

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

pytestmark = pytest.mark.spark

_UTC = dt.UTC
_NAMES = itertools.count()


def _name(what: str) -> str:
    return f"onepass.{what}_{next(_NAMES)}"


def _no_staging_left(lakehouse: Catalog) -> None:
    names = [t[-1] for t in lakehouse.list_tables("onepass")]
    assert not [n for n in names if STAGING_MARK in n], names


def _data_files_are_the_tables(lakehouse: Catalog, name: str) -> None:
    """Every data file in the table's folder is one of the table's: a staging table's
    files went with it."""
    table = lakehouse.load_table(name)
    folder = Path(urlparse(table.location()).path) / "data"
    on_disk = {str(p) for p in folder.rglob("*.parquet")}
    listed = {urlparse(p).path for p in table.inspect.files()["file_path"].to_pylist()}
    assert on_disk == listed


def test_a_typed_frame_makes_its_new_table_in_one_pass(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    frame = pd.DataFrame({
        "id": pd.array([1, 2, 3], dtype="int64"),
        "city": ["Lagos", None, "Paris"],
        "at": pd.to_datetime(["2024-06-01 10:00", "2024-06-02 11:30", None], utc=True),
    })
    name = _name("fresh")
    report = ingest(frame, name, lakehouse, spark, batch_id="day-1")
    assert (report.one_pass, report.routed_in, report.rows_written) == (True, "jvm", 3)
    assert sorted(c.column.name for c in report.plan.changes) == ["at", "city", "id"]
    assert_table_is_the_simulation(spark, lakehouse, name, toolkit.simulate([frame]))
    _no_staging_left(lakehouse)
    # laid out where a table of that name is made, with its batch in the ledger
    table = lakehouse.load_table(name)
    assert table.location().endswith("/onepass/" + name.split(".")[1])
    again = ingest(frame, name, lakehouse, spark, batch_id="day-1")
    assert again.skipped and again.rows_written == 0
    assert report.profile == toolkit.profile(frame)


@pytest.mark.parametrize("what", ["a date text", "a column of nulls", "no rows"])
def test_a_guess_the_batch_refutes_leaves_nothing_and_takes_two_passes(
    lakehouse: Catalog, spark: SparkSession, what: str
) -> None:
    frame = {
        "a date text": pd.DataFrame({"id": [1, 2], "day": ["x", "2024-01-02"]}),
        "a column of nulls": pd.DataFrame({"id": [1, 2],
                                           "note": pd.Series([None, None], dtype="string")}),
        "no rows": pd.DataFrame({"id": pd.Series([], dtype="int64")}),
    }[what]
    name = _name("refuted")
    report = ingest(frame, name, lakehouse, spark, batch_id="b0")
    assert not report.one_pass
    _no_staging_left(lakehouse)
    if what == "no rows":  # nothing to make a table of
        assert not lakehouse.table_exists(name)
        return
    assert_table_is_the_simulation(spark, lakehouse, name, toolkit.simulate([frame]))
    _data_files_are_the_tables(lakehouse, name)


def test_a_table_another_writer_made_meanwhile_takes_the_batch_after_its_own(
    lakehouse: Catalog, spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = _name("raced")
    theirs = [{"id": 7, "city": "Tokyo"}]
    mine = pa.table({"id": pa.array([1, 2], pa.int64()), "city": ["Lagos", "Paris"]})
    promote = ingest_module.promote

    def after_another_writer(cat: Catalog, staging: str, identifier: str) -> Any:
        ingest(theirs, identifier, cat, spark, batch_id="theirs")
        return promote(cat, staging, identifier)

    monkeypatch.setattr(ingest_module, "promote", after_another_writer)
    report = ingest(mine, name, lakehouse, spark, batch_id="mine")
    assert report.rows_written == 2 and report.plan.batch == 1  # after theirs
    assert_table_is_the_simulation(spark, lakehouse, name, toolkit.simulate([theirs, mine]))
    _no_staging_left(lakehouse)
    _data_files_are_the_tables(lakehouse, name)


@pytest.mark.parametrize("before", [0, 1], ids=["first batch", "a later batch"])
@pytest.mark.parametrize("change", ["adds a column", "widens a column"])
def test_what_another_writer_changes_while_a_batch_is_planned_is_in_the_table(
    lakehouse: Catalog, spark: SparkSession, monkeypatch: pytest.MonkeyPatch, change: str,
    before: int,
) -> None:
    """The steady one pass into a table Spark made: another writer changes the table after
    the batch loaded it, before the pass is written (Spark's view of the table is not the
    plan's then). A write Spark refuses (a column it has no data for) stages nothing; one
    it takes (an int column widened to bigint, which it casts the pass's nulls to) is
    dropped, whether Spark's view was loaded for this batch (the first of the schema) or
    seen alike by an earlier one (then the plan's check finds the table moved). The batch
    lands once either way, as the two passes land it on the table as it now is."""
    name = _name("changed")
    full = f"{lakehouse.name}.{name}"
    monkeypatch.setattr(typed_module, "_ALIKE", set())  # as in a new process
    spark.sql(f"CREATE TABLE {full} (id bigint, n int) USING iceberg")
    spark.sql(f"INSERT INTO {full} VALUES (1, 10)")
    for b in range(before):
        ingest(pa.table({"id": pa.array([2], pa.int64())}), name, lakehouse, spark,
               batch_id=f"b0{b}")
    alter = {"adds a column": "ADD COLUMN note string",
             "widens a column": "ALTER COLUMN n TYPE bigint"}[change]
    projection = typed_module.projection

    def after_another_writer(*args: Any, **kwargs: Any) -> Any:
        monkeypatch.setattr(typed_module, "projection", projection)  # once
        spark.sql(f"ALTER TABLE {full} {alter}")
        return projection(*args, **kwargs)

    monkeypatch.setattr(typed_module, "projection", after_another_writer)
    # (no `n`: the pass writes it null, typed as the plan has it)
    batch = pa.table({"id": pa.array([3, 4], pa.int64())})
    report = ingest(batch, name, lakehouse, spark, batch_id="b1")
    assert (report.rows_written, report.one_pass) == (2, False)
    assert sorted(map(tuple, spark.table(full).select("id", "n").collect()), key=str) == \
        [(1, 10)] + [(2, None)] * before + [(3, None), (4, None)]
    table = lakehouse.load_table(name)
    assert {s.snapshot_id for s in table.snapshots()} == \
        {s.snapshot_id for s in main_snapshots(table)}  # nothing staged is left
    assert ingested_batches(table) == {"b1", *(f"b0{b}" for b in range(before))}


def test_a_view_spark_cannot_load_drops_what_the_pass_staged(
    lakehouse: Catalog, spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Spark's view of the table is loaded while the pass writes; when loading it fails,
    the rows the pass staged are dropped and the two passes write the batch, once."""
    from concurrent.futures import Future

    name = _name("unviewed")
    ingest(pa.table({"id": pa.array([1], pa.int64())}), name, lakehouse, spark,
           batch_id="b0")
    monkeypatch.setattr(typed_module, "_ALIKE", set())  # as in a new process
    failed: list[Future[Any]] = []

    class Failing:
        def submit(self, _fn: Any) -> Future[Any]:
            failed.append(Future())
            failed[-1].set_exception(RuntimeError("the view could not be loaded"))
            return failed[-1]

    monkeypatch.setattr(typed_module, "_VIEWS", Failing())
    report = ingest(pa.table({"id": pa.array([2, 3], pa.int64())}), name, lakehouse, spark,
                    batch_id="b1")
    assert failed and (report.rows_written, report.one_pass) == (2, False)
    full = f"{lakehouse.name}.{name}"
    assert sorted(r.id for r in spark.table(full).collect()) == [1, 2, 3]
    table = lakehouse.load_table(name)
    assert {s.snapshot_id for s in table.snapshots()} == \
        {s.snapshot_id for s in main_snapshots(table)}  # nothing staged is left
    assert ingested_batches(table) == {"b0", "b1"}


@pytest.mark.parametrize(
    ("partitions", "copies"),
    [(3, 1), (12, 1), (2, 12)],
    ids=["three partitions", "empty partitions", "columns in several packs"],
)
def test_the_jvm_counts_classes_as_sparks_aggregation_counts_them(
    spark: SparkSession, partitions: int, copies: int
) -> None:
    from pyspark.sql import functions as F

    from toolkit.core.batch.options import Options
    from toolkit.spark.class_tally import counting, tally_counts
    from toolkit.spark.columnar import (
        TypedColumns,
        class_counts,
        classified,
        numbered,
        typed_columns,
    )

    # every class of a text, a long and a timestamp column, nulls, in three partitions
    rows = [
        ("x", 1, dt.datetime(2024, 1, 1, tzinfo=_UTC)),
        (None, 2**53 + 1, None),
        ("2024-01-01", None, dt.datetime(2024, 1, 1, 0, 0, 0, 1500, tzinfo=_UTC)),
        ("1999-12-31T10:00", -(2**63), dt.datetime(1, 1, 1, tzinfo=_UTC)),
        ("2024-02-30", 5, None),
        ("Jean-Paul", 2**62 + 1, dt.datetime(9999, 12, 31, tzinfo=_UTC)),
        (None, None, None),
    ]
    one = spark.sparkContext.parallelize(rows, partitions).toDF("s string, n long, t timestamp")
    options = Options()

    def classes(df: DataFrame) -> TypedColumns:
        typed = typed_columns(df)
        assert typed is not None
        return classified(typed, options)

    # Spark's aggregation counts one copy of the columns
    narrow = classes(one)
    _, aggs, keys = class_counts(narrow, options)
    expected = numbered(narrow.frame).agg(*aggs).collect()[0].asDict()
    assert len(keys) == 8  # text: 3 classes, long: 2, timestamp: 3
    # more columns than one long's digits hold are counted in packs of their own
    cols = classes(one.select(*(F.col(c).alias(f"{c}{i}") for i in range(copies) for c in "snt")))
    counts = counting(cols, options)
    assert counts is not None and len(counts.keys) == 8 * copies
    assert (counts.packs > 1) == (copies > 1)
    counts.lazy.frame.write.format("noop").mode("overwrite").save()
    found = tally_counts(counts)
    assert found["rows"] == 7 and sum(v for k, v in found.items() if k[0] == "p") == 7
    # a partition without rows sends nothing: its count is nobody's
    parts = {k: v for k, v in expected.items() if k[0] == "p" and v}
    for i in range(copies):  # every copy counted as the aggregation counts the first
        assert [(n[:-len(str(i))], c) for n, c in counts.keys[8 * i:8 * (i + 1)]] == keys
        mine = {f"{k[0]}{int(k[1:]) - 8 * i}": v for k, v in found.items()
                if k[0] in "kfl" and 8 * i <= int(k[1:]) < 8 * (i + 1)}
        assert {k: v for k, v in expected.items() if v is not None and k[0] in "kfl"} \
            == mine
    assert {k: v for k, v in found.items() if k[0] == "p"} == parts


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
def test_a_files_profile_in_one_pass_is_the_python_paths(
    fmt: str, lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    """The first rows of a Parquet or ORC file are read by Arrow while Spark plans the
    batch (no Spark job): the profile's samples, counts and spans are still the ones the
    Python path gives, into a new table and into one that holds the file's kinds, with a
    kind that first shows beyond those rows (read by a query of its own)."""
    import pyarrow.orc as po
    import pyarrow.parquet as pq

    n = 150
    table = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "v": pa.array([f"x{i}" for i in range(n - 3)] + ["2024-01-0" + str(d)
                                                          for d in (1, 2, 3)]),
    })
    paths = [tmp_path / f"b{i}.{fmt}" for i in range(2)]
    for p in paths:
        (po.write_table if fmt == "orc" else pq.write_table)(table, p)
    name = _name(fmt)
    reports = [ingest(str(p), name, lakehouse, spark, batch_id=f"b{i}")
               for i, p in enumerate(paths)]
    assert reports[1].one_pass
    for i, (report, p) in enumerate(zip(reports, paths, strict=True)):
        assert report.profile == toolkit.profile(records_of(str(p)), batch=i)
    assert_table_is_the_simulation(spark, lakehouse, name,
                                   toolkit.simulate([str(p) for p in paths]))


def test_batches_of_one_layout_under_other_options_route_by_their_own(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    """The Spark expressions of a layout are built once and kept (toolkit.spark.columnar);
    the same columns ingested under other options get expressions of their own: date texts
    are dates, or strings with detection off, and timestamps become epoch seconds or
    milliseconds, each table as its simulation says."""
    import pyarrow.parquet as pq

    day = dt.datetime(2024, 3, 1, 12, 0, 0, 250_000, tzinfo=_UTC)
    first = pa.table({"v": ["2024-01-01", "x", None], "at": [day, None, day]})
    second = pa.table({"v": ["y", "2024-02-02", "z"], "at": [None, day, day]})
    paths = [tmp_path / "a.parquet", tmp_path / "b.parquet"]
    for table, p in zip((first, second), paths, strict=True):
        pq.write_table(table, p)
    for options in ({}, {"detect_dates": False}, {"timestamp_unit": "s"},
                    {"timestamp_unit": "us"}):
        name = _name("options")
        reports = [ingest(str(p), name, lakehouse, spark, batch_id=f"b{i}", **options)
                   for i, p in enumerate(paths)]
        assert [r.routed_in for r in reports] == ["jvm", "jvm"]
        assert_table_is_the_simulation(
            spark, lakehouse, name, toolkit.simulate([str(p) for p in paths], **options))


def test_a_session_without_the_toolkits_jvm_helpers_routes_typed_batches_all_the_same(
    lakehouse: Catalog, spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Spark session the toolkit did not start has none of ``jvm/*.java``: a typed
    batch then takes two passes, each step a DataFrame of its own, and lands the same."""
    from toolkit.spark import tally
    from toolkit.spark.class_tally import CLASS_TALLY
    from toolkit.spark.plans import PLANS

    found = tally.jvm_class
    missing = {PLANS, CLASS_TALLY}
    monkeypatch.setattr(tally, "jvm_class",
                        lambda s, name: None if name in missing else found(s, name))
    day1 = pd.DataFrame({"id": pd.array([1, 2], dtype="int32"), "city": ["Lagos", None]})
    day2 = pd.DataFrame({"id": pd.array([3], dtype="int32"), "city": ["2024-06-01"]})
    name = _name("no_helpers")
    first = ingest(day1, name, lakehouse, spark)
    second = ingest(day2, name, lakehouse, spark)
    assert (first.one_pass, second.one_pass) == (False, False)
    assert (first.routed_in, second.routed_in) == ("jvm", "jvm")
    assert_table_is_the_simulation(spark, lakehouse, name, toolkit.simulate([day1, day2]))


@pytest.mark.parametrize(("rows", "partitions", "kept"), [
    (100, 5, True),  # the first rows span the first partitions
    (3, 4, True),  # partitions without rows among them
    (100, 10, False),  # beyond the partitions whose rows are kept: a job reads them
])
def test_a_dataframes_first_rows_are_kept_by_the_write_that_reads_them(
    rows: int, partitions: int, kept: bool, lakehouse: Catalog, spark: SparkSession,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A typed DataFrame's profile in one pass has the Python path's samples, counts and
    spans: its first rows are kept as the write reads them (jvm/HeadRows.java), in the
    order of its partitions, with no job of their own when they are all in the first
    partitions."""
    from toolkit.pipeline import typed as typed_module

    data = [(i, f"x{i}" if i < rows - 2 else "2024-01-0" + str(i % 9 + 1),
             dt.datetime(2024, 1, 1, i % 24, tzinfo=_UTC), None if i % 3 else float(i) / 7)
            for i in range(rows)]
    df = spark.sparkContext.parallelize(data, partitions).toDF(
        "id long, v string, at timestamp, f double")
    jobs: list[int] = []
    head_records = typed_module.head_records
    monkeypatch.setattr(typed_module, "head_records",
                        lambda cols: jobs.append(1) or head_records(cols))
    name = _name("frame")
    reports = [ingest(df, name, lakehouse, spark, batch_id=f"b{i}") for i in range(2)]
    assert reports[1].one_pass  # the first: a date among the texts refutes the guess
    assert not jobs if kept else jobs
    for i, report in enumerate(reports):
        assert report.profile == toolkit.profile(df, batch=i)
    assert_table_is_the_simulation(spark, lakehouse, name, toolkit.simulate([df, df]))
