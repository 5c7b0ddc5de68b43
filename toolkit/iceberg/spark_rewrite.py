"""A rewrite of every row through Spark, for a table whose data files PyIceberg cannot write.

PyIceberg 0.12 writes only Parquet and reads no Avro data file; a table Spark, Flink or
Trino users made with ``write.format.default`` = ``orc`` or ``avro`` is rewritten here
(RULES 5: a widening Iceberg cannot do in place), in its own format, without giving up the
one atomic commit of :func:`toolkit.iceberg.operations.evolve`:

1. Spark reads the rows of the snapshot the plan was made against, as Arrow; the caller
   converts them (the core's value conversions, the same as on the PyIceberg path);
2. Spark writes them into a staging table that is the staged metadata itself (the plan's
   schema with its field IDs, the table's spec, properties and location) registered under
   a staging name (:mod:`toolkit.iceberg.new_tables`), with no snapshot of its own: so its
   only data files are the rewritten ones, written where the table's own go;
3. those data files are taken from the staging table's manifests, the staging table is
   dropped (its metadata files deleted, its data files kept), and the caller adds them to
   the overwrite it commits with the schema change, as one commit.

A process that dies between 2 and 3 leaves the staging table behind, marked as such: the
table's maintenance drops it with its files, which nothing else refers to.
"""

from __future__ import annotations

import contextlib
import sys
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyiceberg.exceptions import NoSuchTableError
from pyiceberg.manifest import DataFile, DataFileContent, ManifestContent
from pyiceberg.serializers import ToOutputFile
from pyiceberg.table import Table
from pyiceberg.table.metadata import TableMetadata

from toolkit.iceberg.ledger import STAGING_PROPERTY
from toolkit.iceberg.new_tables import (
    STAGING_FOR_PROPERTY,
    discard_table,
    staging_identifier,
    table_files,
)

if TYPE_CHECKING:
    from pyiceberg.table.snapshots import Snapshot
    from pyspark.sql import SparkSession

__all__ = [
    "data_files",
    "equality_delete_files",
    "read_with_spark",
    "rewrite_with_spark",
    "spark_identifier",
    "spark_seeing",
]


def spark_seeing(table: Table) -> SparkSession | None:
    """The process's Spark session that sees ``table``'s catalog under its name (as
    ``toolkit.spark_session(catalog)`` makes it); None when there is none. Pyspark is not
    imported for it: without it there is no session."""
    if "pyspark.sql" not in sys.modules:
        return None
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession() or getattr(
        SparkSession, "_instantiatedSession", None)
    name = getattr(table.catalog, "name", None)
    if session is None or not name:
        return None
    try:
        seen = session.conf.get(f"spark.sql.catalog.{name}", None)
    except Exception:  # noqa: BLE001 (a stopped session: none to use)
        return None
    return session if seen else None


def spark_identifier(table: Table, name: str | None = None) -> str:
    """``table`` (or ``name`` in its catalog) as Spark's catalog of the same name names it,
    each part quoted: names come from the catalog and are never parsed as SQL."""
    parts = [table.catalog.name, *(name.split(".") if name else table.name())]
    return ".".join("`" + p.replace("`", "``") + "`" for p in parts)


def read_with_spark(table: Table, snapshot: Snapshot, spark: SparkSession) -> pa.Table | None:
    """The rows of ``snapshot`` (deletes applied) as Spark reads them, as Arrow; None
    when it holds none."""
    frame = (spark.read.format("iceberg").option("snapshot-id", str(snapshot.snapshot_id))
             .load(spark_identifier(table)))
    batches = frame._collect_as_arrow()
    return pa.Table.from_batches(batches) if batches else None


