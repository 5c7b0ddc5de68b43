"""Child process of ``test_ledger.py``: one of two processes ingesting the same batch ids.

Usage: ``race_child.py <catalog folder> <table> <batches> <reports.json> <me> <other>``.
For each batch id in turn, it waits until the other process is at the same id (files
``<me>.<i>`` and ``<other>.<i>``), then both ingest that id at the same moment.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import toolkit
from tests.reliability.children import child_spark


def records(i: int) -> list[dict[str, object]]:
    """Batch ``i``: 3 records, a field that drifts every few batches (so some races
    also carry a schema change)."""
    return [{"batch": f"b{i}", "n": n, "v": [n, "x", 1.5][i // 4 % 3]} for n in range(3)]


def main(folder: str, table: str, batches: str, reports: str, me: str, other: str) -> None:
    cat = toolkit.catalog(folder)
    spark = toolkit.spark_session(cat, **child_spark(cat))
    spark.range(1).collect()  # start the JVM side fully before the race begins
    done = []
    for i in range(int(batches)):
        Path(f"{me}.{i}").touch()
        deadline = time.monotonic() + 120
        while not Path(f"{other}.{i}").exists():
            if time.monotonic() > deadline:
                raise SystemExit(f"{me}: the other process never reached batch {i}")
            time.sleep(0.005)
        report = toolkit.ingest(records(i), table, cat, spark, batch_id=f"b{i}")
        done.append({"batch": f"b{i}", "rows": report.rows_written, "skipped": report.skipped})
        Path(reports).write_text(json.dumps(done))
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:])
