"""Upsolver-style "Written Data Statistics" of an Iceberg table, from its metadata alone.

:func:`statistics` reads the table's manifests, never a data file: each data file's entry
carries ``record_count`` and, per primitive field ID, ``value_counts`` (values including
nulls) and ``null_value_counts``. The non-null values a column received in a file are
``value_count - null_value_count``. Summed over the live data files they give what the
table holds; summed over the files each snapshot added they give what each batch wrote,
which shows type drift: which member of a family (``price``, ``price_string``...) received
values in which batch.

Example (a notebook cell)::

    from toolkit.iceberg import catalog
    from toolkit.iceberg.statistics import statistics

    stats = statistics(catalog("lakehouse").load_table("db.events"))
    print(stats)                                  # a text table, one row per column
    stats["price_string"].values                  # non-null values in the live files
    stats["price_string"].first_batch_id          # the batch that created it, say "b7"
    stats.families["price"]                       # (price, price_string) in schema order
    [s.batch_id for s in stats.snapshots]         # the batches, in commit order
    stats.written("price_string")                 # its values per batch, for a plot
    stats.arrived("price")                        # {"long": 30, "string": 10}: what arrived
    stats.samples("price")                        # {"string": ('"12.5 EUR"', ...), ...}
    pandas.DataFrame(stats.to_rows())             # or .history_rows() in long form

Which columns are reported, in schema order (a pre-order walk of the current schema):

* every named field, top-level or nested in a struct (dotted names: ``device.os``,
  ``items.element.qty`` for a field of a list's struct elements);
* every primitive leaf that is a list element or a map key/value (``tags.element``,
  ``attrs.key``, ``attrs.value``), since Iceberg keeps its metrics under that field ID.

Iceberg keeps metrics only for primitive leaves. Of a list's element, ``values`` counts
non-null elements (over all rows), not rows. A struct, list or map column (``leaf`` is
False) reports the largest ``values`` among the leaves under it (per snapshot as well),
and ``nulls`` None: its metrics cannot tell a null struct from a struct of nulls. So its
``values`` is 0 exactly when nothing non-null was ever written under it, and for a struct
of primitives it is a lower bound of the rows where it is non-null; its first snapshot is
the earliest of its leaves'.

Metrics may be absent. A file written before a column was added has no metrics for it,
and rightly counts 0 values and one null per row for it (those rows read null). A file
that holds a column (it is in the file's ``column_sizes``, or in the schema its snapshot
was committed with) but has no counts for it was written with metrics mode ``none`` (for
Java writers, the default for columns past the 100th:
``write.metadata.metrics.max-inferred-column-defaults``); such files are counted in
``files_without_metrics`` and the column's counts are lower bounds (``exact`` is False).

Snapshots are the current snapshot's ancestry, oldest first (snapshots that were expired
or are not ancestors of the current one are not reported). Counts come from data files
only: rows removed by row-level delete files (merge-on-read) are still counted, see
``delete_files``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal, NamedTuple, TypeAlias

from pyiceberg.manifest import (
    DataFile,
    DataFileContent,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
)
from pyiceberg.schema import Schema, index_by_id
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot, ancestors_of

from toolkit.core.batch.arrivals import SAMPLES_KEPT, Arrivals, Path, as_path
from toolkit.core.batch.profile import share_text
from toolkit.core.maintenance.folding import ARRIVALS_PREFIX
from toolkit.core.values.types import Column, ColumnType, ListOf, MapOf, Struct, type_to_str
from toolkit.core.values.wording import counted
from toolkit.iceberg.folds import with_folded
from toolkit.iceberg.ledger import BATCH_ID_PROPERTY, batch_id_of
from toolkit.iceberg.schema import from_iceberg

__all__ = [
    "EXPIRED_ARRIVALS_PROPERTY",
    "BATCH_ID_PROPERTY",
    "ColumnStatistics",
    "SnapshotStatistics",
    "WrittenDataStatistics",
    "statistics",
]


#: The table property into which maintenance folds the arrivals of the snapshots it is
#: about to expire (with their ids), so that what arrived outlives them: their counts, not
#: their samples (a table property stays small, and a sample of data since deleted does
#: not outlive the snapshots that referenced it)
EXPIRED_ARRIVALS_PROPERTY = "toolkit.arrivals-expired"
#: where versions before the table property kept a batch's arrivals: its snapshot summary
OLD_ARRIVALS_SUMMARY = "toolkit.arrivals"

#: A named struct field, or one of the unnamed fields of a list or a map.
FieldKind: TypeAlias = Literal["field", "element", "key", "value"]


@dataclass(frozen=True, slots=True)
class ColumnStatistics:
    """What the live data files hold for one column (a named field or a primitive leaf)."""

    field_id: int
    path: tuple[str, ...]
    """The field names from the top level down: ``("device", "os")``."""
    type: str
    """The Iceberg type, compactly: ``long``, ``timestamptz``, ``list<string>``."""
    family: str
    """The family key: the ``evolved_from`` source (else its own name), dotted under the
    path of the struct holding it (``device.os``). List elements and map keys/values
    belong to the family of the field that owns them."""
    evolved_from: str | None
    """The source field this column was created for by evolution, if any."""
    kind: FieldKind
    """``field`` (a named field) or the list/map part it is: ``element``, ``key``, ``value``."""
    leaf: bool
    """True for a primitive field (Iceberg keeps its metrics); False for struct/list/map."""
    values: int
    """Non-null values in the live data files (for a non-leaf: the most of any leaf)."""
    nulls: int | None
    """Nulls in the live data files, as Parquet counts them at a leaf: one per row where it
    or a struct or list above it is null or a list above it is empty, plus one per null list
    element; rows of files written before the column existed count as nulls. Outside lists
    and maps ``values + nulls`` is the record count. None for a non-leaf (unknowable)."""
    files_without_metrics: int = 0
    """Live files that hold this column (or a leaf under it) but have no counts for it."""
    first_snapshot_id: int | None = None
    """The first snapshot (in commit order) whose added files held a non-null value."""
    first_batch_id: str | None = None
    """The batch id (``toolkit.batch-id``) of that snapshot, if it recorded one."""

    @property
    def name(self) -> str:
        """The dotted display name: ``device.os``, ``items.element.qty``."""
        return ".".join(self.path)

    @property
    def top_level(self) -> bool:
        return len(self.path) == 1

    @property
    def evolved(self) -> bool:
        """Whether evolution created this column (its doc is ``upsolver_evolved_from:...``)."""
        return self.evolved_from is not None

    @property
    def exact(self) -> bool:
        """Whether ``values`` and ``nulls`` are exact counts (a leaf with metrics in every
        live file that holds it)."""
        return self.leaf and self.files_without_metrics == 0


@dataclass(frozen=True, slots=True)
class SnapshotStatistics:
    """What one snapshot (one committed batch) wrote, from the data files it added."""

    snapshot_id: int
    timestamp: datetime
    """The commit time (UTC)."""
    operation: str | None
    """``append``, ``overwrite``, ``replace`` (a compaction rewrites values) or ``delete``."""
    batch_id: str | None
    """The summary property ``toolkit.batch-id``, when the writer recorded one."""
    schema_id: int | None
    data_files_added: int
    records_added: int
    data_files_removed: int
    records_removed: int
    values: tuple[tuple[str, int], ...]
    """Per column (every column of the statistics, in their order): the non-null values
    in this snapshot's added files."""
    unmeasured: tuple[str, ...] = ()
    """Columns held by some added file without counts: their values here are lower bounds."""
    arrivals: Arrivals | None = None
    """What this batch's records brought, per field, as ingest recorded it (None for a
    snapshot ingest did not write: a compaction, another writer's commit)."""

    def written(self, name: str) -> int:
        """Non-null values this snapshot wrote to column ``name`` (0 for an unknown name)."""
        return dict(self.values).get(name, 0)


