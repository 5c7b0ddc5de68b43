"""What a maintenance plan is made from, read from a table's metadata with PyIceberg: its
snapshots and refs, the live data files and their sizes, the current manifests, and what
the toolkit itself needs kept (a replay under way, another table's files under this
table's folder), and the staging tables stopped ingests left next to it. No data file is
opened.

The plan is pure (``toolkit.core.maintenance.steps``); the procedures that apply it run on
Spark (``toolkit.spark.maintenance``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from pyiceberg.manifest import DataFile as IcebergDataFile
from pyiceberg.manifest import DataFileContent, ManifestContent
from pyiceberg.schema import Schema, index_by_id
from pyiceberg.table.refs import SnapshotRefType
from pyiceberg.table.snapshots import Operation
from pyiceberg.table.snapshots import Snapshot as IcebergSnapshot
from pyiceberg.types import IcebergType, ListType, MapType, NestedField, StructType

from toolkit.core.evolution.lineage import LineageEntry
from toolkit.core.evolution.operations import Widening
from toolkit.core.evolution.state import TableState
from toolkit.core.maintenance.steps import (
    DEFAULT_MANIFEST_SIZE,
    DEFAULT_TARGET_FILE_SIZE,
    DataFile,
    ExpireSnapshots,
    Manifest,
    Ref,
    Snapshot,
    StagingTable,
    TableFacts,
    UnreadableColumn,
)
from toolkit.iceberg.catalog import load_table
from toolkit.iceberg.folds import fold_files
from toolkit.iceberg.ledger import batch_id_of
from toolkit.iceberg.lineage import lineage
from toolkit.iceberg.new_tables import staging_tables, table_files, written
from toolkit.iceberg.operations import REWRITE_PROPERTY
from toolkit.iceberg.quarantine import (
    QUARANTINE_SUFFIX,
    REPLAYED_BY_PROPERTY,
    pending_replay,
    quarantine_table_id,
)

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyiceberg.table import Table

__all__ = [
    "MANIFEST_SIZE_PROPERTY",
    "MAX_REF_AGE_PROPERTY",
    "TARGET_FILE_SIZE_PROPERTY",
    "refs_of",
    "retention_rules",
    "staging_facts",
    "table_facts",
    "with_losses",
]

#: Iceberg's table properties for the sizes compaction and manifest rewriting aim at
TARGET_FILE_SIZE_PROPERTY = "write.target-file-size-bytes"
MANIFEST_SIZE_PROPERTY = "commit.manifest.target-size-bytes"
#: Iceberg's table property: how long branches and tags live by default
MAX_REF_AGE_PROPERTY = "history.expire.max-ref-age-ms"


def table_facts(
    catalog: Catalog, identifier: str, table: Table | None = None, *, now_ms: int | None = None
) -> TableFacts:
    """Everything a maintenance plan of ``identifier`` is made from, as the metadata says
    now (``table``: the table already loaded; ``now_ms``: the time the facts are for)."""
    if table is None:
        table = catalog.load_table(identifier)
    else:
        table.refresh()
    meta = table.metadata
    io = table.io
    snapshots = tuple(
        Snapshot(
            s.snapshot_id,
            s.parent_snapshot_id,
            s.timestamp_ms,
            batch_id_of(s),
            None if s.summary is None
            else s.summary.additional_properties.get(REPLAYED_BY_PROPERTY),
        )
        for s in meta.snapshots
    )
    refs = refs_of(table)
    data_files: list[DataFile] = []
    manifests: list[Manifest] = []
    current = table.current_snapshot()
    for manifest in [] if current is None else current.manifests(io):
        is_data = manifest.content == ManifestContent.DATA
        manifests.append(
            Manifest(
                manifest.manifest_path, manifest.manifest_length,
                "data" if is_data else "deletes", manifest.partition_spec_id,
            )
        )
        if not is_data:
            continue
        for entry in manifest.fetch_manifest_entry(io, discard_deleted=True):
            f = entry.data_file
            if f.content == DataFileContent.DATA:
                data_files.append(
                    DataFile(
                        f.file_path, f.file_size_in_bytes, f.record_count,
                        # files compact within their partition of their spec
                        f"{manifest.partition_spec_id}:{f.partition!r}",
                    )
                )
    props = meta.properties
    return TableFacts(
        identifier,
        TableState.of(table),
        int(time.time() * 1000) if now_ms is None else now_ms,
        snapshots,
        refs,
        tuple(data_files),
        tuple(manifests),
        meta.default_spec_id,
        int(props.get(TARGET_FILE_SIZE_PROPERTY, DEFAULT_TARGET_FILE_SIZE)),
        int(props.get(MANIFEST_SIZE_PROPERTY, DEFAULT_MANIFEST_SIZE)),
        *_quarantine_needs(catalog, identifier, table.location()),
        retention_rules(table),
        fold_files(table),
        staging_facts(catalog, identifier),
    )


def staging_facts(catalog: Catalog, identifier: str) -> tuple[StagingTable, ...]:
    """The staging tables of ``identifier`` in ``catalog``, whatever their age: when each
    was last updated, what its snapshots wrote, and every file it references."""
    out = []
    for name, table in staging_tables(catalog, identifier):
        data_files, rows = written(table)
        out.append(StagingTable(name, table.metadata.last_updated_ms, data_files, rows,
                                tuple(table_files(table))))
    return tuple(out)


def refs_of(table: Table) -> tuple[Ref, ...]:
    """The table's branches and tags, by name."""
    return tuple(
        Ref(name, ref.snapshot_id, "tag" if ref.snapshot_ref_type == SnapshotRefType.TAG
            else "branch")
        for name, ref in sorted(table.metadata.refs.items())
    )


