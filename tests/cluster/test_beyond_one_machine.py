"""Beyond one machine (issue 13): a catalog in PostgreSQL, a warehouse in S3, a Spark
standalone cluster whose executors run in their own JVMs, all real and on 127.0.0.1.

The user's session runs in a child process (``cluster_child.py``: the test run keeps one
local Spark session of its own). Its executors run a Python that cannot import the
toolkit from this repo (the editable install is hidden from them), so records routed in
Python workers prove the toolkit reached them the way it reaches a real cluster: as the
zip Spark ships. The test then reads the tables back here, with PyIceberg and DuckDB.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import toolkit
from tests import servers
from tests.integration.readers import (
    as_pyiceberg_reads_it,
    canonical,
    read_duckdb,
    read_pyiceberg,
    schema_summary,
)

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]

BATCHES: list[list[dict[str, Any]]] = [
    [{"id": 1, "size": 4, "tags": ["a"], "dev": {"os": "ios"}}, {"id": 2, "size": 5}],
    [{"id": 3, "size": 2.5, "tags": "b", "dev": {"os": 7}}, {"id": "x4"}],
    [{"id": 5, "size": "big", "tags": [["c"]], "extra": True}],
]
STREAMED: list[list[dict[str, Any]]] = [
    [{"user": "ann", "score": 10}, {"user": "bob", "score": 7}],
    [{"user": "cid", "score": "n/a", "since": "2024-01-01"}],
]


def python_without_the_repo(folder: Path) -> Path:
    """An interpreter for the executors: this venv's Python with the editable install of
    the toolkit hidden, as on a machine that holds the dependencies but not the code."""
    script = folder / "python-without-toolkit"
    script.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import runpy, sys
        sys.meta_path[:] = [f for f in sys.meta_path
                            if "__editable__" not in getattr(f, "__module__", "")]
        sys.path[:] = [p for p in sys.path if p.rstrip("/") != {str(REPO)!r}]
        assert sys.argv[1] == "-m", sys.argv
        sys.argv = sys.argv[2:]
        runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
        """))
    script.chmod(0o755)
    return script


def write_jsonl(path: Path, records: list[dict[str, Any]], mtime: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    os.utime(path, (mtime, mtime))  # the file stream takes files in this order


def test_postgres_catalog_s3_warehouse_and_a_cluster(
    tmp_path: Path,
    postgres_server: servers.PostgresServer,
    s3_server: servers.S3Server,
    spark_cluster: servers.SparkCluster,
) -> None:
    bucket = s3_server.bucket("lake")
    root = s3_server.root / bucket
    for i, batch in enumerate(STREAMED):  # files in the bucket, through the server's disk
        write_jsonl(root / "incoming" / f"part-{i}.jsonl", batch, 1_700_000_000 + i)
    local = tmp_path / "local.jsonl"
    write_jsonl(local, BATCHES[0], 1_700_000_000)
    s3 = {"s3.endpoint": s3_server.endpoint, "s3.access-key-id": s3_server.access_key,
          "s3.secret-access-key": s3_server.secret_key}
    config = {
        "catalog": postgres_server.url, "warehouse": f"s3://{bucket}/warehouse", "s3": s3,
        "master": spark_cluster.master, "batches": BATCHES, "stream_batches": STREAMED,
        "local_file": str(local), "incoming": f"s3a://{bucket}/incoming/",
        "checkpoint": str(tmp_path / "checkpoint"),
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    env = {**os.environ, "PYTHONPATH": str(REPO), "SPARK_LOCAL_IP": "127.0.0.1",
           "PYSPARK_PYTHON": str(python_without_the_repo(tmp_path))}
    done = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("cluster_child.py")),
         str(tmp_path / "config.json"), str(tmp_path / "out.json")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    seen = json.loads((tmp_path / "out.json").read_text())

    # the executors are other processes, and imported the toolkit from the shipped zip
    assert {pid for _, pid in seen["executors"]}.isdisjoint({seen["driver_pid"]})
    assert all(".zip" in path for path, _ in seen["executors"]), seen["executors"]
    assert seen["rows_written"] == [2, 2, 1] and seen["again_skipped"]
    assert "python" in seen["routed_in"]  # Python records: routed in Python workers
    assert seen["spark_equals_simulation"] and seen["stream_equals_simulation"]
    assert "on this machine's disk" in seen["local_path"], seen["local_path"]
    # a typed DataFrame on the executors: one pass, its first rows kept by the write
    assert seen["typed_one_pass"] == [True, True] and seen["typed_head_jobs"] == 0
    assert seen["typed_profile_is_python_paths"] and seen["typed_equals_simulation"]

    # read back here, from PostgreSQL and S3, by PyIceberg and DuckDB
    cat = toolkit.catalog(postgres_server.url, warehouse=config["warehouse"], **s3)
    for name, batches in (("db.events", BATCHES), ("db.streamed", STREAMED)):
        sim = toolkit.simulate(batches)
        table = cat.load_table(name)
        assert table.location().startswith(f"s3://{bucket}/warehouse/")
        assert schema_summary(table.schema()) == schema_summary(sim.schema)
        assert read_duckdb(table) == canonical(sim.rows)
        assert read_pyiceberg(table) == canonical(
            as_pyiceberg_reads_it(sim.rows, sim.table_schema)
        )
