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
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.manifest import DataFile, DataFileContent, ManifestContent
from pyiceberg.serializers import ToOutputFile
from pyiceberg.table import Table
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.types import IcebergType, ListType, MapType, PrimitiveType, StructType

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
    """The rows of ``snapshot`` (deletes applied) as Spark reads them, as Arrow laid out
    in the table's current schema; None when it holds none.

    Spark reads a snapshot by ID with the schema the snapshot was written with, so columns
    added, renamed or promoted since (a schema change commits no data) are matched to the
    current schema by field ID: an added one reads null."""
    frame = (spark.read.format("iceberg").option("snapshot-id", str(snapshot.snapshot_id))
             .load(spark_identifier(table)))
    batches = frame._collect_as_arrow()
    if not batches:
        return None
    data = pa.Table.from_batches(batches)
    read = table.schemas().get(snapshot.schema_id) if snapshot.schema_id is not None else None
    current = table.schema()
    if read is None or read.as_struct() == current.as_struct():
        return data
    whole = pa.StructArray.from_arrays(
        [c.combine_chunks() for c in data.columns], fields=list(data.schema))
    aligned = _by_field_id(whole, read.as_struct(), current.as_struct())
    assert isinstance(aligned, pa.StructArray)
    return pa.Table.from_arrays(aligned.flatten(), names=[f.name for f in current.fields])


def _by_field_id(array: pa.Array, read: IcebergType, now: IcebergType) -> pa.Array:
    """``array`` (of Iceberg type ``read``) as ``now`` lays it out: struct fields matched by
    field ID (a field ``read`` lacks is null), a primitive promoted in place (int to long)
    cast."""
    if isinstance(read, StructType) and isinstance(now, StructType):
        assert isinstance(array, pa.StructArray)
        old = {f.field_id: i for i, f in enumerate(read.fields)}
        children = []
        for f in now.fields:
            if f.field_id in old:
                i = old[f.field_id]
                children.append(_by_field_id(array.field(i), read.fields[i].field_type,
                                             f.field_type))
            else:
                children.append(pa.nulls(len(array), schema_to_pyarrow(f.field_type)))
        return pa.StructArray.from_arrays(
            children, names=[f.name for f in now.fields],
            mask=array.is_null() if array.null_count else None)
    if isinstance(read, ListType) and isinstance(now, ListType) and read != now:
        assert isinstance(array, pa.ListArray | pa.LargeListArray)
        values = _by_field_id(array.values, read.element_type, now.element_type)
        return type(array).from_arrays(array.offsets, values,
                                       mask=array.is_null() if array.null_count else None)
    if isinstance(read, MapType) and isinstance(now, MapType) and read != now:
        assert isinstance(array, pa.MapArray)
        keys = _by_field_id(array.keys, read.key_type, now.key_type)
        items = _by_field_id(array.items, read.value_type, now.value_type)
        return pa.MapArray.from_arrays(array.offsets, keys, items,
                                       mask=array.is_null() if array.null_count else None)
    if isinstance(now, PrimitiveType) and read != now:
        return array.cast(schema_to_pyarrow(now))
    return array


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
