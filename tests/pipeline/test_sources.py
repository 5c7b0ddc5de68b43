"""The source registry: each kind of source is chosen for its sources, and every kind gives
the same Python records for the same data (the records part without Spark; the DataFrame
entries with the shared session)."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from toolkit.pipeline.sources import SOURCE_KINDS, source_kind, source_named

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DAY1 = [{"n": 1, "s": "a"}, {"n": 2, "s": None}]
DAY2 = [{"n": 2.5, "tags": ["x", "y"]}, {"n": "three", "nested": {"a": True}}]


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + "\n")  # a blank line
    return path


def test_every_kind_has_a_unique_name_and_a_valid_mode() -> None:
    names = [k.name for k in SOURCE_KINDS]
    assert len(set(names)) == len(names)
    for kind in SOURCE_KINDS:
        assert kind.mode in ("json", "pickle", "rows")
        assert kind.home in ("memory", "files", "spark")
        assert source_named(kind.name) is kind


def test_python_records_are_one_batch_and_a_list_of_lists_is_batches() -> None:
    kind = source_kind(DAY1)
    assert (kind.name, kind.mode, kind.home, kind.jvm_fast_path) == (
        "records", "pickle", "memory", False
    )
    assert kind.records(DAY1) == [DAY1]
    assert source_kind([DAY1, DAY2]).records([DAY1, DAY2]) == [DAY1, DAY2]
    assert kind.records(iter(DAY1)) == [DAY1]  # any iterable of records
    assert source_kind(r for r in DAY1).name == "records"  # matching consumes nothing
    assert kind.records([]) == [[]]


def test_a_jsonl_path_or_glob_is_files_each_one_batch(tmp_path: Path) -> None:
    one = write(tmp_path / "day1.jsonl", DAY1)
    write(tmp_path / "day2.jsonl", DAY2)
    for source in (str(one), one):
        kind = source_kind(source)
        assert (kind.name, kind.mode, kind.home, kind.jvm_fast_path) == (
            "jsonl", "json", "files", True
        )
        assert kind.records(source) == [DAY1]
        assert kind.stream_reader is not None
    glob = str(tmp_path / "day*.jsonl")
    assert source_kind(glob).records(glob) == [DAY1, DAY2]  # in name order
    with pytest.raises(FileNotFoundError, match="no file matches"):
        source_kind(str(tmp_path / "none*.jsonl")).records(str(tmp_path / "none*.jsonl"))


@pytest.mark.parametrize("source", [42, {"n": 1}, b"{}", None])
def test_a_source_of_no_kind_is_refused_with_the_accepted_kinds(source: Any) -> None:
    with pytest.raises(TypeError) as err:
        source_kind(source)
    for kind in SOURCE_KINDS:
        assert f"{kind.name}: {kind.accepts}" in str(err.value)


def test_an_unknown_kind_name_lists_the_kinds() -> None:
    with pytest.raises(ValueError, match="choose one of jsonl, parquet, orc, csv, avro, jsonl-"):
        source_named("xml")


def test_only_file_kinds_stream() -> None:
    streamable = [k.name for k in SOURCE_KINDS if k.stream_reader is not None]
    assert streamable == ["jsonl", "parquet", "orc", "csv"]  # tests/pipeline/test_files.py


@pytest.mark.spark
def test_dataframes_are_chosen_by_their_columns_and_give_the_same_records(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = write(tmp_path / "day1.jsonl", DAY1)
    text = source_kind(path).to_dataframe(spark, path)
    kind = source_kind(text)
    assert (kind.name, kind.mode, kind.home, kind.jvm_fast_path) == (
        "jsonl-dataframe", "json", "spark", True
    )
    assert kind.records(text) == [DAY1]

    typed = spark.createDataFrame([(1, "a"), (2, None)], "n long, s string")
    kind = source_kind(typed)
    assert (kind.name, kind.mode, kind.home, kind.jvm_fast_path) == (
        "dataframe", "rows", "spark", False
    )
    assert kind.to_dataframe(spark, typed) is typed
    assert kind.records(typed) == [DAY1]

    records = source_kind(DAY1).to_dataframe(spark, DAY1)
    assert source_kind(DAY1).mode == "pickle"
    assert [pickle.loads(r[0]) for r in records.collect()] == DAY1


# ------------------------------------------------------------------ in-memory frames

FRAME_RECORDS = [{"n": 1, "s": "a"}, {"n": 2, "s": None}]


def frames() -> dict[str, Any]:
    """The same two records as a frame of each kind (pandas, Arrow, Polars)."""
    import pandas as pd
    import polars as pl
    import pyarrow as pa
    import pyarrow.dataset as ds

    table = pa.table({"n": [1, 2], "s": ["a", None]})
    return {
        "pandas": pd.DataFrame({"n": [1, 2], "s": ["a", None]}),
        "arrow": table,
        "arrow-batch": table.to_batches()[0],
        "arrow-reader": pa.RecordBatchReader.from_batches(table.schema, table.to_batches()),
        "arrow-dataset": ds.dataset(table),
        "polars": pl.DataFrame({"n": [1, 2], "s": ["a", None]}),
        "polars-lazy": pl.LazyFrame({"n": [1, 2], "s": ["a", None]}),
    }


@pytest.mark.parametrize("name", list(frames()))
def test_a_frame_is_chosen_by_its_class_and_is_one_batch_of_records(name: str) -> None:
    frame = frames()[name]
    kind = source_kind(frame)
    assert (kind.name, kind.mode, kind.home, kind.jvm_fast_path) == (
        name.split("-")[0], "pickle", "memory", False
    )
    assert kind.records(frame) == [FRAME_RECORDS]


def test_frame_kinds_come_after_spark_dataframes_and_before_records() -> None:
    names = [k.name for k in SOURCE_KINDS]
    assert names.index("dataframe") < names.index("pandas") < names.index("records")
    assert names.index("arrow") < names.index("records")
    assert names.index("polars") < names.index("records")


def test_frames_are_told_without_importing_pandas_or_polars() -> None:
    import subprocess
    import sys

    code = (
        "import sys, toolkit.pipeline.sources as s; s.source_kind([{'a': 1}]); "
        "print('pandas' in sys.modules, 'polars' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.spark
def test_a_frame_travels_to_spark_as_its_typed_records_pickled(spark: SparkSession) -> None:
    import pandas as pd

    from toolkit.core.values.scalars import Int

    frame = pd.DataFrame({"n": pd.array([1, 2], dtype="Int32"), "s": ["a", None]})
    kind = source_kind(frame)
    rows = [pickle.loads(r[0]) for r in kind.to_dataframe(spark, frame).collect()]
    assert rows == FRAME_RECORDS and type(rows[0]["n"]) is Int
