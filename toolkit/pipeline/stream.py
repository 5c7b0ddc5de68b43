"""Continuous ingest: Spark Structured Streaming over a folder of JSON-lines, Parquet, ORC
or CSV files (see :mod:`toolkit.pipeline.sources`), or over any streaming DataFrame the
user builds (Kafka, say).

Each micro-batch is one batch (one task time) of :func:`toolkit.pipeline.ingest.ingest`, committed
with the batch id ``<query_name>:<epoch>``. Spark's checkpoint remembers which files each
epoch read; ``ingest`` skips a batch id already committed, so a query restarted on the same
checkpoint (after a crash between the Iceberg commit and Spark's own bookkeeping, say)
never writes a micro-batch twice.

A notebook session, processing what is in the folder now and stopping::

    import toolkit
    from toolkit.pipeline.stream import reports, stream

    cat = toolkit.catalog()                       # ./lakehouse
    spark = toolkit.spark_session(cat)
    q = stream("landing/events", "db.events", cat, spark,
               trigger={"availableNow": True}, on_batch=print)
    q.awaitTermination()
    print(reports(q).last)                        # the IngestReport of the last micro-batch

Running until stopped, one micro-batch every 10 seconds::

    q = stream("landing/events", "db.events", cat, spark,
               trigger={"processingTime": "10 seconds"})
    ...
    q.stop()

A stream built by hand (here Kafka: its ``value`` as one string column of JSON lines)::

    lines = (spark.readStream.format("kafka").option("subscribe", "events")
             .option("kafka.bootstrap.servers", "...").load()
             .selectExpr("CAST(value AS STRING) AS value"))
    q = stream(lines, "db.events", cat, spark, checkpoint="s3a://.../checkpoints/events")
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import NoSuchTableError

from toolkit.core.batch.options import make_options, takes_options
from toolkit.core.maintenance.steps import MaintenanceReport, check_steps
from toolkit.core.values.secrets import masked
from toolkit.core.values.wording import counted
from toolkit.errors import CheckpointLostError, StalePlanError
from toolkit.iceberg.catalog import embedded
from toolkit.iceberg.ledger import ingested_batches
from toolkit.kafka import is_kafka_url
from toolkit.pipeline.files import folder_format
from toolkit.pipeline.ingest import IngestReport, ingest
from toolkit.pipeline.kafka_stream import TopicStream, name_taken, start_topic_stream
from toolkit.pipeline.maintain import MaintenanceSettings, maintain
from toolkit.pipeline.sources import SOURCE_KINDS, SourceKind, micro_batch_records, source_named

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.query import StreamingQuery

__all__ = ["CheckpointLostError", "StreamLog", "batch_id", "reports", "stream"]

#: folder of an embedded catalog under which default checkpoints live
CHECKPOINTS = "checkpoints"


def batch_id(query_name: str, epoch_id: int) -> str:
    """The batch id a micro-batch is committed with.

    >>> batch_id("ingest_db_events", 3)
    'ingest_db_events:3'
    """
    return f"{query_name}:{epoch_id}"


@dataclass
class StreamLog:
    """The :class:`~toolkit.pipeline.ingest.IngestReport` of each micro-batch of one run of a query
    (thread-safe: micro-batches run in a Spark callback thread)."""

    query_name: str
    table: str
    by_epoch: dict[int, IngestReport] = field(default_factory=dict)
    #: what maintenance did after a micro-batch (``maintain_every``), by epoch
    maintenance_by_epoch: dict[int, MaintenanceReport] = field(default_factory=dict)
    #: maintenance that was due but did not run, and why, by epoch
    maintenance_skipped: dict[int, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, epoch_id: int, report: IngestReport) -> None:
        with self._lock:
            self.by_epoch[epoch_id] = report

    def add_maintenance(self, epoch_id: int, report: MaintenanceReport | str) -> None:
        """Record what maintenance did after micro-batch ``epoch_id`` (a text: why it was
        skipped)."""
        with self._lock:
            if isinstance(report, str):
                self.maintenance_skipped[epoch_id] = report
            else:
                self.maintenance_by_epoch[epoch_id] = report

    @property
    def maintenance(self) -> list[MaintenanceReport]:
        """What each maintenance run of this query did, by epoch."""
        with self._lock:
            return [self.maintenance_by_epoch[e] for e in sorted(self.maintenance_by_epoch)]

    @property
    def reports(self) -> list[IngestReport]:
        """Every report so far, by epoch."""
        with self._lock:
            return [self.by_epoch[e] for e in sorted(self.by_epoch)]

    @property
    def last(self) -> IngestReport | None:
        """The report of the latest micro-batch, or ``None`` before the first one."""
        with self._lock:
            return self.by_epoch[max(self.by_epoch)] if self.by_epoch else None

    @property
    def rows_written(self) -> int:
        """Rows this run appended (skipped micro-batches count 0)."""
        return sum(r.rows_written for r in self.reports)

    def __iter__(self) -> Iterator[IngestReport]:
        return iter(self.reports)

    def __len__(self) -> int:
        with self._lock:
            return len(self.by_epoch)

    def __str__(self) -> str:
        lines = [f"{self.query_name} -> {self.table}: {counted(len(self), 'micro-batch')}"]
        with self._lock:
            batches = sorted(self.by_epoch.items())
            maintained = dict(self.maintenance_by_epoch)
            skipped = dict(self.maintenance_skipped)
        for epoch, r in batches:
            lines.append(
                f"  {r.batch_id}: " + ("skipped" if r.skipped else counted(r.rows_written, "row"))
            )
            if epoch in maintained:
                done = "; ".join(s.sentence for s in maintained[epoch].results)
                lines.append(f"    maintenance: {done or 'nothing to do'}")
            if epoch in skipped:
                lines.append(f"    maintenance skipped: {skipped[epoch]}")
        return "\n".join(lines)


#: the log of the latest run of each query started by :func:`stream`, by query id
_LOGS: dict[str, StreamLog] = {}


def reports(query: StreamingQuery) -> StreamLog:
    """The micro-batch reports of ``query`` (its latest run, if restarted in this process).

    ``query`` is what :func:`stream` returned, or the same query from
    ``spark.streams.get(id)``.
    """
    try:
        return _LOGS[str(query.id)]
    except KeyError:
        raise KeyError(f"query {query.id} was not started by toolkit.stream") from None


def _default_query_name(table: str) -> str:
    return "ingest_" + re.sub(r"[^0-9A-Za-z_]", "_", table)


def _local_path(location: str) -> Path | None:
    """The local folder a location (a path or URI) names, or ``None`` for a remote one."""
    parsed = urlparse(location)
    if parsed.scheme in ("", "file"):
        return Path(parsed.path if parsed.scheme else location)
    if len(parsed.scheme) == 1:  # a Windows drive letter
        return Path(location)
    return None


def _batch_files(checkpoint: str, epoch: int) -> list[Path] | None:
    """The files on this disk of micro-batch ``epoch`` of a file stream, as Spark's file
    source logged them in the checkpoint before the batch ran (``sources/0/<epoch>``, or
    the ``.compact`` file that holds it: a ``v1`` line, then one JSON object per file);
    None when the log is not on this disk or cannot be read (Spark reads the batch then,
    as it reads any stream)."""
    folder = _local_path(checkpoint)
    if folder is None:
        return None
    log_dir = folder / "sources" / "0"
    for name in (str(epoch), f"{epoch}.compact"):
        try:
            lines = (log_dir / name).read_text(encoding="utf-8").splitlines()[1:]
        except OSError:
            continue
        try:
            entries = [json.loads(line) for line in lines if line.strip()]
        except ValueError:
            return None
        urls = [urlparse(e["path"]) for e in entries if e.get("batchId", epoch) == epoch]
        return [Path(unquote(u.path)) for u in urls if u.scheme in ("", "file")]
    return None


def _check_checkpoint(location: str, catalog: Catalog, table: str, query_name: str) -> None:
    """Refuse a fresh local checkpoint when the table already has this query's batches."""
    path = _local_path(location)
    if path is None or (path / "offsets").is_dir():
        return
    try:
        tbl = catalog.load_table(table)
    except NoSuchTableError:
        return
    prefix = f"{query_name}:"
    done = sorted(b for b in ingested_batches(tbl) if b.startswith(prefix))
    if done:
        raise CheckpointLostError(
            f"{table} already holds micro-batches of query {query_name!r} ({', '.join(done[:3])}"
            f"{', ...' if len(done) > 3 else ''}) but checkpoint {masked(location)} is new: its "
            "epochs would restart at 0 and be skipped as already ingested. Restore the "
            "checkpoint, or start this source under another query_name."
        )


