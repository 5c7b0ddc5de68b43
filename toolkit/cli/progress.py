"""Spark's progress on the terminal running ``toolkit``: one line on standard error,
redrawn in place with ``\\r`` ("Ingesting batch b7 into db.events: Writing 42% (21 of 50
tasks, 3.1 s)") and erased when the work ends, since the command prints its own result.

Only a terminal gets it: when standard error is a file or a pipe (a scheduler's log, a
test), :func:`terminal_reporter` gives nothing and nothing is written. While the line
shows, what the command prints meanwhile (a micro-batch's report, say) lands above it
rather than inside it: ``sys.stdout`` and ``sys.stderr`` pass through the reporter, which
erases the line, lets the text out, and draws the line again after it.

>>> import io
>>> terminal_reporter(io.StringIO()) is None          # not a terminal
True
"""

from __future__ import annotations

import shutil
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from toolkit.spark.progress import Progress, set_reporter, tracking

__all__ = ["TerminalReporter", "showing_progress", "status", "terminal_reporter"]

#: back to the line's start, and erase it
ERASE = "\r\x1b[2K"


class TerminalReporter:
    """Shows the latest-started running block on one line of the terminal ``stream``,
    and nothing once no block runs. Blocks of several threads report at once (a
    micro-batch of a stream runs in Spark's callback thread)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._running: dict[str, Progress] = {}  # by key, in the order they started
        self._line = ""  # what the line shows now
        self._mid_line = False  # printed text without its end of line yet: draw nothing
        self._saved: tuple[TextIO, TextIO] | None = None  # sys.stdout and sys.stderr
        self._lock = threading.RLock()

    def __call__(self, progress: Progress) -> None:
        with self._lock:
            if progress.finished:
                self._running.pop(progress.key, None)
            else:
                self._running[progress.key] = progress
            top = next(reversed(self._running.values()), None)
            if top is None:
                self.close()
                return
            self._draw(top.line)
            if self._saved is None:
                self._saved = (sys.stdout, sys.stderr)
                if _is_terminal(sys.stdout):  # printed into a pipe, it never meets the line
                    sys.stdout = _AboveTheLine(self, sys.stdout)
                sys.stderr = _AboveTheLine(self, sys.stderr)

    def close(self) -> None:
        """Erase the line, and give ``sys.stdout`` and ``sys.stderr`` back."""
        with self._lock:
            self._running.clear()
            self._draw("")
            if self._saved is not None:
                # put back only our own streams: one installed after ours stays
                if getattr(sys.stdout, "_reporter", None) is self:
                    sys.stdout = self._saved[0]
                if getattr(sys.stderr, "_reporter", None) is self:
                    sys.stderr = self._saved[1]
                self._saved = None

    def _draw(self, text: str) -> None:
        width = shutil.get_terminal_size().columns - 1  # the last column would wrap
        if len(text) > width:
            text = text[: max(width - 1, 0)] + "…"
        if text == self._line or self._mid_line:
            return
        self.stream.write(ERASE + text)
        self.stream.flush()
        self._line = text

    def print_above(self, target: TextIO, text: str) -> int:
        """Write ``text`` to ``target`` above the line: erase it first, draw it again
        once the text ends its line."""
        with self._lock:
            line = self._line
            if line and not self._mid_line:
                self.stream.write(ERASE)
                self.stream.flush()
                self._line = ""
            written = target.write(text)
            target.flush()
            self._mid_line = not text.endswith("\n")
            top = next(reversed(self._running.values()), None)
            if top is not None:
                self._draw(top.line)
            return written


class _AboveTheLine:
    """A text stream that writes through :meth:`TerminalReporter.print_above`. It reads
    as a text stream (a bytes write fails), so click's ``echo`` writes through it too."""

    def __init__(self, reporter: TerminalReporter, target: TextIO) -> None:
        self._reporter = reporter
        self._target = target

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        return self._reporter.print_above(self._target, text) if text else 0

    def flush(self) -> None:
        self._target.flush()

    def isatty(self) -> bool:
        return _is_terminal(self._target)

    def __getattr__(self, name: str) -> Any:  # encoding, errors, fileno...: the target's
        return getattr(self._target, name)


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or odd stream: no terminal
        return False


def terminal_reporter(stream: TextIO | None = None) -> TerminalReporter | None:
    """A reporter drawing on ``stream`` (standard error), or None when it is no terminal.
    The stream's own ``isatty`` decides (not ``FORCE_COLOR`` and the like, which CI
    systems set for colors): a log file never gets a progress line."""
    stream = sys.stderr if stream is None else stream
    return TerminalReporter(stream) if _is_terminal(stream) else None


@contextmanager
def showing_progress(stream: TextIO | None = None) -> Iterator[TerminalReporter | None]:
    """Spark's progress on ``stream`` (standard error) while the block runs, if it is a
    terminal; the reporter installed before comes back afterwards."""
    shown = terminal_reporter(stream)
    if shown is None:
        yield None
        return
    previous = set_reporter(shown)
    try:
        yield shown
    finally:
        set_reporter(previous)
        shown.close()


@contextmanager
def status(message: str) -> Iterator[None]:
    """``message`` (with the time it has taken) on the progress line while something
    slow runs, only on a terminal; Spark's progress inside shows over it."""
    with tracking(None, message):
        yield