def retention_rules(table: Table) -> tuple[str, ...]:
    """The retention settings under which Iceberg's ``expire_snapshots`` expires more
    than the snapshots it is given (a branch's own maximum snapshot age) or drops refs (a
    maximum ref age), in words."""
    rules = []
    default_age = table.metadata.properties.get(MAX_REF_AGE_PROPERTY)
    if default_age is not None:
        rules.append(f"the table sets {MAX_REF_AGE_PROPERTY}={default_age}")
    for name, ref in sorted(table.metadata.refs.items()):
        kind = "tag" if ref.snapshot_ref_type == SnapshotRefType.TAG else "branch"
        if ref.max_snapshot_age_ms is not None and kind == "branch":
            rules.append(f"branch {name} keeps snapshots for at most "
                         f"{ref.max_snapshot_age_ms} ms")
        if ref.max_ref_age_ms is not None and name != "main":
            rules.append(f"{kind} {name} is dropped after {ref.max_ref_age_ms} ms")
    return tuple(rules)


def _quarantine_needs(
    catalog: Catalog, identifier: str, location: str
) -> tuple[str | None, tuple[tuple[str, str], ...]]:
    """(the batch a replay under way needs to find in the table, the quarantine table's
    folder if it lies under this table's): what the quarantine needs kept."""
    if identifier.endswith(QUARANTINE_SUFFIX):
        return None, ()
    qid = quarantine_table_id(identifier)
    qtable = load_table(catalog, qid)
    if qtable is None:
        return None, ()
    pending = pending_replay(qtable)
    folder = qtable.location().rstrip("/")
    inside = folder.startswith(location.rstrip("/") + "/")
    return (None if pending is None else pending[0]), (((qid, folder),) if inside else ())