def _folder_kind(directory: str, format: str | None) -> SourceKind:
    """The kind of files a folder streams: ``format``'s, else its files' (by extension),
    else JSON lines (a folder still empty: files may come after the query starts)."""
    kind = source_named(format or folder_format(directory))
    if kind.stream_reader is None:
        streamable = ", ".join(k.name for k in SOURCE_KINDS if k.stream_reader is not None)
        raise ValueError(f"source kind {kind.name!r} cannot be streamed; streamable: {streamable}")
    return kind


@takes_options(defaults={"allow_rewrites": False})  # no approved plan: no rewrite
def stream(
    directory: str | Path | DataFrame,
    table: str,
    catalog: Catalog,
    spark: SparkSession,
    *,
    checkpoint: str | Path | None = None,
    trigger: Mapping[str, Any] | str | None = None,
    query_name: str | None = None,
    on_batch: Callable[[IngestReport], Any] | None = None,
    source_options: Mapping[str, str] | None = None,
    format: str | None = None,
    schema: Any = None,
    maintain_every: int | None = None,
    maintenance: Mapping[str, Any] | None = None,
    provenance: bool | Sequence[str] = False,
    max_messages: int | None = None,
    **options: Any,
) -> StreamingQuery:
    """Start a streaming query that ingests each new file of the folder ``directory`` (or
    each micro-batch of a streaming DataFrame) into ``table`` (``namespace.name``), one
    micro-batch per ingest, and return it (started).

    ``directory`` is a folder of JSON-lines, Parquet, ORC or CSV files (Avro cannot be
    streamed), or a streaming DataFrame you built (``df.isStreaming``: Kafka, a socket, a
    file stream of your own): one string column is read as JSON lines, typed columns as
    they are, like :func:`~toolkit.pipeline.ingest.ingest` reads a DataFrame.

    * ``checkpoint``: Spark's checkpoint location. Defaults, for an embedded catalog, to
      ``<catalog folder>/checkpoints/<table>/<query_name>``; required for other catalogs.
    * ``trigger``: passed to ``DataStreamWriter.trigger``: ``{"availableNow": True}``
      (process what is there, then stop), ``{"processingTime": "10 seconds"}``,
      ``{"once": True}``; a string means ``processingTime``. Default: Spark's (a micro-batch
      as soon as the previous one ends).
    * ``query_name``: the query's name, default ``ingest_<table>``. Batch ids are
      ``<query_name>:<epoch>``: keep it the same across restarts, and give each source
      feeding the same table its own name (and checkpoint). A name already running in
      this process raises :class:`~toolkit.errors.QueryNameTakenError`. Queries run side
      by side in one session, each write in a session of its own
      (:mod:`toolkit.spark.settings`).
    * ``on_batch``: called with the :class:`~toolkit.pipeline.ingest.IngestReport` of each
      micro-batch, in Spark's callback thread; :func:`reports` keeps them all anyway.
    * ``source_options``: options of Spark's file source (``maxFilesPerTrigger``,
      ``pathGlobFilter``, ``recursiveFileLookup``...).
    * ``format``: the kind of files the folder holds, by its name in
      :data:`~toolkit.pipeline.sources.SOURCE_KINDS` (``jsonl``, ``parquet``, ``orc``,
      ``csv``); default: the format of the files there (by extension), ``jsonl`` for a
      folder still empty. Its entry's stream reader reads the folder.
    * ``schema``: the schema of Parquet, ORC or CSV files (a ``StructType`` or a DDL
      string). Default: that of the files in the folder when the query starts, read as a
      batch (an empty folder raises :class:`~toolkit.errors.SourceFormatError`). Spark
      reads every later file with it: a column it lacks is not read (restart the query
      to read new columns), a file whose types disagree fails the micro-batch.
      A micro-batch holding a Parquet or ORC file Spark would read otherwise than
      ``simulate`` (nanosecond timestamps, unsigned 64-bit integers...: see
      :mod:`toolkit.spark.misreads`) is read by Arrow instead, as ``ingest`` reads it.
    * ``maintain_every``: after every that many micro-batches (epochs 1, 3, 5... for 2),
      once the micro-batch is ingested, plan and apply table maintenance
      (:func:`toolkit.pipeline.maintain.maintain`) with its defaults, or with
      ``maintenance`` (keyword options of ``plan_maintenance``: ``older_than``,
      ``retain_last``, ``steps``...). What it did is in :func:`reports`
      (``maintenance``); a run refused because another writer moved the table meanwhile
      is skipped (``maintenance_skipped``) and tried again next time. Nobody reviews
      these plans, so they expire no snapshot that is the last to read stored values (a
      dropped column's): the report says which and how many, until the plan is applied
      by hand or ``maintenance`` holds ``allow_losses=True``.
    * ``options``: evolution options, as for :func:`toolkit.simulate`.

    ``directory`` may also be a Kafka topic, ``kafka://HOST:PORT/TOPIC``: micro-batches
    are read in the driver with ``confluent-kafka`` (the ``kafka`` extra; no Spark Kafka
    connector needed) and ingested as JSON lines, exactly once (each batch id is its
    offset ranges, committed with its rows; a restarted query resumes from the table,
    see :func:`~toolkit.pipeline.ingest.ingest_topic_batch`). Messages whose value is not
    a JSON object go to the quarantine with their topic, partition and offset.
    ``source_options`` are the client's settings (``group.id``: the consumer group whose
    offsets are committed after each batch, default ``toolkit-<query_name>``;
    ``security.protocol``...); ``max_messages`` bounds a micro-batch, per partition;
    ``provenance=True`` (or some of ``"topic", "partition", "offset", "timestamp",
    "key"``) adds the columns ``_kafka_topic``... to every record; the checkpoint (optional
    for other catalogs) keeps the batch under way, so one killed half-way is read again
    as it was.

    Files must appear in the folder whole (write elsewhere, then move them in). A query
    started on a new local checkpoint while the table already holds batches of the same
    query name raises :class:`CheckpointLostError`: those epochs would be skipped.

    Example (``awaitTermination`` raises if a micro-batch failed)::

        q = stream("landing", "db.events", cat, spark, trigger={"availableNow": True})
        q.awaitTermination()
        for report in reports(q):
            print(report)
    """
    make_options(**options)  # a misspelt option fails now, not in the first micro-batch
    if is_kafka_url(directory):
        # answers as a StreamingQuery does (isActive, awaitTermination, stop, exception)
        return _stream_topic(  # type: ignore[no-any-return]
            str(directory), table, catalog, spark, options,
            _TopicSettings(checkpoint, trigger, query_name, on_batch, source_options,
                           maintain_every, maintenance, provenance, max_messages))
    if provenance or max_messages is not None:
        raise ValueError("provenance= and max_messages= are for Kafka topics")
    if not isinstance(directory, str | os.PathLike):
        if not getattr(directory, "isStreaming", False):
            raise TypeError(
                f"stream() reads a folder (str or os.PathLike) or a streaming DataFrame "
                f"(spark.readStream...), not a {type(directory).__name__}; ingest a batch "
                "DataFrame with ingest()"
            )
        if format is not None or schema is not None or source_options:
            raise ValueError(
                "format=, schema= and source_options= are for folders: a streaming "
                "DataFrame carries its own"
            )
        kind = None
    else:
        kind = _folder_kind(str(directory), format)
    upkeep = _checked_upkeep(table, catalog, spark, maintain_every, maintenance)
    name = query_name or _default_query_name(table)
    taken = name_taken(name, spark)  # Spark refuses its own queries' names; not Kafka's
    if taken is not None:
        raise taken
    if checkpoint is None:
        info = embedded(catalog)
        if info is None:
            raise ValueError(
                f"catalog {catalog.name!r} is not an embedded one: pass checkpoint= "
                "(a folder or URI Spark can write, kept across restarts)"
            )
        checkpoint = info.folder / CHECKPOINTS / table / name
    location = str(checkpoint)
    _check_checkpoint(location, catalog, table, name)

    if kind is None:
        source: DataFrame = directory  # type: ignore[assignment]
        batch_kind = None  # told by its columns, as ingest tells a DataFrame
    else:
        folder = _local_path(str(directory))
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)  # files may come after the query starts
        reader_options = {k: str(v) for k, v in (source_options or {}).items()}
        assert kind.stream_reader is not None
        source = kind.stream_reader(spark, str(directory), reader_options, schema)
        # a micro-batch of typed files is typed rows, even of one string column
        batch_kind = "dataframe" if kind.mode == "rows" else None
    log = StreamLog(name, table)
    files_of = None if kind is None else kind.name  # a folder's files: their format

    def process(batch_df: DataFrame, epoch_id: int) -> None:
        # the batch's files are taken as ingest(path) takes them: those Spark would read
        # otherwise are read by Arrow, CSV that is not UTF-8 refused
        here = None
        if files_of is not None and (listed := _batch_files(location, epoch_id)) is not None:
            here = micro_batch_records(listed, files_of)
        report = ingest(
            batch_df if here is None else here, table, catalog, spark,
            batch_id(name, epoch_id), format=batch_kind if here is None else None, **options,
        )
        log.add(epoch_id, report)
        if on_batch is not None:
            on_batch(report)
        if maintain_every is not None and (epoch_id + 1) % maintain_every == 0:
            try:
                log.add_maintenance(epoch_id, maintain(table, catalog, spark, **upkeep))
            except StalePlanError as exc:  # another writer committed between plan and run
                log.add_maintenance(epoch_id, str(exc))

    writer = (
        source.writeStream.queryName(name)
        .option("checkpointLocation", location)
        .foreachBatch(process)
    )
    if trigger is not None:
        writer = (
            writer.trigger(processingTime=trigger)
            if isinstance(trigger, str)
            else writer.trigger(**trigger)
        )
    query = writer.start()
    _LOGS[str(query.id)] = log
    return query


