"""The class codes of typed columns made in the JVM (``jvm/ClassCode.java``) are the ones
the Spark expressions of ``toolkit.spark.columnar`` make (RULES 1 and 2), value by value:
texts that are dates, nearly dates or date-times, in every kind of digit and line end;
longs at and beyond 2**53; timestamps beyond Python's years and below the epoch unit.
Both in Spark's generated code (rows from an RDD) and interpreted (a local relation)."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

import pytest

from toolkit.core.batch.options import Options
from toolkit.spark.columnar import _class_code_of, typed_columns

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

pytestmark = pytest.mark.spark

TEXTS = [
    "", "-", "x", "Berlin", "Jean-Paul", "abcd-", "12345-", "1234-", "2024-",
    "2024-01-01", "2024-02-29", "2023-02-29", "2024-02-30", "2024-04-31", "2024-12-31",
    "0000-01-01", "0001-01-01", "9999-12-31", "2024-13-01", "2024-00-10", "2024-01-00",
    "2024-1-01", "2024-01-1", "2024-01-01T10:00", "1999-12-31T10:00:00Z",
    "2024-01-01 10:00", "2024-01-01\n", "2024-01-01\r\n", "2024-01-01\u2028",
    "2024-01-01\n\n", " 2024-01-01", "2024-01-01 ", "2024-01-01é", "2024-01-0١",
    "٢٠٢٤-01-01", "２０２４-01-01", "२०२४-01-01", "2024-０1-01", "😀😀😀😀-x", "😀-😀",
    "ab😀d-01-01", "2024-01-01x", "2024--01-01", "20240101", "2024/01/01", "12-34-5678",
    "½½½½-01-01", "ⅫⅫⅫⅫ-01-01",
]
TWO_53 = 2**53
LONGS = [
    0, 1, -1, TWO_53, -TWO_53, TWO_53 + 1, -TWO_53 - 1, TWO_53 + 2, TWO_53 + 3, 2**62,
    2**62 + 1, 2**63 - 1, -(2**63), -(2**63) + 1, 3 * 2**60, 12345678901234567,
    (2**53 - 1) * 2**10, (2**53 + 1) * 2**9, -(2**53 + 1) * 2**9,
]
#: epoch microseconds: whole seconds, milliseconds and microseconds, around the years
#: Python reads (1-9999) and beyond, and counts a double does not hold
MICROS = [
    0, 1, 1_000, 1_000_000, 1_717_200_000_000_000, 1_717_200_000_123_000,
    1_717_200_000_123_456, -1, -1_000, -62_135_596_800_000_000, -62_135_596_800_000_001,
    253_402_300_799_999_999, 253_402_300_800_000_000, TWO_53 + 1, TWO_53 * 3 + 1,
    -(TWO_53 + 1), 2**60, 2**60 + 1, 9_000_000_000_000_000_000,
]


def _corpus(seed: int = 7) -> list[tuple[Any, Any, Any]]:
    rng = random.Random(seed)
    alphabet = "0123456789-T:Z x٢２\n😀é"
    texts = TEXTS + ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
                     for _ in range(300)]
    longs = LONGS + [rng.choice([1, -1]) * rng.getrandbits(rng.randint(1, 63))
                     for _ in range(300)]
    micros = MICROS + [rng.randint(-2**62, 2**62) for _ in range(300)]
    n = max(len(texts), len(longs), len(micros))
    rows: list[tuple[Any, Any, Any]] = [
        (texts[i % len(texts)], longs[i % len(longs)], micros[i % len(micros)])
        for i in range(n)]
    return [*rows, (None, None, None)]


def _frame(spark: SparkSession, rdd: bool) -> DataFrame:
    from pyspark.sql import functions as F

    rows = _corpus()
    schema = "s string, n long, m long"
    df = (spark.sparkContext.parallelize(rows, 3).toDF(schema) if rdd
          else spark.createDataFrame(rows, schema))
    return df.select("s", "n", F.timestamp_micros("m").alias("t"))


@pytest.mark.parametrize("unit", ["ms", "s", "us"])
@pytest.mark.parametrize("rdd", [True, False], ids=["generated code", "interpreted"])
def test_the_jvm_class_codes_are_the_spark_expressions_value_by_value(
    spark: SparkSession, unit: str, rdd: bool
) -> None:
    from pyspark.sql import functions as F

    options = Options(timestamp_unit=unit)  # type: ignore[arg-type]
    typed = typed_columns(_frame(spark, rdd))
    assert typed is not None
    for name in typed.names:
        jvm = _class_code_of(typed, name, options)
        expressions = _class_code_of(typed, name, options, jvm=False)
        assert jvm is not None and expressions is not None
        assert "ClassCode" in str(jvm._jc.expr().getClass())  # the JVM made this one
        value = typed.column(name)
        if name == "t":  # Python reads no year beyond 1-9999: the microseconds then
            value = F.unix_micros(value)
        found = typed.lazy.frame.select(value, jvm.alias("jvm"),
                                        expressions.alias("spark")).collect()
        differ = [tuple(r) for r in found if r["jvm"] != r["spark"]]
        assert not differ, f"{name}: {differ[:5]}"
        # every class of the column is met, so each test decided some value
        assert {r["jvm"] for r in found} >= set(range(
            3 if name == "s" else 2 if name == "n" or unit == "us" else 3)) | {None}
