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
from typing import TYPE_CHECKING

from pyiceberg.manifest import DataFileContent, ManifestContent
from pyiceberg.table.refs import SnapshotRefType

from toolkit.core.evolution.state import TableState
from toolkit.core.maintenance.steps import (
    DEFAULT_MANIFEST_SIZE,
    DEFAULT_TARGET_FILE_SIZE,
    DataFile,
    Manifest,
    Ref,
    Snapshot,
    StagingTable,
    TableFacts,
)
from toolkit.iceberg.catalog import load_table
from toolkit.iceberg.folds import fold_files
from toolkit.iceberg.ledger import batch_id_of
from toolkit.iceberg.new_tables import staging_tables, table_files, written
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
