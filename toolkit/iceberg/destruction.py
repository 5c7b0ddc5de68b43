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
"""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa
from pyiceberg.manifest import ManifestContent
from pyiceberg.table import Table

from toolkit.core.evolution.destruction import Destruction, DroppedColumn, dropped_columns, leaf_ids
from toolkit.core.evolution.layout import Path
from toolkit.core.evolution.plans import Evolution
from toolkit.core.values.types import Column

__all__ = ["destruction_of"]


def destruction_of(table: Table, plan: Evolution) -> Destruction:
    """What committing ``plan`` to ``table`` (as it is now) makes unreadable from the
    table: each column it drops, with the non-null values and bytes it holds."""
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
    return Destruction(columns, counts.rows, total)


class _FileCounts:
    """The current snapshot's data files with their metrics, read once."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.schemas = {s.schema_id: s for s in table.schemas().values()}
        snap = table.current_snapshot()
        assert snap is not None
        io = table.io
        self.files: list[tuple[int | None, object]] = []
        self.deletes = False
        for manifest in snap.manifests(io):
            if manifest.content == ManifestContent.DELETES:
                self.deletes = True
                continue
            for entry in manifest.fetch_manifest_entry(io, discard_deleted=True):
                self.files.append((entry.snapshot_id, entry.data_file))
        summary = snap.summary
        records = None if summary is None else summary.get("total-records")
        self.rows = int(records) if records is not None else sum(
            int(getattr(f, "record_count", 0)) for _, f in self.files)

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
            return DroppedColumn(path, column.id, self._scanned(column), None)
        return DroppedColumn(path, column.id, values, size)

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
