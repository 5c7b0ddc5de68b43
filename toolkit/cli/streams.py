"""The command that keeps ingesting: ``stream`` watches a folder with Spark Structured
Streaming, one batch per micro-batch, and prints a line per micro-batch as it lands."""

from __future__ import annotations

import datetime as dt
import json
import re
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, Any

import click

from toolkit.cli.common import (
    DURATION,
    catalog_options,
    duration_text,
    evolution_options,
    evolution_settings,
    open_catalog,
    spark_options,
    start_spark,
    status,
)
from toolkit.cli.exits import CommandFailed, ExitCode, guarded
from toolkit.cli.terminal import echo
from toolkit.core.values.secrets import masked
from toolkit.core.values.wording import counted

if TYPE_CHECKING:
    from pyspark.sql.streaming.query import StreamingQuery

    from toolkit.core.maintenance.steps import MaintenanceReport
    from toolkit.pipeline.ingest import IngestReport
    from toolkit.pipeline.stream import StreamLog

__all__ = ["batch_line", "failure_of", "stream"]

#: how often the command looks at the query (seconds): the latency of its lines
POLL = 1


def _changes(report: IngestReport) -> str:
    """The plan's changes in a few words: ``1 column added (+ n_string: string)``."""
    plan = report.plan
    ops = [str(op).split("\n", 1)[0].split(" (id", 1)[0] for op in plan.operations]
    return f"{plan.headline} ({'; '.join(ops)})" if ops else plan.headline


def batch_line(report: IngestReport) -> str:
    """One micro-batch in one line: rows written, schema changes, records set aside."""
    if report.skipped:
        return f"{report.batch_id}: already ingested; nothing written"
    return (f"{report.batch_id}: {counted(report.rows_written, 'row')} written, "
            f"{_changes(report)}, {report.quarantined:,} quarantined")


def _batch_json(report: IngestReport) -> dict[str, Any]:
    return {"event": "batch", "table": report.table, "batch_id": report.batch_id,
            "skipped": report.skipped, "rows_written": report.rows_written,
            "snapshot_id": report.snapshot_id, "quarantined": report.quarantined,
            "changes_schema": report.plan.changed,
            "operations": [op.to_json() for op in report.plan.operations]}


def failure_of(description: str) -> str:
    """The error a failed micro-batch ended with, from Spark's long description: the
    last ``Name: message`` line of the Python traceback it carries, else its first line.

    >>> failure_of("[FOREACH_BATCH_USER_FUNCTION_ERROR] An error occurred...\\n"
    ...            "Traceback (most recent call last):\\n  File x\\n"
    ...            "toolkit.errors.IncompatibleRecordError: flag: 'x' is a string")
    "IncompatibleRecordError: flag: 'x' is a string"
    """
    found = re.findall(r"^(?:[\w]+\.)*(\w+(?:Error|Exception)): (.+)$", description, re.M)
    if found:
        name, message = found[-1]
        return f"{name}: {message}"
    return description.strip().split("\n", 1)[0]