@dataclass(frozen=True, slots=True)
class WrittenDataStatistics:
    """Written data statistics of a table: per column, per snapshot and per family."""

    table: str
    snapshot_id: int | None
    """The current snapshot the live counts describe (None for an empty table)."""
    records: int
    """Records in the live data files."""
    data_files: int
    delete_files: int
    """Live row-level delete files. Their deletes are not subtracted from any count."""
    columns: tuple[ColumnStatistics, ...]
    snapshots: tuple[SnapshotStatistics, ...] = field(default=())
    expired_arrivals: Arrivals = field(default_factory=Arrivals)
    """What the batches of snapshots expired since brought (folded in by maintenance)."""

    @property
    def arrivals(self) -> Arrivals:
        """What every batch ingest wrote brought, per field, from the table's metadata
        alone (snapshot summaries, and what maintenance folded in before expiring)."""
        total = self.expired_arrivals
        for s in self.snapshots:
            if s.arrivals is not None:
                total = total + s.arrivals
        return total

    def arrived(self, path: Path) -> dict[str, int]:
        """``{type name: count}`` of the values that arrived for the field at ``path`` (a
        dotted string or a tuple of keys) over the table's batches; nulls and missing
        keys are not counted here (see :meth:`absent`). Type names are RULES 1's:
        ``long``, ``string``, ``long[]``, ``record``..."""
        return self.arrivals.arrived(path)

    def absent(self, path: Path) -> int:
        """Records where the field at ``path`` arrived null or missing."""
        return self.arrivals.absent(path)

    def samples(self, path: Path, limit: int = SAMPLES_KEPT) -> dict[str, tuple[str, ...]]:
        """``{type name: texts}``: up to ``limit`` distinct sample texts per type that
        arrived for the field at ``path``, the latest batches' first, from the snapshot
        summaries alone (ingest records a few per batch, drifting types first: see
        :meth:`Arrivals.of <toolkit.core.batch.arrivals.Arrivals.of>`). Texts are JSON (``"7"``
        a string, ``7`` a number; records and arrays as short Python reprs), cut to 60
        characters. Batches of expired snapshots leave no samples, and a type ingest did
        not sample has none. The batches' arrivals, added up, keep :data:`SAMPLES_KEPT`
        per type: a larger ``limit`` gives no more."""
        return {t: texts[:limit] for t, texts in self.arrivals.samples(path).items()}

    def arrival_history(self, path: Path) -> list[tuple[SnapshotStatistics, dict[str, int]]]:
        """Per batch that recorded its arrivals (oldest first; expired ones are gone):
        the snapshot and the values of each type that arrived for ``path`` in it."""
        key = as_path(path)
        return [(s, s.arrivals.arrived(key)) for s in self.snapshots if s.arrivals is not None]

    def __getitem__(self, name: str) -> ColumnStatistics:
        """The column with dotted name ``name``."""
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)

    @property
    def families(self) -> dict[str, tuple[ColumnStatistics, ...]]:
        """Family key -> its named fields in schema order (list elements and map keys and
        values are left out: they are parts of their field). Each column that evolution
        did not create heads a family of its own name."""
        out: dict[str, list[ColumnStatistics]] = {}
        for c in self.columns:
            if c.kind == "field":
                out.setdefault(c.family, []).append(c)
        return {k: tuple(v) for k, v in out.items()}

    def written(self, name: str) -> tuple[int, ...]:
        """Non-null values column ``name`` received in each snapshot, in commit order."""
        index = self.columns.index(self[name])
        return tuple(s.values[index][1] for s in self.snapshots)

    def to_rows(self) -> list[dict[str, object]]:
        """One plain dict per column, for a table or ``pandas.DataFrame`` display."""
        return [
            {
                "column": c.name,
                "field_id": c.field_id,
                "type": c.type,
                "kind": c.kind,
                "family": c.family,
                "evolved": c.evolved,
                "values": c.values,
                "nulls": c.nulls,
                "exact": c.exact,
                "first_snapshot_id": c.first_snapshot_id,
                "first_batch_id": c.first_batch_id,
            }
            for c in self.columns
        ]

    def history_rows(self) -> list[dict[str, object]]:
        """One plain dict per (snapshot, column), in long form for a plot of type drift:
        ``px.bar(pd.DataFrame(rows), x="batch", y="values", color="column",
        facet_row="family")``."""
        rows: list[dict[str, object]] = []
        by_name = {c.name: c for c in self.columns}
        for i, s in enumerate(self.snapshots):
            for name, n in s.values:
                c = by_name[name]
                rows.append(
                    {
                        "snapshot": i,
                        "snapshot_id": s.snapshot_id,
                        "batch": s.batch_id if s.batch_id is not None else str(s.snapshot_id),
                        "timestamp": s.timestamp,
                        "column": name,
                        "family": c.family,
                        "evolved": c.evolved,
                        "values": n,
                    }
                )
        return rows

    def __str__(self) -> str:
        head = (
            f"Written data statistics of {self.table}: {counted(self.records, 'record')} in "
            f"{counted(self.data_files, 'data file')} (snapshot {self.snapshot_id})"
        )
        if self.delete_files:
            head += f", {self.delete_files} delete files not applied"
        header = ("column", "id", "type", "family", "evolved", "values", "nulls", "first batch")
        body = [
            (
                c.name,
                str(c.field_id),
                _clip(c.type, 32),
                c.family,
                "yes" if c.evolved else "",
                f"{c.values}{'+' if c.files_without_metrics else ''}",
                "-" if c.nulls is None else f"{c.nulls}{'+' if c.files_without_metrics else ''}",
                _first(c),
            )
            for c in self.columns
        ]
        lines = [head, *_text_table(header, body, right={1, 5, 6})]
        lines.append(
            "(struct/list/map rows: the most values of any leaf below; list elements count"
            " elements; + : a lower bound, some files have no metrics)"
        )
        arrivals = self.arrivals
        if arrivals.paths:
            lines += ["", f"What arrived ({counted(arrivals.records, 'record')}, as ingest counted "
                      "them; a value is counted once, whatever columns it was written to):"]
            aheader = ("field", "type", "values", "share", "null or missing", "samples")
            abody = []
            for path in arrivals.paths:
                counts = arrivals.arrived(path)
                total = sum(counts.values())
                samples = self.samples(path)
                for i, (kind, n) in enumerate(sorted(counts.items(), key=lambda kv: -kv[1])):
                    abody.append((
                        ".".join(path) if i == 0 else "", kind, f"{n:,}", share_text(n, total),
                        f"{arrivals.absent(path):,}" if i == 0 else "",
                        _clip(", ".join(samples.get(kind, ())), 40),
                    ))
                if not counts:
                    abody.append((".".join(path), "-", "0", "-", f"{arrivals.absent(path):,}",
                                  ""))
            lines += _text_table(aheader, abody, right={2, 3, 4})
        if self.snapshots:
            top = {c.name for c in self.columns if c.top_level}
            lines += ["", "Batches (commit order):"]
            sheader = ("#", "snapshot", "batch", "operation", "records", "values written")
            sbody = [
                (
                    str(i),
                    str(s.snapshot_id),
                    s.batch_id or "",
                    s.operation or "",
                    f"+{s.records_added}" + (f" -{s.records_removed}" if s.records_removed else ""),
                    _clip(", ".join(f"{n}={v}" for n, v in s.values if v and n in top), 60),
                )
                for i, s in enumerate(self.snapshots)
            ]
            lines += _text_table(sheader, sbody, right={0, 4})
        return "\n".join(lines)


