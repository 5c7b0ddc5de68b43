"""The ingest ledger: each batch id lands in a table once, for the table's whole life.

How a batch lands exactly once, even when two processes ingest the same batch id at the
same moment (RULES 6: a commit carries the state it was made against, and the catalog
checks it):

1. Spark writes the batch's rows as a *staged* snapshot (Iceberg's write-audit-publish:
   ``write.wap.enabled`` on the table, ``spark.wap.id`` on the write), which no reader
   sees.
2. :func:`publish` reads the ledger and, if the batch id is not in it, makes the staged
   snapshot current in one catalog commit that requires ``main`` to be where it was when
   the ledger was read. If another writer published anything meanwhile, the catalog
   refuses the commit; the ledger is read again, and a batch id now in it is not
   published (its staged snapshot is dropped).

The ledger is the batch ids in the summaries of the snapshots on ``main`` plus those
kept in the table property ``toolkit.ledger``, into which :func:`remember_batches` folds
them before snapshots are expired (the toolkit's maintenance does this first), so a
batch id stays known after its snapshot is gone. When that property outgrows its window,
its ids move into a fold file in the table's metadata folder, which the ledger reads too
(:mod:`toolkit.core.maintenance.folding`), in the commit that would have grown it.

>>> sorted(decode(encode({"day1", "day2"})))
['day1', 'day2']
>>> decode(None)
frozenset()
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping

from pyiceberg.exceptions import CommitFailedException, ForbiddenError
from pyiceberg.table import Table
from pyiceberg.table.refs import MAIN_BRANCH
from pyiceberg.table.snapshots import Snapshot
from pyiceberg.table.update import (
    AssertRefSnapshotId,
    RemovePropertiesUpdate,
    RemoveSnapshotsUpdate,
    SetPropertiesUpdate,
    SetSnapshotRefUpdate,
)

from toolkit.core.maintenance.folding import LEDGER_KEY
from toolkit.iceberg.commit import commit_updates
from toolkit.iceberg.folds import bounded_updates, folded_entries

__all__ = [
    "BATCH_ID_PROPERTY",
    "LEDGER_PROPERTY",
    "STAGING_PROPERTY",
    "WRITE_ID_PROPERTY",
    "batch_id_of",
    "decode",
    "drop_staged",
    "encode",
    "enable_staging",
    "ingested_batches",
    "main_snapshots",
    "publish",
    "published",
    "remember_batches",
    "staged",
]

#: the snapshot summary property that records which batch a commit wrote
BATCH_ID_PROPERTY = "toolkit.batch-id"
#: the snapshot summary property naming one write attempt (finds its staged snapshot)
WRITE_ID_PROPERTY = "toolkit.write-id"
#: the table property keeping the batch ids of snapshots that may since have expired
LEDGER_PROPERTY = LEDGER_KEY
#: Iceberg's table property that lets Spark stage a write instead of publishing it
STAGING_PROPERTY = "write.wap.enabled"

_FORMAT = "z1:"
#: how often a publish is tried again while other writers keep publishing first
MAX_ATTEMPTS = 20


def batch_id_of(snapshot: Snapshot) -> str | None:
    """The batch a snapshot wrote, if the toolkit wrote it."""
    if snapshot.summary is None:
        return None
    return snapshot.summary.additional_properties.get(BATCH_ID_PROPERTY)


def encode(ids: Iterable[str]) -> str:
    """The ledger's property value: sorted ids, JSON, zlib, base64 (batch ids of one
    stream share long prefixes, so months of them stay small)."""
    raw = json.dumps(sorted(set(ids)), separators=(",", ":")).encode()
    return _FORMAT + base64.b64encode(zlib.compress(raw, 9)).decode("ascii")


def decode(value: str | None) -> frozenset[str]:
    """The batch ids of a ledger property value (:func:`encode`'s inverse)."""
    if not value:
        return frozenset()
    if not value.startswith(_FORMAT):
        raise ValueError(f"{LEDGER_PROPERTY} holds a value this toolkit cannot read: "
                         f"{value[:40]!r}")
    return frozenset(json.loads(zlib.decompress(base64.b64decode(value[len(_FORMAT):]))))


def main_snapshots(table: Table) -> Iterator[Snapshot]:
    """The snapshots on ``main``, newest first (staged ones that were never published
    and snapshots of other branches are not)."""
    by_id = {s.snapshot_id: s for s in table.metadata.snapshots}
    snap = table.current_snapshot()
    while snap is not None:
        yield snap
        snap = None if snap.parent_snapshot_id is None else by_id.get(snap.parent_snapshot_id)


def ingested_batches(table: Table) -> set[str]:
    """Every batch id ``table`` holds: those of its snapshots on ``main`` and those the
    ledger kept when older snapshots were expired (in its property and its fold files)."""
    found = {b for b in map(batch_id_of, main_snapshots(table)) if b is not None}
    return found | decode(table.metadata.properties.get(LEDGER_PROPERTY)) | _folded(table)


def _folded(table: Table) -> frozenset[str]:
    """The batch ids the ledger folded into files."""
    return frozenset().union(*(decode(v) for _, v in folded_entries(table, "ledger")))


def published(table: Table, batch_id: str) -> Snapshot | None:
    """The snapshot on ``main`` that wrote ``batch_id``, if it is still there."""
    return next((s for s in main_snapshots(table) if batch_id_of(s) == batch_id), None)


def staged(table: Table, write_id: str) -> Snapshot | None:
    """The snapshot one write attempt made (tagged ``toolkit.write-id``), staged or not."""
    for snap in reversed(table.metadata.snapshots):
        if snap.summary is not None and \
                snap.summary.additional_properties.get(WRITE_ID_PROPERTY) == write_id:
            return snap
    return None


def enable_staging(table: Table) -> Table:
    """Let Spark stage writes to ``table`` (a table property, set once)."""
    if table.metadata.properties.get(STAGING_PROPERTY) != "true":
        with table.transaction() as tx:
            tx.set_properties({STAGING_PROPERTY: "true"})
    return table


def remember_batches(table: Table) -> Table:
    """Fold the batch ids of every snapshot on ``main`` into the ledger property, in one
    commit, so they stay known after those snapshots are expired. Call it before
    expiring snapshots; the ledger only grows."""
    for _ in range(MAX_ATTEMPTS):
        table.refresh()
        folded = _folded(table)
        kept = decode(table.metadata.properties.get(LEDGER_PROPERTY))
        ids = ingested_batches(table)
        if ids == kept | folded:
            return table
        # the ids not in fold files yet; folded into a new one when they outgrow the window
        # (written before the commit: a failed commit leaves an unreferenced file)
        sets, removes = bounded_updates(table, {LEDGER_PROPERTY: encode(ids - folded)})
        try:
            with table.transaction() as tx:
                tx.set_properties(sets)
                if removes:
                    tx.remove_properties(*removes)
                # the ids read are those of this ``main``: a writer that moved it first
                # may have published one more, so read again
                tx._stage((), (_main_at(_main_id(table)),))
            return table
        except CommitFailedException:
            continue
    raise CommitFailedException(f"{'.'.join(table.name())}: other writers kept committing; "
                                "the ledger was not updated")


def _main_at(snapshot_id: int | None) -> AssertRefSnapshotId:
    """The requirement that ``main`` is still at ``snapshot_id`` (checked by the catalog)."""
    return AssertRefSnapshotId.model_validate({"ref": MAIN_BRANCH, "snapshot-id": snapshot_id})


def _main_id(table: Table) -> int | None:
    ref = table.metadata.refs.get(MAIN_BRANCH)
    return None if ref is None else ref.snapshot_id


def publish(
    table: Table,
    write_id: str,
    batch_id: str,
    notes: Callable[[int], Mapping[str, str]] | None = None,
    *,
    fresh: bool = False,
) -> Snapshot | None:
    """Publish the snapshot the write ``write_id`` staged for ``batch_id``, unless the
    ledger holds ``batch_id`` already. Returns the published snapshot, or ``None`` when
    another writer had published the batch (the staged snapshot is then dropped).
    ``notes``: given the published snapshot's id, table properties that the same commit
    sets (what a batch brought is known only once Spark has written it). ``fresh``: the
    caller loaded ``table`` after the write, so the first attempt reads it as it is (if
    another writer moved it since, the commit's requirement fails and it is read again).

    When ``main`` is still the staged snapshot's parent, the staged snapshot itself
    becomes current; otherwise its data files are appended on top of ``main`` as a new
    snapshot (Iceberg's cherry-pick of an append), dropping the staged one. Either way
    the commit requires ``main`` unchanged since the ledger was read.
    """
    name = ".".join(table.name())
    for attempt in range(MAX_ATTEMPTS):
        if attempt or not fresh:
            table.refresh()
        snap = staged(table, write_id)
        if snap is None:
            raise RuntimeError(f"{name}: the write of batch {batch_id} left no snapshot")
        main = _main_id(table)
        if any(s.snapshot_id == snap.snapshot_id for s in main_snapshots(table)):
            return snap  # written straight to main (staging off): nothing to publish
        if batch_id in ingested_batches(table):
            _drop(table, snap)
            return None
        try:
            if snap.parent_snapshot_id == main:
                noted, removes = bounded_updates(
                    table, {} if notes is None else notes(snap.snapshot_id))
                commit_updates(table, (_main_at(main),), (
                    SetSnapshotRefUpdate.model_validate(
                        {"ref-name": MAIN_BRANCH, "type": "branch",
                         "snapshot-id": snap.snapshot_id}),
                    *((SetPropertiesUpdate(updates=noted),) if noted else ()),
                    *((RemovePropertiesUpdate(removals=list(removes)),) if removes else ()),
                ))
            else:
                _cherry_pick(table, snap, batch_id, notes)
        except CommitFailedException:
            continue  # another writer published first: read the ledger again
        return published(table, batch_id)
    raise CommitFailedException(
        f"{name}: other writers kept publishing; batch {batch_id} was not published "
        f"after {MAX_ATTEMPTS} attempts (nothing of it is visible; run it again)"
    )


def _cherry_pick(
    table: Table,
    snap: Snapshot,
    batch_id: str,
    notes: Callable[[int], Mapping[str, str]] | None = None,
) -> None:
    """Append ``snap``'s own data files on top of ``main`` and drop ``snap``, in one
    commit (the fast append requires ``main`` unchanged)."""
    from pyiceberg.manifest import ManifestEntryStatus

    io = table.io
    added = [
        entry.data_file
        for manifest in snap.manifests(io)
        if manifest.added_snapshot_id == snap.snapshot_id
        for entry in manifest.fetch_manifest_entry(io, discard_deleted=True)
        if entry.status == ManifestEntryStatus.ADDED and entry.snapshot_id == snap.snapshot_id
    ]
    summary = snap.summary.additional_properties if snap.summary is not None else {}
    props = {k: v for k, v in summary.items() if k.startswith("toolkit.")}
    props[BATCH_ID_PROPERTY] = batch_id
    props["source-snapshot-id"] = str(snap.snapshot_id)
    for drop in (True, False):
        try:
            with table.transaction() as tx:
                with tx.update_snapshot(snapshot_properties=props).fast_append() as append:
                    for data_file in added:
                        append.append_data_file(data_file)
                if drop:
                    tx._stage((_remove(snap),), ())
                noted, removes = bounded_updates(
                    table, {} if notes is None else notes(append._snapshot_id))
                if noted:
                    tx.set_properties(noted)
                if removes:
                    tx.remove_properties(*removes)
            return
        except ForbiddenError:
            # a catalog that lets no commit remove snapshots (a REST server keeping them
            # for its own checks): the staged one stays, harmless, until expiry
            if not drop:
                raise


def _remove(snap: Snapshot) -> RemoveSnapshotsUpdate:
    return RemoveSnapshotsUpdate.model_validate({"snapshot-ids": [snap.snapshot_id]})


def drop_staged(table: Table, write_id: str) -> None:
    """Forget the snapshot the write ``write_id`` staged, which will never be published
    (best effort, as :func:`publish` drops one). A write already published is left
    alone: its snapshot is on ``main`` (the staged one itself, or its cherry-pick, which
    keeps the write's id)."""
    table.refresh()
    snap = staged(table, write_id)
    if snap is not None and all(s.snapshot_id != snap.snapshot_id
                                for s in main_snapshots(table)):
        _drop(table, snap)


def _drop(table: Table, snap: Snapshot) -> None:
    """Forget a staged snapshot that will never be published (best effort: a leftover is
    harmless, expiry removes it; its files are then orphans for maintenance)."""
    try:
        with table.transaction() as tx:
            tx._stage((_remove(snap),), ())
    except (CommitFailedException, ForbiddenError):
        pass
