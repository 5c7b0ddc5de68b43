"""In-memory frames as sources (pandas, Arrow, Polars): their typed records keep their types
(RULES 1), every face takes them alike, and ingesting a frame equals simulating it."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyiceberg.catalog import Catalog

import toolkit
from tests.core.test_properties import Oracle, examples
from tests.integration.readers import (
    assert_table_is_the_simulation,
)
from toolkit.arrow import column_values, pandas_records, polars_records, records
from toolkit.core.batch.conversion_warnings import UnwrittenRecords
from toolkit.core.values.scalars import Float, Int
from toolkit.spark.workers import records_of

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

UTC = dt.UTC
I64_MIN, I64_MAX, U64_MAX = -(2**63), 2**63 - 1, 2**64 - 1


def typed(values: list[Any]) -> list[Any]:
    """Values with their exact Python types, nested: Int(1) differs from 1 and from True."""

    def one(v: Any) -> Any:
        if type(v) is dict:
            return {k: one(x) for k, x in v.items()}
        if type(v) is list:
            return [one(x) for x in v]
        return (type(v).__name__, v)

    return [one(v) for v in values]


# ------------------------------------------------------------------ Arrow types, one by one

ARROW_CASES: list[tuple[str, Any, list[Any]]] = [
    ("int8", pa.array([-128, None, 127], pa.int8()), [Int(-128), None, Int(127)]),
    ("int16", pa.array([-(2**15)], pa.int16()), [Int(-(2**15))]),
    ("int32", pa.array([2**31 - 1], pa.int32()), [Int(2**31 - 1)]),
    ("uint8", pa.array([255], pa.uint8()), [Int(255)]),
    ("uint16", pa.array([65535], pa.uint16()), [Int(65535)]),
    ("int64", pa.array([I64_MIN, I64_MAX], pa.int64()), [I64_MIN, I64_MAX]),
    ("uint32", pa.array([2**32 - 1], pa.uint32()), [2**32 - 1]),
    ("uint64", pa.array([U64_MAX, None], pa.uint64()), [U64_MAX, None]),
    ("float16", pa.array(np.array([1.5], np.float16)), [Float(1.5)]),
    ("float32", pa.array([0.1, None], pa.float32()), [Float(float(np.float32(0.1))), None]),
    ("float64", pa.array([0.1, math.inf, None]), [0.1, math.inf, None]),
    ("decimal128", pa.array([Decimal("1.10"), None], pa.decimal128(5, 2)), [Decimal("1.10"), None]),
    ("decimal256", pa.array([Decimal("-1E+40")], pa.decimal256(60, 0)),
     [Decimal("-10000000000000000000000000000000000000000")]),
    ("binary", pa.array([b"\x00\xff", None], pa.binary()), [b"\x00\xff", None]),
    ("large_binary", pa.array([b"x"], pa.large_binary()), [b"x"]),
    ("fixed_size_binary", pa.array([b"ab"], pa.binary(2)), [b"ab"]),
    ("string", pa.array(["é", None]), ["é", None]),
    ("large_string", pa.array(["x"], pa.large_string()), ["x"]),
    ("bool", pa.array([True, None]), [True, None]),
    ("date32", pa.array([dt.date(2024, 2, 29)], pa.date32()), [dt.date(2024, 2, 29)]),
    ("date64", pa.array([dt.date(1, 1, 1)], pa.date64()), [dt.date(1, 1, 1)]),
    ("null", pa.nulls(2), [None, None]),
    ("timestamp s", pa.array([0], pa.timestamp("s")), [dt.datetime(1970, 1, 1)]),
    ("timestamp us tz", pa.array([1], pa.timestamp("us", "UTC")),
     [dt.datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=UTC)]),
    ("timestamp ns whole", pa.array([1_000, None], pa.timestamp("ns")),
     [dt.datetime(1970, 1, 1, 0, 0, 0, 1), None]),
    ("timestamp ns", pa.array([1_001], pa.timestamp("ns")), ["1970-01-01T00:00:00.000001001"]),
    ("timestamp ns before 1970", pa.array([-1], pa.timestamp("ns")),
     ["1969-12-31T23:59:59.999999999"]),
    ("timestamp ns tz", pa.array([1], pa.timestamp("ns", "+02:00")),
     ["1970-01-01T02:00:00.000000001+02:00"]),
    ("time32", pa.array([3661, None], pa.time32("s")), ["01:01:01", None]),
    ("time64 us", pa.array([1], pa.time64("us")), ["00:00:00.000001"]),
    ("time64 ns", pa.array([1], pa.time64("ns")), ["00:00:00.000000001"]),
    ("dictionary", pa.array(["b", None, "b"]).dictionary_encode(), ["b", None, "b"]),
    ("dictionary of int32", pa.array([7, 7], pa.int32()).dictionary_encode(), [Int(7), Int(7)]),
    ("list of int32", pa.array([[1, None], None, []], pa.list_(pa.int32())),
     [[Int(1), None], None, []]),
    ("large list of float32", pa.array([[0.5]], pa.large_list(pa.float32())), [[Float(0.5)]]),
    ("fixed-size list", pa.array([[1, 2], None], pa.list_(pa.int16(), 2)),
     [[Int(1), Int(2)], None]),
    ("list of lists", pa.array([[[1], [2, 3]], [None]], pa.list_(pa.list_(pa.int8()))),
     [[[Int(1)], [Int(2), Int(3)]], [None]]),
    ("struct", pa.array([{"a": 1, "b": "x"}, None],
                        pa.struct([("a", pa.int32()), ("b", pa.string())])),
     [{"a": Int(1), "b": "x"}, None]),
    ("list of structs",
     pa.array([[{"a": 1}], [{"a": None}]], pa.list_(pa.struct([("a", pa.int8())]))),
     [[{"a": Int(1)}], [{"a": None}]]),
    ("struct of lists", pa.array([{"l": [1]}], pa.struct([("l", pa.list_(pa.uint16()))])),
     [{"l": [Int(1)]}]),
    ("map of strings", pa.array([[("a", 1)], None], pa.map_(pa.string(), pa.int32())),
     [{"a": Int(1)}, None]),
    ("map repeating a key", pa.array([[("a", 1), ("a", 2)]], pa.map_(pa.string(), pa.int64())),
     [[{"key": "a", "value": 1}, {"key": "a", "value": 2}]]),
    ("map of int keys", pa.array([[(1, "x"), (2, None)]], pa.map_(pa.int32(), pa.string())),
     [[{"key": Int(1), "value": "x"}, {"key": Int(2), "value": None}]]),
]


@pytest.mark.parametrize(
    ("name", "array", "expected"), ARROW_CASES, ids=[c[0] for c in ARROW_CASES]
)
def test_each_arrow_type_becomes_its_plain_value(
    name: str, array: Any, expected: list[Any]
) -> None:
    got = column_values(array)
    assert typed(got) == typed(expected)
    # a slice, a chunked column and a table all give the same values
    assert typed(column_values(array.slice(1))) == typed(expected[1:])
    chunked = pa.chunked_array([array.slice(0, 1), array.slice(1)], array.type)
    assert typed(column_values(chunked)) == typed(expected)
    assert typed([r["c"] for r in records(pa.table({"c": array}))]) == typed(expected)


def test_nan_stays_a_float_and_null_stays_null() -> None:
    got = column_values(pa.array([math.nan, None], pa.float32()))
    assert type(got[0]) is Float and math.isnan(got[0]) and got[1] is None
    got = column_values(pa.array([math.nan, None]))
    assert type(got[0]) is float and math.isnan(got[0]) and got[1] is None


def test_a_plain_column_is_one_to_pylist_and_a_narrow_one_is_wrapped() -> None:
    table = pa.table({
        "narrow": pa.array([[{"a": 1}]], pa.list_(pa.struct([("a", pa.int32())]))),
        "plain": pa.array([[{"a": 1}]], pa.list_(pa.struct([("a", pa.int64())]))),
        "nanos": pa.array([1], pa.timestamp("ns")),
    })
    (row,) = records(table)
    assert type(row["plain"][0]["a"]) is int and type(row["narrow"][0]["a"]) is Int
    assert list(row) == ["narrow", "plain", "nanos"]  # the columns' order


def test_a_table_of_no_column_has_empty_records_and_names_are_unique() -> None:
    assert records(pa.table({"a": [1, 2]}).select([])) == [{}, {}]
    with pytest.raises(ValueError, match="two columns are named 'a'"):
        records(pa.Table.from_arrays([pa.array([1]), pa.array([2])], ["a", "a"]))
    # nor a struct, at any depth (Arrow allows it, then refuses to make the records)
    twins = pa.StructArray.from_arrays([pa.array([1]), pa.array(["x"])], names=["a", "a"])
    listed = pa.ListArray.from_arrays([0, 1], twins)
    with pytest.raises(ValueError, match="two fields are named 'l.a' side by side"):
        records(pa.table({"id": [1], "l": listed}))


def test_other_types_are_plain_values_or_left_for_the_engine_to_refuse() -> None:
    import uuid

    assert column_values(pa.array([uuid.UUID(int=1).bytes], pa.uuid())) == [str(uuid.UUID(int=1))]
    (delta,) = column_values(pa.array([1], pa.duration("s")))
    assert delta == dt.timedelta(seconds=1)  # no plain form: the engine names it
    with pytest.raises(Exception, match="timedelta"):
        toolkit.simulate([pa.table({"d": pa.array([1], pa.duration("s"))})], on_incompatible="fail")


# ------------------------------------------------------------------ pandas and Polars


def test_values_other_libraries_hold_that_json_has_no_word_for() -> None:
    """Each landed changed before: a Polars column of Python objects gave their memory
    addresses as bytes, an Arrow interval (months, days, nanoseconds) an array of three
    longs, and a pandas period its count of months since 1970."""
    odd = object()
    objects = pl.DataFrame({"id": [1, 2], "o": pl.Series([{"a": 1}, odd], dtype=pl.Object)})
    assert polars_records(objects) == [{"id": 1, "o": {"a": 1}}, {"id": 2, "o": odd}]
    sim = toolkit.simulate([objects])
    assert sim.rows == [{"id": 1, "o": {"a": 1}}]
    assert [(q.reason, q.field) for q in sim.quarantined] == [("invalid-value", "o")]

    span = pa.MonthDayNano([1, 2, 3])
    intervals = pa.table({"i": pa.array([span, None], pa.month_day_nano_interval())})
    assert records(intervals) == [{"i": span}, {"i": None}]
    [q] = toolkit.simulate([intervals]).quarantined
    assert (q.reason, q.field) == ("invalid-value", "i") and "MonthDayNano" in q.detail

    months = pd.DataFrame({"m": pd.period_range("2024-01", periods=2, freq="M")})
    days = pd.Series([pd.Period("2024-02-29", "D"), pd.NaT], dtype=object)
    assert pandas_records(months) == [{"m": "2024-01"}, {"m": "2024-02"}]
    assert pandas_records(pd.DataFrame({"d": days})) == [{"d": "2024-02-29"}, {"d": None}]
    # a day's text is a date to RULES 1, as any other text of that form
    assert str(toolkit.simulate([pd.DataFrame({"d": days})]).schema.fields[0].field_type) \
        == "date"


def test_a_pandas_frame_keeps_numpy_types_and_object_columns_keep_each_value() -> None:
    frame = pd.DataFrame(
        {
            "i8": np.array([1, -1, 0], np.int8),
            "u64": np.array([U64_MAX, 0, 1], np.uint64),
            "f32": np.array([0.5, np.nan, np.inf], np.float32),
            "f64": [1.5, np.nan, -np.inf],
            "ok": [True, False, True],
            "at": pd.to_datetime(["2024-01-01", None, "2024-01-01T00:00:00.000000001"],
                                 format="ISO8601"),
            "tz": pd.to_datetime(["2024-01-01T01:00:00+01:00", None, None], utc=True),
            "nullable": pd.array([1, None, 3], dtype="Int16"),
            "text": ["a", None, "c"],
            "mixed": pd.Series([1, "two", 3.5], dtype=object),
            "missing": pd.Series([np.nan, None, pd.NaT], dtype=object),
            "cells": pd.Series([[np.int32(1)], {"k": np.float32(0.5)}, Decimal("1.5")],
                               dtype=object),
            "category": pd.Categorical([1, "a", None]),
        },
    )
    frame.index = pd.Index(["x", "y", "z"])  # not a column
    rows = pandas_records(frame)
    assert typed(rows) == typed([
        {"i8": Int(1), "u64": U64_MAX, "f32": Float(0.5), "f64": 1.5, "ok": True,
         "at": dt.datetime(2024, 1, 1), "tz": dt.datetime(2024, 1, 1, tzinfo=UTC),
         "nullable": Int(1), "text": "a", "mixed": 1, "missing": None,
         "cells": [Int(1)], "category": 1},
        {"i8": Int(-1), "u64": 0, "f32": None, "f64": None, "ok": False, "at": None,
         "tz": None, "nullable": None, "text": None, "mixed": "two", "missing": None,
         "cells": {"k": Float(0.5)}, "category": "a"},
        {"i8": Int(0), "u64": 1, "f32": Float(math.inf), "f64": -math.inf, "ok": True,
         "at": "2024-01-01T00:00:00.000000001", "tz": None, "nullable": Int(3),
         "text": "c", "mixed": 3.5, "missing": None, "cells": Decimal("1.5"),
         "category": None},
    ])


def test_pandas_column_names_become_texts_and_must_be_distinct() -> None:
    assert pandas_records(pd.DataFrame([[1, 2]])) == [{"0": 1, "1": 2}]
    with pytest.raises(ValueError, match="two columns are named 'a'"):
        pandas_records(pd.DataFrame([[1, 2]], columns=["a", "a"]))
    assert pandas_records(pd.DataFrame(index=[0, 1])) == [{}, {}]


def test_a_polars_frame_keeps_its_types() -> None:
    frame = pl.DataFrame({
        "i": pl.Series([1, None], dtype=pl.Int32),
        "f": pl.Series([0.5, float("nan")], dtype=pl.Float32),
        "l": pl.Series([[1], []], dtype=pl.List(pl.Int16)),
        "s": pl.Series([{"a": 1}, None], dtype=pl.Struct({"a": pl.UInt8})),
        "t": pl.Series([dt.datetime(2024, 1, 1), None], dtype=pl.Datetime("ns")),
        "c": pl.Series(["x", "x"], dtype=pl.Categorical),
    })
    rows = polars_records(frame.lazy())
    assert math.isnan(rows[1].pop("f"))
    assert typed(rows) == typed([
        {"i": Int(1), "f": Float(0.5), "l": [Int(1)], "s": {"a": Int(1)},
         "t": dt.datetime(2024, 1, 1), "c": "x"},
        {"i": None, "l": [], "s": None, "t": None, "c": "x"},
    ])


# ------------------------------------------------------------------ every face alike

DRIFT = pd.DataFrame({"v": pd.Series([1, "x"], dtype=object), "n": np.array([1, 2], np.int32)})


def test_simulate_takes_frames_as_batches_not_as_lists_of_column_names(tmp_path: Path) -> None:
    arrow = pa.table({"v": [2.5], "n": pa.array([3], pa.int32())})
    path = tmp_path / "day.jsonl"
    path.write_text('{"v": true}\n{"v": null, "n": 4}\n')
    sim = toolkit.simulate([DRIFT, arrow, pl.from_arrow(arrow), str(path)])
    assert [p.batch for p in sim.plans] == [0, 1, 2, 3]
    assert len(sim.rows) == 2 + 1 + 1 + 2
    reference = toolkit.simulate([
        pandas_records(DRIFT), records(arrow), records(arrow),
        [{"v": True}, {"v": None, "n": 4}],
    ])
    assert sim.schema == reference.schema and sim.rows == reference.rows
    # a frame or a glob for ``batches`` itself: its own batches
    assert toolkit.simulate(DRIFT).rows == toolkit.simulate([DRIFT]).rows
    assert toolkit.simulate(str(path)).rows == toolkit.simulate([str(path)]).rows


def test_a_list_of_records_holding_numpy_values_is_one_batch() -> None:
    batch = [{"n": np.int32(1), "at": pd.Timestamp("2024-01-01")}, {"n": np.int64(2)}]
    assert toolkit.simulate([batch]).rows == toolkit.simulate([pandas_records(
        pd.DataFrame({"n": pd.Series([1, 2], dtype=object), "at": [pd.Timestamp("2024-01-01"),
                                                                   None]})
    )]).rows


def test_profile_takes_any_source(tmp_path: Path) -> None:
    path = tmp_path / "day.jsonl"
    path.write_text('{"a": 1}\n{"a": "x"}\n')
    assert toolkit.profile(str(path)).records == 2
    assert toolkit.profile(DRIFT).records == 2
    assert toolkit.profile(DRIFT, batch=3) == toolkit.profile(pandas_records(DRIFT), batch=3)


def test_preview_and_explore_take_frames(lakehouse: Catalog) -> None:
    from toolkit.notebook import statistics_model
    from toolkit.pipeline.preview import plan_preview

    preview = plan_preview(DRIFT, "frames.preview", lakehouse)
    reference = plan_preview(pandas_records(DRIFT), "frames.preview", lakehouse)
    assert preview.plan == reference.plan and preview.records == reference.records
    model = statistics_model(DRIFT)
    assert model.records == 2 and model.source == "" and model.what == "2 records in 1 batch"


def test_spark_workers_read_typed_arrow_chunks_with_their_types() -> None:
    """The Arrow a typed Spark DataFrame hands its Python workers: IntegerType as int32,
    ShortType int16, ByteType int8, FloatType float32, DecimalType decimal128, BinaryType
    binary."""
    chunk = pa.record_batch({
        "i": pa.array([1], pa.int32()), "s": pa.array([2], pa.int16()),
        "b": pa.array([3], pa.int8()), "f": pa.array([0.5], pa.float32()),
        "d": pa.array([Decimal("1.5")], pa.decimal128(10, 2)), "bin": pa.array([b"x"]),
        "l": pa.array([[1]], pa.list_(pa.int32())), "long": pa.array([4], pa.int64()),
    })
    assert typed(records_of(chunk, "rows")) == typed([
        {"i": Int(1), "s": Int(2), "b": Int(3), "f": Float(0.5), "d": Decimal("1.50"),
         "bin": b"x", "l": [Int(1)], "long": 4},
    ])


def test_big_integers_of_a_frame_are_kept_as_text() -> None:
    """RULES 1: an integer beyond 64 signed bits (uint64's largest) is typed string."""
    sim = toolkit.simulate([pa.table({"u": pa.array([U64_MAX, 1], pa.uint64())})])
    assert [(f.name, str(f.field_type)) for f in sim.schema.fields] == [
        ("u", "string"), ("u_long", "long")
    ]
    assert sim.rows[0] == {"u": str(U64_MAX), "u_long": None} and sim.rows[1]["u_long"] == 1


# ------------------------------------------------------------------ nothing lost (hypothesis)

INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
MISSING = object()  # a value pandas calls missing: no input value to recover


def int_column(dtype: str) -> st.SearchStrategy[tuple[Any, list[Any]]]:
    info = np.iinfo(dtype)
    return st.lists(st.integers(int(info.min), int(info.max)), min_size=3, max_size=3).map(
        lambda vs: (np.array(vs, dtype), list(vs))
    )


def float_column(dtype: str) -> st.SearchStrategy[tuple[Any, list[Any]]]:
    width = 32 if dtype == "float32" else 64

    def made(vs: list[float]) -> tuple[Any, list[Any]]:
        array = np.array(vs, dtype)
        return array, [MISSING if math.isnan(v) else float(v) for v in array]

    return st.lists(st.floats(width=width), min_size=3, max_size=3).map(made)


def datetime_column() -> st.SearchStrategy[tuple[Any, list[Any]]]:
    epoch = np.datetime64("1970-01-01T00:00:00", "ns")

    def made(vs: list[int | None]) -> tuple[Any, list[Any]]:
        array = np.array(
            [np.datetime64("NaT", "ns") if v is None else epoch + np.timedelta64(v, "ns")
             for v in vs], "datetime64[ns]",
        )
        return array, [MISSING if v is None else expected_instant(v) for v in vs]

    nanos = st.one_of(st.none(), st.integers(-(2**62), 2**62), st.integers(-10**6, 10**6))
    return st.lists(nanos, min_size=3, max_size=3).map(made)


def expected_instant(nanos: int) -> Any:
    """A naive datetime (UTC) of whole microseconds, else numpy's own ISO text of it with
    its nine digits (the engine types that text string: no timestamp holds it)."""
    if nanos % 1000:
        return str(np.datetime_as_string(np.datetime64(nanos, "ns"), unit="ns"))
    return dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=nanos // 1000)


def object_column() -> st.SearchStrategy[tuple[Any, list[Any]]]:
    cell = st.one_of(
        st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=5),
    )

    def made(vs: list[Any]) -> tuple[Any, list[Any]]:
        gone = [v is None or (type(v) is float and math.isnan(v)) for v in vs]
        return pd.Series(vs, dtype=object), [
            MISSING if m else v for v, m in zip(vs, gone, strict=True)
        ]

    return st.lists(cell, min_size=3, max_size=3).map(made)


