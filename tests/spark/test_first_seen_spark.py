"""Where drift starts, on Spark: the JVM tally and the Python workers number records across
partitions in order, as the in-memory profile does (issue #28)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from toolkit.core.batch.options import Options
from toolkit.core.batch.profile import Profile, profile
from toolkit.spark.batches import observe_on_spark, observe_partitions

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

pytestmark = pytest.mark.spark


def feed() -> list[str]:
    """2,000 orders; ``shipping`` (a record) from record 1,501, ``price`` a string at 1,201."""
    out = []
    for i in range(1, 2_001):
        r: dict[str, object] = {"id": i, "price": "n/a" if i == 1_201 else i}
        if i >= 1_501:
            r["shipping"] = {"zip": "12345" if i < 1_900 else 12345}
        out.append(json.dumps(r))
    return out


def frame(spark: SparkSession, lines: list[str], parts: int) -> DataFrame:
    rdd = spark.sparkContext.parallelize([(line,) for line in lines], parts)
    return spark.createDataFrame(rdd, "value string")


def check(p: Profile) -> None:
    assert p.first_seen("price") == {"long": 1, "string": 1_201}
    assert p.last_seen("price") == {"long": 2_000, "string": 1_201}
    assert p.first_seen("shipping") == {"record": 1_501}
    assert p.first_seen(("shipping", "zip")) == {"string": 1_501, "long": 1_900}
    assert p.last_seen(("shipping", "zip")) == {"string": 1_899, "long": 2_000}


def test_the_in_memory_profile_of_the_feed() -> None:
    check(profile([json.loads(line) for line in feed()]))


@pytest.mark.parametrize("parts", [1, 3, 7])
def test_the_jvm_tally_numbers_records_across_partitions(jvm: SparkSession, parts: int) -> None:
    seen = observe_on_spark(frame(jvm, feed(), parts), "json", Options(), 0)
    check(seen.profile)
    assert seen.profile == profile([json.loads(line) for line in feed()])


def test_python_workers_number_records_across_partitions(spark: SparkSession) -> None:
    merged = Profile()
    for _, p, _, _ in observe_partitions(frame(spark, feed(), 4), "json", Options(), 0):
        merged = merged + p
    check(merged)


def test_a_later_batch_is_numbered_within_itself(jvm: SparkSession) -> None:
    lines = feed()
    seen = observe_on_spark(frame(jvm, lines, 3), "json", Options(), 1)
    first = profile([json.loads(line) for line in lines[:10]])
    both = first + seen.profile
    assert both.first_seen("shipping") == {"record": 1_511}
    assert both.first_seen("shipping", batch=1) == {"record": 1_501}
