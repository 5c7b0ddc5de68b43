"""A Parquet file's schema read from its footer (toolkit.spark.parquet_footer) is the one
Spark's own inference gives, or None: on files written by Arrow (every type it writes,
old and new Parquet versions) and by Spark; the rows read under it are Spark's own."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from toolkit.pipeline.files import dataframe
from toolkit.spark.parquet_footer import footer_schema

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

_AT = dt.datetime(2024, 6, 1, 10, 30, 15, 123456)

#: (type, two values, whether the footer types it: False means Spark infers it, "1.0"
#: only in Parquet 1.0 files, where Arrow writes it as a plainer type)
_COLUMNS: dict[str, tuple[pa.DataType, list[Any], bool | str]] = {
    "bool": (pa.bool_(), [True, None], True),
    "int8": (pa.int8(), [-8, None], True),
    "int16": (pa.int16(), [-16, 7], True),
    "int32": (pa.int32(), [-(2**31), None], True),
    "int64": (pa.int64(), [2**63 - 1, None], True),
    "uint8": (pa.uint8(), [255, None], False),
    "uint32": (pa.uint32(), [2**32 - 1, None], "1.0"),  # 1.0: a signed INT64
    "uint64": (pa.uint64(), [2**64 - 1, None], False),
    "float32": (pa.float32(), [1.5, None], True),
    "float64": (pa.float64(), [float("nan"), -0.0], True),
    "string": (pa.string(), ["naïve ${x}", None], True),
    "large_string": (pa.large_string(), ["a", None], True),
    "dictionary": (pa.dictionary(pa.int32(), pa.string()), ["a", None], True),
    "binary": (pa.binary(), [b"\xff", None], False),
    "date": (pa.date32(), [dt.date(1970, 1, 1), dt.date(9999, 12, 31)], True),
    "ts_ms_utc": (pa.timestamp("ms", "UTC"), [_AT.replace(microsecond=123000), None], True),
    "ts_us_utc": (pa.timestamp("us", "UTC"), [_AT, None], True),
    "ts_us_berlin": (pa.timestamp("us", "Europe/Berlin"), [_AT, None], True),
    "ts_us_naive": (pa.timestamp("us"), [_AT, None], True),
    # Spark 3.5 reads no nanoseconds (2.6); 1.0 has none, Arrow writes microseconds
    "ts_ns_utc": (pa.timestamp("ns", "UTC"), [_AT, None], "1.0"),
    "decimal_9": (pa.decimal128(9, 2), [decimal.Decimal("1234567.89"), None], True),
    "decimal_38": (pa.decimal128(38, 10), [decimal.Decimal("-1.5"), None], True),
    "list": (pa.list_(pa.int64()), [[1, None], None], False),
    "struct": (pa.struct([("x", pa.int64())]), [{"x": 1}, None], False),
    "map": (pa.map_(pa.string(), pa.int64()), [[("k", 1)], None], False),
    "null": (pa.null(), [None, None], False),
}


def _same_as_spark(spark: SparkSession, path: Path, typed: bool) -> None:
    found = footer_schema(spark, path)
    if not typed:
        assert found is None
        return
    inferred = spark.read.parquet(str(path))
    assert found == inferred.schema
    read = spark.read.schema(found).parquet(str(path))
    assert repr(read.collect()) == repr(inferred.collect())  # NaN == NaN, -0.0 kept apart
    # the toolkit's own reading of a file takes it
    assert dataframe(spark, "parquet", path).schema == inferred.schema


@pytest.mark.parametrize("version", ["1.0", "2.6"])
def test_columns_written_by_arrow_are_typed_as_spark_types_them(
    spark: SparkSession, tmp_path: Path, version: str
) -> None:
    typed = {n: c for n, c in _COLUMNS.items() if c[2] is True or c[2] == version}
    path = tmp_path / "typed.parquet"
    pq.write_table(pa.table({n: pa.array(v, t) for n, (t, v, _) in typed.items()}), path,
                   version=version)
    _same_as_spark(spark, path, True)
    # each other column, even beside typed ones, leaves the whole file to Spark
    for name in sorted(set(_COLUMNS) - set(typed)):
        arrow_type, values, _ = _COLUMNS[name]
        path = tmp_path / f"{name}.parquet"
        pq.write_table(pa.table({"id": [1, 2], name: pa.array(values, arrow_type)}), path,
                       version=version)
        assert footer_schema(spark, path) is None, name


@pytest.mark.parametrize("how", ["required", "int96", "field id", "no rows", "odd names"])
def test_files_of_other_shapes_are_typed_as_spark_types_them(
    spark: SparkSession, tmp_path: Path, how: str
) -> None:
    path, typed = tmp_path / "x.parquet", True
    if how == "required":
        schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("s", pa.string())])
        pq.write_table(pa.table({"id": [1, 2], "s": ["a", None]}, schema=schema), path)
    elif how == "int96":
        table = pa.table({"at": pa.array([_AT], pa.timestamp("us"))})
        pq.write_table(table, path, use_deprecated_int96_timestamps=True)
        typed = False
    elif how == "field id":
        field = pa.field("id", pa.int64(), metadata={b"PARQUET:field_id": b"7"})
        pq.write_table(pa.table({"id": [1]}, schema=pa.schema([field])), path)
        typed = False
    elif how == "no rows":
        pq.write_table(pa.table({"id": pa.array([], pa.int64()),
                                 "s": pa.array([], pa.string())}), path)
    else:
        pq.write_table(pa.table({"a.b": [1], "with space": ["x"], "Ünï": [1.5],
                                 "`tick`": [True]}), path)
    _same_as_spark(spark, path, typed)


def test_a_file_written_by_spark_is_typed_as_spark_types_it(
    spark: SparkSession, tmp_path: Path
) -> None:
    folder = tmp_path / "by_spark"
    spark.sql(
        "SELECT CAST(id AS INT) AS i, id AS l, CAST(id AS SHORT) AS sh, CAST(id AS BYTE) AS b,"
        " CAST(id AS FLOAT) AS f, CAST(id AS DOUBLE) AS d, CAST(id AS STRING) AS s,"
        " id % 2 = 0 AS flag, DATE'2024-06-01' + CAST(id AS INT) AS day,"
        " TIMESTAMP_NTZ'2024-06-01 10:00:00' AS wall,"
        " CAST(id AS DECIMAL(9, 2)) AS d9, CAST(id AS DECIMAL(18, 4)) AS d18,"
        " CAST(id AS DECIMAL(30, 6)) AS d30 FROM range(3)"
    ).coalesce(1).write.parquet(str(folder))
    (path,) = folder.glob("part-*.parquet")
    _same_as_spark(spark, path, True)
    # Spark writes timestamps with a zone as INT96 unless told otherwise: Spark infers
    spark.sql("SELECT TIMESTAMP'2024-06-01 10:00:00' AS at").coalesce(1) \
        .write.parquet(str(tmp_path / "int96"))
    (path,) = (tmp_path / "int96").glob("part-*.parquet")
    _same_as_spark(spark, path, False)
