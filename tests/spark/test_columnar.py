"""The columnar path of typed sources (toolkit.spark.columnar): a table ingested from typed
frames and files through it is the simulation of the same rows, read back by Spark,
PyIceberg and DuckDB; what it cannot do exactly goes through the Python path (and is
still the simulation), never through a guess."""

from __future__ import annotations

import datetime as dt
import itertools
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa
import pyarrow.orc as po
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyiceberg.catalog import Catalog

import toolkit
from tests.integration.readers import assert_table_is_the_simulation
from toolkit.pipeline.ingest import ingest
from toolkit.pipeline.sources import records_of

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

_UTC = dt.UTC
_TABLES = itertools.count()

#: values of each Arrow type: extremes, the edges of RULES 2's exactness, nulls
_INT64 = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    st.sampled_from([0, 2**53, 2**53 + 1, -(2**53) - 1, 2**62, 2**63 - 1, -(2**63)]),
)
_TEXT = st.one_of(
    st.sampled_from([
        "x", "", "2024-01-01", "1999-12-31", "2024-02-30", "0000-01-01", "Jean-Paul",
        "héllo", "2024-13-01", "0001-01-01", "9999-12-31",
    ]),
    st.text(max_size=6),
)
_STAMPS = st.datetimes(dt.datetime(1900, 1, 1), dt.datetime(2200, 1, 1)).map(
    lambda d: d.replace(tzinfo=_UTC))
_WHOLE_MS = _STAMPS.map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000))
#: name -> (Arrow type, values)
TYPES: dict[str, tuple[pa.DataType, st.SearchStrategy[Any]]] = {
    "bool": (pa.bool_(), st.booleans()),
    "int8": (pa.int8(), st.integers(-128, 127)),
    "int16": (pa.int16(), st.integers(-(2**15), 2**15 - 1)),
    "int32": (pa.int32(), st.integers(-(2**31), 2**31 - 1)),
    "int64": (pa.int64(), _INT64),
    "uint8": (pa.uint8(), st.integers(0, 255)),
    "uint32": (pa.uint32(), st.integers(0, 2**32 - 1)),
    "float32": (pa.float32(), st.floats(width=32, allow_nan=False)),
    "float64": (pa.float64(), st.floats(allow_nan=False)),
    "string": (pa.string(), _TEXT),
    "date": (pa.date32(), st.dates(dt.date(1, 1, 1), dt.date(9999, 12, 31))),
    "timestamp": (pa.timestamp("us", "UTC"), st.one_of(_STAMPS, _WHOLE_MS)),
    "decimal": (pa.decimal128(10, 2), st.decimals(-(10**7), 10**7, places=2,
                                                  allow_nan=False, allow_infinity=False)),
}
#: types every file format here writes and reads back as the same type
ORC_TYPES = ("bool", "int8", "int16", "int32", "int64", "float32", "float64", "string",
             "date", "decimal")


#: Spark refuses to read dates before 1582-10-15 from an ORC file it did not write (its
#: calendar rebase, SPARK-31404; ingest and a plain Spark read alike). Parquet files are
#: read as they hold them (files.PARQUET_OPTIONS; test_foreign_files), but one strategy
#: serves both formats here
_FILE_DATES = st.dates(dt.date(1900, 1, 1), dt.date(9999, 12, 31))


@st.composite
def typed_table(
    draw: st.DrawFn, types: tuple[str, ...] = tuple(TYPES), files: bool = False
) -> pa.Table:
    """A small Arrow table: 1 to 3 columns named among a few (so two tables may give one
    name two types: drift), each of one random type, with nulls."""
    n = draw(st.integers(1, 5))
    names = draw(st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=3,
                          unique=True))
    columns = {}
    for i, name in enumerate(sorted(names)):
        arrow_type, values = TYPES[draw(st.sampled_from(types))]
        if files and pa.types.is_date(arrow_type):
            values = _FILE_DATES
        cells = draw(st.lists(st.one_of(st.none(), values), min_size=n, max_size=n))
        if i == 0:  # a value: a table of no column takes no row on any path (known)
            cells[0] = draw(values)
        columns[name] = pa.array(cells, arrow_type)
    return pa.table(columns)


