"""The JVM router (toolkit/spark/jvm/Router.java) writes the very rows the Python router
writes, on the same JSON lines against the same plan."""

from __future__ import annotations

import functools
import json
import math
import struct
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql.pandas.types import to_arrow_schema

from tests.core import strategies
from tests.spark.test_tally import EDGE_LINES, frame, to_line
from toolkit.core.batch.options import Options
from toolkit.core.batch.routing import Router
from toolkit.core.engine import make_plan
from toolkit.core.values.conversions import render_double
from toolkit.core.values.types import Column, Struct, iter_ids
from toolkit.spark.batches import observe_on_spark, spark_schema
from toolkit.spark.router import jvm_routing, route_on_jvm, routing_table
from toolkit.spark.tally import KindCodes
from toolkit.spark.workers import route_partition

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def routed_frames(
    spark: SparkSession, batches: list[list[str | None]], options: Options, parts: int = 3
) -> tuple[DataFrame, DataFrame] | None:
    """Plans each batch on the schema the previous one made (as ingest does), then routes
    the last batch with the JVM router and with the Python workers: the two DataFrames of
    routed rows, not yet run. None when the JVM leaves the batch to Python."""
    schema, seen, df = Struct(), None, None
    for i, lines in enumerate(batches):
        df = frame(spark, lines, parts)
        seen = observe_on_spark(df, "json", options, i)
        assert seen.codes is not None, "the JVM tallied every line"
        schema = make_plan(schema, seen.summary, options, i, max(iter_ids(schema), default=0)).after
    assert seen is not None and df is not None
    routing = jvm_routing(schema, seen.codes, options)
    if routing is None:
        return None
    target = spark_schema(spark, schema)
    fn = functools.partial(route_partition, mode="json", options=options, schema=schema,
                           arrow_schema=to_arrow_schema(target))
    return route_on_jvm(df, routing, target, options), df.mapInArrow(fn, target)


def both_routes(
    spark: SparkSession, batches: list[list[str | None]], options: Options, parts: int = 3
) -> tuple[list[str], list[str]] | None:
    """:func:`routed_frames`' rows, each router's. None when the JVM leaves the batch to
    Python."""
    frames = routed_frames(spark, batches, options, parts)
    if frames is None:
        return None
    jvm, python = frames
    # as Spark's JSON texts: exact for every value (Python datetimes stop at year 1 local)
    return jvm.toJSON().collect(), python.toJSON().collect()


def all_routes(frames: list[tuple[DataFrame, DataFrame]]) -> list[tuple[list[str], list[str]]]:
    """:func:`both_routes` of many batches at once: every router's rows in one Spark job
    (a job per router and batch cost more than the routing), each row as Spark's JSON
    text as in :func:`both_routes`, each DataFrame's rows in their order (a union's
    partitions are its parts' partitions, in order)."""
    from pyspark.sql import functions as F

    tagged = [
        df.select(F.lit(i).alias("i"), F.lit(side).alias("side"),
                  F.to_json(F.struct("*")).alias("row"))  # every column, names unparsed
        for i, pair in enumerate(frames) for side, df in enumerate(pair)
    ]
    rows: list[tuple[list[str], list[str]]] = [([], []) for _ in frames]
    if tagged:
        for row in functools.reduce(lambda a, b: a.union(b), tagged).collect():
            rows[row.i][row.side].append(row.row)
    return rows


def assert_same(spark: SparkSession, batches: list[list[str | None]], options: Options,
                parts: int = 3) -> list[str]:
    routed = both_routes(spark, batches, options, parts)
    assert routed is not None, "the JVM router took the batch"
    jvm_rows, python_rows = routed
    assert jvm_rows == python_rows
    return jvm_rows


options_st = st.builds(
    Options,
    detect_dates=st.booleans(),
    timestamp_unit=st.sampled_from(["s", "ms", "us"]),
    long_timestamp_unit=st.sampled_from(["auto", "s", "ms", "us", "ns"]),
)


