"""The JVM type tally (toolkit/spark/jvm/Tally.java) gives the very Summary and Profile the
Python path gives on the same JSON lines."""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.core import strategies
from toolkit.core.batch.options import Options
from toolkit.core.batch.profile import Profile, profile_of
from toolkit.core.batch.summary import Summary, summarize
from toolkit.core.engine import Engine
from toolkit.core.values.jsonlines import parse_line
from toolkit.core.values.types import RECORD, Shape
from toolkit.spark.batches import observe_on_spark, observe_partitions
from toolkit.spark.router import SCALAR_CODES, codes_note
from toolkit.spark.tally import (
    ARRAY_SHIFT,
    RECORD_CODE,
    REPRESENTATIVES,
    SOURCE,
    KindCodes,
    Tallied,
    is_array_code,
    observe_json,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def frame(spark: SparkSession, lines: list[str | None], parts: int = 3) -> DataFrame:
    """The lines as a one-column DataFrame, in order, over ``parts`` partitions."""
    rdd = spark.sparkContext.parallelize([(line,) for line in lines], parts)
    return spark.createDataFrame(rdd, "value string")


def jvm_observe(df: DataFrame, options: Options, batch: int) -> Tallied:
    return observe_json(df, options, batch, lambda d: observe_partitions(d, "json", options, batch))


def reference(lines: list[str | None], options: Options, batch: int) -> tuple[Summary, Profile]:
    """What the Python path computes (workers.observe_partition on one chunk)."""
    records = [parse_line(x) for x in lines if x is not None and x.strip()]
    obs = Engine(options).observe(records, batch)
    return summarize(obs), profile_of(obs, batch)


def comparable(p: Profile) -> dict[tuple[str, ...], tuple[Any, ...]]:
    """A profile with samples as their reprs: NaN samples compare equal."""
    return {
        path: (dict(s.counts), s.first_batch, s.last_batch,
               {shape: repr(v) for shape, v in s.samples.items()},
               {b: dict(c) for b, c in s.by_batch.items()}, s.records_inside, s.nulls,
               {b: dict(at) for b, at in s.spans.items()})
        for path, s in p.fields.items()
    } | {(): (p.records, dict(p.starts))}


def assert_same(spark: SparkSession, lines: list[str | None], options: Options,
                batch: int = 0, parts: int = 3) -> tuple[Summary, Profile]:
    tallied = jvm_observe(frame(spark, lines, parts), options, batch)
    summary, prof = tallied.summary, tallied.profile
    want_summary, want_profile = reference(lines, options, batch)
    assert summary == want_summary
    assert comparable(prof) == comparable(want_profile)
    return summary, prof


def to_line(record: dict[str, Any]) -> str:
    def iso(v: Any) -> str:  # Python dates and datetimes arrive as ISO texts in JSON
        assert isinstance(v, dt.date)
        return v.isoformat()

    return json.dumps(record, default=iso, ensure_ascii=False)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.data_too_large])
@given(
    records=st.lists(strategies.records, max_size=8),
    detect_dates=st.booleans(),
    unit=st.sampled_from(["s", "ms", "us"]),
    batch=st.integers(0, 3),
)
def test_jvm_tally_equals_the_python_path(
    jvm: SparkSession, records: list[dict[str, Any]], detect_dates: bool, unit: Any, batch: int
) -> None:
    options = Options(detect_dates=detect_dates, timestamp_unit=unit)
    assert_same(jvm, [to_line(r) for r in records], options, batch)


