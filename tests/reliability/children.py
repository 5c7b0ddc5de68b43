"""Run the reliability tests' child processes: each is a separate OS process (its own
Python, its own Spark JVM) started in its own session, so a test can kill it (and
everything it started) as a whole, and so a child that kills itself takes nothing of the
test process with it."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog

#: ``TOOLKIT_RELIABILITY=long`` runs the reliability tests at their long-run sizes
LONG_RUN = os.environ.get("TOOLKIT_RELIABILITY", "") == "long"

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

#: Spark settings for a child: one core, a small driver (two children and the test run's
#: own session share two cores)
CHILD_SPARK = {
    "spark.master": "local[1]",
    "spark.driver.memory": "1g",
    "spark.sql.shuffle.partitions": "1",
}
#: A child's driver JVM compiles with the quick compiler only: a child lives for a few
#: small batches, and the optimising compiler's work on a fresh JVM (threads of it, on a
#: machine whose two cores several children share) cost a third of a child's CPU, paid
#: back only in a long-lived process. What runs is the same code either way.
SHORT_LIVED_JVM = "-XX:TieredStopAtLevel=1"
#: The same for a child whose session the toolkit builds itself (a notebook's kernel, the
#: ``toolkit`` command): PySpark's launcher passes these arguments to spark-submit, which
#: puts ``spark.driver.defaultJavaOptions`` before the ``extraJavaOptions`` the toolkit
#: sets (a notebook's driver took 22 s to its second commit with the optimising compiler,
#: 14 s without, on 2 busy cores). Only the environment of the child changes.
SHORT_LIVED_SUBMIT_ARGS = (
    f"--conf spark.driver.defaultJavaOptions={SHORT_LIVED_JVM} pyspark-shell"
)


def short_lived_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's environment) for a child process that starts Spark
    through the toolkit: its driver JVM with :data:`SHORT_LIVED_JVM`, and the embedded
    catalog's class archive (:func:`embedded_class_archive`) for a session whose jars have
    none of their own (a catalog in PostgreSQL); where they have one, the toolkit's
    ``extraJavaOptions`` name it after these and it is the one used."""
    from toolkit.spark.startup import ARCHIVE_ENV

    base = {**(os.environ if env is None else env)}
    archive = [] if base.get(ARCHIVE_ENV) == "off" else embedded_class_archive()
    java = " ".join([SHORT_LIVED_JVM, *archive])
    return {**base, "PYSPARK_SUBMIT_ARGS":
            f"--conf 'spark.driver.defaultJavaOptions={java}' pyspark-shell"}


def _jars(settings: Mapping[str, str]) -> list[str]:
    """``spark.jars`` of a session with these settings, and the JVM helpers'
    (:func:`toolkit.spark.spark_session` adds them), as the class archive is keyed."""
    from toolkit.spark.tally import tally_jar

    helpers = tally_jar()
    return [*settings["spark.jars"].split(","), *([str(helpers)] if helpers else [])]


def embedded_class_archive() -> list[str]:
    """The driver JVM options for the class archive ``make jvm-prepare`` recorded (a first
    ingest on the embedded catalog), or none when there is none (nor its jars: the test
    that needs them says so itself)."""
    from toolkit.errors import ToolkitError
    from toolkit.iceberg import catalog
    from toolkit.spark.session import spark_conf
    from toolkit.spark.startup import class_archive_options

    with tempfile.TemporaryDirectory(prefix="toolkit-children-") as tmp:
        try:
            return class_archive_options(_jars(spark_conf(catalog(tmp))))
        except ToolkitError:
            return []


def child_spark(cat: Catalog, conf: Mapping[str, str] = CHILD_SPARK) -> dict[str, str]:
    """``conf`` (default :data:`CHILD_SPARK`), and the driver JVM options the toolkit gives
    a session on ``cat`` (its catalog's, e.g. SQLite's native library) with
    :data:`SHORT_LIVED_JVM`.

    A session whose jars have no class archive of their own (the S3 jars', PostgreSQL's:
    ``make jvm-prepare`` records one for the embedded catalog's jars only) is handed the
    embedded catalog's: Spark's, Iceberg's and the helpers' classes a first ingest loads are
    the same, the JVM checks each one it maps against the jar it would load it from (and
    the class path, else it runs without the archive), and loads the rest from the jars.
    Its first ingest took 7-9 s less so (tests/cluster, tests/streams/test_rest_catalog.py).
    What runs is the same code either way."""
    from toolkit.spark.session import spark_conf
    from toolkit.spark.startup import class_archive_options

    settings = spark_conf(cat, **conf)
    java = settings.get("spark.driver.extraJavaOptions", "")
    options = [java, SHORT_LIVED_JVM]
    if not class_archive_options(_jars(settings), java):
        options += embedded_class_archive()
    return {**conf, "spark.driver.extraJavaOptions": " ".join(o for o in options if o)}


@dataclass
class Child:
    """A running child script; its output goes to files next to the test's data."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def kill(self) -> None:
        """Kill the child's whole process group (its Python, Spark's JVM and workers)."""
        # also when the child itself has exited: a JVM it started may still be going
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


#: a child started with ``go=`` has the file's path here: it starts Spark, then waits for
#: the file before its steps (:func:`wait_to_go`), so its interpreter and JVM start while
#: the test still waits for other children, and its steps begin when the test says
GO_ENV = "TOOLKIT_TEST_GO_FILE"
#: how long a child waits for its go file at most (its test then failed: it is killed)
GO_TIMEOUT = 300.0


def wait_to_go() -> None:
    """In a child: return once the test made the go file (none given: at once)."""
    go = os.environ.get(GO_ENV)
    if not go:
        return
    started = time.monotonic()
    while not Path(go).exists():
        if time.monotonic() - started > GO_TIMEOUT:
            raise SystemExit(f"no go file {go} after {GO_TIMEOUT:.0f} s")
        time.sleep(0.1)
    # what starting early saved: the time it was ready before the test was
    print(f"ready {time.monotonic() - started:.1f} s before the go file", flush=True)


def start(script: str, args: Sequence[str], workdir: Path, name: str,
          go: Path | None = None) -> Child:
    """Start ``tests/reliability/<script>`` with this interpreter (the venv's) and the
    repo on ``sys.path``; with ``go``, a path the test makes when the child's steps may
    begin (:func:`wait_to_go`)."""
    log = workdir / f"{name}.log"
    env = dict(os.environ)
    if go is not None:
        env[GO_ENV] = str(go)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["PYSPARK_PYTHON"] = sys.executable
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, str(HERE / script), *args],
            cwd=workdir,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: killpg reaches only it
        )
    return Child(name, process, log)


def wait(children: Sequence[Child], timeout: float) -> list[int]:
    """Wait for every child; past ``timeout`` seconds all are killed and the test fails.
    Returns the exit codes (a child killed by a signal: minus the signal number)."""
    deadline = time.monotonic() + timeout
    try:
        for child in children:
            left = max(0.0, deadline - time.monotonic())
            try:
                child.process.wait(timeout=left)
            except subprocess.TimeoutExpired:
                raise AssertionError(
                    f"{child.name} still running after {timeout:.0f} s; its output:\n"
                    + child.output()[-4000:]
                ) from None
    finally:
        for child in children:
            child.kill()
    return [c.process.returncode for c in children]