@dataclass(frozen=True)
class _TopicSettings:
    """The keywords of :func:`stream` a Kafka topic's stream takes, as given."""

    checkpoint: str | Path | None
    trigger: Mapping[str, Any] | str | None
    query_name: str | None
    on_batch: Callable[[IngestReport], Any] | None
    source_options: Mapping[str, str] | None
    maintain_every: int | None
    maintenance: Mapping[str, Any] | None
    provenance: bool | Sequence[str]
    max_messages: int | None


def _stream_topic(
    url: str, table: str, catalog: Catalog, spark: SparkSession,
    options: Mapping[str, Any], settings: _TopicSettings,
) -> Any:
    """:func:`stream` of a Kafka topic (``toolkit.pipeline.kafka_stream``)."""
    checkpoint, on_batch, max_messages = (
        settings.checkpoint, settings.on_batch, settings.max_messages)
    maintain_every = settings.maintain_every
    if max_messages is not None and (isinstance(max_messages, bool) or max_messages < 1):
        raise ValueError(f"max_messages must be 1 or more, not {max_messages!r}")
    upkeep = _checked_upkeep(table, catalog, spark, maintain_every, settings.maintenance)
    name = settings.query_name or _default_query_name(table)
    if checkpoint is None:
        info = embedded(catalog)
        checkpoint = None if info is None else info.folder / CHECKPOINTS / table / name
    local = None if checkpoint is None else _local_path(str(checkpoint))
    if checkpoint is not None and local is None:
        raise ValueError(f"a Kafka stream keeps its checkpoint in a local folder, not "
                         f"{checkpoint}: the table itself says where the topic stands")
    client = dict(settings.source_options or {})
    group = client.pop("group.id", None)
    log = StreamLog(name, table)

    def on_report(epoch: int, report: IngestReport) -> None:
        log.add(epoch, report)
        if on_batch is not None:
            on_batch(report)

    def after_batch(epoch: int) -> None:
        if maintain_every is not None and (epoch + 1) % maintain_every == 0:
            try:
                log.add_maintenance(epoch, maintain(table, catalog, spark, **upkeep))
            except StalePlanError as exc:
                log.add_maintenance(epoch, str(exc))

    query = start_topic_stream(
        TopicStream(url, table, catalog, spark, name, settings.trigger, local, options,
                    max_messages, settings.provenance, group, client),
        on_report, after_batch)
    _LOGS[str(query.id)] = log
    return query


def _checked_upkeep(
    table: str, catalog: Catalog, spark: SparkSession, maintain_every: int | None,
    maintenance: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The maintenance options a stream runs every ``maintain_every`` micro-batches, checked
    now: wrong options fail before the stream starts, not in the micro-batch that first
    maintains."""
    if maintain_every is not None and (isinstance(maintain_every, bool) or maintain_every < 1):
        raise ValueError(f"maintain_every must be a whole number of micro-batches (1 or more), "
                         f"not {maintain_every!r}")
    upkeep = dict(maintenance or {})
    if not isinstance(upkeep.get("allow_losses", False), bool):
        raise TypeError(f"maintenance allow_losses is True or False, not "
                        f"{upkeep['allow_losses']!r}")
    # a misspelt option raises TypeError now
    MaintenanceSettings(**{k: v for k, v in upkeep.items() if k != "allow_losses"})
    check_steps(upkeep.get("steps", ()))
    return upkeep
