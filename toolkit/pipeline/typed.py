"""The columnar path of typed sources, as ``ingest`` takes it (``toolkit.spark.columnar``).

A batch of typed columns (Parquet, ORC, CSV, a Spark DataFrame of typed columns, a pandas,
Arrow or Polars frame) is profiled by one Spark aggregation and routed by one projection
under the upsolver policy; anything the columnar path cannot do exactly (a column of
drifting values, a nested column, a conversion Spark spells otherwise, the widening
policy's per-record routing) takes the Python path, which gives the same table.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyiceberg.table import Table

from toolkit.arrow import int96_columns
from toolkit.arrow import records as arrow_records
from toolkit.core.batch.options import Options
from toolkit.core.batch.typed_profile import foreseen_kinds, projection, usual_summary
from toolkit.core.engine import make_plan
from toolkit.core.evolution.batch_plan import Plan
from toolkit.core.values.types import Struct
from toolkit.iceberg.ledger import drop_staged
from toolkit.iceberg.schema import from_iceberg
from toolkit.pipeline.sources import SourceKind
from toolkit.spark.arrow_frames import arrow_dataframe, frame_table
from toolkit.spark.batches import (
    OnePass,
    SparkObservation,
    Written,
    append_staged,
    new_write,
    publish_write,
    spark_schema,
)
from toolkit.spark.class_tally import counting, head_of, tally_counts
from toolkit.spark.columnar import (
    HEAD_ROWS,
    TypedColumns,
    TypedSeen,
    class_predicates,
    classified,
    head_records,
    observe_typed,
    observed_counts,
    routed_typed,
    typed_columns,
)
from toolkit.spark.progress import described
from toolkit.spark.settings import settings_hash
from toolkit.spark.tally import Tallied

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "FRAME_KINDS", "TypedSource", "columnar_source", "guessed_plan", "observe_columnar",
    "write_columnar", "write_columnar_one_pass",
]

log = logging.getLogger(__name__)

#: the in-memory frames that reach Spark through Arrow when every column is typed
FRAME_KINDS = frozenset({"pandas", "arrow", "polars"})

#: the first rows of a batch as the Python path reads them, being read (None: they
#: could not be read alone after all)
Head = Future[tuple[dict[str, Any], ...] | None]


@dataclass(frozen=True)
class TypedSource:
    """A source of typed columns as the columnar path reads it: its DataFrame, and when
    its first rows can be read as the Python path reads them without Spark (a frame in
    memory, one small Parquet or ORC file on this disk), the reading of them, under way
    while Spark plans the batch (no Spark job needed for the profile's first samples)."""

    frame: DataFrame
    head: Head | None = None


def columnar_source(
    spark: SparkSession, source: Any, kind: SourceKind, options: Options
) -> TypedSource | None:
    """The source as a DataFrame of typed columns for the columnar path, or None (the
    source kind's own DataFrame and the Python path then). A frame becomes a DataFrame
    through Arrow; its rows travel as ``rows`` (typed Arrow columns) if the Python path
    must route them after all, which reads them as the records path reads the frame."""
    if not options.policy.jvm_routes:
        return None  # the widening policy routes record by record, by its plan
    if options.hints or options.contracts:
        return None  # hints convert and contracts refuse value by value (docs/rules.md)
    if kind.name in FRAME_KINDS:
        table = frame_table(source)
        if table is None:
            return None
        head: Head = Future()
        head.set_result(tuple(arrow_records(table.slice(0, HEAD_ROWS))))
        return TypedSource(arrow_dataframe(spark, table), head)
    if kind.mode == "rows":
        return TypedSource(kind.to_dataframe(spark, source), _file_head(kind, source))
    return None


#: a Parquet file's first rows are read here when its first row group is at most this
#: big, else by a Spark job run while the batch is written
HEAD_GROUP_BYTES = 32 << 20
#: reads the first rows of files while Spark plans their batch (one thread: a batch
#: waits for its own head only)
_HEADS = ThreadPoolExecutor(1, thread_name_prefix="toolkit-head")


#: loads Spark's view of a table while a batch is planned and written (one thread, kept: a
#: thread of its own per batch would open a JVM connection of its own)
_VIEWS = ThreadPoolExecutor(1, thread_name_prefix="toolkit-view")
#: the schemas Spark was seen to read as the toolkit's plan has them (:func:`_view_key`)
_ALIKE: set[tuple[int, str, bytes]] = set()
_ALIKE_KEPT = 1024


def _view_key(spark: SparkSession, spark_name: str, table: Table) -> tuple[int, str, bytes]:
    """What Spark's view of ``table`` follows from: the session's settings, the catalog
    (the first part of Spark's name of the table) and the whole Iceberg schema the batch
    loaded (a hash of it: ids, names, types, docs, defaults). A schema that changed after
    the batch loaded the table is met by the plan's own check (the commit requires the
    schema the batch loaded)."""
    import hashlib

    schema = table.schema().model_dump_json().encode()
    return settings_hash(spark), spark_name.split(".", 1)[0], hashlib.sha256(schema).digest()


def _file_head(kind: SourceKind, source: Any) -> Head | None:
    """The reading of the first rows of one Parquet or ORC file on this disk, as the
    Python path reads them (``toolkit.pipeline.files``: Arrow's readers), begun; None
    when the file is not one such, or too big to read its start alone. Spark's first
    partition starts with them."""
    if kind.name not in ("parquet", "orc") or not isinstance(source, str | os.PathLike):
        return None
    path = Path(os.fspath(source))
    if not path.is_file():
        return None
    import pyarrow as pa

    try:
        if kind.name == "orc":
            import pyarrow.dataset as ds

            # batch by batch: reading the first stripe whole decoded every row of a
            # one-stripe file, on the core Spark writes with
            orc = ds.dataset(path, format="orc")
            return _HEADS.submit(_head_of, lambda: next(
                iter(orc.to_batches(batch_size=HEAD_ROWS)), None))
        import pyarrow.parquet as pq

        parquet = pq.ParquetFile(path)
        if parquet.metadata.num_row_groups and \
                parquet.metadata.row_group(0).total_byte_size > HEAD_GROUP_BYTES:
            return None
        if int96_columns(parquet.schema):
            return None  # Arrow's nanoseconds may overflow them: Spark's own head then
        return _HEADS.submit(
            _head_of, lambda: next(parquet.iter_batches(batch_size=HEAD_ROWS), None))
    except (OSError, pa.ArrowException):
        return None


def _head_of(first: Callable[[], Any]) -> tuple[dict[str, Any], ...] | None:
    import pyarrow as pa

    try:
        batch = first()
    except (OSError, pa.ArrowException):
        return None  # a Spark job reads them then
    if batch is None:
        return ()
    return tuple(arrow_records(pa.Table.from_batches([batch]).slice(0, HEAD_ROWS)))


def guessed_plan(cols: TypedColumns, options: Options) -> Plan | None:
    """The plan of a new table for a batch of typed columns, made before the batch is
    read, as if every column held values of its usual class only
    (:func:`toolkit.core.batch.typed_profile.usual_summary`); None when the columnar path
    does not take the batch. Its one pass then counts what the batch really holds, and
    the guess stands only if the plan of those counts is the same."""
    summary = usual_summary(dict(zip(cols.names, cols.types, strict=True)), options)
    plan = make_plan(Struct(), summary, options, 0, 0)
    return plan if plan.after.fields and not (plan.rare or plan.held) else None


@described(None, "Profiling")
def observe_columnar(
    df: DataFrame, options: Options, batch: int
) -> tuple[SparkObservation, TypedSeen] | None:
    """The observation of a DataFrame of typed columns by one aggregation, or None when the
    Python path must observe it."""
    cols = typed_columns(df)
    if cols is None:
        return None
    found = observe_typed(cols, options, batch)
    if found is None:
        return None
    summary, profile, seen = found
    return SparkObservation(summary, profile), seen


@described(None, "Writing")
def write_columnar(
    seen: TypedSeen,
    options: Options,
    table: Table,
    spark: SparkSession,
    spark_name: str,
    batch_id: str,
    plan: Plan,
    notes: Callable[[int], Mapping[str, str]] | None = None,
) -> Written | None:
    """Route the batch as one projection into the plan's schema and stage then publish
    it, as :func:`toolkit.spark.batches.write_batch` does; None (nothing written) when
    the projection cannot route it exactly, or the table moved on from the plan's
    schema: the Python router does it then."""
    if not plan.after.fields:
        return None  # rows without columns: what the Python path does with them stays
    targets = projection(plan.after, seen.kinds, options)
    if targets is None:
        return None
    planned = spark_schema(spark, plan.after)
    if spark.table(spark_name).schema != planned:
        return None  # another writer's columns: padding is the Python router's
    frame = routed_typed(seen, targets, planned, options)
    if frame is None:
        return None
    write_id = new_write(table, batch_id)
    append_staged(frame, spark_name, batch_id, write_id)
    return publish_write(table, write_id, batch_id, "jvm", notes)


@described(None, "Profiling and writing")
def write_columnar_one_pass(
    df: DataFrame | TypedColumns,
    options: Options,
    table: Table,
    spark_name: str,
    batch_id: str,
    batch: int,
    head: Head | None = None,
) -> tuple[OnePass, TypedSeen] | None:
    """The steady state of typed sources: route the batch into ``table``'s current schema
    as if it held only kinds the table takes (every class that has a kind foreseen), and
    count its classes in the same pass (``jvm/ClassTally.java``), staging the rows. The
    caller plans on the counts as on any observation and publishes the staged rows only
    if the plan changes nothing (then the projection routed exactly what the two-pass
    path routes: same schema, same classes, same rules), else drops them and routes
    again with the counts in hand. None (nothing staged) when the projection cannot be
    made, the write failed, or a class holds values typed one by one."""
    typed = df if isinstance(df, TypedColumns) else typed_columns(df)
    if typed is None:
        return None
    spark = typed.lazy.session
    schema = from_iceberg(table.schema())
    planned = spark_schema(spark, schema)
    kinds = {n: foreseen_kinds(typed.source_type(n), options) for n in typed.names}
    targets = projection(schema, kinds, options)
    if targets is None:
        return None
    # Spark's own view of the table (unless seen alike already) is loaded while the batch
    # is planned and written
    view = _view_key(spark, spark_name, table)
    viewed = None if view in _ALIKE else _VIEWS.submit(lambda: spark.table(spark_name).schema)
    cols = classified(typed, options)
    # in the JVM, as the write reads the rows; the profile's first samples too, unless
    # read from the file or frame already (no Spark job of their own either way)
    counts = counting(cols, options, HEAD_ROWS if head is None else 0)
    if counts is None:
        return None
    every = TypedSeen(replace(cols, lazy=counts.lazy), kinds,
                      {n: dict.fromkeys(k, 1) for n, k in kinds.items()})
    frame = routed_typed(every, targets, planned, options)
    if frame is None:
        return None
    write_id = new_write(table, batch_id)
    try:
        append_staged(frame, spark_name, batch_id, write_id)
    except Exception as exc:  # noqa: BLE001 - a failed job stages nothing: two passes
        log.info("batch %s: not written in one pass (%s)", batch_id, str(exc)[:300])
        return None
    if viewed is not None:
        try:
            alike = viewed.result() == planned
        except Exception:  # noqa: BLE001 - a view Spark cannot load is not alike
            alike = False
        if not alike:
            # Spark sees other columns (another writer's, or types it maps otherwise), or
            # none: padding is the Python router's; the rows staged meanwhile go
            drop_staged(table, write_id)
            return None
        if len(_ALIKE) >= _ALIKE_KEPT:
            _ALIKE.clear()
        _ALIKE.add(view)
    counted = tally_counts(counts)
    first = head.result() if head is not None else head_of(counts, counted, HEAD_ROWS)
    if first is None:  # the start could not be read alone, or was not kept
        first = head_records(cols)
    predicates = {n: class_predicates(cols, n, options) for n in cols.names}
    found = observed_counts(cols, counted, counts.keys, predicates, options, batch, first)
    if found is None:
        drop_staged(table, write_id)
        return None
    summary, profile, seen = found
    return OnePass(write_id, Tallied(summary, profile), foreseen=True), seen