def statistics(table: Table) -> WrittenDataStatistics:
    """The written data statistics of ``table`` as committed (its current snapshot and
    that snapshot's ancestry), computed from manifests only: no data file is opened.

    Call ``table.refresh()`` first to see commits made by other writers since it was
    loaded.
    """
    schema = table.schema()
    nodes = list(_nodes(from_iceberg(schema)))
    leaf_ids = {n.field_id for n in nodes if n.leaf}
    reader = _ManifestReader(table)

    # Live data files: the current snapshot's live manifest entries.
    live = _Counts()
    records = data_files = delete_files = 0
    current = table.current_snapshot()
    if current is not None:
        for manifest in reader.manifests(current):
            for entry in reader.entries(manifest):
                if entry.status == ManifestEntryStatus.DELETED:
                    continue
                if entry.data_file.content != DataFileContent.DATA:
                    delete_files += 1
                    continue
                data_files += 1
                records += entry.data_file.record_count
                live.add(entry, reader.file_schema_ids(entry), leaf_ids)

    # What each snapshot of the current lineage wrote: the entries it added.
    lineage = list(ancestors_of(current, table.metadata))[::-1]
    per_snapshot = [_snapshot_counts(s, reader, leaf_ids) for s in lineage]

    first_index: dict[int, int] = {}
    for i, (_, counts) in enumerate(per_snapshot):
        for fid, n in counts.values.items():
            if n > 0:
                first_index.setdefault(fid, i)

    columns = tuple(_column(n, live, first_index, lineage) for n in nodes)
    expired, folded = expired_arrivals(table)
    arrived = with_folded(table, "arrivals")  # the window's and those folded into files
    snapshots = tuple(
        _snapshot(s, info, counts, nodes, folded, arrived)
        for s, (info, counts) in zip(lineage, per_snapshot, strict=True)
    )
    return WrittenDataStatistics(
        table=".".join(table.name()),
        snapshot_id=None if current is None else current.snapshot_id,
        records=records,
        data_files=data_files,
        delete_files=delete_files,
        columns=columns,
        snapshots=snapshots,
        expired_arrivals=expired,
    )


