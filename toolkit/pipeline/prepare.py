"""What ``make install`` prepares so that a fresh process commits its first batch sooner,
and the warm-up of a first write (see :mod:`toolkit.spark.startup` for where the time goes).

``python -m toolkit.pipeline.prepare [FOLDER]`` (``make install`` runs it; FOLDER defaults
to :func:`toolkit.spark.startup.share_dir`, ``<venv>/share/toolkit/jvm``):

1. compiles the JVM helpers (``toolkit/spark/jvm/*.java``) into FOLDER, named by the hash
   of their sources, where :func:`toolkit.spark.tally.tally_jar` looks first;
2. runs a first ingest of the quickstart's sample days in a child process whose driver
   JVM writes the classes it loaded into a class archive in FOLDER, which
   :func:`toolkit.spark.spark_session` then hands to every driver JVM with the same Java,
   pyspark and jars (``-XX:SharedArchiveFile``).

Each step is skipped when its file for the current sources, Java and pyspark is there
already, so running it again costs a second. Without a JDK nothing is prepared and the
toolkit compiles at first use (or keeps profiling in Python workers) as before.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from toolkit.errors import ToolkitError
from toolkit.iceberg.catalog import catalog
from toolkit.pipeline.ingest import ingest
from toolkit.spark.progress import silenced
from toolkit.spark.session import spark_conf
from toolkit.spark.startup import ARCHIVE_ENV, class_archive_path, share_dir
from toolkit.spark.tally import build_helper_jar

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["WARM_CATALOG", "prepare", "sample_day", "warm_first_write"]

#: the Spark catalog a warm-up writes into (a scratch embedded catalog in a temp folder)
WARM_CATALOG = "toolkit_warmup"
#: how long the child that records the class archive may take (a first ingest: ~20 s)
ARCHIVE_TIMEOUT = 600


def sample_day(n: int) -> list[dict[str, Any]]:
    """The quickstart's sample day ``n`` (1-3): 20 records shipped in ``toolkit/data``."""
    lines = (files("toolkit") / "data" / f"sample_day{n}.jsonl").read_bytes().splitlines()
    return [orjson.loads(line) for line in lines if line.strip()]


def _embedded_jars(spark: SparkSession) -> bool:
    jars = str(spark.conf.get("spark.jars", ""))
    return "sqlite" in jars


def warm_first_write(spark: SparkSession) -> bool:
    """Ingest two sample days into a scratch table of a scratch embedded catalog (a temp
    folder, Spark catalog ``toolkit_warmup``), so the JVM has loaded what a first ingest
    needs (the tally and router, Spark SQL's planner and code generation, Iceberg's
    catalog and writers) before the user's first one. Nothing is reported under a notebook
    cell. False when the session has no SQLite driver (its catalog is not the embedded
    one): nothing is warmed then."""
    if not _embedded_jars(spark):
        return False
    with tempfile.TemporaryDirectory(prefix="toolkit-warmup-") as tmp, silenced():
        scratch = catalog(tmp, name=WARM_CATALOG)
        prefix = f"spark.sql.catalog.{WARM_CATALOG}"
        for key, value in spark_conf(scratch).items():
            if key == prefix or key.startswith(prefix + "."):
                spark.conf.set(key, value)  # catalogs are runtime settings: no restart
        ingest(sample_day(1), "warmup.events", scratch, spark, batch_id="warmup-1")
        ingest(sample_day(2), "warmup.events", scratch, spark, batch_id="warmup-2")
    return True


def _archive_target(folder: Path, jar: Path) -> Path | None:
    """The class archive a session on the embedded catalog would use (its jars: Iceberg's
    runtime, the SQLite driver, the helpers in ``folder``)."""
    with tempfile.TemporaryDirectory(prefix="toolkit-prepare-") as tmp:
        jars = spark_conf(catalog(tmp))["spark.jars"].split(",")
    previous = os.environ.get("TOOLKIT_SHARE_DIR")
    os.environ["TOOLKIT_SHARE_DIR"] = str(folder)
    try:
        return class_archive_path([*jars, str(jar)])
    finally:
        if previous is None:
            del os.environ["TOOLKIT_SHARE_DIR"]
        else:
            os.environ["TOOLKIT_SHARE_DIR"] = previous


def prepare(folder: Path | None = None, *, archive: bool = True) -> list[str]:
    """Compile the JVM helpers into ``folder`` and record the class archive of a first
    ingest there (see the module's text); what was done, in words."""
    folder = folder or share_dir()
    jar = build_helper_jar(folder)
    if jar is None:
        return ["JVM helpers not compiled (no JDK or pyspark): the toolkit compiles them "
                "at first use, or profiles in Python workers"]
    said = [f"JVM helpers: {jar}"]
    if not archive:
        return said
    try:
        target = _archive_target(folder, jar)
    except ToolkitError as exc:  # no SQLite driver, no Iceberg runtime: nothing to record
        return [*said, f"no class archive: {exc}"]
    if target is None:
        return [*said, "no class archive: Java not found"]
    if target.is_file():
        return [*said, f"class archive: {target}"]
    partial = target.with_suffix(f".{os.getpid()}.partial")
    env = {**os.environ, "TOOLKIT_SHARE_DIR": str(folder), ARCHIVE_ENV: f"build:{partial}"}
    done = subprocess.run(
        [sys.executable, "-m", "toolkit.pipeline.prepare", "--record-classes"],
        env=env, capture_output=True, text=True, timeout=ARCHIVE_TIMEOUT,
    )
    if done.returncode != 0 or not partial.is_file() or partial.stat().st_size == 0:
        partial.unlink(missing_ok=True)
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        return [*said, "no class archive (the first ingest that records it failed: "
                       f"{' / '.join(tail)})"]
    for old in folder.glob("spark-classes-*.jsa"):  # archives of earlier Java or jars
        old.unlink(missing_ok=True)
    os.replace(partial, target)
    return [*said, f"class archive: {target}"]


def _record_classes() -> None:
    """The child of :func:`prepare`: a first ingest in a fresh JVM, which writes the class
    archive (``TOOLKIT_CLASS_ARCHIVE=build:<path>``) when it exits."""
    from pyspark import SparkContext

    from toolkit.spark.session import spark_session

    with tempfile.TemporaryDirectory(prefix="toolkit-prepare-") as tmp:
        cat = catalog(tmp)
        spark = spark_session(cat, master="local[2]")
        for day in (1, 2, 3):
            ingest(sample_day(day), "db.events", cat, spark, batch_id=f"day{day}")
        spark.sql("SELECT * FROM db.events").collect()
        gateway = SparkContext._gateway
        spark.stop()
        # the JVM writes the archive as it exits, which it does when its stdin closes
        proc = getattr(gateway, "proc", None)
        if proc is not None:
            proc.stdin.close()
            proc.wait(timeout=ARCHIVE_TIMEOUT)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m toolkit.pipeline.prepare",
        description="Compile the toolkit's JVM helpers and record a class archive of a "
                    "first ingest, so a fresh process commits its first batch sooner.")
    parser.add_argument("folder", nargs="?", type=Path, default=None,
                        help="where to keep them (default: <venv>/share/toolkit/jvm)")
    parser.add_argument("--no-archive", action="store_true",
                        help="only compile the helpers")
    parser.add_argument("--record-classes", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.record_classes:
        _record_classes()
        return 0
    for line in prepare(args.folder, archive=not args.no_archive):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
