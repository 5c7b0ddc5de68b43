"""Child process of ``test_rest_catalog.py``: the toolkit against a REST catalog, with its
own Spark session (its S3 jars must be on the JVM's class path from the start; the test
run's one session has none).

Usage: ``rest_child.py <settings.json> <step> [<step> ...]``; settings hold the catalog's
``uri``, ``token``, ``prefix`` and ``s3.*`` properties. Steps:

* ``ingest:TABLE:I[,J...]``: ingest the ingest tests' batches I, J... (batch ids ``bI``;
  ``writer`` added to each record when ``:w`` ends the step);
* ``wait:TABLE``: wait until TABLE has a commit on main (another process's first batch);
* ``check:TABLE:N``: Spark reads TABLE, compared with ``simulate`` of batches 0..N-1;
* ``kafka:URL:TABLE``: stream the topic into TABLE (availableNow);
* ``upkeep:TABLE``: statistics, lineage, undo of the last change, maintenance;
* ``view:TABLE``: a COALESCE view, which the server cannot keep.

Each step prints one line ``STEP -> result``.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from pathlib import Path

from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import NoSuchTableError

import toolkit
from tests.integration.readers import canonical, read_spark
from tests.integration.test_ingest import CORPUS
from tests.reliability.children import child_spark


def wait_for_data(cat: Catalog, table: str, timeout: float = 300.0) -> float:
    """Seconds until ``table`` exists with a snapshot on main (bounded by ``timeout``)."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        with contextlib.suppress(NoSuchTableError):
            if cat.load_table(table).current_snapshot() is not None:
                return time.monotonic() - start
        time.sleep(0.5)
    raise SystemExit(f"{table} has no commit after {timeout:.0f} s")


def main(settings_file: str, *steps: str) -> None:
    settings = json.loads(Path(settings_file).read_text())
    cat = toolkit.catalog(settings.pop("uri"), name="rest", **settings)
    spark = toolkit.spark_session(cat, **child_spark(cat))
    for step in steps:
        kind, _, rest = step.partition(":")
        if kind == "ingest":
            table, indexes, *tag = rest.split(":")
            for i in map(int, indexes.split(",")):
                batch = [dict(r, writer=i) for r in CORPUS[i]] if tag else CORPUS[i]
                r = toolkit.ingest(batch, table, cat, spark, batch_id=f"b{i}")
                print(f"{step} -> b{i} rows={r.rows_written} skipped={r.skipped}", flush=True)
        elif kind == "wait":
            waited = wait_for_data(cat, rest)
            print(f"{step} -> waited {waited:.1f} s", flush=True)
        elif kind == "check":
            table, n = rest.split(":")
            same = read_spark(spark, f"rest.{table}") == canonical(
                toolkit.simulate(CORPUS[: int(n)]).rows)
            print(f"{step} -> equal={same}", flush=True)
        elif kind == "kafka":
            url, table = rest.rsplit(":", 1)
            q = toolkit.stream(url, table, cat, spark, trigger={"availableNow": True})
            q.awaitTermination()
            print(f"{step} -> rows={spark.table(f'rest.{table}').count()}", flush=True)
        elif kind == "upkeep":
            table = rest
            stats = toolkit.statistics(cat.load_table(table))
            print(f"{step} -> statistics={type(stats).__name__}", flush=True)
            changes = toolkit.lineage(cat.load_table(table))
            print(f"{step} -> lineage={len(changes)}", flush=True)
            last = [e for e in changes if e.inverse_operations and not e.irreversible][-1]
            # the undo drops columns holding values: it asks for the yes (issue 25)
            undone = toolkit.undo(cat, table, last, drop_data=True)
            print(f"{step} -> undo={last.seq} as {undone.seq}", flush=True)
            done = toolkit.maintain(table, cat, spark)
            print(f"{step} -> maintain={len(done.results)}", flush=True)
        elif kind == "view":
            try:
                toolkit.create_coalesce_view(spark, f"rest.{rest}", f"rest.{rest}_folded")
                print(f"{step} -> created", flush=True)
            except toolkit.ToolkitError as exc:
                print(f"{step} -> refused: {exc}", flush=True)
            except Exception as exc:
                print(f"{step} -> failed: {type(exc).__name__}: {str(exc)[:600]}", flush=True)
        else:
            raise SystemExit(f"unknown step {step!r}")
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:])
