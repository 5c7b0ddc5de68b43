"""Child process of ``test_kafka_crashes.py``: stream a topic into a table, and die at a
chosen stage of the second micro-batch.

Usage: ``kafka_crash_child.py <catalog folder> <kafka url> <table> [<stage>]``. The
stream reads two messages per micro-batch (``max_messages=2``, one partition). Once the
first micro-batch is in, the stage is armed (monkeypatched here; nothing in the product
knows), and the whole process group (this Python, Spark's JVM, its workers) is killed
with SIGKILL at that stage of the second one:

* ``polled``: right after the messages were read from the broker;
* ``schema``: right after the schema change was committed;
* ``writing``: while the data is written: Spark has written its data files (staged,
  invisible), the commit that publishes them has not run;
* ``committed``: right after the data commit;
* ``group``: before the consumer group's offsets are committed (the table has the batch).

Without a stage, it streams what the topic holds and exits. ``kafka_crash_child.py
<catalog folder> --resume <kafka url> <table> [<kafka url> <table> ...]`` resumes several
streams, one after the other, in one process (one JVM instead of one a table).
"""

from __future__ import annotations

import sys
from typing import Any

import toolkit
from tests.reliability.children import child_spark, wait_to_go
from tests.reliability.crash_child import after, die
from toolkit import kafka
from toolkit.pipeline import ingest as pipeline
from toolkit.spark import batches as spark_batches


def before(fn: Any) -> Any:
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        die()
        return fn(*args, **kwargs)

    return wrapped


def arm(stage: str) -> None:
    pipeline._one_pass_codes = lambda *args: None  # the planned path's stages
    if stage == "polled":
        kafka.TopicReader.read = after(kafka.TopicReader.read)  # type: ignore[method-assign]
    elif stage == "schema":
        pipeline._plan_and_commit = after(pipeline._plan_and_commit)
    elif stage == "writing":
        # JSON lines are routed in the JVM, not in Python workers: the kill comes once
        # Spark has written (and staged) the data files, before they are published
        spark_batches.publish = before(spark_batches.publish)
    elif stage == "committed":
        pipeline.write_batch = after(pipeline.write_batch)
    elif stage == "group":
        kafka.TopicReader.commit = before(kafka.TopicReader.commit)  # type: ignore[method-assign]
    else:
        raise SystemExit(f"unknown stage {stage!r}")


def main(folder: str, url: str, table: str, *stage: str) -> None:
    cat = toolkit.catalog(folder)
    spark = toolkit.spark_session(cat, **child_spark(cat))

    def armed(report: Any) -> None:
        print(f"{table} {report.batch_id}: rows={report.rows_written}", flush=True)
        if stage:
            arm(stage[0])

    query = toolkit.stream(url, table, cat, spark, trigger={"availableNow": True},
                           max_messages=2, on_batch=armed)
    query.awaitTermination()
    spark.stop()


def resume(folder: str, *pairs: str) -> None:
    """Stream each (url, table) pair to the end of its topic, one after the other (nothing
    armed: the product's own code, as a restarted stream runs it)."""
    cat = toolkit.catalog(folder)
    spark = toolkit.spark_session(cat, **child_spark(cat))
    wait_to_go()  # until the crashed children are gone

    def printer(table: str) -> Any:
        def show(report: Any) -> None:
            print(f"{table} {report.batch_id}: rows={report.rows_written}", flush=True)

        return show

    for url, table in zip(pairs[::2], pairs[1::2], strict=True):
        toolkit.stream(url, table, cat, spark, trigger={"availableNow": True},
                       max_messages=2, on_batch=printer(table)).awaitTermination()
    spark.stop()


if __name__ == "__main__":
    if sys.argv[2:3] == ["--resume"]:
        resume(sys.argv[1], *sys.argv[3:])
    else:
        main(*sys.argv[1:])