def rewrite_with_spark(
    table: Table,
    staged: TableMetadata,
    snapshot: Snapshot,
    spark: SparkSession,
    convert: Callable[[pa.Table], pa.Table],
) -> list[DataFile]:
    """The data files of ``snapshot``'s rows, converted by ``convert`` and written by Spark
    with ``staged`` (the metadata the caller's transaction stages), in the table's file
    format; nothing is committed to ``table``. Empty when the snapshot holds no row."""
    from toolkit.spark.arrow_frames import arrow_dataframe

    data = read_with_spark(table, snapshot, spark)
    if data is None or data.num_rows == 0:
        return []
    rebuilt = convert(data)
    name = ".".join(table.name())
    staging = staging_identifier(name)
    registered = _register(table, staged, staging)
    try:
        frame = arrow_dataframe(spark, rebuilt.cast(_spark_schema(rebuilt.schema)))
        frame.writeTo(spark_identifier(table, staging)).append()
        written = table.catalog.load_table(staging)
        files = _data_files(written)
    except BaseException:
        discard_table(table.catalog, staging)  # its files are its own: none is the table's
        with contextlib.suppress(Exception):
            table.io.delete(registered)
        raise
    _drop_keeping(table, written, {f.file_path for f in files})
    return files


def _spark_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` with 32-bit offsets: PyIceberg's Arrow types are large strings, binaries
    and lists, which Spark's Arrow reader (pyspark 3.5) reads as the 32-bit ones."""
    return pa.schema([f.with_type(_small(f.type)) for f in schema])


def _small(t: pa.DataType) -> pa.DataType:
    T = pa.types
    if T.is_large_string(t):
        return pa.string()
    if T.is_large_binary(t):
        return pa.binary()
    if T.is_large_list(t) or T.is_list(t):
        return pa.list_(t.value_field.with_type(_small(t.value_type)))
    if T.is_map(t):
        return pa.map_(t.key_field.with_type(_small(t.key_type)),
                       t.item_field.with_type(_small(t.item_type)))
    if T.is_struct(t):
        return pa.struct([f.with_type(_small(f.type)) for f in t])
    return t


def _register(table: Table, staged: TableMetadata, staging: str) -> str:
    """Register a copy of ``staged`` without snapshots as ``staging``; its metadata file."""
    props: dict[str, Any] = {k: v for k, v in staged.properties.items() if k != STAGING_PROPERTY}
    props[STAGING_FOR_PROPERTY] = ".".join(table.name())
    copy = staged.model_copy(update={
        "properties": props, "snapshots": [], "refs": {}, "current_snapshot_id": None,
        "snapshot_log": [], "metadata_log": [], "statistics": [],
        "partition_statistics": [], "table_uuid": uuid.uuid4(),
    })
    location = f"{staged.location.rstrip('/')}/metadata/00000-{uuid.uuid4()}.metadata.json"
    ToOutputFile.table_metadata(copy, table.io.new_output(location))
    table.catalog.register_table(staging, location)
    return location


def data_files(table: Table, snapshot: Snapshot) -> list[DataFile]:
    """The live data files of ``snapshot``, from its manifests: PyIceberg's scan planning
    would refuse a table with equality delete files."""
    io = table.io
    out = []
    for manifest in snapshot.manifests(io):
        if manifest.content == ManifestContent.DATA:
            out += [e.data_file for e in manifest.fetch_manifest_entry(io, discard_deleted=True)]
    return out


def equality_delete_files(table: Table, snapshot: Snapshot) -> int:
    """How many live equality delete files ``snapshot`` has (Flink upsert tables and CDC
    pipelines write them). PyIceberg 0.12 does not apply them (apache/iceberg#6568): its
    scans of such a snapshot fail, so its rows are read by Spark."""
    io = table.io
    return sum(
        e.data_file.content == DataFileContent.EQUALITY_DELETES
        for manifest in snapshot.manifests(io) if manifest.content == ManifestContent.DELETES
        for e in manifest.fetch_manifest_entry(io, discard_deleted=True)
    )


def _data_files(staging: Table) -> list[DataFile]:
    """The data files the staging table's one append wrote."""
    snap = staging.current_snapshot()
    return [] if snap is None else data_files(staging, snap)


def _drop_keeping(table: Table, staging: Table, keep: set[str]) -> None:
    """Drop the staging table and delete its metadata files, keeping its data files
    (``keep``), which the table's commit is about to take."""
    paths = [p for p in table_files(staging) if p not in keep]
    with contextlib.suppress(NoSuchTableError):
        table.catalog.drop_table(".".join(staging.name()))
    for path in dict.fromkeys(paths):
        with contextlib.suppress(Exception):  # a file left is an orphan for maintenance
            table.io.delete(path)