EDGE_LINES = {
    "big ints": [
        '{"n": 123456789012345678901234567890}', '{"n": -9223372036854775809}',
        '{"n": 9223372036854775807}', '{"n": -9223372036854775808}',
        '{"n": 18446744073709551616, "m": [1, 99999999999999999999999]}',
    ],
    "around 2**53": [
        '{"n": 9007199254740993}', '{"n": 9007199254740992}', '{"n": -9007199254740993}',
        '{"n": 9007199254740994}', '{"n": [1, 9007199254740993]}', '{"n": 9223372036854775806}',
    ],
    "dates": [
        '{"d": "2024-02-29"}', '{"d": "2023-02-29"}', '{"d": "2024-02-30"}',
        '{"d": "0000-01-01"}', '{"d": "0001-01-01"}', '{"d": "9999-12-31"}',
        '{"d": "2024-13-01"}', '{"d": "2024-1-01x"}', '{"d": "\\uff12024-01-01"}',
        '{"d": ["2024-01-01", "2024-02-30"]}',
    ],
    "timestamps": [
        '{"t": "2024-02-30T10:00:00Z"}', '{"t": "2024-01-01T24:00"}',
        '{"t": "2024-01-01T10:00+05:99"}', '{"t": "2024-01-01T10:00+24"}',
        '{"t": "0001-01-01T00:00+01"}', '{"t": "0001-01-01T00:00-01"}',
        '{"t": "9999-12-31T23:59:59.999999-00:00"}', '{"t": "9999-12-31T23:59:59.5-01:00"}',
        '{"t": "2024-01-01T10:00:00.1234567"}', '{"t": "2024-01-01T10:00:00.123Z"}',
        '{"t": "2024-01-01 10:00:00.1234+0530"}', '{"t": "2024-01-01T10:00:00.000001"}',
        '{"t": "2024-01-01t10:00"}', '{"t": "2024-01-01T10:00Z "}', '{"t": "2024-01-01T10:00:00."}',
        '{"t": "2300-01-01T00:00:00.000001Z"}', '{"t": "9999-12-31T23:59:59.999999"}',
        '{"t": ["2024-01-01T10:00:00.5", "2024-01-01"], "u": ["9999-12-31T23:59:59.999999"]}',
    ],
    "arrays": [
        '{"a": [], "b": [[]], "c": [null], "d": [[null], []], "e": [[1], 2], "f": [[[]]]}',
        '{"a": [true, 1], "b": [1, 2.5], "c": [[1], [2.5, "x"]], "d": ["2024-01-01", 1]}',
        '{"a": [[{"x": 1}], [{"x": "s", "y": [{"z": 2}]}]], "b": [{"k": 1}, 2]}',
        '{"a": [{"x": 1}, null, [{"x": [1, [2]]}]], "b": [[], [{"k": {"m": null}}]]}',
        '{"a": {"x": [{"y": {}}]}, "b": [{}], "c": {}}',
    ],
    # arrays mixing records and primitives (docs/rules.md): their records are tallied as
    # those of record arrays, at the array's depth
    "mixed arrays": [
        '{"m": [{"k": 1}, "a"], "n": [[{"k": 1}, 2], [3.5, null]], "r": {"m": [{"j": true}, 1]}}',
        '{"m": [null, {"k": "s"}, 2, true, "2024-01-01"], "n": [{"k": [1]}, [2]]}',
        '{"m": [{"k": 1}, 9007199254740993], "n": [[{"k": {"x": 1}}], []], "o": [{}, 1]}',
        '{"m": [{"k": 1}], "n": [[1, "x"]], "r": [{"m": [[{"j": 1}], "t"]}], "o": [1, "x"]}',
        '{"m": [{"k": 1}, "2024-01-01T00:00:00.5Z", 1], "r": {"m": [1, 2]}}',
    ],
    "names and texts": [
        '{"ünï": 1, "日本": "x", "emoji😀": [1], "a.b": 2, "a": {"b": 3}, "": null}',
        '{"s": "caf\\u00e9 \\"quoted\\" \\\\ back", "pair": "\\ud83d\\ude00", "e": "\\u0041"}',
        '{"x": NaN, "y": Infinity, "z": -Infinity, "w": -0.0, "v": 1e400, "u": 1E5}',
        '  {"spaced" : [ 1 , 2 ] , "k" : { "n" : null } }  ',
    ],
    "blank and null lines": ['{"a": 1}', "", "   ", None, '{"a": "x"}', "\t"],
    # RULES 1 / docs/rules.md: beyond the double range (or nonzero below it), the literal's
    # text, as integers beyond 64 bits; the double range's own ends stay doubles
    "beyond the double range": [
        '{"v": 1e400, "w": -1E+400, "x": 1e-400, "y": 0e-999, "z": [1e400, 2]}',
        '{"v": 1.7976931348623157e308, "w": 5e-324, "x": -0.0e-500, "y": 1e100, "z": [1.5]}',
        '{"v": 10' + "0" * 400 + '.5, "x": 0.' + "0" * 400 + '1, "r": {"q": [[2e-400]]}}',
    ],
    # more digits than a double gives back: the literal's text; a literal it gives back
    # (its shortest digits, however spelled) a double
    "more digits than a double holds": [
        '{"pi": 3.14159265358979323846, "one": 1.0000000000000001, "e": 1234567890123456789e-3,'
        ' "sub": 1.23e-322, "min": 5e-324, "java": 4.9E-324, "g17": 0.10000000000000001,'
        ' "tie": 5.960464477539063e-08, "tie2": 5.960464477539063E-8}',
        '{"ok": 0.30000000000000004, "z": 1.50000000000000000000, "w": -0.0000012345678901234560,'
        ' "id": 12345678901234567, "r": {"q": [2.718281828459045235360287, 0.1]}}',
        '{"pi": 3.141592653589793, "one": 1.0, "e": 1234567890123456.8,'
        ' "s": "3.14159265358979323846"}',
    ],
}