def with_losses(table: Table, step: ExpireSnapshots) -> ExpireSnapshots:
    """``step`` with what becomes readable nowhere once its snapshots expire: the columns
    only they read (dropped or rewritten since, by field ID: their schemas have the field,
    no snapshot kept and not the table's current schema has it), each with its non-null
    values in the data files they reference, counted from the manifests' metrics as a drop
    counts them (``toolkit.iceberg.destruction``); and the rows deletes and overwrites
    removed whose last readers they are (from the snapshots' summaries)."""
    if not step.expire:
        return step
    meta = table.metadata
    gone_ids = set(step.expire)
    by_id = {s.snapshot_id: s for s in meta.snapshots}
    expired = [by_id[i] for i in step.expire if i in by_id]
    kept = [s for s in meta.snapshots if s.snapshot_id not in gone_ids]
    schemas = table.schemas()
    current = table.schema()

    def schema_of(snap: IcebergSnapshot) -> Schema:
        # a snapshot without a schema ID (format v1) is read with the table's schema
        return schemas.get(snap.schema_id, current) if snap.schema_id is not None else current

    readable = set(index_by_id(current))
    for snap in kept:
        readable.update(index_by_id(schema_of(snap)))
    columns = _unreadable_columns(table, expired, schema_of, readable, by_id)
    rows, at_least = _removed_rows(meta.snapshots, gone_ids, by_id)
    return replace(step, unreadable=columns, removed_rows=rows, removed_rows_at_least=at_least)


def _gone_leaves(schema: Schema, readable: set[int]) -> dict[int, tuple[int, ...]]:
    """Per column of ``schema`` no reader keeps (its field ID not in ``readable``, its
    parent's is or it is top-level), the IDs of its primitive leaves: those metrics count."""
    out: dict[int, tuple[int, ...]] = {}

    def leaves(t: IcebergType) -> list[int]:
        found: list[int] = []
        for child in _children_of(t):
            found.extend([child.field_id] if child.field_type.is_primitive
                         else leaves(child.field_type))
        return found

    def walk(t: IcebergType) -> None:
        for child in _children_of(t):
            if child.field_id not in readable:
                out[child.field_id] = ((child.field_id,) if child.field_type.is_primitive
                                       else tuple(leaves(child.field_type)))
            else:
                walk(child.field_type)

    walk(schema.as_struct())
    return out


def _children_of(t: IcebergType) -> list[NestedField]:
    if isinstance(t, StructType):
        return list(t.fields)
    if isinstance(t, ListType):
        return [t.element_field]
    if isinstance(t, MapType):
        return [t.key_field, t.value_field]
    return []


def _unreadable_columns(
    table: Table,
    expired: list[IcebergSnapshot],
    schema_of: Callable[[IcebergSnapshot], Schema],
    readable: set[int],
    by_id: dict[int, IcebergSnapshot],
) -> tuple[UnreadableColumn, ...]:
    """The columns only ``expired`` read, with their values in the files they reference
    (each file counted once, whichever expired snapshots reference it)."""
    io = table.io
    names: dict[int, str] = {}
    values: dict[int, int] = {}
    uncounted: dict[int, str] = {}
    deleted: set[int] = set()  # columns some of whose rows delete files removed
    seen: set[tuple[int, str]] = set()
    manifests: dict[str, list[tuple[int | None, IcebergDataFile]]] = {}
    for snap in expired:
        schema = schema_of(snap)
        gone = _gone_leaves(schema, readable)
        if not gone:
            continue
        for column in gone:
            names[column] = schema.find_column_name(column) or str(column)
            values.setdefault(column, 0)
        for manifest in snap.manifests(io):
            if manifest.content != ManifestContent.DATA:
                if manifest.added_files_count or manifest.existing_files_count:
                    deleted |= gone.keys()  # rows these counts take in may be deleted
                continue
            if manifest.manifest_path not in manifests:  # shared by many snapshots: read once
                manifests[manifest.manifest_path] = [
                    (e.snapshot_id, e.data_file)
                    for e in manifest.fetch_manifest_entry(io, discard_deleted=True)
                    if e.data_file.content == DataFileContent.DATA
                ]
            for writer, f in manifests[manifest.manifest_path]:
                for column, ids in gone.items():
                    if (column, f.file_path) in seen:
                        continue
                    seen.add((column, f.file_path))
                    counts = f.value_counts or {}
                    nulls = f.null_value_counts or {}
                    for leaf in ids:
                        if leaf in counts:
                            values[column] += int(counts[leaf]) - int(nulls.get(leaf, 0))
                        elif _may_hold(by_id.get(writer) if writer else None, leaf, schema_of):
                            uncounted[column] = (
                                "the manifests keep no count for it in some data files "
                                "(metrics off, or beyond the first 100 columns)")
    entries = lineage(table)
    schemas = table.schemas()
    rewrites = {
        s.summary.additional_properties.get(REWRITE_PROPERTY)
        for s in table.metadata.snapshots if s.summary is not None
    }
    out = []
    for column in sorted(names, key=lambda c: names[c]):
        entry = _removed_by(column, entries, schemas)
        rewritten = entry is not None and str(entry.seq) in rewrites and any(
            isinstance(op, Widening) and op.rewrite for op in entry.operations)
        out.append(UnreadableColumn(
            names[column], column, None if column in uncounted else values[column],
            None if entry is None else entry.seq, rewritten, uncounted.get(column),
            column in deleted))
    return tuple(out)


