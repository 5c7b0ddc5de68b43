"""Spark's first seconds: what the toolkit prepares at install so a fresh process commits
its first batch sooner, and a session started in the background for a notebook.

Where the time went from a fresh Python process to the first committed batch (20 records,
2 cores, measured before this module): importing the toolkit 1 s; compiling the JVM
helpers (``jvm/*.java``, :func:`toolkit.spark.tally.tally_jar`) 2.5 s on a machine's first
use; the JVM up 3.5 s; the first ingest 9-11 s where the next takes 1.3 s, nearly all of it
the JVM loading and verifying classes for the first time (Spark SQL's planner and code
generation, Jackson, Iceberg's catalog and writers). Three things cut it:

* the helpers are compiled at install (``make install`` runs
  ``python -m toolkit.pipeline.prepare``) into :func:`share_dir`, keyed by the hash of
  their sources, where :func:`~toolkit.spark.tally.tally_jar` looks first; compiling at
  first use into the user's cache stays the fallback.
* the same step records the classes a first ingest loads into a class archive (the JVM's
  class data sharing, ``-XX:ArchiveClassesAtExit``), which :func:`class_archive_options`
  hands to the driver JVM: classes are then mapped from it instead of loaded one by one
  from the jars. The archive is keyed by the Java binary, pyspark's version and the jars on
  ``spark.jars``; the JVM itself checks it again and runs without it (silently) when it
  does not match. ``TOOLKIT_CLASS_ARCHIVE=off`` turns it off.
* in a notebook, :func:`start_in_background` builds the session in a thread while the
  user reads a preview, so the first Approve finds it ready, and warms what a first write
  needs (:mod:`toolkit.pipeline.prepare`).
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

from toolkit.errors import SparkSetupError

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyspark.sql import SparkSession

__all__ = [
    "ARCHIVE_ENV", "AfterStart", "Background", "after_start", "archive_key",
    "class_archive_options", "class_archive_path", "set_after_start", "share_dir",
    "start_in_background",
]

log = logging.getLogger(__name__)

#: ``off``: no class archive; ``build:<path>``: the driver JVM writes one there at exit
#: (what ``toolkit.pipeline.prepare`` runs in a child process); unset: used when present
ARCHIVE_ENV = "TOOLKIT_CLASS_ARCHIVE"
#: the JVM's own notes about its archive (a mismatch, classes it skips) would land under a
#: notebook cell: the archive is an optimisation, used when it fits and silently not else
_QUIET_CDS = "-Xlog:cds*=off"


def share_dir() -> Path:
    """Where ``make install`` keeps what it prepared for the JVM: ``$TOOLKIT_SHARE_DIR``, or
    ``<venv>/share/toolkit/jvm`` (next to the s3a jars, :func:`toolkit.spark.s3a_jars`)."""
    given = os.environ.get("TOOLKIT_SHARE_DIR")
    return Path(given) if given else Path(sys.prefix, "share", "toolkit", "jvm")


def _java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and Path(home, "bin", "java").exists():
        return str(Path(home, "bin", "java"))
    return shutil.which("java")


def archive_key(jars: Iterable[str]) -> str | None:
    """What a class archive is valid for: the Java binary (resolved, so a new JDK is a new
    key) and its build, pyspark's version (its jars are the JVM's class path) and each jar on
    ``spark.jars`` by name and size. None without Java."""
    java = _java()
    if java is None:
        return None
    try:
        import pyspark
    except ImportError:
        return None
    binary = Path(os.path.realpath(java))
    parts = [str(binary), pyspark.__version__]
    # an update of the same JDK keeps the binary's path: the JVM library and the module
    # image tell builds apart (the JVM would refuse another build's archive, silently)
    for part in (binary.parent.parent / "lib" / "server" / "libjvm.so",
                 binary.parent.parent / "lib" / "modules"):
        if part.is_file():
            info = part.stat()
            parts.append(f"{part.name}:{info.st_size}:{info.st_mtime_ns}")
    for jar in sorted(j for j in jars if j):
        path = Path(jar)
        parts.append(f"{path.name}:{path.stat().st_size if path.is_file() else -1}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def class_archive_path(jars: Iterable[str]) -> Path | None:
    """Where the class archive for a session with these ``spark.jars`` is (or would be)."""
    key = archive_key(jars)
    return None if key is None else share_dir() / f"spark-classes-{key}.jsa"


def class_archive_options(jars: Iterable[str], java_options: str = "") -> list[str]:
    """The driver JVM options for the class archive of a session with these ``spark.jars``:
    ``-XX:SharedArchiveFile`` when :func:`class_archive_path` holds one, the options that
    write it under ``TOOLKIT_CLASS_ARCHIVE=build:<path>``, nothing when it is off, absent,
    or ``java_options`` (the user's) already say something about archives."""
    setting = os.environ.get(ARCHIVE_ENV, "")
    if setting == "off" or "SharedArchiveFile" in java_options \
            or "ArchiveClassesAtExit" in java_options or "-Xshare" in java_options:
        return []
    if setting.startswith("build:"):
        return [f"-XX:ArchiveClassesAtExit={setting.removeprefix('build:')}", _QUIET_CDS]
    path = class_archive_path(jars)
    if path is None or not path.is_file():
        return []
    return [f"-XX:SharedArchiveFile={path}", _QUIET_CDS]


# --------------------------------------------------------------------------- background

T = TypeVar("T")


class Background(Generic[T]):
    """Something built in a daemon thread (a Spark session): :meth:`result` waits for it and
    returns it, or raises the error that stopped it. A failure is also logged when it
    happens and passed to ``on_error`` (a notebook shows it under the cell), so it is never
    lost when nobody asks for the result."""

    def __init__(self, build: Callable[[], T], name: str,
                 on_error: Callable[[BaseException], None] | None = None) -> None:
        self.name = name
        self._build = build
        self._on_error = on_error
        self._done = threading.Event()
        self._value: T | None = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._build()
        except BaseException as exc:  # noqa: BLE001 - kept, reported, raised by result()
            self.error = exc
            log.error("%s failed: %s", self.name, exc)
            if self._on_error is not None:
                try:
                    self._on_error(exc)
                except Exception:  # noqa: BLE001 - the report must not hide the error
                    log.exception("reporting that %s failed failed too", self.name)
        finally:
            self._done.set()

    @property
    def done(self) -> bool:
        """Whether the build has finished (or failed)."""
        return self._done.is_set()

    def result(self, timeout: float | None = None) -> T:
        """The thing built, once it is; its error if it failed (a :class:`SparkSetupError`
        naming what was being built, the original error chained)."""
        if not self._done.wait(timeout):
            raise TimeoutError(f"{self.name} is still running after {timeout} s")
        if self.error is not None:
            if isinstance(self.error, SparkSetupError):
                raise self.error
            raise SparkSetupError(f"{self.name} failed: {self.error}") from self.error
        assert self._value is not None
        return self._value


_lock = threading.Lock()
#: the session being started in the background, per catalog name (one JVM per process)
_pending: dict[str, Background[SparkSession]] = {}


def start_in_background(
    name: str, build: Callable[[], SparkSession],
    on_error: Callable[[BaseException], None] | None = None,
) -> Background[SparkSession]:
    """Start building the session for catalog ``name`` in a thread (once: a second call
    gets the same start). :func:`pending` hands it to ``spark_session``."""
    with _lock:
        started = _pending.get(name)
        if started is None or (started.done and started.error is not None):
            started = Background(build, f"Starting Spark for catalog {name!r}", on_error)
            _pending[name] = started
        return started


def pending(name: str) -> Background[SparkSession] | None:
    """The background start of a session for catalog ``name``, if one was made."""
    with _lock:
        return _pending.get(name)


def forget(name: str) -> None:
    """Drop the background start for ``name`` (a failed one, once its error was raised)."""
    with _lock:
        _pending.pop(name, None)


#: called with a session :func:`toolkit.spark.spark_session` has just started, and its
#: catalog (a notebook warms the first write in the background: toolkit.notebook.warmup)
AfterStart = Callable[["SparkSession", "Catalog"], None]
_after_start: AfterStart | None = None


def set_after_start(hook: AfterStart | None) -> AfterStart | None:
    """Install ``hook`` (None: none), returning the one it replaces."""
    global _after_start
    previous, _after_start = _after_start, hook
    return previous


def after_start(spark: SparkSession, cat: Catalog) -> None:
    """Run the installed hook on a session just started; its failure is logged, never
    raised: the session the user asked for is ready whatever a warm-up does."""
    hook = _after_start
    if hook is None:
        return
    try:
        hook(spark, cat)
    except Exception:  # noqa: BLE001
        log.exception("the hook after Spark started failed")