@pytest.mark.parametrize("unit", ["ms", "us"])
@pytest.mark.parametrize("name", list(EDGE_LINES))
def test_edge_cases_equal_the_python_path(jvm: SparkSession, name: str, unit: Any) -> None:
    assert_same(jvm, EDGE_LINES[name] * 2, Options(timestamp_unit=unit), batch=1)


def test_kinds_of_edge_values(jvm: SparkSession) -> None:
    """What a user reads in the summary, beyond 'equal to the Python path'."""
    summary, prof = assert_same(jvm, [
        '{"n": 9007199254740993, "b": 123456789012345678901234, "d": "2024-02-30",'
        ' "t": "2024-01-01T10:00:00.5Z", "r": [[{"x": 1}]], "m": [{"k": 1}, 2]}',
    ], Options())
    kinds = {key: {str(k.shape) + "!" * bool(k.lossy) for k in f.counts}
             for key, f in summary.fields.items()}
    assert kinds == {"n": {"long!"}, "b": {"string"}, "d": {"string"}, "t": {"timestamp"},
                     "r": {"record[][]"}, "m": {"(record|long)[]"}}
    assert sorted(summary.fields["r"].records) == [2]
    assert sorted(summary.fields["m"].records) == [1]  # a mixed array's records are tallied
    assert prof.fields[("b",)].samples[Shape("string", 0)] == (123456789012345678901234,)
    assert prof.fields[("r", "x")].samples[Shape("long", 0)] == (1,)
    assert prof.fields[("m", "k")].samples[Shape("long", 0)] == (1,)


def test_partitions_merge_in_order_with_fallbacks(jvm: SparkSession) -> None:
    """A partition the JVM hands back (a key twice: Python sets the record aside whole) is
    observed by the Python path, and the samples still come in line order."""
    lines = [f'{{"a": {i}, "s": "v{i}"}}' for i in range(6)]
    lines[3] = '{"a": 1, "a": "dup", "s": "v3"}'
    tallied = jvm_observe(frame(jvm, lines, 3), Options(), 0)
    summary, prof = reference(lines[:3] + lines[4:], Options(), 0)
    assert tallied.summary == summary and comparable(tallied.profile) == comparable(prof)
    assert prof.fields[("s",)].samples[Shape("string", 0)] == ("v0", "v1", "v2")
    assert {str(k.shape) for k in summary.fields["a"].counts} == {"long"}
    ((_, _, aside, first),) = tallied.handed_back
    assert aside == 1 and first.reason == "duplicate-key" and first.field == "a"
    assert first.raw == lines[3]