def nullable_column() -> st.SearchStrategy[tuple[Any, list[Any]]]:
    def made(vs: list[int | None]) -> tuple[Any, list[Any]]:
        return pd.array(vs, dtype="Int32"), [MISSING if v is None else v for v in vs]

    return st.lists(st.one_of(st.none(), st.integers(-(2**31), 2**31 - 1)), min_size=3,
                    max_size=3).map(made)


COLUMN = st.one_of(
    *[int_column(d) for d in INT_DTYPES],
    float_column("float32"), float_column("float64"),
    st.lists(st.booleans(), min_size=3, max_size=3).map(lambda vs: (np.array(vs), vs)),
    datetime_column(), object_column(), nullable_column(),
)


@examples(60)
@given(st.lists(COLUMN, min_size=1, max_size=5))
def test_nothing_of_a_pandas_frame_is_lost(columns: list[tuple[Any, list[Any]]]) -> None:
    frame = pd.DataFrame({f"c{i}": data for i, (data, _) in enumerate(columns)})
    inputs = [
        {f"c{i}": vs[r] for i, (_, vs) in enumerate(columns) if vs[r] is not MISSING}
        for r in range(3)
    ]
    sim = toolkit.simulate([frame])
    assert not sim.quarantined
    if not sim.table_schema.fields:  # only nulls: no column, no row, and a warning says so
        assert [(type(w), w.count) for w in sim.warnings] == [(UnwrittenRecords, 3)]
        return
    assert len(sim.rows) == 3
    oracle = Oracle(detect_dates=True)
    for record, row in zip(inputs, sim.rows, strict=True):
        lost = oracle.lost(record, sim.table_schema, builtin(row))
        assert not lost, f"{lost}\n{sim.schema}"


