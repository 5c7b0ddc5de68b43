"""Streaming a Kafka topic into a table: micro-batches read in the driver, each one batch
of :func:`~toolkit.pipeline.ingest.ingest_topic_batch` (exactly once: its batch id is its
offset ranges, committed with its rows). :func:`toolkit.pipeline.stream.stream` starts it
for a ``kafka://HOST:PORT/TOPIC`` source; the query it returns answers as Spark's
``StreamingQuery`` does (``isActive``, ``awaitTermination``, ``stop``, ``exception``), so
:func:`~toolkit.pipeline.stream.reports` and the ``toolkit stream`` command take it too.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyiceberg.catalog import Catalog

from toolkit.errors import QueryNameTakenError
from toolkit.kafka import KafkaTopic, TopicReader
from toolkit.pipeline.ingest import (
    IngestReport,
    TopicReading,
    ingest_topic_batch,
    provenance_fields,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["KafkaQuery", "TopicStream", "name_taken", "start_topic_stream"]

#: messages per partition in one micro-batch, unless ``max_messages`` says otherwise
MAX_MESSAGES = 100_000


class KafkaQuery:
    """A running Kafka stream: one thread reading micro-batches until stopped, or, with
    the ``availableNow`` trigger, until it reached the end offsets the topic had when it
    started."""

    def __init__(self, name: str, run: Callable[[KafkaQuery], None]) -> None:
        self.id = uuid.uuid4()
        self.runId = self.id
        self.name = name
        self._stop = threading.Event()
        self._busy = False
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, args=(run,), name=name,
                                        daemon=True)

    def _main(self, run: Callable[[KafkaQuery], None]) -> None:
        try:
            run(self)
        except BaseException as exc:  # kept for awaitTermination/exception, as Spark does
            self._error = exc

    def start(self) -> KafkaQuery:
        self._thread.start()
        return self

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def wait(self, seconds: float) -> None:
        """Sleep until the next micro-batch is due, or the query is stopped."""
        self._stop.wait(seconds)

    @property
    def isActive(self) -> bool:  # noqa: N802 (Spark's name)
        return self._thread.is_alive()

    @property
    def status(self) -> dict[str, Any]:
        return {"message": "running" if self.isActive else "stopped",
                "isDataAvailable": self._busy, "isTriggerActive": self._busy}

    def awaitTermination(self, timeout: float | None = None) -> bool | None:  # noqa: N802
        """Wait until the query ends (or ``timeout`` seconds); raise what failed it."""
        self._thread.join(timeout)
        if self._error is not None:
            raise self._error
        return None if timeout is None else not self._thread.is_alive()

    def exception(self) -> BaseException | None:
        return self._error

    def stop(self) -> None:
        """Stop after the micro-batch under way (it lands whole, or not at all)."""
        self._stop.set()
        if threading.current_thread() is not self._thread:
            self._thread.join()


#: the Kafka queries started in this process, by name: as Spark keeps the names of its
#: own queries unique, for the name picks the query's checkpoint folder and consumer group
_by_name: dict[str, KafkaQuery] = {}
_names = threading.Lock()


def name_taken(name: str, spark: SparkSession) -> QueryNameTakenError | None:
    """The error to raise when a query named ``name`` runs in this process (a Kafka
    query, or one of ``spark``'s own), else None."""
    other = _by_name.get(name)
    if (other is not None and other.isActive) or \
            any(q.name == name for q in spark.streams.active):
        return QueryNameTakenError(
            f"a query named {name!r} is already running in this process: give this "
            "stream a query_name of its own (each source feeding a table needs its own "
            "name, and the checkpoint it picks)")
    return None


@dataclass(frozen=True)
class TopicStream:
    """A Kafka stream to start: the topic ``url`` (``kafka://HOST:PORT/TOPIC``), the
    ``table`` it goes into, its catalog and Spark session, the query's ``name`` and
    ``trigger``, the local ``checkpoint`` folder (None: none), the evolution ``options``,
    how the topic is read (``max_messages``, ``provenance``) and the client's consumer
    ``group`` and settings."""

    url: str
    table: str
    catalog: Catalog
    spark: SparkSession
    name: str
    trigger: Mapping[str, Any] | str | None
    checkpoint: Path | None
    options: Mapping[str, Any]
    max_messages: int | None = None
    provenance: bool | Sequence[str] = ()
    group: str | None = None
    client_options: Mapping[str, Any] | None = None


def start_topic_stream(
    stream: TopicStream,
    on_report: Callable[[int, IngestReport], None],
    after_batch: Callable[[int], None],
) -> KafkaQuery:
    """Start streaming ``stream.url`` into ``stream.table`` (see
    :func:`toolkit.pipeline.stream.stream`); ``on_report`` sees each micro-batch's report,
    ``after_batch`` runs after it.

    ``trigger``: ``{"availableNow": True}`` (or ``{"once": True}``) reads up to the end
    offsets the topic has now, then stops; ``{"processingTime": "10 seconds"}`` (or the
    string) one micro-batch per interval; default: the next micro-batch as soon as the
    previous one ends (waiting a second when there was nothing new)."""
    source = KafkaTopic.parse(stream.url)
    provenance_fields(stream.provenance)  # a wrong column name fails now
    bounded, every = _trigger(stream.trigger)
    intent = None if stream.checkpoint is None else stream.checkpoint / "next-batch"
    table, catalog, spark, options = stream.table, stream.catalog, stream.spark, stream.options

    def run(query: KafkaQuery) -> None:
        with TopicReader(source, stream.group or f"toolkit-{stream.name}",
                         stream.client_options) as reader:
            upto = ({p: high for p, (_, high) in reader.watermarks().items()}
                    if bounded else None)
            epoch = 0
            while not query.stopping:
                began = time.monotonic()
                query._busy = True
                try:
                    report = ingest_topic_batch(
                        reader, table, catalog, spark, options,
                        TopicReading(stream.max_messages, upto, stream.provenance, intent))
                finally:
                    query._busy = False
                if report is not None:
                    on_report(epoch, report)
                    after_batch(epoch)
                    epoch += 1
                elif bounded:
                    return  # every message up to the end offsets at the start is in
                pause = (every if every is not None else 0.0 if report is not None else 1.0)
                query.wait(max(0.0, pause - (time.monotonic() - began)))

    with _names:  # two streams started at once under one name: the second is refused
        taken = name_taken(stream.name, spark)
        if taken is not None:
            raise taken
        query = _by_name[stream.name] = KafkaQuery(stream.name, run)
        return query.start()


def _trigger(trigger: Mapping[str, Any] | str | None) -> tuple[bool, float | None]:
    """Whether the stream is bounded, and the seconds between micro-batches."""
    if trigger is None:
        return False, None
    if isinstance(trigger, str):
        return False, _seconds(trigger)
    if trigger.get("availableNow") or trigger.get("once"):
        return True, None
    if "processingTime" in trigger:
        return False, _seconds(str(trigger["processingTime"]))
    raise ValueError(f"a Kafka stream takes the triggers availableNow, once and "
                     f"processingTime, not {dict(trigger)!r}")


def _seconds(text: str) -> float:
    """``"10 seconds"``, ``"2 minutes"``, ``"500 milliseconds"`` in seconds.

    >>> _seconds("10 seconds"), _seconds("1 minute"), _seconds("0.5")
    (10.0, 60.0, 0.5)
    """
    number, _, unit = text.strip().partition(" ")
    scale = {"": 1, "millisecond": 0.001, "second": 1, "minute": 60, "hour": 3600}
    key = unit.strip().rstrip("s") if unit.strip() not in ("ms",) else "millisecond"
    if key not in scale:
        raise ValueError(f"cannot read {text!r} as an interval (say '10 seconds')")
    return float(number) * scale[key]
