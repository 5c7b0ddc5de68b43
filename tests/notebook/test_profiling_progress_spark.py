"""Progress while a notebook panel has Spark read or profile its source, as ingest shows it
(toolkit.spark.progress): ``toolkit.explore`` of a Spark DataFrame (or of files, given
``spark=``) shows "Exploring ...: Profiling 42% (...)", ``toolkit.preview`` of a Spark
DataFrame "Previewing ... against db.x: Reading 42% (...)", each ending on one final line.

No timing is asserted: the source's later partitions wait until the reporter has seen some
tasks done (as tests/spark/test_progress_spark.py does), so a percentage strictly between
0 and 100 is seen on any machine.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from pyiceberg.catalog import Catalog

from toolkit.notebook import explore, preview
from toolkit.spark.progress import Progress, set_reporter

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

pytestmark = pytest.mark.spark

PARTITIONS = 8
EARLY = 2  # partitions that run before the rest wait for the reporter
RECORDS = 40


def held_back(marker: Path) -> Callable[[int, Iterable[str]], Iterator[str]]:
    """Partitions from EARLY on wait until ``marker`` exists (a minute at most, so a broken
    test fails rather than hangs)."""

    def lines(index: int, rows: Iterable[str]) -> Iterator[str]:
        import os
        import time

        deadline = time.monotonic() + 60
        while index >= EARLY and not os.path.exists(marker) and time.monotonic() < deadline:
            time.sleep(0.02)
        yield from rows

    return lines


def json_lines(spark: SparkSession, marker: Path) -> DataFrame:
    """A DataFrame of one string column of JSON lines (``n`` drifts from long to string),
    whose partitions are held back until ``marker`` exists."""
    lines = [json.dumps({"n": i if i % 4 else str(i), "id": i}) for i in range(RECORDS)]
    rdd = spark.sparkContext.parallelize(lines, PARTITIONS)
    held = rdd.mapPartitionsWithIndex(held_back(marker))
    return spark.createDataFrame(held.map(lambda line: (line,)), "value string")


def reported(marker: Path, run: Callable[[], Any]) -> tuple[Any, list[Progress]]:
    """What ``run`` returns, and every progress reported meanwhile; the held-back
    partitions go on once a percentage between 0 and 100 was reported."""
    got: list[Progress] = []

    def record(p: Progress) -> None:
        got.append(p)
        if p.percent is not None and 0 < p.percent < 100:
            marker.touch()

    previous = set_reporter(record)
    try:
        result = run()
    finally:
        set_reporter(previous)
    return result, got


def assert_one_block(got: list[Progress], label: str, step: str, final: str) -> None:
    """One block: first its label, then rising percentages of ``step``, then its final
    line."""
    assert got and got[0].label == label and not got[0].finished, got
    assert {p.key for p in got} == {got[0].key}  # one line, updated in place
    running = [p for p in got if not p.finished and p.percent is not None]
    middle = [p for p in running if 0 < (p.percent or 0) < 100]
    assert middle, got
    assert all(p.doing == step for p in middle)
    assert f"{label}: {step} " in middle[0].line and "% (" in middle[0].line
    percents = [p.percent or 0 for p in running if p.doing == step]
    assert percents == sorted(percents)
    assert got[-1].state == "done" and got[-1].percent == 100
    assert got[-1].line.startswith(f"{final} ("), got[-1].line


def test_exploring_a_dataframe_shows_its_profiling_progress(
    spark: SparkSession, tmp_path: Path
) -> None:
    marker = tmp_path / "go"
    df = json_lines(spark, marker)
    panel, got = reported(marker, lambda: explore(df))
    assert panel.base.records == RECORDS
    assert_one_block(
        got, "Exploring a Spark DataFrame", "Profiling",
        f"Profiled {RECORDS} records of a Spark DataFrame",
    )


def test_previewing_a_dataframe_shows_its_reading_progress(
    spark: SparkSession, lakehouse: Catalog, tmp_path: Path
) -> None:
    marker = tmp_path / "go"
    df = json_lines(spark, marker)
    panel, got = reported(marker, lambda: preview(df, "notebook_ui.progress", lakehouse))
    assert panel.model.records == RECORDS and panel.model.new_table
    assert_one_block(
        got, "Previewing a Spark DataFrame against notebook_ui.progress", "Reading",
        f"Read {RECORDS} records of a Spark DataFrame to preview against notebook_ui.progress",
    )


def test_without_a_reporter_nothing_is_shown_and_the_panel_is_the_same(
    spark: SparkSession, tmp_path: Path
) -> None:
    (tmp_path / "go").touch()  # nothing waits
    previous = set_reporter(None)
    try:
        panel = explore(json_lines(spark, tmp_path / "go"))
    finally:
        set_reporter(previous)
    assert panel.base.records == RECORDS
    assert [t.label for t in panel.base.field("n").types] == ["long", "string"]
