"""Child process of ``test_crashes.py``: ingest batches, and die at a chosen stage.

Usage: ``crash_child.py <catalog folder> <batches.json> <step> [<step> ...]`` where a
step is ``<table>:<batch index>`` or ``<table>:<batch index>:<stage>``. A step with a
stage wraps one of the pipeline's functions (monkeypatched here, nothing in the product
knows) so that the whole process group (this Python, Spark's JVM, its workers) is
killed with SIGKILL at that stage of that ingest:

* ``profiled``: right after the batch was profiled on Spark;
* ``schema``: right after the schema change was committed;
* ``writing``: while the data is written: the batch is split in two partitions run one
  after the other (``local[1]``); the second one's worker kills everything once the
  first one's data file is written, before the append is committed;
* ``committed``: right after the data commit, before ``ingest`` returns.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import toolkit
from tests.reliability.children import child_spark, wait_to_go
from toolkit.pipeline import ingest as pipeline
from toolkit.spark import batches as spark_batches

#: this child's process group (its own session): killing it kills Spark's JVM too
GROUP = os.getpgrp()


def die() -> None:
    os.killpg(GROUP, signal.SIGKILL)


def after(fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        result = fn(*args, **kwargs)
        die()
        return result

    return wrapped


def route_then_die(batches: Iterator[Any], *, group: int = GROUP, **kwargs: Any) -> Any:
    """Runs in a Spark worker: the second partition kills the child's process group."""
    from pyspark import TaskContext

    from toolkit.spark.workers import route_partition

    if TaskContext.get().partitionId() > 0:
        os.killpg(group, signal.SIGKILL)
    yield from route_partition(batches, **kwargs)


def split_in_two(fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        df, kind = fn(*args, **kwargs)
        return df.repartition(2), kind

    return wrapped


def arm(stage: str) -> None:
    # the stages are those of the planned path (observe, plan, route): a batch that fits
    # its table would be read once instead (tests/integration/test_one_pass.py)
    pipeline._one_pass_codes = lambda *args: None
    if stage == "profiled":
        pipeline.observe_on_spark = after(pipeline.observe_on_spark)
    elif stage == "schema":
        pipeline._plan_and_commit = after(pipeline._plan_and_commit)
    elif stage == "writing":
        pipeline.as_dataframe = split_in_two(pipeline.as_dataframe)
        spark_batches.route_partition = route_then_die
    elif stage == "committed":
        pipeline.write_batch = after(pipeline.write_batch)
    else:
        raise SystemExit(f"unknown stage {stage!r}")


def main(folder: str, batches_file: str, *steps: str) -> None:
    batches = json.loads(Path(batches_file).read_text())
    cat = toolkit.catalog(folder)
    spark = toolkit.spark_session(cat, **child_spark(cat))
    wait_to_go()  # the re-run: until the crashed children are gone
    for step in steps:
        table, index, *stage = step.split(":")
        if stage:
            arm(stage[0])
        batch = batches[int(index)]
        report = toolkit.ingest(batch["records"], table, cat, spark, batch_id=batch["id"])
        print(f"{table} {batch['id']}: skipped={report.skipped} rows={report.rows_written}")
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:])
