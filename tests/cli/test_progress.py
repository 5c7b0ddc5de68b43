"""Spark's progress on the terminal running ``toolkit`` (toolkit.cli.progress): one line,
redrawn in place and erased at the end, and nothing at all when standard error is no
terminal."""

from __future__ import annotations

import doctest
import io
import sys
from dataclasses import replace
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from toolkit.cli import cli
from toolkit.cli import progress as cli_progress
from toolkit.cli.progress import (
    ERASE,
    TerminalReporter,
    showing_progress,
    status,
    terminal_reporter,
)
from toolkit.spark.progress import Progress, reporter, set_reporter, tracking


class FakeTerminal(io.StringIO):
    """What a terminal receives, kept as text."""

    def isatty(self) -> bool:
        return True


def test_the_line_shows_the_latest_block_and_is_erased_when_none_runs() -> None:
    screen = FakeTerminal()
    shown = terminal_reporter(screen)
    assert isinstance(shown, TerminalReporter)
    outer = Progress("k1", "Writing the batch...", elapsed=3.0)
    inner = Progress("k2", "Ingesting batch b7 into db.events", "Profiling", 21, 50, 42, 1.2)
    try:
        shown(outer)
        shown(inner)
        shown(replace(outer, elapsed=4.0))  # not the latest block: the line stays the inner one
        shown(replace(inner, state="done", note="Wrote batch b7: 50 rows"))
        shown(replace(outer, elapsed=5.0))
        shown(replace(outer, state="done"))
    finally:
        shown.close()
    assert screen.getvalue().split(ERASE) == [
        "",
        "Writing the batch... (3.0 s)",
        "Ingesting batch b7 into db.events: Profiling 42% (21 of 50 tasks, 1.2 s)",
        "Writing the batch... (4.0 s)",  # the inner block ended (the command says what it did)
        "Writing the batch... (5.0 s)",
        "",  # nothing runs: the line is erased
    ]


def test_what_is_printed_meanwhile_lands_above_the_line(monkeypatch: pytest.MonkeyPatch) -> None:
    screen = FakeTerminal()  # standard output and error on one terminal
    monkeypatch.setattr(sys, "stdout", screen)
    monkeypatch.setattr(sys, "stderr", screen)
    with showing_progress() as shown:
        assert shown is not None
        running = Progress("k1", "Streaming landing/ into db.events...", elapsed=2.0)
        shown(running)
        click.echo("ingest_db_events:0: 10 rows")  # click writes through the line's stream
        print("partial", end="")  # no line drawn over text still being printed
        shown(replace(running, elapsed=3.0))
        print(" line", file=sys.stderr)
        shown(replace(running, state="done"))
    assert sys.stdout is screen and sys.stderr is screen
    assert screen.getvalue().split(ERASE) == [
        "",
        "Streaming landing/ into db.events... (2.0 s)",
        "ingest_db_events:0: 10 rows\n",
        "Streaming landing/ into db.events... (2.0 s)",
        "partial line\n",
        "Streaming landing/ into db.events... (3.0 s)",
        "",
    ]


def test_no_terminal_no_line() -> None:
    assert terminal_reporter(io.StringIO()) is None
    with showing_progress(io.StringIO()) as shown:
        assert shown is None and reporter() is None


def test_status_and_spark_progress_share_the_line_while_the_command_runs() -> None:
    screen = FakeTerminal()
    before = reporter()
    with showing_progress(screen) as shown:
        assert reporter() is shown
        with status("Reading manifests..."):
            with tracking(None, "Starting Spark...", every=60) as track:
                track.finish("Spark ready")
            assert shown is not None and shown._line.startswith("Reading manifests...")
        assert shown._line == ""
    assert reporter() is before
    text = screen.getvalue()
    assert "Reading manifests..." in text and "Starting Spark..." in text


def test_a_command_run_without_a_terminal_prints_no_progress(tmp_path: Path) -> None:
    source = tmp_path / "day1.jsonl"
    source.write_text('{"a": 1}\n{"a": "x"}\n')
    seen: list[Progress] = []
    previous = set_reporter(seen.append)
    try:
        result = CliRunner().invoke(cli, ["profile", str(source)])
    finally:
        set_reporter(previous)
    assert result.exit_code == 0, result.output
    assert "\r" not in result.output and "..." not in result.output
    # the command's own status went to the reporter installed before (the CLI added none)
    assert [p.state for p in seen][-1:] == ["done"]


def test_the_docstring_examples() -> None:
    assert doctest.testmod(cli_progress, optionflags=doctest.ELLIPSIS).failed == 0