def test_jvm_router_equals_the_python_router(jvm: SparkSession) -> None:
    """Drifting batches: the last is routed against the schema all of them made, so its
    values meet columns of every type and dimension (conversions, wrapping, records).

    Hypothesis draws the examples, each planned as ingest plans it (its batches observed
    on Spark); both routers' rows of every example then come from one Spark job."""
    examples: list[tuple[list[list[str | None]], Options]] = []
    frames: list[tuple[DataFrame, DataFrame]] = []

    @settings(max_examples=40, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(batches=strategies.batches, options=options_st)
    def planned(batches: list[list[dict[str, Any]]], options: Options) -> None:
        lines: list[list[str | None]] = [[to_line(r) for r in b] for b in batches[:3] if b]
        if not lines:
            return
        routed = routed_frames(jvm, lines, options)
        if routed is not None:  # None: a table without columns yet (Python workers' rows)
            examples.append((lines, options))
            frames.append(routed)

    planned()
    assert examples, "no example was routed by the JVM"
    for (lines, options), (jvm_rows, python_rows) in zip(examples, all_routes(frames),
                                                         strict=True):
        assert jvm_rows == python_rows, (lines, options)


@pytest.mark.parametrize("name", list(EDGE_LINES))
@pytest.mark.parametrize("unit", ["s", "us"])
def test_edge_cases_route_alike(jvm: SparkSession, name: str, unit: Any) -> None:
    lines = EDGE_LINES[name]
    assert_same(jvm, [lines, lines[::-1]], Options(timestamp_unit=unit))


CONVERSIONS = [
    # every value meets a string, a double, a long and a timestamp column of its family
    '{"v": "text", "w": [["x"]]}',
    '{"v": 1.5, "w": [[2.5]]}',
    '{"v": 7, "w": [[7]]}',
    '{"v": "2024-01-02T03:04:05Z", "w": [["2024-01-02"]]}',
    '{"v": true, "w": [[false]]}',
    '{"v": 9007199254740993, "w": [[9007199254740993]]}',
    '{"v": 123456789012345678901234, "w": [[-99999999999999999999999]]}',
    '{"v": NaN, "w": [[Infinity, -Infinity, -0.0]]}',
    '{"v": 1e-05, "w": [[1e16, 1e22, 0.1, 5e-324, 1.7976931348623157e308, 123456.789]]}',
    '{"v": "2024-02-29", "w": [["2024-01-01T00:00:00.000001Z", "1969-12-31T23:59:59.999Z"]]}',
    '{"v": 1704164645, "w": [[1704164645123, 1704164645123456, 1704164645123456789]]}',
    '{"v": -1704164645, "w": [[-62135596800, 253402300800, 253402300799999, -1999]]}',
    '{"v": 99999999999, "w": [[100000000000, 99999999999999, 100000000000000000]]}',
    '{"v": -9223372036854775808, "w": [[9223372036854775807, -9223372036854775807]]}',
    '{"v": [], "w": [[]]}',
    '{"v": [null, [1]], "w": [null, [null]]}',
]


@pytest.mark.parametrize("long_unit", ["auto", "s", "ns"])
@pytest.mark.parametrize("unit", ["s", "ms", "us"])
def test_conversions_of_rules_2_route_alike(jvm: SparkSession, unit: Any, long_unit: Any) -> None:
    options = Options(timestamp_unit=unit, long_timestamp_unit=long_unit)
    rows = assert_same(jvm, [CONVERSIONS, CONVERSIONS[::-1]], options, parts=2)
    assert len(rows) == len(CONVERSIONS)


def test_records_route_alike(jvm: SparkSession) -> None:
    first = ['{"d": {"a": 1, "b": [{"c": "x"}]}, "r": [{"k": 1}], "e": {}}']
    second = [
        '{"d": [{"a": "s"}, null, [{"a": 2.5, "b": {"c": 1}}]], "r": {"k": [1, [2]]}}',
        '{"d": [], "r": [[{"k": null}], []], "e": [{"x": {"y": [true]}}]}',
        '{"d": null, "r": [[[]]], "e": "text"}',
    ]
    assert_same(jvm, [first, second, first + second], Options())


#: arrays mixing records and primitives (docs/rules.md): top level and inside records,
#: dimension 1 and 2, ragged, with nulls, several primitive types, beside arrays of records
#: only and of primitives only
MIXED = [
    '{"m": [{"k": 1}, "a"], "r": {"m": [{"j": true}, 1, null]}}',
    '{"m": [null, {"k": "s"}, 2, true, "2024-01-01"], "r": [{"m": [[{"j": 1}], 2.5]}]}',
    '{"m": [[{"k": 1}, 2], [3.5, null], null], "r": {"m": [{"j": false}]}}',
    '{"m": [{"k": 2}, [3]], "r": [{"m": [1, "x"]}, null]}',
    '{"m": [{"k": 1}, 9007199254740993], "o": [{}, 1]}',
    '{"m": [{"k": 1}, "2024-01-01T00:00:00.5Z", 1704164645]}',
    '{"m": [{"k": 3}], "o": [[{"x": null}], "y"]}',
    '{"m": [1, "x"], "r": {"m": "text"}}',
    '{"m": 7, "r": null}',
]


@pytest.mark.parametrize("unit", ["s", "us"])
def test_mixed_arrays_route_alike(jvm: SparkSession, unit: Any) -> None:
    """Records to the record column, primitives to the primitive ones, null elsewhere: the
    same rows from both routers, in a first batch and against an existing table."""
    options = Options(timestamp_unit=unit)
    first = assert_same(jvm, [MIXED], options)
    later = assert_same(jvm, [['{"m": 1, "r": {"m": 1}}'], MIXED[::-1]], options)
    for rows in (first, later):  # the first line, {"m": [{"k": 1}, "a"], ...}
        row = json.loads(rows[0] if rows is first else rows[-1])
        assert row["m_array_record"] == [{"k": "1", "k_long": 1}, None]
        assert row["m_array_string"] == [None, "a"]


@settings(max_examples=300, deadline=None)
@given(st.floats() | st.integers(0, 2**64 - 1).map(
    lambda n: struct.unpack("<d", struct.pack("<Q", n))[0]))
def test_doubles_render_as_python_renders_them(jvm: SparkSession, x: float) -> None:
    """conversions.render_double is Python's repr: shortest digits, closest of those."""
    got = jvm._jvm.toolkit.spark.jvm.Router.reprOf(x)  # type: ignore[union-attr]
    assert got == render_double(x)
    if math.isfinite(x):
        assert float(got) == x


@pytest.mark.parametrize(("line", "why"), [
    # no UTF-8 form (Java would write "?"); the tally sends its partition to Python
    ('{"s": "\\ud800"}', "lone surrogate"),
    # a key twice: Python sets the record aside (a tally sends such a partition there)
    ('{"s": "a", "n": 1, "s": "b"}', "Duplicate field 's'"),
])
def test_lines_the_router_refuses(jvm: SparkSession, line: str, why: str) -> None:
    """Lines the router's table was not made for fail the job when it routes a batch whose
    tally saw every line (it never should meet one then); nothing is written by a guess.
    Routing and tallying in one pass, it sets them aside instead
    (tests/reliability/test_hostile_bytes.py)."""
    clean = frame(jvm, ['{"s": "ok", "n": 2}'], parts=1)
    seen = observe_on_spark(clean, "json", Options(), 0)
    schema = make_plan(Struct(), seen.summary, Options(), 0).after
    routing = jvm_routing(schema, seen.codes, Options())
    assert routing is not None
    df = frame(jvm, ['{"s": "ok", "n": 3}', line], parts=1)
    routed = route_on_jvm(df, routing, spark_schema(jvm, schema), Options())
    with pytest.raises(Exception, match=why):
        routed.collect()


def test_the_routing_table_and_its_json_are_made_once_per_schema_and_codes() -> None:
    """A stream's batches mostly share schema, codes and options: each hands the JVM the
    same text, written once (no JVM needed)."""
    schema = Struct((Column(1, "a", "double"), Column(2, "b", "string")))
    codes = {("a",): frozenset({1, 4}), ("b",): frozenset({4})}
    routing = jvm_routing(schema, codes, Options())
    assert routing is not None
    assert json.loads(routing.text) == routing.table == routing_table(
        schema, Router(Options()), codes, KindCodes(Options()))
    assert jvm_routing(schema, dict(codes), Options()) is routing
    other = jvm_routing(schema, {("a",): frozenset({1})}, Options())
    assert other is not None and other is not routing and other.text != routing.text
