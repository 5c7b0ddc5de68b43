"""Spark's progress, read from its status tracker while a block runs (toolkit.spark.progress).

No timing is asserted: the job's later tasks wait until the reporter has seen the earlier
ones done, so a progress strictly between 0 and 100 is seen on any machine.
"""

from __future__ import annotations

import doctest
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from toolkit.spark import progress
from toolkit.spark.progress import Progress, described, set_reporter, tracking

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

#: the job's partitions, and how many run before the rest wait for the reporter
PARTITIONS = 8
EARLY = 2


@pytest.fixture
def seen() -> Iterator[list[Progress]]:
    """Every progress reported while the test runs (the reporter installed before comes
    back afterwards)."""
    got: list[Progress] = []
    previous = set_reporter(got.append)
    yield got
    set_reporter(previous)


def held_back(marker: Path) -> Callable[[int, Iterable[int]], Iterable[int]]:
    """A partition function whose partitions from EARLY on wait until ``marker`` exists
    (a minute at most, so a broken test fails rather than hangs)."""

    def count(index: int, rows: Iterable[int]) -> Iterator[int]:
        import os
        import time

        deadline = time.monotonic() + 60
        while index >= EARLY and not os.path.exists(marker) and time.monotonic() < deadline:
            time.sleep(0.02)
        yield sum(1 for _ in rows)

    return count


def run_held_back(spark: SparkSession, marker: Path, label: str) -> list[Progress]:
    """Run a job of PARTITIONS tasks in ``tracking(label)`` + ``described("Profiling")``,
    its later tasks held back until the reporter has seen some done; what was reported."""
    got: list[Progress] = []

    def record(p: Progress) -> None:
        got.append(p)
        if p.percent is not None and 0 < p.percent < 100:
            marker.touch()  # the rest of the job may finish now

    previous = set_reporter(record)
    try:
        with tracking(spark, label, every=0.05) as track, described(spark, "Profiling"):
            rdd = spark.sparkContext.parallelize(range(8000), PARTITIONS)
            counted = sum(rdd.mapPartitionsWithIndex(held_back(marker)).collect())
            track.finish(f"Counted {counted:,} rows")
    finally:
        set_reporter(previous)
    assert counted == 8000
    return got


def test_a_job_reports_rising_percentages_with_its_step_then_100(
    spark: SparkSession, tmp_path: Path
) -> None:
    got = run_held_back(spark, tmp_path / "go", "Counting rows")
    running = [p for p in got if not p.finished]
    assert got[0] == Progress(got[0].key, "Counting rows")  # shown before any job runs
    percents = [p.percent for p in running if p.percent is not None]
    assert any(0 < p < 100 for p in percents), got
    assert all(0 <= p < 100 for p in percents) and percents == sorted(percents)
    middle = next(p for p in running if p.percent and 0 < p.percent < 100)
    assert middle.doing == "Profiling" and middle.total == PARTITIONS
    assert 0 < middle.done < PARTITIONS
    assert "Counting rows: Profiling " in middle.line and f"of {PARTITIONS} tasks" in middle.line
    final = got[-1]
    assert (final.state, final.percent, final.done, final.total) == (
        "done", 100, PARTITIONS, PARTITIONS)
    assert final.line.startswith("Counted 8,000 rows (")
    assert {p.key for p in got} == {final.key}


def test_a_thread_with_a_job_group_keeps_it_and_counts_only_the_blocks_jobs(
    spark: SparkSession, tmp_path: Path
) -> None:
    """As a streaming query's thread: its group cancels its jobs when the query stops."""
    sc: Any = spark.sparkContext  # None removes a property (pyspark's hints say str only)
    sc.setLocalProperty("spark.jobGroup.id", "mine")
    try:
        assert sc.parallelize(range(30), 3).count() == 30  # a job of that group, before
        got = run_held_back(spark, tmp_path / "go", "Counting rows")
        assert sc.getLocalProperty("spark.jobGroup.id") == "mine"
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    middle = next(p for p in got if p.percent and 0 < p.percent < 100)
    assert middle.total == PARTITIONS  # not the 3 tasks of the job before


def test_the_block_leaves_no_thread_and_spark_settings_as_they_were(
    spark: SparkSession, seen: list[Progress]
) -> None:
    sc: Any = spark.sparkContext

    @described(None, "Writing")  # the running block's session
    def write() -> None:
        assert sc.getLocalProperty("spark.job.description") == "Writing"
        assert spark.range(10).count() == 10

    with tracking(spark, "Counting", every=0.01):
        assert sc.getLocalProperty("spark.jobGroup.id").startswith("toolkit-progress-")
        write()
        assert sc.getLocalProperty("spark.job.description") is None
        assert any(t.name.startswith("toolkit-progress-") for t in threading.enumerate())
    assert sc.getLocalProperty("spark.jobGroup.id") is None
    assert not [t for t in threading.enumerate() if t.name.startswith("toolkit-progress-")]
    assert seen[-1].state == "done"


def test_an_exception_inside_the_block_propagates_unchanged(
    spark: SparkSession, seen: list[Progress]
) -> None:
    failure = ValueError("the batch is bad")
    with pytest.raises(ValueError) as raised, tracking(spark, "Ingesting", every=0.01):
        spark.range(3).count()
        raise failure
    assert raised.value is failure
    assert seen[-1].state == "failed"
    assert seen[-1].line.startswith("Ingesting: failed after ")
    assert not [t for t in threading.enumerate() if t.name.startswith("toolkit-progress-")]


def test_a_failing_reporter_never_reaches_the_work(spark: SparkSession) -> None:
    def broken(p: Progress) -> None:
        raise RuntimeError("the screen is gone")

    previous = set_reporter(broken)
    try:
        with tracking(spark, "Counting", every=0.01):
            assert spark.range(5).count() == 5
    finally:
        set_reporter(previous)


def test_a_block_inside_a_block_is_a_step_of_it(
    spark: SparkSession, seen: list[Progress]
) -> None:
    with tracking(spark, "Replaying 3 records", every=60), tracking(
        spark, "Ingesting batch r1"
    ) as inner:
        inner.finish("not shown: the outer block has the final line")
    assert {p.key for p in seen} == {seen[0].key}
    assert [p.state for p in seen] == ["running", "done"]
    assert seen[-1].line.startswith("Replaying 3 records: done (")


def test_without_a_reporter_nothing_runs_and_nothing_changes(spark: SparkSession) -> None:
    previous = set_reporter(None)
    try:
        before = threading.active_count()
        with tracking(spark, "Quiet", every=0.01) as track:
            assert spark.sparkContext.getLocalProperty("spark.jobGroup.id") is None
            assert threading.active_count() == before
            track.finish("nobody reads this")
    finally:
        set_reporter(previous)


def test_the_starting_message_and_ready_line(seen: list[Progress]) -> None:
    with tracking(None, "Starting Spark...", every=60) as track:
        track.finish("Spark ready")
    assert [p.line.split(" (")[0] for p in seen] == ["Starting Spark...", "Spark ready"]


def test_the_docstring_examples() -> None:
    assert doctest.testmod(progress, optionflags=doctest.ELLIPSIS).failed == 0
