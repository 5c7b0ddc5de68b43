"""Child process of ``test_writers.py``: one writer ingesting its batches into a shared table.

Usage: ``writer_child.py <catalog folder> <table> <batches.json> <reports.pickle> <me> <other>``.
It opens its own Spark session on the embedded catalog, signals it is ready (file
``<me>.ready``), waits for the other writer to be ready too, so both ingest at the same
time, then ingests each batch with ``toolkit.ingest`` and pickles the reports.
"""

from __future__ import annotations

import json
import pickle
import sys
import time
from pathlib import Path

import toolkit
from tests.reliability.children import child_spark


def main(folder: str, table: str, batches: str, reports: str, me: str, other: str) -> None:
    cat = toolkit.catalog(folder)
    spark = toolkit.spark_session(cat, **child_spark(cat))
    spark.range(1).collect()  # start the JVM side fully before the race begins
    Path(f"{me}.ready").touch()
    deadline = time.monotonic() + 120
    while not Path(f"{other}.ready").exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"{me}: the other writer never got ready")
        time.sleep(0.05)
    done = []
    for batch in json.loads(Path(batches).read_text()):
        done.append(toolkit.ingest(batch["records"], table, cat, spark, batch_id=batch["id"]))
        Path(reports).write_bytes(pickle.dumps(done))
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:])