def arrivals_of(snapshot: Snapshot, properties: Mapping[str, str]) -> Arrivals | None:
    """What the batch ``snapshot`` wrote brought, if ingest recorded it: in the table
    property :data:`SNAPSHOT_ARRIVALS_PREFIX` + its id (``properties``: the table's, with
    the entries folded into files: ``with_folded(table, "arrivals")``), set
    as the batch was published; for a batch an older version wrote, in its snapshot's
    summary (``toolkit.arrivals``, where those versions kept it)."""
    text = properties.get(f"{SNAPSHOT_ARRIVALS_PREFIX}{snapshot.snapshot_id}")
    if text is None and snapshot.summary is not None:
        text = snapshot.summary.additional_properties.get(OLD_ARRIVALS_SUMMARY)
    return None if text is None else Arrivals.decode(text)


def expired_arrivals(table: Table) -> tuple[Arrivals, frozenset[int]]:
    """What maintenance folded into the table before expiring snapshots, and the ids of
    those snapshots (a snapshot folded but not yet expired is counted here only)."""
    text = table.metadata.properties.get(EXPIRED_ARRIVALS_PROPERTY)
    if not text:
        return Arrivals(), frozenset()
    head, _, body = text.partition(":")
    return Arrivals.decode(body), frozenset(int(i) for i in head.split(",") if i)