def builtin(value: Any) -> Any:
    """A row with Int and Float as the int and float they are equal to (the oracle asks
    for exact builtin types)."""
    if type(value) is dict:
        return {k: builtin(v) for k, v in value.items()}
    if type(value) is list:
        return [builtin(v) for v in value]
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return value


# ------------------------------------------------------------------ ingest equals simulate

SPARK_FRAMES = [
    pd.DataFrame({
        "id": np.array([1, 2, 3], np.int32),
        "v": pd.Series([1, "two", None], dtype=object),
        "f": np.array([0.5, np.nan, np.inf], np.float32),
        "big": np.array([U64_MAX, 1, 0], np.uint64),
        "at": pd.to_datetime(["2024-01-01T00:00:00.000001", None,
                              "2024-01-01T00:00:00.000000001"], format="ISO8601"),
        "amount": pd.Series([Decimal("1.10"), None, Decimal("-2")], dtype=object),
        "blob": pd.Series([b"\x00", None, b"x"], dtype=object),
        "tags": pd.Series([[np.int16(1)], [], None], dtype=object),
    }),
    pa.table({
        "id": pa.array([4], pa.int64()), "v": [2.5],
        "nested": pa.array([{"a": [1, None]}], pa.struct([("a", pa.list_(pa.int32()))])),
        "at": pa.array([dt.datetime(2024, 1, 2, tzinfo=UTC)], pa.timestamp("us", "UTC")),
    }),
    # what other libraries hold that needs care (test_values_other_libraries_hold...)
    pd.DataFrame({"id": [5, 6], "month": pd.period_range("2024-01", periods=2, freq="M")}),
    pl.DataFrame({"id": [7, 8], "o": pl.Series([{"a": 1}, object()], dtype=pl.Object)}),
]