@pytest.mark.parametrize(
    "line",
    ['{"a": 1', '{"a": 1} {"b": 2}', '{"a": +Infinity}', "[1, 2]", '"text"', "7",
     # a lone surrogate has no UTF-8 form: no file can store it (core/values/jsonlines.py)
     '{"a": "\\ud800"}', '{"a": ["x\\udc00"]}', '{"\\ud800": 1}', '{"a": {"\\udfff": 1}}'],
)
def test_lines_python_sets_aside_are_set_aside_alike(jvm: SparkSession, line: str) -> None:
    """Malformed lines and JSON values that are not objects: the JVM hands the partition
    back, and the Python workers set the line aside exactly as without the JVM."""
    lines = ['{"ok": 1}', line, '{"ok": "x"}', '{"ok": 2}']
    df = frame(jvm, lines, parts=2)
    seen = observe_on_spark(df, "json", Options(), 0)
    python = observe_partitions(df, "json", Options(), 0)
    assert seen.aside == sum(n for _, _, n, _ in python) == 1
    assert seen.first_aside is not None
    assert seen.first_aside == next(q for _, _, _, q in python if q is not None)
    assert seen.summary == reference(['{"ok": 1}', '{"ok": "x"}', '{"ok": 2}'], Options(), 0)[0]


def test_observe_on_spark_tallies_json_in_the_jvm(jvm: SparkSession) -> None:
    lines = ['{"a": 1, "b": [{"c": "2024-01-01"}]}', '{"a": "x"}']
    seen = observe_on_spark(frame(jvm, lines), "json", Options(), 2)
    want_summary, want_profile = reference(lines, Options(), 2)
    assert (seen.summary, seen.profile, seen.aside) == (want_summary, want_profile, 0)


def test_whitespace_python_skips_as_blank(jvm: SparkSession) -> None:
    # Python's str.strip() drops these; Jackson refuses them: that partition falls back
    assert_same(jvm, ['{"a": 1}', "\u00a0\u2003", "\x0b", '{"a": 2}'], Options(), parts=2)


def test_deep_lines_are_left_to_the_python_path(jvm: SparkSession) -> None:
    """Records nested deeper than Tally.MAX_DEPTH: whatever the Python workers make of them
    (observed, or set aside past Python's recursion limit), the result is theirs."""
    deep = '{"r": ' * 150 + "1" + "}" * 150
    lines = ['{"r": {"r": 2}}', deep, '{"r": "x"}']
    df = frame(jvm, lines, parts=2)
    seen = observe_on_spark(df, "json", Options(), 0)
    python = observe_partitions(df, "json", Options(), 0)
    summary, prof = Summary(), Profile()
    for s, p, _, _ in python:
        summary, prof = summary + s, prof + p
    assert seen.summary == summary
    assert comparable(seen.profile) == comparable(prof)
    assert seen.aside == sum(n for _, _, n, _ in python)


def test_array_codes_sit_above_every_other_code() -> None:
    """Tally.java's kind codes: a scalar's or a record's is its index in REPRESENTATIVES,
    an array's ``depth << ARRAY_SHIFT | mask`` with a depth of at least 1. is_array_code
    is the one test of it; Tally.java's constants say the same (no JVM needed)."""
    java = SOURCE.read_text()

    def constant(name: str) -> int:
        found = re.search(rf"static final int {name} = (\d+);", java)
        assert found is not None, name
        return int(found.group(1))

    assert constant("ARRAY_SHIFT") == ARRAY_SHIFT
    assert constant("SCALARS") == len(REPRESENTATIVES) <= ARRAY_SHIFT  # a mask bit each
    assert constant("RECORD") == RECORD_CODE
    assert not any(is_array_code(c) for c in SCALAR_CODES)
    empty = 1 << ARRAY_SHIFT  # the smallest array code: depth 1, no leaf seen
    assert is_array_code(empty) and not is_array_code(empty - 1)
    kinds = KindCodes(Options())
    assert kinds(RECORD_CODE).shape == Shape(RECORD, 0)
    assert kinds(empty).dim == 1
    assert kinds(2 << ARRAY_SHIFT | 1 << RECORD_CODE).shape == Shape(RECORD, 2)
    # the table property keeps array codes only
    assert codes_note({}, {("a",): frozenset({*SCALAR_CODES, empty})}) == {
        "toolkit.kind-codes": f'[[["a"], [{empty}]]]'}