class ArrivalsFold(NamedTuple):
    """A fold of arrivals into :data:`EXPIRED_ARRIVALS_PROPERTY`."""

    #: the table property update that sets the fold (empty when nothing new is folded)
    properties: dict[str, str]
    #: the snapshots the fold counts once set, folded earlier or now: statistics read
    #: these from the fold alone, so their own arrivals properties may then be removed
    ids: frozenset[int]


def fold_arrivals(table: Table, expiring: Sequence[int]) -> ArrivalsFold:
    """The fold of the arrivals of the snapshots ``expiring`` into
    :data:`EXPIRED_ARRIVALS_PROPERTY`. Their counts are folded; their samples are
    dropped."""
    total, folded = expired_arrivals(table)
    by_id = {s.snapshot_id: s for s in table.metadata.snapshots}
    arrived = with_folded(table, "arrivals")
    added = []
    for sid in expiring:
        snap = by_id.get(sid)
        found = None if snap is None or sid in folded else arrivals_of(snap, arrived)
        if found is not None:
            total = total + found
            added.append(sid)
    if not added:
        return ArrivalsFold({}, folded)
    # ids of snapshots gone from the table are dropped: only a snapshot still there can be
    # counted twice (the list would otherwise grow with every snapshot ever expired)
    ids = frozenset(i for i in {*folded, *added} if i in by_id)
    text = f"{','.join(str(i) for i in sorted(ids))}:{total.without_samples().encode()}"
    return ArrivalsFold({EXPIRED_ARRIVALS_PROPERTY: text}, ids)


