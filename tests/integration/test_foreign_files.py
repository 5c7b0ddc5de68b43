"""Parquet and ORC files as other systems write them, with columns Spark 3.5 reads otherwise
than ``simulate`` does (``toolkit.spark.misreads``): ``ingest(path)`` still gives what
``simulate([path])`` gives, read back by Spark, DuckDB and PyIceberg. Spark refuses
nanosecond timestamps, times of day, UUIDs and 16-bit floats, reads unsigned 64-bit
integers as decimals, drops the nanoseconds of INT96 and ORC timestamps, and refuses
columns whose names differ only by case; each case
below failed, or landed changed, before such files were read by Arrow."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import uuid
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog import Catalog

import toolkit
from tests.integration.readers import assert_table_is_the_simulation
from tests.integration.test_file_sources import run_stream
from toolkit.errors import SourceFormatError
from toolkit.pipeline.ingest import ingest
from toolkit.pipeline.sources import kind_of, records_of, source_kind
from toolkit.spark.misreads import spark_misread

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

NS = 1_700_000_000_123_456_789  # 2023-11-14T22:13:20.123456789Z
WHOLE_US = 1_700_000_000_123_456_000


def _u64(path: Path) -> Path:
    pq.write_table(pa.table({"id": pa.array([0, 2**64 - 1, 2**63, None], pa.uint64()),
                             "n": [1, 2, 3, 4]}), path)
    return path


def _nested_u64(path: Path) -> Path:
    kind = pa.struct([("a", pa.uint64()), ("b", pa.string())])
    pq.write_table(pa.table({"s": pa.array([{"a": 1, "b": "x"}, {"a": 2**64 - 1, "b": None}],
                                           kind)}), path)
    return path


def _nanos(path: Path) -> Path:
    pq.write_table(pa.table({"t": pa.array([NS, 0, None], pa.timestamp("ns", "UTC"))}), path)
    return path


def _int96(path: Path) -> Path:
    pq.write_table(pa.table({"t": pa.array([0, NS, -1, None], pa.timestamp("ns"))}), path,
                   use_deprecated_int96_timestamps=True)
    return path


def _time(path: Path) -> Path:
    pq.write_table(pa.table({"t": pa.array([dt.time(1, 2, 3, 4), None], pa.time64("us"))}),
                   path)
    return path


def _uuid(path: Path) -> Path:
    ids = pa.array([uuid.UUID(int=1).bytes, None], pa.uuid())
    pq.write_table(pa.table({"u": ids, "n": [1, 2]}), path)
    return path


def _float16(path: Path) -> Path:
    pq.write_table(pa.table({"h": pa.array([np.float16(1.5), None, np.float16(-2)],
                                           pa.float16())}), path)
    return path


def _orc_nanos(path: Path) -> Path:
    po.write_table(pa.table({"t": pa.array([0, NS, None], pa.timestamp("ns")),
                             "n": [1, 2, 3]}), path)
    return path


def _wide_decimal(path: Path) -> Path:
    digits = pa.array([Decimal("1" * 50), None, Decimal("-2.5")], pa.decimal256(60, 1))
    pq.write_table(pa.table({"d": digits}), path)
    return path


def _case(path: Path) -> Path:
    pq.write_table(pa.table({"a": [1, 2], "A": ["x", "y"]}), path)
    return path


def _nested_case(path: Path) -> Path:
    kind = pa.struct([("x", pa.int64()), ("X", pa.string())])
    po.write_table(pa.table({"s": pa.array([{"x": 1, "X": "a"}, None], kind)}), path)
    return path


#: name -> (file writer, the column Spark misreads, what it does to it)
FOREIGN: dict[str, tuple[Callable[[Path], Path], str, str]] = {
    "u64.parquet": (_u64, "id", "unsigned 64-bit integers, which Spark reads as decimals"),
    "nested.parquet": (_nested_u64, "s.a", "unsigned 64-bit integers"),
    "nanos.parquet": (_nanos, "t", "timestamps in nanoseconds, which Spark cannot read"),
    "int96.parquet": (_int96, "t", "digits below the microsecond, which Spark drops"),
    "time.parquet": (_time, "t", "times of day, which Spark cannot read"),
    "uuid.parquet": (_uuid, "u", "UUIDs, which Spark cannot read"),
    "float16.parquet": (_float16, "h", "16-bit floats, which Spark cannot read"),
    "nanos.orc": (_orc_nanos, "t", "digits below the microsecond, which Spark drops"),
    "decimal.parquet": (_wide_decimal, "d", "decimals of more than 38 digits, which Spark"),
    "case.parquet": (_case, "A", "but for case, which Spark cannot tell apart"),
    "case.orc": (_nested_case, "s.X", "but for case, which Spark cannot tell apart"),
}


@pytest.mark.parametrize("name", sorted(FOREIGN))
def test_each_column_spark_would_misread_is_named(name: str, tmp_path: Path) -> None:
    write, column, words = FOREIGN[name]
    path = write(tmp_path / name)
    found = spark_misread([path], path.suffix[1:])
    assert found is not None and (found.file, found.column) == (path, column)
    assert words in found.why and words in str(found)
    assert source_kind(path).mode == "pickle"  # its records travel as simulate reads them


def test_what_spark_cannot_read_at_all_is_told_from_what_it_reads_otherwise(
    tmp_path: Path
) -> None:
    """A stream's schema is inferred from the files Spark can read at all: a refused
    column (case twins too: COLUMN_ALREADY_EXISTS) keeps its file out of the inference."""
    refused = {name: found.refused for name, (write, _, _) in FOREIGN.items()
               if (found := spark_misread([write(tmp_path / name)], name.split(".")[1]))}
    assert sorted(n for n, r in refused.items() if not r) == [
        "int96.parquet", "nanos.orc", "nested.parquet", "u64.parquet"]
    assert len(refused) == len(FOREIGN)


def test_files_spark_reads_alike_stay_with_spark(tmp_path: Path) -> None:
    """INT96 and ORC timestamps of whole microseconds (what Spark and Hive write) lose
    nothing in Spark, nor do signed integers, dates and nested lists."""
    int96 = tmp_path / "whole.parquet"
    pq.write_table(pa.table({"t": pa.array([WHOLE_US, None], pa.timestamp("ns"))}), int96,
                   use_deprecated_int96_timestamps=True)
    orc = tmp_path / "whole.orc"
    po.write_table(pa.table({"t": pa.array([WHOLE_US], pa.timestamp("ns"))}), orc)
    plain = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"i": pa.array([1], pa.int64()), "u": pa.array([1], pa.uint32()),
                             "d": pa.array([dt.date(2024, 1, 2)]),
                             "l": pa.array([[dt.datetime(2024, 1, 2)]])}), plain)
    for path in (int96, orc, plain):
        assert spark_misread([path], path.suffix[1:]) is None
        assert source_kind(path).name == path.suffix[1:] and source_kind(path).mode == "rows"
    # a folder with one misread file among others is read by Arrow, all of it
    folder = tmp_path / "landing"
    folder.mkdir()
    (folder / "a.parquet").write_bytes(plain.read_bytes())
    _u64(folder / "b.parquet")
    assert source_kind(folder).name == "parquet-read-here"
    assert kind_of(folder, "parquet").name == "parquet-read-here"  # named, still read here


@pytest.mark.spark
@pytest.mark.parametrize("name", sorted(FOREIGN))
def test_ingest_of_a_foreign_file_is_its_simulation(
    name: str, lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    path = FOREIGN[name][0](tmp_path / name)
    table = f"foreign.{path.stem}_{path.suffix[1:]}"
    report = ingest(path, table, lakehouse, spark)
    sim = toolkit.simulate([path])
    assert report.plan.changes == sim.plans[0].changes
    assert report.rows_written == len(sim.rows)
    assert_table_is_the_simulation(spark, lakehouse, table, sim)


@pytest.mark.spark
def test_the_nanoseconds_of_foreign_timestamps_are_kept(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    """What a user checks: the digits Spark would drop are in the table."""
    for name in ("int96.parquet", "nanos.orc"):
        path = FOREIGN[name][0](tmp_path / name)
        table = f"foreign.kept_{path.suffix[1:]}"
        ingest(path, table, lakehouse, spark)
        texts = lakehouse.load_table(table).scan().to_arrow().column("t").to_pylist()
        assert "2023-11-14T22:13:20.123456789" in texts
    u64 = _u64(tmp_path / "big.parquet")
    ingest(u64, "foreign.big", lakehouse, spark)
    got = lakehouse.load_table("foreign.big").scan().to_arrow().column("id").to_pylist()
    assert "18446744073709551615" in got  # beyond a long: its text (RULES 1), no decimal


@pytest.mark.spark
def test_a_stream_of_foreign_files_is_read_by_arrow_as_ingest_reads_them(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    """A landing folder fed by another system: Spark's stream hands each micro-batch's
    files over, and those it would misread are read by Arrow."""
    landing, checkpoint = tmp_path / "landing", tmp_path / "checkpoint"
    landing.mkdir()
    plain = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"n": [7], "t": pa.array([WHOLE_US], pa.timestamp("ns", "UTC"))}),
                   plain, use_deprecated_int96_timestamps=True)
    wave1 = [drop_file(plain, landing)]
    reports1 = run_stream(landing, "foreign.streamed", lakehouse, spark, checkpoint)
    wave2 = [drop_file(_int96(tmp_path / "b.parquet"), landing),
             drop_file(_u64(tmp_path / "c.parquet"), landing)]
    reports2 = run_stream(landing, "foreign.streamed", lakehouse, spark, checkpoint)
    assert [r.rows_written for r in reports1 + reports2] == [1, 8]
    sim = toolkit.simulate([records_of(p) for p in wave1] + [
        [r for p in wave2 for r in records_of(p)]])
    assert_table_is_the_simulation(spark, lakehouse, "foreign.streamed", sim)
    rows = lakehouse.load_table("foreign.streamed").scan().to_arrow()
    # what Spark's stream would drop; the table had `t` as timestamps from wave 1
    assert "2023-11-14T22:13:20.123456789" in rows.column("t_string").to_pylist()


def drop_file(path: Path, folder: Path) -> Path:
    """Move a written file into the landing folder whole (what a stream needs)."""
    return Path(shutil.move(path, folder / path.name))


def test_a_micro_batchs_files_are_read_from_the_streams_own_log(tmp_path: Path) -> None:
    """Spark's file source logs each micro-batch's files before it runs, every tenth log
    compacted with the earlier ones (lines as Spark 3.5 writes them)."""
    from toolkit.pipeline.stream import _batch_files

    log = tmp_path / "checkpoint" / "sources" / "0"
    log.mkdir(parents=True)
    entry = '{{"path":"file://{}","timestamp":1795883390737,"batchId":{}}}'
    (log / "3").write_text("v1\n" + entry.format(tmp_path / "a%20b%25.parquet", 3) + "\n")
    (log / "9.compact").write_text("v1\n" + "\n".join(
        entry.format(tmp_path / f"{i}.parquet", i) for i in (8, 9, 9)))
    checkpoint = str(tmp_path / "checkpoint")
    assert _batch_files(checkpoint, 3) == [tmp_path / "a b%.parquet"]
    assert _batch_files(checkpoint, 9) == [tmp_path / "9.parquet"] * 2
    assert _batch_files(checkpoint, 4) is None  # not logged: Spark reads the batch
    assert _batch_files("s3://bucket/checkpoint", 3) is None


@pytest.mark.spark
def test_frames_with_names_that_differ_only_by_case(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    """A pandas frame keeps `a` and `A` apart, as simulate does (the second name gets a
    column of its own, RULES 3); a Spark DataFrame can be read so only by a session that
    minds case, and anything else is refused in plain words, never half read."""
    import pandas as pd

    frame = pd.DataFrame({"a": [1, 2], "A": ["x", "y"]})
    ingest(frame, "foreign.cased_frame", lakehouse, spark)
    assert_table_is_the_simulation(spark, lakehouse, "foreign.cased_frame",
                                   toolkit.simulate(frame))
    df = spark.createDataFrame([(1, "x")], "a long, A string")
    with pytest.raises(SourceFormatError, match=r"column 'A' has another column's name but "
                       r"for case.*spark.sql.caseSensitive is off"):
        ingest(df, "foreign.cased_df", lakehouse, spark)
    assert not lakehouse.table_exists("foreign.cased_df")
    spark.conf.set("spark.sql.caseSensitive", "true")
    try:
        report = ingest(df, "foreign.cased_df", lakehouse, spark)
    finally:
        spark.conf.unset("spark.sql.caseSensitive")
    assert [c.column.name for c in report.plan.changes] == ["A", "a_2"]
    assert lakehouse.load_table("foreign.cased_df").scan().to_arrow().to_pylist() == [
        {"A": "x", "a_2": 1}]


@pytest.mark.spark
def test_dataframes_with_intervals(lakehouse: Catalog, spark: SparkSession) -> None:
    """Spark's two interval types, as another job's DataFrame may hold them. Days to
    seconds reach Python as a ``timedelta``, which no column type holds: the record goes
    to the quarantine with every value, as simulate sets it aside. (Years to months:
    test_dataframes_spark_cannot_hand_to_python.)"""
    days = spark.sql("select array(interval '1' day) as a, 1 as id")
    report = ingest(days, "foreign.day_intervals", lakehouse, spark)
    assert (report.rows_written, report.quarantined) == (0, 1)
    (held,) = toolkit.quarantine(lakehouse, "foreign.day_intervals").rows
    assert held.field == "a" and "timedelta(days=1)" in held.detail
    assert json.loads(held.raw) == {"a": ["datetime.timedelta(days=1)"], "id": 1}


@pytest.mark.spark
def test_a_dataframe_of_one_text_column_that_is_no_json(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    """A DataFrame of one string column is JSON lines (``spark.read.text``, a Kafka value):
    one of city names lands nothing, its lines in the quarantine, and the report says why
    and what to pass; the profile says its lines were set aside, where it said 0 records
    and nothing else."""
    cities = spark.sql("select 'Berlin' as city union all select 'Paris'")
    report = ingest(cities, "foreign.cities", lakehouse, spark)
    assert (report.rows_written, report.quarantined) == (0, 2)
    assert report.warnings == (
        "no line of the DataFrame's one string column 'city' was a JSON object, so 2 lines "
        "went to the quarantine: a DataFrame of one string column is read as JSON lines; to "
        'land its text as a column instead, pass format="dataframe"',)
    assert str(toolkit.profile(cities)).startswith(
        "0 records; 2 lines set aside, not profiled\n")
    report = ingest(cities, "foreign.cities_text", lakehouse, spark, format="dataframe")
    assert report.rows_written == 2 and not report.warnings
    lines = spark.sql("""select '{"a": 1}' as value union all select 'not json'""")
    assert ingest(lines, "foreign.some_json", lakehouse, spark).warnings == ()


#: DataFrames whose rows Spark cannot hand to Python, and what their refusal says
_UNREADABLE = {
    # year-month intervals: a worker died on their Arrow type, which pyarrow cannot read
    "months": ("select array(interval '1-2' year to month) as a, 1 as id",
               r"column 'a' holds year-month intervals.*cast them to strings"),
    "months in a record": ("select named_struct('x', interval '3' year) as s",
                           r"column 's.x' holds year-month intervals.*cast them to strings"),
    # a repeated name: a worker died on Arrow's error for a nested one, and a top-level
    # one was called a name that differs only by case, with a setting that could not help
    "twins": ("select 1 as a, 2 as a",
              r"two fields named 'a' side by side: a record holds one field a name"),
    "twins in a record": ("select named_struct('a', 1, 'a', 2) as s, 1 as id",
                          r"two fields named 's.a' side by side"),
    "twins in an array": ("select array(named_struct('k', 1, 'k', 'x')) as l",
                          r"two fields named 'l.k' side by side"),
}


@pytest.mark.spark
@pytest.mark.parametrize("case", list(_UNREADABLE))
def test_dataframes_spark_cannot_hand_to_python(
    lakehouse: Catalog, spark: SparkSession, case: str
) -> None:
    """Refused before anything is read or made, naming the field at its depth, by
    ingest, profile and simulate alike."""
    query, refusal = _UNREADABLE[case]
    frame = spark.sql(query)
    with pytest.raises(SourceFormatError, match=refusal):
        ingest(frame, "foreign.unreadable", lakehouse, spark)
    with pytest.raises(SourceFormatError, match=refusal):
        toolkit.profile(frame)
    with pytest.raises(SourceFormatError, match=refusal):
        toolkit.simulate([frame])
    assert not lakehouse.table_exists("foreign.unreadable")


@pytest.mark.spark
def test_parquet_dates_before_the_gregorian_calendar(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    """Dates before 1582-10-15 and timestamps before 1900 in a Parquet file no Spark 3
    wrote (0001-01-01 is a common 'no date' of other systems): Spark refused the whole
    file, suspecting a legacy calendar; they land as the file holds them, as simulate,
    PyIceberg and DuckDB read them."""
    path = tmp_path / "ancient.parquet"
    pq.write_table(pa.table({
        "d": pa.array([dt.date(1, 1, 1), dt.date(1000, 3, 1), dt.date(1582, 10, 4), None]),
        "t": pa.array([dt.datetime(1800, 1, 1, 12), dt.datetime(1500, 3, 1), None, None],
                      pa.timestamp("us")),
    }), path)
    ingest(str(path), "foreign.ancient", lakehouse, spark)
    assert_table_is_the_simulation(spark, lakehouse, "foreign.ancient",
                                   toolkit.simulate([str(path)]))
    rows = lakehouse.load_table("foreign.ancient").scan().to_arrow().to_pylist()
    assert [r["d"] for r in rows] == [dt.date(1, 1, 1), dt.date(1000, 3, 1),
                                      dt.date(1582, 10, 4), None]


@pytest.mark.spark
def test_int96_timestamps_beyond_the_nanosecond_range(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    """INT96 timestamps (Impala, Hive) before 1677 or after 2262: Arrow reads INT96 in
    nanoseconds and they overflowed into other instants (1500-03-01 read as 2084-09-17),
    in simulate and ingest alike, without a word. They are each the instant written."""
    path = tmp_path / "impala.parquet"
    written = [dt.datetime(1500, 3, 1, 0, 0, 0, 123, tzinfo=dt.UTC),
               dt.datetime(9999, 12, 31, 23, 59, 59, tzinfo=dt.UTC),
               dt.datetime(2024, 1, 1, tzinfo=dt.UTC), None]
    pq.write_table(pa.table({"t": pa.array(written, pa.timestamp("us", "UTC"))}), path,
                   use_deprecated_int96_timestamps=True)
    sim = toolkit.simulate([str(path)])
    assert [r["t"] for r in sim.rows] == written
    ingest(str(path), "foreign.impala", lakehouse, spark)
    assert_table_is_the_simulation(spark, lakehouse, "foreign.impala", sim)
