"""How far Spark is with a block of work, told to whoever listens: a notebook line, a
terminal line, or nobody (the default: a headless pipeline prints nothing).

The orchestration wraps its Spark work in :func:`tracking` and names each step with
:func:`described`::

    with tracking(spark, f"Ingesting batch {batch_id} into {table}") as track:
        with described(spark, "Profiling"):
            seen = observe_on_spark(...)
        ...
        track.finish(f"Wrote batch {batch_id}: {counted(rows, 'row')}")

While the block runs, a daemon thread asks Spark's status tracker (every
:data:`POLL_SECONDS`) how many tasks of the current step's jobs are done and hands a
:class:`Progress` to the reporter :func:`set_reporter` installed. Each step's jobs run
under a job group of their own (``spark.jobGroup.id``, restored afterwards), so the
count holds only this block's jobs, not those another thread runs at the same time. A
thread that has a job group already keeps it (a streaming query cancels its jobs by
its group when stopped): the step counts that group's jobs that are new. With no
reporter installed, :func:`tracking` starts no thread and touches no Spark setting: it
costs nothing.

>>> seen = []
>>> previous = set_reporter(seen.append)
>>> with tracking(None, "Starting Spark...", every=60) as track:
...     track.finish("Spark ready")
>>> _ = set_reporter(previous)
>>> [(p.state, p.label, p.note) for p in seen]
[('running', 'Starting Spark...', ''), ('done', 'Starting Spark...', 'Spark ready')]
>>> seen[-1].percent
100
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "POLL_SECONDS",
    "Progress",
    "Reporter",
    "State",
    "Track",
    "described",
    "reporter",
    "seconds_text",
    "set_reporter",
    "silenced",
    "tracking",
]

log = logging.getLogger(__name__)

#: how often Spark's status tracker is asked while a block runs (a few py4j calls each)
POLL_SECONDS = 0.4
#: a running block is reported again after this long even when no task finished, so the
#: elapsed time a reader sees keeps moving
TICK_SECONDS = 1.0
#: how long the end of a block waits for its polling thread (a poll is a few py4j calls)
JOIN_SECONDS = 5.0
#: the thread-local Spark settings a block changes, and restores when it ends
GROUP_PROPERTY = "spark.jobGroup.id"
DESCRIPTION_PROPERTY = "spark.job.description"

State = Literal["running", "done", "failed"]


def seconds_text(seconds: float) -> str:
    """A duration as people read it on a progress line.

    >>> seconds_text(2.14), seconds_text(12.6), seconds_text(125)
    ('2.1 s', '13 s', '2 min 5 s')
    """
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s"


@dataclass(frozen=True)
class Progress:
    """Where one block of work stands: what runs (``label``, and the step ``doing``), how
    many of the step's Spark tasks are ``done`` of ``total``, since when, and whether the
    block ended. Updates of one block share its ``key``.

    >>> p = Progress("k1", "Ingesting batch b7 into db.events", "Profiling", 21, 50, 42, 1.2)
    >>> p.line
    'Ingesting batch b7 into db.events: Profiling 42% (21 of 50 tasks, 1.2 s)'
    >>> replace(p, percent=None, elapsed=0.2).line
    'Ingesting batch b7 into db.events: Profiling...'
    >>> replace(p, doing="", elapsed=3).line
    'Ingesting batch b7 into db.events: 42% (21 of 50 tasks, 3.0 s)'
    >>> replace(p, state="done", note="Wrote batch b7: 1,000 rows", elapsed=2.1).line
    'Wrote batch b7: 1,000 rows (2.1 s)'
    >>> replace(p, state="failed", elapsed=2.1).line
    'Ingesting batch b7 into db.events: failed after 2.1 s'
    """

    key: str
    label: str
    doing: str = ""
    done: int = 0
    total: int = 0
    #: of the current step, never going back within it, and 100 only once the block is
    #: done (a step's tasks can all be finished while the block still commits); None
    #: while no task of the step is known
    percent: int | None = None
    elapsed: float = 0.0
    state: State = "running"
    #: the final line's words (:meth:`Track.finish`); empty: the label says it
    note: str = ""

    @property
    def finished(self) -> bool:
        return self.state != "running"

    @property
    def line(self) -> str:
        """The progress as one line of text."""
        took = seconds_text(self.elapsed)
        name = self.label.rstrip(". ")
        if self.state == "done":
            return f"{self.note or name + ': done'} ({took})"
        if self.state == "failed":
            return f"{name}: failed after {took}"
        step = f"{self.doing} " if self.doing and self.doing != self.label else ""
        # the time shows from the first second on: "(0.2 s)" on a fresh line is noise
        so_far = f", {took}" if self.elapsed >= 1 else ""
        if self.percent is None:
            text = f"{name}: {step.strip()}..." if step else self.label
            return f"{text} ({took})" if so_far else text
        return f"{name}: {step}{self.percent}% ({self.done:,} of {self.total:,} tasks{so_far})"


#: what receives each :class:`Progress`: called from the block's thread and from its
#: polling thread, never from two at once for one block
Reporter = Callable[[Progress], None]

_reporter: Reporter | None = None
_local = threading.local()  # the block running in this thread, if any (.tracker)
_keys = itertools.count(1)


def set_reporter(new: Reporter | None) -> Reporter | None:
    """Install ``new`` as the receiver of every block's progress (None: nobody), and
    return the one it replaces. Blocks already running keep theirs."""
    global _reporter
    previous, _reporter = _reporter, new
    return previous


def reporter() -> Reporter | None:
    """The installed reporter, if any."""
    return _reporter


class Track:
    """The handle of a running block: say what its final line reads (:meth:`finish`)."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.note = ""

    @property
    def elapsed(self) -> float:
        """Seconds since the block began."""
        return time.monotonic() - self.started

    def finish(self, note: str) -> None:
        """The final line, instead of "<label>: done" (the time taken is added)."""
        self.note = note