# --- the schema walk ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Node:
    field_id: int
    path: tuple[str, ...]
    type: str
    family: str
    evolved_from: str | None
    kind: FieldKind
    leaf: bool
    leaves: tuple[int, ...]  # primitive field IDs under it (itself, for a leaf)


def _nodes(struct: Struct, parent: tuple[str, ...] = ()) -> Iterator[_Node]:
    """The reported columns of a struct, in pre-order."""
    for c in struct.fields:
        yield from _column_nodes(c, parent)


def _column_nodes(c: Column, parent: tuple[str, ...]) -> Iterator[_Node]:
    path = (*parent, c.name)
    family = ".".join((*parent, c.family))
    below = list(_type_nodes(c.type, path, family, c.evolved_from))
    is_leaf = isinstance(c.type, str)
    leaves = (c.id,) if is_leaf else tuple(n.field_id for n in below if n.leaf)
    yield _Node(c.id, path, type_to_str(c.type), family, c.evolved_from, "field", is_leaf, leaves)
    yield from below


def _children(t: ColumnType) -> list[tuple[int, FieldKind, ColumnType]]:
    """The unnamed children (field ID, path part, type) of a list or a map."""
    if isinstance(t, ListOf):
        return [(t.element_id, "element", t.element)]
    if isinstance(t, MapOf):
        return [(t.key_id, "key", t.key), (t.value_id, "value", t.value)]
    return []


def _type_nodes(
    t: ColumnType, path: tuple[str, ...], family: str, evolved_from: str | None
) -> Iterator[_Node]:
    """The reported columns inside a field's type: struct fields, and primitive leaves of
    lists and maps (which belong to the field's family)."""
    if isinstance(t, Struct):
        yield from _nodes(t, path)
        return
    for fid, part, child in _children(t):
        if isinstance(child, str):
            yield _Node(fid, (*path, part), child, family, evolved_from, part, True, (fid,))
        else:
            yield from _type_nodes(child, (*path, part), family, evolved_from)


# --- reading manifests --------------------------------------------------------------------


