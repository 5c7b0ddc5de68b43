"""Spark's first seconds (toolkit.spark.startup, toolkit.pipeline.prepare): the helper jar
compiled at install is used, and rebuilt when its sources change; the class archive is
found under the key spark_session computes; a session started in the background reports
its failure; a warm-up leaves the user's session as it was."""

from __future__ import annotations

import logging
import stat
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import toolkit
from toolkit.errors import SparkSetupError
from toolkit.spark import startup, tally

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyspark.sql import SparkSession

FAKE_JAVAC = """#!/bin/sh
# a stand-in for javac: one class file in the -d folder, and a line per call in the log
while [ "$#" -gt 0 ]; do
  if [ "$1" = "-d" ]; then out="$2"; fi
  shift
done
mkdir -p "$out/toolkit"
echo compiled > "$out/toolkit/Fake.class"
echo call >> "$(dirname "$0")/calls"
"""


@pytest.fixture
def fake_javac(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A javac that counts its calls, and copies of jvm/*.java the test may edit."""
    javac = tmp_path / "bin" / "javac"
    javac.parent.mkdir()
    javac.write_text(FAKE_JAVAC)
    javac.chmod(javac.stat().st_mode | stat.S_IEXEC)
    sources = tmp_path / "src"
    sources.mkdir()
    copies = []
    for source in tally.SOURCES:
        copy = sources / source.name
        copy.write_bytes(source.read_bytes())
        copies.append(copy)
    monkeypatch.setattr(tally, "SOURCES", tuple(copies))
    monkeypatch.setattr(tally, "_javac", lambda: str(javac))
    monkeypatch.setenv("TOOLKIT_SHARE_DIR", str(tmp_path / "share"))
    monkeypatch.setenv("TOOLKIT_CACHE_DIR", str(tmp_path / "cache"))
    tally.tally_jar.cache_clear()
    yield javac
    tally.tally_jar.cache_clear()


def _calls(javac: Path) -> int:
    log = javac.parent / "calls"
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_the_jar_compiled_at_install_is_used(fake_javac: Path, tmp_path: Path) -> None:
    installed = tally.build_helper_jar(tmp_path / "share")  # what `make install` runs
    assert installed is not None and installed.parent == tmp_path / "share"
    assert _calls(fake_javac) == 1
    assert tally.tally_jar() == installed  # found there: nothing compiled at first use
    assert _calls(fake_javac) == 1
    assert not (tmp_path / "cache").exists()


def test_without_an_installed_jar_the_first_use_compiles_into_the_cache(
    fake_javac: Path, tmp_path: Path
) -> None:
    jar = tally.tally_jar()
    assert jar is not None and jar.parent == tmp_path / "cache"
    assert _calls(fake_javac) == 1


def test_a_changed_source_gets_a_new_jar(fake_javac: Path, tmp_path: Path) -> None:
    share = tmp_path / "share"
    first = tally.build_helper_jar(share)
    assert tally.build_helper_jar(share) == first  # up to date: not compiled again
    assert _calls(fake_javac) == 1
    source = tally.SOURCES[0]
    source.write_text(source.read_text() + "\n// changed\n")
    second = tally.build_helper_jar(share)
    assert second is not None and second != first
    assert _calls(fake_javac) == 2
    tally.tally_jar.cache_clear()
    assert tally.tally_jar() == second  # the installed jar for the sources as they are


def test_without_javac_the_toolkit_says_so_and_keeps_python(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(tally, "_javac", lambda: None)
    with caplog.at_level(logging.WARNING, logger=tally.__name__):
        assert tally.build_helper_jar(tmp_path) is None
    assert "javac" in caplog.text


def test_the_class_archive_is_used_only_when_it_is_there_and_wanted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLKIT_SHARE_DIR", str(tmp_path))
    monkeypatch.delenv(startup.ARCHIVE_ENV, raising=False)
    jar = tmp_path / "some.jar"
    jar.write_bytes(b"x")
    assert startup.class_archive_options([str(jar)]) == []  # none recorded yet
    path = startup.class_archive_path([str(jar)])
    assert path is not None and path.parent == tmp_path
    path.write_bytes(b"archive")
    options = startup.class_archive_options([str(jar)])
    assert f"-XX:SharedArchiveFile={path}" in options
    # the user's own archive options win; off is off
    assert startup.class_archive_options([str(jar)], "-Xshare:off") == []
    monkeypatch.setenv(startup.ARCHIVE_ENV, "off")
    assert startup.class_archive_options([str(jar)]) == []
    monkeypatch.setenv(startup.ARCHIVE_ENV, f"build:{tmp_path / 'new.jsa'}")
    assert f"-XX:ArchiveClassesAtExit={tmp_path / 'new.jsa'}" in \
        startup.class_archive_options([str(jar)])
    # another jar (or the same one rebuilt) is another key: that archive is not used
    jar.write_bytes(b"xy")
    monkeypatch.delenv(startup.ARCHIVE_ENV)
    assert startup.class_archive_path([str(jar)]) != path
    assert startup.class_archive_options([str(jar)]) == []


def test_a_background_build_reports_its_failure() -> None:
    seen: list[BaseException] = []

    def fail() -> str:
        raise RuntimeError("no Java here")

    started = startup.Background(fail, "Starting Spark for a test", on_error=seen.append)
    with pytest.raises(SparkSetupError, match="Starting Spark for a test failed: no Java"):
        started.result(timeout=30)
    assert [str(e) for e in seen] == ["no Java here"]
    assert startup.Background(lambda: "ok", "ok").result(timeout=30) == "ok"


def test_spark_session_raises_the_error_of_its_background_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from toolkit.notebook import warmup
    from toolkit.spark import session

    cat = toolkit.catalog(tmp_path, name="background_test")

    def no_java(*_: object, **__: object) -> SparkSession:
        raise SparkSetupError("Java is not installed (Spark needs Java 17)")

    monkeypatch.setattr(session, "spark_session", no_java)
    started = warmup.start_spark(cat)
    with pytest.raises(SparkSetupError, match="Java is not installed"):
        started.result(timeout=30)
    # said under the cell when it happened, not only when someone asks
    assert "Spark could not start in the background: Java is not installed" in \
        capsys.readouterr().err
    monkeypatch.undo()
    # the session the Approve asks for is that start's, and so is its error
    with pytest.raises(SparkSetupError, match="Java is not installed"):
        session.spark_session(cat)
    assert startup.pending(cat.name) is None  # raised once: the next call starts afresh


@pytest.mark.spark
def test_the_archive_prepare_records_is_the_one_spark_session_looks_for(
    spark: SparkSession,
) -> None:
    from toolkit.pipeline.prepare import _archive_target

    jar = tally.tally_jar()
    assert jar is not None
    jars = str(spark.conf.get("spark.jars")).split(",")
    assert _archive_target(startup.share_dir(), jar) == startup.class_archive_path(jars)


@pytest.mark.spark
def test_warming_the_first_write_leaves_the_session_as_it_was(
    spark: SparkSession, lakehouse: Catalog
) -> None:
    from toolkit.pipeline.prepare import WARM_CATALOG, warm_first_write
    from toolkit.spark.progress import set_reporter

    seen: list[object] = []
    previous = set_reporter(seen.append)
    try:
        assert warm_first_write(spark) is True
    finally:
        set_reporter(previous)
    assert seen == []  # nothing under the user's cell
    assert spark.catalog.currentCatalog() == lakehouse.name
    assert spark.conf.get(f"spark.sql.catalog.{WARM_CATALOG}") is not None


def test_prepare_compiles_the_helpers_into_its_folder(fake_javac: Path, tmp_path: Path) -> None:
    from toolkit.pipeline.prepare import prepare

    (said,) = prepare(tmp_path / "share", archive=False)
    jar = tally.build_helper_jar(tmp_path / "share")  # up to date: found, not compiled
    assert said == f"JVM helpers: {jar}"
    assert _calls(fake_javac) == 1


def test_prepare_without_a_jdk_says_the_toolkit_compiles_at_first_use(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from toolkit.pipeline.prepare import prepare

    monkeypatch.setattr(tally, "_javac", lambda: None)
    (said,) = prepare(tmp_path)
    assert "compiles them at first use" in said
    assert not list(tmp_path.iterdir())