def _may_hold(
    writer: IcebergSnapshot | None, leaf: int, schema_of: Callable[[IcebergSnapshot], Schema]
) -> bool:
    """Whether a file with no metrics for ``leaf`` may hold its values: unless the
    snapshot that wrote it had no such field (a column added after the file was written)."""
    if writer is None:
        return True
    return leaf in index_by_id(schema_of(writer))


def _removed_by(
    field_id: int, entries: Sequence[LineageEntry], schemas: dict[int, Schema]
) -> LineageEntry | None:
    """The lineage entry after which the table's schema no longer had ``field_id``: the
    first, in log order, whose schema lacks it after one that had it (or after the table's
    first schema, when that had it)."""
    first = schemas.get(min(schemas)) if schemas else None
    had = first is not None and field_id in index_by_id(first)
    for entry in entries:
        schema = None if entry.schema_id is None else schemas.get(entry.schema_id)
        if schema is None:
            continue
        has = field_id in index_by_id(schema)
        if had and not has:
            return entry
        had = has
    return None


def _removed_rows(
    snapshots: Sequence[IcebergSnapshot], expire: set[int], by_id: dict[int, IcebergSnapshot]
) -> tuple[int, bool]:
    """The rows deletes and overwrites removed that only the snapshots in ``expire`` read
    (and whether that is a lower bound): a snapshot removing rows whose parent expires,
    when no snapshot kept holds that parent's rows otherwise (an older one a tag keeps, a
    branch forked from it). Compactions and the toolkit's rewrites keep every row (a
    rewrite's old values are counted per column), and a replay's rows live on in the
    target table: none of them is counted."""

    def line(snap: IcebergSnapshot) -> list[int]:
        ids: list[int] = []
        at: IcebergSnapshot | None = snap
        while at is not None and len(ids) <= len(by_id):
            ids.append(at.snapshot_id)
            at = None if at.parent_snapshot_id is None else by_id.get(at.parent_snapshot_id)
        return ids

    kept_lines = [line(s) for s in snapshots if s.snapshot_id not in expire]
    rows, at_least = 0, False
    for snap in snapshots:
        summary = snap.summary
        parent = snap.parent_snapshot_id
        if summary is None or parent is None or parent not in expire:
            continue
        if summary.operation not in (Operation.DELETE, Operation.OVERWRITE):
            continue
        extra = summary.additional_properties
        if REWRITE_PROPERTY in extra or REPLAYED_BY_PROPERTY in extra:
            continue
        # a kept snapshot reading the parent's rows: the parent is its ancestor, not
        # through this snapshot (it is the parent's ancestor, or on another branch)
        held = any(parent in ids and snap.snapshot_id not in ids for ids in kept_lines)
        older = line(by_id[parent])[1:]
        held = held or any(ids[0] in older for ids in kept_lines)
        if held:
            continue
        deleted = int(summary.get("deleted-records") or 0)
        added = int(summary.get("added-records") or 0)
        rows += max(deleted - added, 0) + int(summary.get("added-position-deletes") or 0)
        at_least = at_least or (added > 0 and deleted > 0) or bool(
            summary.get("added-equality-deletes"))
    return rows, at_least
