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
    with pytest.raises(ValueError, match="choose one of jsonl, jsonl-dataframe"):
        source_named("parquet")


def test_only_file_kinds_stream() -> None:
    assert [k.name for k in SOURCE_KINDS if k.stream_reader is not None] == ["jsonl"]


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