class _Printer:
    """Prints what the query's log holds that it has not printed yet, in epoch order: each
    micro-batch, then what maintenance did after it."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.batches: set[int] = set()
        self.upkeep: set[int] = set()

    def _out(self, text: str, data: dict[str, Any]) -> None:
        if self.as_json:
            echo(json.dumps(data, sort_keys=True, ensure_ascii=False, default=str), as_json=True)
        else:
            echo(text)

    def flush(self, log: StreamLog) -> None:
        done: dict[int, MaintenanceReport] = dict(log.maintenance_by_epoch)
        skipped = dict(log.maintenance_skipped)
        for epoch, report in sorted(dict(log.by_epoch).items()):
            if epoch not in self.batches:
                self.batches.add(epoch)
                self._out(batch_line(report), _batch_json(report))
            if epoch in self.upkeep:
                continue
            if epoch in done:
                self.upkeep.add(epoch)
                did = "; ".join(r.sentence for r in done[epoch].results) or "nothing to do"
                self._out(f"  maintenance: {did}", {
                    "event": "maintenance", "epoch": epoch,
                    "results": [{"name": r.name, "sentence": r.sentence}
                                for r in done[epoch].results]})
            elif epoch in skipped:
                self.upkeep.add(epoch)
                self._out(f"  maintenance skipped: {skipped[epoch]}",
                          {"event": "maintenance_skipped", "epoch": epoch,
                           "reason": skipped[epoch]})


class _Stop:
    """Ctrl+C and SIGTERM, as a request: the first asks to stop after the micro-batch under
    way, the second to stop at once."""

    def __init__(self) -> None:
        self.asked = 0

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        self.asked += 1
        name = signal.Signals(signum).name
        if self.asked == 1:
            echo(f"{name}: stopping after the micro-batch under way "
                 "(press Ctrl+C again to stop now)", err=True)

    @contextmanager
    def installed(self) -> Iterator[None]:
        kinds = (signal.SIGINT, signal.SIGTERM)
        before = {k: signal.getsignal(k) for k in kinds}
        try:
            for k in kinds:
                signal.signal(k, self)
        except ValueError:  # not the main thread (an embedding program): its own handlers
            yield
            return
        try:
            yield
        finally:
            for k, handler in before.items():
                signal.signal(k, handler)


def _busy(query: StreamingQuery) -> bool:
    try:
        return bool(query.status.get("isTriggerActive", False))
    except Exception:  # the query ended meanwhile
        return False


def _watch(query: StreamingQuery, log: StreamLog, printer: _Printer, stop: _Stop,
           until: float | None) -> str:
    """Print micro-batches as they land until the query ends, is asked to stop, or the
    time runs out; stop it; the reason it ended, in words."""
    why = "every file there was processed"
    asked_at = -1
    while query.isActive:
        try:
            query.awaitTermination(POLL)
        except Exception:  # a micro-batch failed: query.exception() says which and why
            break
        printer.flush(log)
        if stop.asked and asked_at < 0:
            asked_at = len(log)
        timed_out = until is not None and time.monotonic() >= until
        if stop.asked >= 2 or ((stop.asked or timed_out) and (
                not _busy(query) or len(log) > asked_at >= 0)):
            why = "stopped at once" if stop.asked >= 2 else (
                "stopped as asked" if stop.asked else "the time given ran out")
            query.stop()
            break
        if timed_out and asked_at < 0:
            asked_at = len(log)
    printer.flush(log)
    return why


@click.command(epilog="Exit codes: 0 the query stopped cleanly (--once done, --for elapsed, "
               "Ctrl+C or SIGTERM); 1 a micro-batch failed (the message says which and why; "
               "run again: the checkpoint resumes there); 2 bad input.")
@click.argument("directory", metavar="DIR")
@click.option("--table", "-t", required=True, help="The table, namespace.name.")
@catalog_options()
@evolution_options
@click.option("--checkpoint", metavar="LOCATION",
              help="Spark's checkpoint (a folder or URI), kept across runs: where the query "
              "resumes [default: CATALOG/checkpoints/TABLE/QUERY_NAME, for a catalog folder].")
@click.option("--query-name", "--batch-id-prefix", "query_name", metavar="NAME",
              help="The query's name; batch ids are NAME:EPOCH. Keep it across runs; give "
              "each source feeding the table its own [default: ingest_TABLE].")
@click.option("--once", is_flag=True,
              help="Process the files there now, then exit (Spark's availableNow trigger).")
@click.option("--for", "run_for", type=DURATION, metavar="DURATION",
              help="Stop after this long (90, 90s, 10m, 2h), after the micro-batch under way.")
@click.option("--every", type=DURATION, metavar="DURATION",
              help="One micro-batch per interval (10s, 1m) [default: as soon as files come].")
@click.option("--schema", metavar="DDL",
              help="The columns of Parquet, ORC or CSV files, e.g. 'id long, name string' "
              "[default: those of the files in DIR when the query starts].")
@click.option("--max-files-per-trigger", type=click.IntRange(min=1), metavar="N",
              help="At most N new files per micro-batch.")
@click.option("--maintain-every", type=click.IntRange(min=1), metavar="N",
              help="Maintain the table (expire old snapshots, compact...) after every N "
              "micro-batches, with `toolkit maintain`'s defaults.")
@spark_options
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON lines on standard output: an object per micro-batch, then a "
              "summary (or the error).")
@guarded
def stream(
    directory: str, table: str, catalog_spec: str, warehouse: str | None,
    source_format: str | None, policy: str, on_incompatible: str, detect_dates: bool,
    rare_type_percent: float | None, hints: dict[str, str], checkpoint: str | None,
    query_name: str | None,
    once: bool, run_for: dt.timedelta | None, every: dt.timedelta | None,
    schema: str | None, max_files_per_trigger: int | None, maintain_every: int | None,
    spark_conf: tuple[str, ...], as_json: bool,
) -> None:
    """Ingest each new file of the folder DIR into TABLE, one batch per micro-batch, and
    print one line per micro-batch (rows written, schema changes, records quarantined).

    Runs until Ctrl+C or SIGTERM (it stops after the micro-batch under way), or --for
    elapses; --once processes what is there and exits, for a scheduler (cron, CI). Runs are
    restart-safe: the checkpoint remembers the files read, and a micro-batch already in the
    table is never written twice. --json prints one JSON object per line: one per
    micro-batch, then a summary.
    """
    import os

    from toolkit.iceberg.catalog import embedded
    from toolkit.pipeline.stream import reports
    from toolkit.pipeline.stream import stream as start_stream

    options = evolution_settings(policy, on_incompatible, detect_dates, rare_type_percent,
                                 hints)
    if once and (run_for is not None or every is not None):
        raise click.BadParameter("--once processes what is there and exits; leave out "
                                 "--for and --every", param_hint="--once")
    if "://" not in directory:
        if not os.path.isdir(directory):
            what = "is a file, not a folder" if os.path.exists(directory) else "no such folder"
            raise click.BadParameter(f"{directory}: {what}", param_hint="DIR")
        directory = os.path.abspath(directory)
    where = open_catalog(catalog_spec, warehouse)
    if checkpoint is None and embedded(where.catalog) is None:
        raise click.BadParameter(
            f"catalog {where.recorded} is not a catalog folder: give --checkpoint (a folder "
            "or URI Spark can write, kept across runs)", param_hint="--checkpoint")
    trigger: dict[str, Any] | None = (
        {"availableNow": True} if once
        else {"processingTime": f"{max(every.total_seconds(), 0.001):g} seconds"} if every
        else None)
    spark = start_spark(where.catalog, spark_conf)
    with status(f"Starting the query on {directory}..."):
        query = start_stream(
            directory, table, where.catalog, spark, checkpoint=checkpoint, trigger=trigger,
            query_name=query_name, format=source_format, schema=schema,
            source_options=({"maxFilesPerTrigger": str(max_files_per_trigger)}
                            if max_files_per_trigger else None),
            maintain_every=maintain_every, **options,
        )
    log = reports(query)
    printer, stop = _Printer(as_json), _Stop()
    until = None if run_for is None else time.monotonic() + run_for.total_seconds()
    shown = f"Streaming {directory} into {table}" + (
        "" if once else f" for {duration_text(run_for)}" if run_for else
        " (Ctrl+C to stop)") + "..."
    with stop.installed(), status(shown):
        why = _watch(query, log, printer, stop, until)
    failed = query.exception()
    rows = log.rows_written
    aside = sum(r.quarantined for r in log.reports)
    changes = sum(1 for r in log.reports if r.plan.changed)
    summary = (f"{table}: {counted(len(log), 'micro-batch')}, {counted(rows, 'row')} written, "
               f"{counted(changes, 'schema change')}, {aside:,} quarantined; ")
    if failed is not None:
        reason = masked(failure_of(failed.desc if hasattr(failed, "desc") else str(failed)))
        message = (f"{summary}a micro-batch failed: {reason}. Fix the cause and run again: "
                   "the query resumes from its checkpoint")
        if not as_json:
            raise CommandFailed(message, ExitCode.FAILED)
        # JSON lines: the error is one more line, as the micro-batches before it
        echo(json.dumps({"event": "error", "error": message, "exit_code": 1,
                         "status": ExitCode.FAILED.name}, sort_keys=True), as_json=True)
        echo(f"error: {message}", err=True)
        raise click.exceptions.Exit(ExitCode.FAILED)
    data = {"event": "summary", "table": table, "query_name": log.query_name,
            "micro_batches": len(log), "rows_written": rows, "schema_changes": changes,
            "quarantined": aside, "stopped": why}
    if as_json:
        echo(json.dumps(data, sort_keys=True, ensure_ascii=False), as_json=True)
    else:
        echo(summary + why)
