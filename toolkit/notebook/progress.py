"""Spark's progress under a notebook cell: one line per block of work, with a bar and
its percentage, updated in place and replaced at the end by a short final line
("Wrote batch b7: 1,000 rows (2.1 s)", "Spark ready (4.0 s)").

``import toolkit`` installs :class:`NotebookReporter` when it runs inside a Jupyter
kernel (:func:`install`); elsewhere nothing is shown. The line is a display output
(``display(..., display_id=True)``, then ``update``), so it needs no widget manager and
reads the same in a saved notebook.

>>> from toolkit.spark.progress import Progress
>>> p = Progress("k", "Ingesting batch b7 into db.events", "Profiling", 3, 8, 37, 1.0)
>>> html = progress_html(p)
>>> 'width:37%' in html, "Profiling 37% (3 of 8 tasks, 1.0 s)" in html
(True, True)
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from toolkit.notebook.common import text_html
from toolkit.spark.progress import Progress, reporter, set_reporter

__all__ = ["NotebookReporter", "ProgressLine", "install", "progress_html"]

_BOX = (
    "display:flex;align-items:center;gap:8px;margin:2px 0;"
    "font-family:var(--jp-ui-font-family,sans-serif);font-size:12px;"
    "color:var(--jp-ui-font-color1,#333)"
)
_TRACK = "flex:none;width:160px;height:8px;border-radius:4px;background:#e3e3e3;overflow:hidden"
_BAR = "height:100%;background:#2f7ed8"
#: the mark of a final line, and its color
_ENDS = {"done": ("✓", "#2e8b57"), "failed": ("✗", "#c0392b")}


def progress_html(progress: Progress) -> str:
    """The line as HTML: a bar (when the step's tasks are known) and the words, or the
    final line with a check mark (a cross when the block failed).

    >>> from dataclasses import replace
    >>> p = Progress("k", "Starting Spark...", elapsed=4.0)
    >>> progress_html(p).count("width:")          # no tasks known: no bar
    0
    >>> progress_html(replace(p, state="done", note="Spark ready")).endswith(
    ...     '<span style="color:#2e8b57">✓</span> Spark ready (4.0 s)</div>')
    True
    """
    text = text_html(progress.line)
    if progress.finished:
        mark, color = _ENDS[progress.state]
        return (f'<div class="toolkit-progress" style="{_BOX}">'
                f'<span style="color:{color}">{mark}</span> {text}</div>')
    bar = ""
    if progress.percent is not None:
        bar = (f'<div style="{_TRACK}"><div style="{_BAR};width:{progress.percent}%">'
               "</div></div>")
    return f'<div class="toolkit-progress" style="{_BOX}">{bar}<span>{text}</span></div>'


class ProgressLine:
    """What a display output shows for one :class:`Progress`: its HTML, and its text for
    front ends without HTML (a console, a saved notebook read as text)."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.progress.line, "text/html": progress_html(self.progress)}

    def __repr__(self) -> str:
        return self.progress.line


class NotebookReporter:
    """Shows each block as one display output, updated in place. ``display`` is
    IPython's (injected by tests): it returns a handle whose ``update`` replaces it."""

    def __init__(self, display: Callable[..., Any] | None = None) -> None:
        self._display = display
        self._shown: dict[str, Any] = {}  # the display handle of each running block
        self._lock = threading.Lock()  # blocks of several threads report at once

    def __call__(self, progress: Progress) -> None:
        line = ProgressLine(progress)
        with self._lock:
            handle = self._shown.get(progress.key)
            if progress.finished:
                self._shown.pop(progress.key, None)
        if handle is not None:
            handle.update(line)
            return
        shown = self._show(line)
        if not progress.finished and shown is not None:
            with self._lock:
                self._shown[progress.key] = shown

    def _show(self, line: ProgressLine) -> Any:
        if self._display is None:
            from IPython import display as ipython

            self._display = ipython.display
        show: Callable[..., Any] = self._display
        return show(line, display_id=True)


def install() -> None:
    """Show Spark's progress in this kernel (done once; a reporter of one's own stays)."""
    if reporter() is None:
        set_reporter(NotebookReporter())