@pytest.mark.spark
@pytest.mark.parametrize("policy", ["auto", "widen"])
def test_ingesting_frames_equals_simulating_them(
    lakehouse: Catalog, spark: SparkSession, policy: str
) -> None:
    name = f"frames.{policy}"
    options = {"policy": "widen", "on_incompatible": "quarantine"} if policy == "widen" else {}
    reports = [
        toolkit.ingest(frame, name, catalog=lakehouse, spark=spark, batch_id=f"b{i}", **options)
        for i, frame in enumerate(SPARK_FRAMES)
    ]
    sim = toolkit.simulate(SPARK_FRAMES, **options)
    assert [r.plan.changes for r in reports] == [p.changes for p in sim.plans]
    assert sum(r.quarantined for r in reports) == len(sim.quarantined)
    assert_table_is_the_simulation(spark, lakehouse, name, sim)


@pytest.mark.spark
def test_a_typed_spark_dataframe_keeps_its_types(lakehouse: Catalog, spark: SparkSession) -> None:
    from toolkit.pipeline.sources import source_kind

    frame = spark.createDataFrame(
        [(1, 2, 3, 0.5, Decimal("1.50"), bytearray(b"x"), 4)],
        "i int, s short, b byte, f float, d decimal(10,2), bin binary, l long",
    )
    (rows,) = source_kind(frame).records(frame)
    assert typed(rows) == typed([
        {"i": Int(1), "s": Int(2), "b": Int(3), "f": Float(0.5), "d": Decimal("1.50"),
         "bin": b"x", "l": 4},
    ])
    toolkit.ingest(frame, "frames.spark", catalog=lakehouse, spark=spark, policy="widen")
    sim = toolkit.simulate([frame], policy="widen")
    types = {f.name: str(f.field_type) for f in sim.schema.fields}
    assert types == {"i": "int", "s": "int", "b": "int", "f": "float",
                     "d": "decimal(38, 18)", "bin": "binary", "l": "long"}
    assert_table_is_the_simulation(spark, lakehouse, "frames.spark", sim)