@dataclass(frozen=True)
class _Step:
    """One step of a block: the job group its jobs run under, its words, its number, and
    the jobs of that group that ran before it (a group the thread had already)."""

    group: str = ""
    doing: str = ""
    number: int = 0
    earlier: frozenset[int] = frozenset()


class _Tracker(Track):
    """A block that reports: its thread polls Spark and hands updates to the reporter."""

    def __init__(
        self, spark: SparkSession | None, label: str, report: Reporter, every: float
    ) -> None:
        super().__init__()
        self.key = f"{next(_keys)}-{id(self):x}"
        self.label = label
        self.report = report
        self.every = every
        self.context: Any = None if spark is None else spark.sparkContext
        self.polling = self.context is not None  # until Spark's status tracker fails
        # one value, replaced whole: the polling thread always reads a consistent step
        self.step = _Step()
        #: the job group the thread had before the block (a streaming query's, whose
        #: ``stop`` cancels its jobs by it): kept, and this block's jobs told apart by id
        self.shared_group: str | None = None
        self.restore: list[tuple[str, str | None]] = []
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None
        self.last = Progress(self.key, label)

    @property
    def polls_spark(self) -> bool:
        return self.context is not None

    # ---------------------------------------------------------------- the block's thread

    def start(self) -> None:
        self.emit(self.last)
        if self.context is not None:
            self.shared_group = _quietly(self.context.getLocalProperty, GROUP_PROPERTY)
            names = (DESCRIPTION_PROPERTY,) if self.shared_group else (
                GROUP_PROPERTY, DESCRIPTION_PROPERTY)
            self.restore = [(n, _quietly(self.context.getLocalProperty, n)) for n in names]
            self.switch("")
        self.thread = threading.Thread(
            target=self.run, name=f"toolkit-progress-{self.key}", daemon=True)
        self.thread.start()

    def switch(self, doing: str) -> None:
        """A new step, counted from zero: its jobs run under a job group of their own, or
        are the jobs of the thread's group that are new since the step began."""
        number = self.step.number + 1
        group, earlier = f"toolkit-progress-{self.key}-{number}", frozenset[int]()
        if self.context is not None and self.shared_group:
            group = self.shared_group
            known = _quietly(lambda: self.context.statusTracker().getJobIdsForGroup(group))
            earlier = frozenset(known or ())
        elif self.context is not None:
            _quietly(self.context.setLocalProperty, GROUP_PROPERTY, group)
        self.step = _Step(group, doing, number, earlier)

    def stop(self, state: State) -> None:
        self.stopping.set()
        if self.thread is not None:
            self.thread.join(JOIN_SECONDS)
        for name, value in self.restore:
            _quietly(self.context.setLocalProperty, name, value)
        last = self.last
        self.emit(replace(
            last, state=state, note=self.note, elapsed=self.elapsed,
            percent=100 if state == "done" else last.percent,
            done=last.total if state == "done" else last.done,
        ))

    # ---------------------------------------------------------------- the polling thread

    def run(self) -> None:
        status = None
        best: tuple[int, int] = (0, 0)  # (step number, best percent of that step)
        shown = time.monotonic()
        while not self.stopping.wait(self.every):
            step = self.step
            done = total = 0
            if self.polling:
                try:
                    status = status or self.context.statusTracker()
                    done, total = _tasks(status, step.group, step.earlier)
                except Exception as exc:  # a stopped session, a py4j hiccup: stop polling
                    log.debug("progress: Spark's status tracker failed (%s)", exc)
                    self.polling = False
            percent = None
            if total:
                floor = best[1] if best[0] == step.number else 0
                percent = max(floor, min(99, 100 * done // total))
                best = (step.number, percent)
            now = Progress(self.key, self.label, step.doing, done, total, percent,
                           self.elapsed)
            moved = (now.doing, now.done, now.total) != (
                self.last.doing, self.last.done, self.last.total)
            if self.stopping.is_set():  # the block ended meanwhile: its final line is next
                break
            if moved or time.monotonic() - shown >= TICK_SECONDS:
                shown = time.monotonic()
                self.emit(now)

    def emit(self, progress: Progress) -> None:
        self.last = progress
        try:
            self.report(progress)
        except Exception as exc:  # a reporter's bug never stops the work it reports on
            log.debug("progress: the reporter failed (%s)", exc)


def _tasks(status: Any, group: str, earlier: frozenset[int]) -> tuple[int, int]:
    """Tasks done and in all, over the jobs of ``group`` Spark knows but ``earlier``. A
    finished job counts whole: stages it skipped (their output was reused) never run a
    task."""
    done = total = 0
    for job_id in status.getJobIdsForGroup(group):
        if job_id in earlier:
            continue
        job = status.getJobInfo(job_id)
        if job is None:
            continue
        succeeded = job.status == "SUCCEEDED"
        for stage_id in job.stageIds:
            stage = status.getStageInfo(stage_id)
            if stage is None:
                continue
            total += stage.numTasks
            done += stage.numTasks if succeeded else min(stage.numCompletedTasks, stage.numTasks)
    return done, total


def _quietly(call: Callable[..., Any], *args: Any) -> Any:
    """``call(*args)``, or None when Spark refuses (a stopped session): progress is a
    courtesy and never fails the work."""
    try:
        return call(*args)
    except Exception as exc:
        log.debug("progress: %s failed (%s)", getattr(call, "__name__", call), exc)
        return None


@contextlib.contextmanager
def silenced() -> Iterator[None]:
    """Blocks of this thread report nothing meanwhile: work the user did not ask for (the
    warm-up of a first write, toolkit.pipeline.prepare) keeps out of their cell."""
    before = getattr(_local, "silent", False)
    _local.silent = True
    try:
        yield
    finally:
        _local.silent = before


def _active() -> _Tracker | None:
    tracker: _Tracker | None = getattr(_local, "tracker", None)
    return tracker


@contextlib.contextmanager
def tracking(
    spark: SparkSession | None, label: str, *, every: float = POLL_SECONDS
) -> Iterator[Track]:
    """Report the progress of the block's Spark jobs as "``label``: <step> 42% (...)".

    ``spark`` None: no Spark to ask, only the start, the elapsed time and the end (a JVM
    starting, say). Inside a block of the same thread that asks Spark, a block is a step
    of it (its label is the step's words) rather than a second line. The block's
    exception propagates unchanged (the reporter is told it failed); with no reporter
    installed nothing at all happens.
    """
    outer = _active()
    report = None if getattr(_local, "silent", False) else _reporter
    if report is None:
        yield Track()
        return
    if outer is not None and outer.polls_spark:
        with described(spark, label):
            yield Track()  # its final words are the outer block's to say
        return
    tracker = _Tracker(spark, label, report, every)
    tracker.start()
    _local.tracker = tracker
    state: State = "failed"
    try:
        yield tracker
        state = "done"
    finally:
        _local.tracker = outer
        tracker.stop(state)


@contextlib.contextmanager
def described(spark: SparkSession | None, text: str) -> Iterator[None]:
    """Name the Spark jobs the block runs: Spark's job description (restored after), and
    the step the running :func:`tracking` block reports ("Profiling", "Writing"...).

    ``spark`` None: the session of the running :func:`tracking` block, if any. So it
    also decorates a function, naming the jobs of each call::

        @described(None, "Profiling")
        def observe_on_spark(df, ...): ...
    """
    tracker = _active()
    context: Any
    if spark is not None:
        context = spark.sparkContext
    else:
        context = None if tracker is None else tracker.context
    before = None if context is None else _quietly(
        context.getLocalProperty, DESCRIPTION_PROPERTY)
    outer = None if tracker is None else tracker.step.doing
    if context is not None:
        _quietly(context.setJobDescription, text)
    if tracker is not None:
        tracker.switch(text)
    try:
        yield
    finally:
        if tracker is not None and outer is not None:
            tracker.switch(outer)
        if context is not None:
            _quietly(context.setLocalProperty, DESCRIPTION_PROPERTY, before)