class _ManifestReader:
    """Reads each manifest (an Avro metadata file) at most once per call."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self._entries: dict[str, list[ManifestEntry]] = {}
        self._schema_ids: dict[int | None, frozenset[int] | None] = {}

    def manifests(self, snapshot: Snapshot) -> list[ManifestFile]:
        return snapshot.manifests(self.table.io)

    def entries(self, manifest: ManifestFile) -> list[ManifestEntry]:
        """All entries (deleted ones too) of a manifest."""
        path = manifest.manifest_path
        if path not in self._entries:
            self._entries[path] = manifest.fetch_manifest_entry(
                self.table.io, discard_deleted=False
            )
        return self._entries[path]

    def file_schema_ids(self, entry: ManifestEntry) -> frozenset[int] | None:
        """The field IDs a data file holds: its ``column_sizes`` keys, else the IDs of the
        schema its snapshot was committed with (None when neither is known)."""
        sizes = entry.data_file.column_sizes
        if sizes:
            return frozenset(sizes)
        sid = entry.snapshot_id
        if sid not in self._schema_ids:
            snap = None if sid is None else self.table.snapshot_by_id(sid)
            schema: Schema | None = None
            if snap is not None and snap.schema_id is not None:
                schema = self.table.schemas().get(snap.schema_id)
            self._schema_ids[sid] = None if schema is None else frozenset(index_by_id(schema))
        return self._schema_ids[sid]


class _Counts:
    """Non-null and null values per primitive field ID over a set of data files."""

    def __init__(self) -> None:
        self.values: dict[int, int] = {}
        self.nulls: dict[int, int] = {}
        self.unmeasured: dict[int, set[str]] = {}  # field ID -> files without counts

    def add(self, entry: ManifestEntry, held: frozenset[int] | None, ids: set[int]) -> None:
        f: DataFile = entry.data_file
        value_counts, null_counts = f.value_counts or {}, f.null_value_counts or {}
        for fid in ids:
            if fid in value_counts and fid in null_counts:
                nulls = null_counts[fid]
                self.values[fid] = self.values.get(fid, 0) + value_counts[fid] - nulls
                self.nulls[fid] = self.nulls.get(fid, 0) + nulls
            elif held is not None and fid in held:
                self.unmeasured.setdefault(fid, set()).add(f.file_path)
            else:
                # The column did not exist when the file was written: its rows read null,
                # one null per row (as Parquet counts a null list or struct at a leaf).
                self.nulls[fid] = self.nulls.get(fid, 0) + f.record_count


@dataclass(frozen=True, slots=True)
class _SnapshotInfo:
    data_files_added: int
    records_added: int
    data_files_removed: int
    records_removed: int


def _snapshot_counts(
    snapshot: Snapshot, reader: _ManifestReader, ids: set[int]
) -> tuple[_SnapshotInfo, _Counts]:
    counts = _Counts()
    added = added_records = removed = removed_records = 0
    sid = snapshot.snapshot_id
    for manifest in reader.manifests(snapshot):
        # Entries a snapshot adds or deletes live only in the manifests it wrote.
        if manifest.content != ManifestContent.DATA or manifest.added_snapshot_id != sid:
            continue
        for entry in reader.entries(manifest):
            if entry.snapshot_id != sid or entry.data_file.content != DataFileContent.DATA:
                continue
            if entry.status == ManifestEntryStatus.ADDED:
                added += 1
                added_records += entry.data_file.record_count
                counts.add(entry, reader.file_schema_ids(entry), ids)
            elif entry.status == ManifestEntryStatus.DELETED:
                removed += 1
                removed_records += entry.data_file.record_count
    return _SnapshotInfo(added, added_records, removed, removed_records), counts


# --- assembling ---------------------------------------------------------------------------


def _column(
    node: _Node, live: _Counts, first_index: Mapping[int, int], lineage: list[Snapshot]
) -> ColumnStatistics:
    values = max((live.values.get(fid, 0) for fid in node.leaves), default=0)
    nulls = live.nulls.get(node.field_id, 0) if node.leaf else None
    without: set[str] = set()
    for fid in node.leaves:
        without |= live.unmeasured.get(fid, set())
    firsts = [first_index[fid] for fid in node.leaves if fid in first_index]
    first = lineage[min(firsts)] if firsts else None
    return ColumnStatistics(
        field_id=node.field_id,
        path=node.path,
        type=node.type,
        family=node.family,
        evolved_from=node.evolved_from,
        kind=node.kind,
        leaf=node.leaf,
        values=values,
        nulls=nulls,
        files_without_metrics=len(without),
        first_snapshot_id=None if first is None else first.snapshot_id,
        first_batch_id=None if first is None else batch_id_of(first),
    )


def _snapshot(
    snapshot: Snapshot, info: _SnapshotInfo, counts: _Counts, nodes: list[_Node],
    folded: frozenset[int], properties: Mapping[str, str],
) -> SnapshotStatistics:
    summary = snapshot.summary
    return SnapshotStatistics(
        snapshot_id=snapshot.snapshot_id,
        timestamp=datetime.fromtimestamp(snapshot.timestamp_ms / 1000, tz=UTC),
        operation=None if summary is None else str(summary.operation.value),
        batch_id=batch_id_of(snapshot),
        schema_id=snapshot.schema_id,
        data_files_added=info.data_files_added,
        records_added=info.records_added,
        data_files_removed=info.data_files_removed,
        records_removed=info.records_removed,
        values=tuple(
            (".".join(n.path), max((counts.values.get(f, 0) for f in n.leaves), default=0))
            for n in nodes
        ),
        unmeasured=tuple(
            ".".join(n.path) for n in nodes if any(f in counts.unmeasured for f in n.leaves)
        ),
        # a snapshot maintenance folded before expiring it is counted in the fold only
        arrivals=None if snapshot.snapshot_id in folded else arrivals_of(snapshot, properties),
    )


# --- text rendering -----------------------------------------------------------------------


def _first(c: ColumnStatistics) -> str:
    if c.first_snapshot_id is None:
        return "-"
    return c.first_batch_id if c.first_batch_id is not None else f"snapshot {c.first_snapshot_id}"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _text_table(
    header: tuple[str, ...], rows: Sequence[tuple[str, ...]], right: set[int]
) -> list[str]:
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]

    def line(r: tuple[str, ...]) -> str:
        cells = (
            v.rjust(w) if i in right else v.ljust(w)
            for i, (v, w) in enumerate(zip(r, widths, strict=True))
        )
        return "  ".join(cells).rstrip()

    return [line(header), "  ".join("-" * w for w in widths), *(line(r) for r in rows)]


#: the table property holding what the batch of one snapshot brought: its prefix, then
#: the snapshot's id (set as the batch is published: known only once Spark wrote it)
SNAPSHOT_ARRIVALS_PREFIX = ARRIVALS_PREFIX


def stale_arrivals_properties(
    table: Table, folded: Collection[int] | None = None,
) -> tuple[str, ...]:
    """The per-snapshot arrivals properties maintenance can remove: those of snapshots
    folded into :data:`EXPIRED_ARRIVALS_PROPERTY` or gone from the table. Every table
    property is rewritten with each commit's metadata, so they should not outlive their
    snapshots (nor the samples in them the data they came from).

    ``folded``: the ids the fold counts, by default the table's; pass a new
    :class:`ArrivalsFold`'s ``ids`` to remove, in the commit that sets it, what it makes
    redundant (and nothing it does not count)."""
    if folded is None:
        _, folded = expired_arrivals(table)
    alive = {s.snapshot_id for s in table.metadata.snapshots}
    stale = []
    for key in table.metadata.properties:
        sid = key.removeprefix(SNAPSHOT_ARRIVALS_PREFIX)
        if key.startswith(SNAPSHOT_ARRIVALS_PREFIX) and sid.lstrip("-").isdigit() \
                and (int(sid) in folded or int(sid) not in alive):
            stale.append(key)
    return tuple(stale)


def arrivals_notes(arrivals: Arrivals) -> Callable[[int], dict[str, str]]:
    """The table properties that record what a batch brought, given the id of the snapshot
    that publishes it (:func:`toolkit.iceberg.ledger.publish`'s ``notes``).

    >>> arrivals_notes(Arrivals())(7)
    {'toolkit.arrivals.7': 'eNqrVkrLTM1JKVayio7VUSpKTc4vAnEMdJTKUouKM/PzlKwMawHskAxT'}
    """
    return lambda snapshot_id: {f"{SNAPSHOT_ARRIVALS_PREFIX}{snapshot_id}": arrivals.encode()}