def _as_source(table: pa.Table, how: str, folder: Path, spark: SparkSession) -> Any:
    """``table`` as a source of kind ``how``, and the same rows as ``simulate`` reads them
    (the file itself for files; the Spark DataFrame's own Parquet file)."""
    if how == "arrow":
        return table, table
    if how == "pandas":
        frame = table.to_pandas()
        return frame, frame
    path = folder / f"t{next(_TABLES)}.{'orc' if how == 'orc' else 'parquet'}"
    if how == "orc":
        po.write_table(table, path)
    else:
        pq.write_table(table, path)
    if how == "spark":
        return spark.read.parquet(str(path)), str(path)
    return str(path), str(path)


@pytest.mark.parametrize("how", ["arrow", "pandas", "parquet", "orc", "spark"])
@settings(max_examples=4, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_typed_batches_ingest_as_they_simulate(
    how: str, data: st.DataObject, lakehouse: Catalog, spark: SparkSession,
    tmp_path: Path,
) -> None:
    types = ORC_TYPES if how == "orc" else tuple(TYPES)
    files = how in ("parquet", "orc", "spark")
    tables = [data.draw(typed_table(types, files)) for _ in range(2)]
    name = f"columnar.t{next(_TABLES)}"
    sim_batches = []
    for i, table in enumerate(tables):
        source, simulated = _as_source(table, how, tmp_path, spark)
        ingest(source, name, lakehouse, spark, batch_id=f"b{i}")
        sim_batches.append(simulated)
    assert_table_is_the_simulation(spark, lakehouse, name, toolkit.simulate(sim_batches))


def test_a_typed_parquet_file_is_profiled_and_routed_without_python(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    table = pa.table({
        "id": pa.array([1, 2**53 + 1, None], pa.int64()),
        "n": pa.array([1, -2, 3], pa.int32()),
        "day": pa.array(["2024-01-01", "not a day", None]),
        "at": pa.array([dt.datetime(2024, 1, 1, 0, 0, 0, 1500, tzinfo=_UTC), None,
                        dt.datetime(2024, 1, 2, tzinfo=_UTC)], pa.timestamp("us", "UTC")),
        "amount": pa.array([Decimal("1.10"), None, Decimal("-2.00")], pa.decimal128(9, 2)),
    })
    path = tmp_path / "day1.parquet"
    pq.write_table(table, path)
    first = ingest(str(path), "columnar.parquet", lakehouse, spark, batch_id="b0")
    # a second batch: a long into the long column, a date text into the date and
    # string columns, a boolean into the long column (RULES 2: boolean <= long)
    second = pa.table({"id": pa.array([7], pa.int64()), "day": pa.array(["2024-02-29"]),
                       "n": pa.array([True])})
    path2 = tmp_path / "day2.parquet"
    pq.write_table(second, path2)
    report = ingest(str(path2), "columnar.parquet", lakehouse, spark, batch_id="b1")
    assert (first.routed_in, report.routed_in) == ("jvm", "jvm")
    sim = toolkit.simulate([str(path), str(path2)])
    assert_table_is_the_simulation(spark, lakehouse, "columnar.parquet", sim)
    counts = {p[0]: dict(s.counts) for p, s in first.profile.fields.items()}
    assert {str(k): n for k, n in counts["day"].items()} == {"date": 1, "string": 1}
    # the profile is the Python path's: counts per type, nulls, the first samples
    assert first.profile == toolkit.profile(records_of(str(path)))


@pytest.mark.parametrize(
    ("batches", "why"),
    [
        # a double into a string column: Python's round-trip text is not Spark's
        ([{"v": [1.5, 2.0]}, {"v": ["x"]}, {"v": [0.1, 1e16]}], "double -> string"),
        # texts that may be date-times are typed value by value
        ([{"v": ["2024-01-01T10:00:00Z", "x"]}], "date-time texts"),
        # a long into a timestamp column (RULES 2's exception, read by magnitude)
        ([{"v": pd.to_datetime(["2024-01-01"], utc=True)}, {"v": [1_700_000_000]}],
         "long -> timestamp"),
    ],
    ids=["double-to-string", "date-time-texts", "long-to-timestamp"],
)
def test_what_no_projection_does_exactly_goes_through_the_python_path(
    batches: list[dict[str, Any]], why: str, lakehouse: Catalog, spark: SparkSession
) -> None:
    name = f"columnar.fallback{next(_TABLES)}"
    frames = [pd.DataFrame(b) for b in batches]
    reports = [ingest(f, name, lakehouse, spark, batch_id=f"b{i}")
               for i, f in enumerate(frames)]
    assert reports[-1].routed_in == "python", why
    assert_table_is_the_simulation(spark, lakehouse, name, toolkit.simulate(frames))


def test_an_object_column_of_drifting_values_is_typed_value_by_value(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    frame = pd.DataFrame({"v": [1, "two", 3.5, None], "n": [1, 2, 3, 4]})
    report = ingest(frame, "columnar.drifting", lakehouse, spark, batch_id="b0")
    assert report.routed_in == "python"
    assert_table_is_the_simulation(spark, lakehouse, "columnar.drifting",
                                   toolkit.simulate([frame]))


def test_the_widening_policy_keeps_the_python_path(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    frame = pd.DataFrame({"n": pd.array([1, 2], dtype="int32")})
    report = ingest(frame, "columnar.widen", lakehouse, spark, batch_id="b0", policy="widen")
    assert report.routed_in == "python"
    assert_table_is_the_simulation(spark, lakehouse, "columnar.widen",
                                   toolkit.simulate([frame], policy="widen"))


def test_a_batch_that_fits_its_table_is_profiled_and_written_in_one_pass(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    day = pa.table({
        "id": pa.array([1, 2, None], pa.int64()),
        "at": pa.array([dt.datetime(2024, 1, 1, 0, 0, 0, 1500, tzinfo=_UTC), None,
                        dt.datetime(2024, 1, 2, tzinfo=_UTC)], pa.timestamp("us", "UTC")),
        "day": pa.array(["2024-01-01", "x", None]),
    })
    path = tmp_path / "steady.parquet"
    pq.write_table(day, path)
    # a batch whose texts are all dates: the table's date and string columns take it
    dates = pa.table({"day": pa.array(["2024-03-01", None])})
    drift = pa.table({"id": pa.array(["not a number"])})  # the table must change
    batches = [str(path), str(path), dates, drift]
    reports = [ingest(b, "columnar.steady", lakehouse, spark, batch_id=f"b{i}")
               for i, b in enumerate(batches)]
    assert [r.one_pass for r in reports] == [False, True, True, False]
    assert [r.routed_in for r in reports] == ["jvm"] * 4
    assert reports[3].plan.changed  # its staged rows were dropped and routed again
    # the one pass profiles as the two passes do
    assert reports[1].profile == toolkit.profile(records_of(str(path)), batch=1)
    assert_table_is_the_simulation(spark, lakehouse, "columnar.steady",
                                   toolkit.simulate(batches))


def test_where_drift_starts_counts_records_across_spark_partitions(
    spark: SparkSession,
) -> None:
    from toolkit.core.batch.options import Options
    from toolkit.spark.columnar import observe_typed, typed_columns

    # texts in three partitions of three: the date texts open the second and end the third
    days = ["x", None, "y", "2024-01-01", "z", None, "w", "2024-02-01", "v"]
    records = [{"day": d} for d in days]
    df = spark.sparkContext.parallelize([(d,) for d in days], 3).toDF("day string")
    assert df.rdd.getNumPartitions() == 3
    cols = typed_columns(df)
    assert cols is not None
    found = observe_typed(cols, Options(), 0)
    assert found is not None
    _, prof, _ = found
    assert prof == toolkit.profile(records)
    assert prof.first_seen("day") == {"string": 1, "date": 4}
    assert prof.last_seen("day") == {"date": 8, "string": 9}  # counted across partitions
