"""How many stored values a plan would make unreadable, counted on a real table.

The rule (what destroys, what needs a yes) is the core's
(:mod:`toolkit.core.evolution.destruction`); here the counts. They come from Iceberg's data file
metrics, read from the manifests without opening a data file: per field ID, a file's
``value_counts`` less its ``null_value_counts`` is the number of non-null values it holds,
and ``column_sizes`` their bytes. A file whose manifest has no count for the field is read
only if it may hold the field (it was written when the field existed; Iceberg keeps
metrics for the first 100 columns by default): then the field's values are counted by a
scan of the table, as they are when the table has delete files (counts in the manifests
would include deleted rows).

The rows a drop reports are the table's live rows: where it has delete files, they are
counted with the deletes applied. PyIceberg applies position deletes (Spark's merge-on-read
DELETE, UPDATE and MERGE write them) but not equality deletes (Flink upsert tables and CDC
pipelines write them; apache/iceberg#6568): those tables are read by Spark, as below.

PyIceberg reads Parquet and ORC data files, not Avro ones (a table Spark, Flink or Trino
writes with ``write.format.default=avro``), and Iceberg keeps no value counts for Avro
files. Such values are counted by the process's Spark session that sees the table's
catalog; else they are said to be uncounted, and why, beside the rows the manifests count:
never as "no values".
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat, ManifestContent
from pyiceberg.table import Table

from toolkit.core.evolution.destruction import Destruction, DroppedColumn, dropped_columns, leaf_ids
from toolkit.core.evolution.layout import Path
from toolkit.core.evolution.plans import Evolution
from toolkit.core.values.types import Column

if TYPE_CHECKING:
    from pyspark.sql import Column as SparkColumn
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import DataType

__all__ = ["PYICEBERG_READS", "destruction_of", "format_names"]

#: the data file formats PyIceberg 0.12 reads (it reads no Avro data file)
PYICEBERG_READS = frozenset({FileFormat.PARQUET, FileFormat.ORC})


def format_names(formats: Iterable[FileFormat]) -> str:
    """``{FileFormat.AVRO}`` as ``Avro``, several joined with "and"."""
    names = sorted({"ORC" if f == FileFormat.ORC else f.value.capitalize() for f in formats})
    return " and ".join(names)


def destruction_of(table: Table, plan: Evolution) -> Destruction:
    """What committing ``plan`` to ``table`` (as it is now) makes unreadable from the
    table: each column it drops, with the non-null values and bytes it holds. Values no
    manifest counts are read with PyIceberg, or where it cannot read the table's data files
    (Avro) by the process's Spark session that sees the table's catalog."""
    dropped = dropped_columns(plan.operations, plan.layouts)
    if not dropped:
        return Destruction()
    snap = table.current_snapshot()
    if snap is None:  # no data at all: dropping destroys nothing
        return Destruction(tuple(DroppedColumn(p, c.id, 0, 0) for p, c in dropped), 0, 0)
    counts = _FileCounts(table)
    columns = tuple(counts.column(path, column) for path, column in dropped)
    sizes = [c.bytes for c in columns]
    total = None if any(b is None for b in sizes) else sum(b or 0 for b in sizes)
    rows = counts.live_rows()
    return Destruction(columns, rows if rows is not None else counts.rows, total,
                       rows_at_most=rows is None)


class _FileCounts:
    """The current snapshot's data files with their metrics, read once."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.schemas = {s.schema_id: s for s in table.schemas().values()}
        snap = table.current_snapshot()
        assert snap is not None
        io = table.io
        self.files: list[tuple[int | None, DataFile]] = []
        self.deletes = False
        self.by_key = 0  # equality delete files, which PyIceberg does not apply
        for manifest in snap.manifests(io):
            for entry in manifest.fetch_manifest_entry(io, discard_deleted=True):
                if manifest.content == ManifestContent.DELETES:
                    self.deletes = True
                    self.by_key += entry.data_file.content == DataFileContent.EQUALITY_DELETES
                else:
                    self.files.append((entry.snapshot_id, entry.data_file))
        summary = snap.summary
        records = None if summary is None else summary.get("total-records")
        self.rows = int(records) if records is not None else sum(
            int(getattr(f, "record_count", 0)) for _, f in self.files)

    def live_rows(self) -> int | None:
        """The rows of the table: with its delete files applied where it has some (read by
        PyIceberg, or by Spark for equality deletes), else from the snapshot summary. None
        when no reader here applies them (the rows of the data files are then a bound)."""
        if not self.deletes:
            return self.rows
        if not self.by_key:
            return self.table.scan().count()
        spark = self._spark()
        if spark is None:
            return None
        return self._frame(spark).count()

    def _spark(self) -> SparkSession | None:
        from toolkit.iceberg.spark_rewrite import spark_seeing

        return spark_seeing(self.table)

    def _frame(self, spark: SparkSession) -> DataFrame:
        """The current snapshot as Spark reads it (deletes applied)."""
        from toolkit.iceberg.spark_rewrite import spark_identifier

        snap = self.table.current_snapshot()
        assert snap is not None
        return (spark.read.format("iceberg").option("snapshot-id", str(snap.snapshot_id))
                .load(spark_identifier(self.table)))

    def _had_field(self, snapshot_id: int | None, field_id: int) -> bool | None:
        """Whether the table's schema had ``field_id`` when ``snapshot_id`` wrote a file
        (None: that snapshot is gone, so it cannot be told)."""
        snap = None if snapshot_id is None else self.table.snapshot_by_id(snapshot_id)
        if snap is None or snap.schema_id is None:
            return None
        schema = self.schemas.get(snap.schema_id)
        if schema is None:
            return None
        try:
            schema.find_field(field_id)
        except ValueError:
            return False
        return True

    def column(self, path: Path, column: Column) -> DroppedColumn:
        ids = leaf_ids(column)
        values = 0
        size: int | None = 0
        scan = self.deletes
        for snapshot_id, f in self.files:
            counted = getattr(f, "value_counts", None) or {}
            nulls = getattr(f, "null_value_counts", None) or {}
            sizes = getattr(f, "column_sizes", None) or {}
            for i in ids:
                if i in counted:
                    values += int(counted[i]) - int(nulls.get(i, 0))
                    if size is not None:
                        size = size + int(sizes[i]) if i in sizes else None
                elif not scan and self._had_field(snapshot_id, i) is not False:
                    scan = True  # may hold values no manifest counts: read them
        if scan:
            unread = {f.file_format for _, f in self.files} - PYICEBERG_READS
            if not unread and not self.by_key:
                return DroppedColumn(path, column.id, self._scanned(column), None)
            spark = self._spark()
            if spark is not None:
                return DroppedColumn(path, column.id, self._spark_counted(spark, path), None)
            if unread:
                why = (f"the table's data files are {format_names(unread)}, which PyIceberg "
                       "cannot read and whose manifests count no values")
            else:
                # the manifests' counts include the rows the deletes remove
                why = (f"the table has {self.by_key} equality delete "
                       f"file{'s' * (self.by_key != 1)}, which PyIceberg does not apply "
                       "(apache/iceberg#6568), and the manifests count deleted rows' values "
                       "too")
            why += ("; a Spark session that sees this catalog (toolkit.spark_session(catalog)) "
                    "counts them")
            return DroppedColumn(path, column.id, None, None, why)
        return DroppedColumn(path, column.id, values, size)

    def _spark_counted(self, spark: SparkSession, path: Path) -> int:
        """The non-null leaf values at ``path``, counted by Spark in the current snapshot
        (deletes applied), without bringing them to the driver."""
        from pyspark.sql import functions as F

        frame = self._frame(spark)
        # Spark reads a snapshot with the schema it was written with: the top-level column
        # is found there by field ID (renamed since, or added since and holding nothing)
        snap = self.table.current_snapshot()
        read = None if snap is None or snap.schema_id is None else self.schemas.get(
            snap.schema_id)
        if read is not None:
            top_id = self.table.schema().find_field(path[0]).field_id
            if top_id not in {f.field_id for f in read.fields}:
                return 0
            path = (read.find_field(top_id).name, *path[1:])
        top = frame.schema[path[0]]
        per_row = _leaves_at(frame[top.name], top.dataType, path[1:])
        total = frame.select(F.sum(per_row)).first()
        return int(total[0] or 0) if total is not None else 0

    def _scanned(self, column: Column) -> int | None:
        """The column's non-null leaf values, read from the table (deletes applied)."""
        name = self.table.schema().find_column_name(column.id)
        if name is None:
            return None
        try:
            data = self.table.scan(selected_fields=(name,)).to_arrow()
        except Exception:  # a nested name PyIceberg cannot project: the top-level column
            top = name.split(".", 1)[0]
            data = self.table.scan(selected_fields=(top,)).to_arrow()
        return sum(_non_null(chunk) for col in data.columns for chunk in col.chunks)


