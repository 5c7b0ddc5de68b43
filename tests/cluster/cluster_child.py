"""Child process of ``test_beyond_one_machine.py``: a user's session on a team's set-up.

Usage: ``cluster_child.py <config.json> <out.json>``. It opens the PostgreSQL catalog with
an S3 warehouse, starts Spark on the standalone cluster, ingests Python records (routed on
the executors, which get the toolkit only as the zip Spark ships them), streams an S3
folder, and writes what it saw to ``out.json`` for the test to check.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import toolkit
from tests.integration.readers import canonical, read_spark
from tests.reliability.children import SHORT_LIVED_JVM, child_spark, embedded_class_archive


def where_toolkit_is(_: object) -> tuple[str, int]:
    import toolkit as shipped

    return str(shipped.__file__), os.getpid()


def main(config: str, out: str) -> None:
    cfg = json.loads(Path(config).read_text())
    cat = toolkit.catalog(cfg["catalog"], warehouse=cfg["warehouse"], **cfg["s3"])
    # the driver and the executors live for a few small batches (SHORT_LIVED_JVM); the
    # executors map the classes of the class archive make jvm-prepare recorded, as the
    # driver does (child_spark): their class path is the driver's (the cluster's conf
    # folder is left off it, tests/servers.py), so the JVM takes it
    executors = " ".join([SHORT_LIVED_JVM, *embedded_class_archive()])
    conf = {"spark.executor.memory": "1g", "spark.cores.max": "2",
            "spark.sql.shuffle.partitions": "2", "spark.executor.extraJavaOptions": executors}
    spark = toolkit.spark_session(cat, master=cfg["master"], **child_spark(cat, conf))
    spark.sparkContext.setLogLevel("ERROR")
    seen: dict[str, Any] = {"driver_pid": os.getpid()}
    seen["executors"] = spark.sparkContext.parallelize(range(4), 4).map(where_toolkit_is).collect()

    batches = cfg["batches"]
    reports = [toolkit.ingest(b, "db.events", cat, spark, batch_id=f"b{i}")
               for i, b in enumerate(batches)]
    seen["rows_written"] = [r.rows_written for r in reports]
    seen["routed_in"] = [r.routed_in for r in reports]
    again = toolkit.ingest(batches[0], "db.events", cat, spark, batch_id="b0")
    seen["again_skipped"] = again.skipped
    sim = toolkit.simulate(batches)
    seen["spark_equals_simulation"] = (
        read_spark(spark, f"{cat.name}.db.events") == canonical(sim.rows)
    )

    # a typed DataFrame in one pass: the executors count its classes and keep its first
    # rows for the profile (toolkit/spark/jvm/HeadRows.java), no job of their own
    from pyspark.sql import functions as F

    from toolkit.pipeline import typed as typed_path

    typed = spark.range(0, 300, 1, 3).select(
        "id", F.concat(F.lit("x"), F.col("id").cast("string")).alias("name"))
    jobs: list[int] = []
    head_records = typed_path.head_records
    typed_path.head_records = lambda cols: jobs.append(1) or head_records(cols)  # type: ignore[func-returns-value]
    typed_reports = [toolkit.ingest(typed, "db.typed", cat, spark, batch_id=f"t{i}")
                     for i in range(2)]
    typed_path.head_records = head_records
    seen["typed_one_pass"] = [r.one_pass for r in typed_reports]
    seen["typed_head_jobs"] = len(jobs)
    seen["typed_profile_is_python_paths"] = all(
        r.profile == toolkit.profile(typed, batch=i) for i, r in enumerate(typed_reports))
    seen["typed_equals_simulation"] = (
        read_spark(spark, f"{cat.name}.db.typed")
        == canonical(toolkit.simulate([typed, typed]).rows)
    )

    try:
        toolkit.ingest(cfg["local_file"], "db.events", cat, spark, batch_id="local")
        seen["local_path"] = "accepted"
    except toolkit.SparkSetupError as exc:
        seen["local_path"] = str(exc)

    query = toolkit.stream(
        cfg["incoming"], "db.streamed", cat, spark, checkpoint=cfg["checkpoint"],
        trigger={"availableNow": True}, source_options={"maxFilesPerTrigger": "1"},
    )
    query.awaitTermination()
    streamed = toolkit.simulate(cfg["stream_batches"])
    seen["stream_equals_simulation"] = (
        read_spark(spark, f"{cat.name}.db.streamed") == canonical(streamed.rows)
    )
    Path(out).write_text(json.dumps(seen))
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:])