def _leaves_at(col: SparkColumn, t: DataType, rest: Path) -> SparkColumn:
    """A Spark expression: per row, the non-null leaf values of the field ``rest`` below
    ``col`` (of type ``t``), counted where their parents are not null. ``rest`` names
    struct fields; a list's ``element`` and a map's ``key``/``value`` may be named or
    skipped, as in the core's paths."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, MapType, StructType

    def summed(items: SparkColumn, each: Any) -> SparkColumn:
        counts = F.transform(items, each)
        return F.coalesce(F.aggregate(counts, F.lit(0).cast("long"), lambda a, x: a + x),
                          F.lit(0).cast("long"))

    if isinstance(t, StructType):
        if not rest:
            return sum((_leaves_at(col.getField(f.name), f.dataType, ()) for f in t.fields),
                       F.lit(0).cast("long"))
        child = t[rest[0]]
        return _leaves_at(col.getField(child.name), child.dataType, rest[1:])
    if isinstance(t, ArrayType):
        below = rest[1:] if rest and rest[0] == "element" else rest
        return summed(col, lambda e: _leaves_at(e, t.elementType, below))
    if isinstance(t, MapType):
        if rest and rest[0] == "key":
            return summed(F.map_keys(col), lambda k: _leaves_at(k, t.keyType, rest[1:]))
        if rest and rest[0] == "value":
            return summed(F.map_values(col), lambda v: _leaves_at(v, t.valueType, rest[1:]))
        if rest:
            return summed(F.map_values(col), lambda v: _leaves_at(v, t.valueType, rest))
        return (summed(F.map_keys(col), lambda k: _leaves_at(k, t.keyType, ()))
                + summed(F.map_values(col), lambda v: _leaves_at(v, t.valueType, ())))
    return F.when(col.isNotNull(), F.lit(1).cast("long")).otherwise(F.lit(0).cast("long"))


def _non_null(array: pa.Array) -> int:
    """Non-null leaf values of ``array``: a struct's fields, a list's elements, a map's
    keys and values, counted where their parents are not null."""
    t = array.type
    if pa.types.is_struct(t):
        return sum(_non_null(child) for child in _children(array))
    if pa.types.is_map(t):
        return _non_null(array.keys) + _non_null(array.items)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _non_null(array.flatten())
    return int(len(array) - array.null_count)


def _children(array: pa.Array) -> Iterable[pa.Array]:
    fields: list[pa.Array] = array.flatten()  # each field, null where the struct is null
    return fields
