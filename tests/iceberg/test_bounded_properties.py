"""Table properties stay bounded (issue 25): lineage, arrivals and the ingest ledger keep a
recent window in the table's properties and fold older entries into files in the table's
metadata folder, which every reader still reads (``toolkit.core.maintenance.folding``).

Batches are committed without Spark, the way ingest commits them: the schema change
(``toolkit.evolve``, with its lineage entry), then the batch's rows as a staged snapshot
(here an empty one, standing in for Spark's write), published by the ledger with the
batch's arrivals; every 200 batches, what maintenance does before Spark expires snapshots
(the ledger and arrivals folded in), then the expiry itself (PyIceberg's).
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pyarrow as pa
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Operation, Snapshot, Summary
from pyiceberg.table.update import (
    AddSnapshotUpdate,
    RemoveSchemasUpdate,
    RemoveSnapshotsUpdate,
    SetPropertiesUpdate,
)

import toolkit
from toolkit.core.batch.arrivals import Arrivals
from toolkit.core.batch.profile import profile
from toolkit.core.engine import Engine
from toolkit.core.evolution.lineage import LineageEntry, _entry_properties, next_seq
from toolkit.core.evolution.operations import AddField, DropField
from toolkit.core.evolution.state import TableState
from toolkit.core.maintenance.folding import PROPERTIES_BOUND, WINDOW_BYTES, pointer_key
from toolkit.core.values.types import Struct
from toolkit.iceberg import catalog
from toolkit.iceberg.commit import _unused_schema_ids, commit_plan, commit_updates
from toolkit.iceberg.folds import bounded_updates, fold_files
from toolkit.iceberg.ledger import (
    BATCH_ID_PROPERTY,
    WRITE_ID_PROPERTY,
    ingested_batches,
    main_snapshots,
    publish,
    remember_batches,
)
from toolkit.iceberg.maintenance import table_facts
from toolkit.iceberg.schema import from_iceberg, to_iceberg
from toolkit.iceberg.statistics import arrivals_notes, fold_arrivals, stale_arrivals_properties

BATCHES = 1_000
#: maintenance every 50 batches keeps the metadata small (each commit copies it)
EXPIRE_EVERY = 50


FIELDS = {"device": {"os": "linux", "model": "x1", "build": 1}, "tags": ["a", "b"],
          "price": 1.5, "note": "arrived as text"}


def properties_size(table: Table) -> int:
    return sum(len(k.encode()) + len(v.encode()) for k, v in table.properties.items())


def stage(table: Table, batch_id: str, write_id: str, manifest_list: str) -> None:
    """What Spark's staged write leaves: a snapshot no branch points to, tagged with the
    batch and the write (empty: the rows do not matter here)."""
    meta = table.metadata
    snap = Snapshot(
        snapshot_id=meta.new_snapshot_id(),
        parent_snapshot_id=meta.current_snapshot_id,
        sequence_number=meta.next_sequence_number(),
        timestamp_ms=int(time.time() * 1000),
        manifest_list=manifest_list,
        summary=Summary(Operation.APPEND, **{BATCH_ID_PROPERTY: batch_id,
                                             WRITE_ID_PROPERTY: write_id}),
        schema_id=meta.current_schema_id,
    )
    commit_updates(table, (), (AddSnapshotUpdate(snapshot=snap),))


def maintain_without_spark(table: Table, keep: int) -> None:
    """What ``toolkit.maintain`` does around Spark's expiry, then the expiry of every
    snapshot on main but the last ``keep`` (and of the schemas only they used)."""
    remember_batches(table)
    table.refresh()
    ids = [s.snapshot_id for s in main_snapshots(table)][keep:]
    fold = fold_arrivals(table, ids)
    stale = stale_arrivals_properties(table, fold.ids)
    with table.transaction() as tx:
        tx.set_properties(fold.properties)
        if stale:
            tx.remove_properties(*stale)
    commit_updates(table, (), (RemoveSnapshotsUpdate.model_validate({"snapshot-ids": ids}),))
    unused = _unused_schema_ids(table.metadata)
    commit_updates(table, (), (RemoveSchemasUpdate.model_validate({"schema-ids": unused}),))


def test_a_thousand_batches_with_a_schema_change_each_keep_properties_bounded(
    tmp_path: Path,
) -> None:
    # the catalog's rows in memory (no disk sync per commit: three commits a batch); the
    # metadata files are written to the folder as usual, and few kept (each commit copies
    # the list)
    cat = catalog(tmp_path, uri="sqlite:///:memory:")
    cat.create_namespace("db")
    table = cat.create_table("db.t", schema=pa.schema([("id", pa.int64()), ("c0", pa.string())]),
                             properties={"write.metadata.previous-versions-max": "2"})
    # one real staged write, whose (empty) manifest list the stand-ins share
    with table.transaction() as tx, tx.update_snapshot({}, branch=None).fast_append():
        pass
    manifest_list = table.metadata.snapshots[-1].manifest_list
    batch_ids = [f"orders/{uuid.uuid4()}" for _ in range(BATCHES)]
    largest = 0
    for k, batch_id in enumerate(batch_ids, 1):
        toolkit.evolve(cat, table, [toolkit.ops.rename(f"c{k - 1}", f"c{k}")], batch=batch_id)
        write_id = str(uuid.uuid4())
        stage(table, batch_id, write_id, manifest_list)
        # a few fields a batch, so that 50 batches' arrivals overflow their window
        arrived = Arrivals.of(profile([{"id": k, f"c{k}": "x", **FIELDS}]))
        assert publish(table, write_id, batch_id, arrivals_notes(arrived),
                       fresh=True) is not None
        if k % EXPIRE_EVERY == 0:
            maintain_without_spark(table, keep=3)
        largest = max(largest, properties_size(table))
    table = cat.load_table("db.t")

    # the properties stayed bounded all along; each log folded into files
    assert largest <= PROPERTIES_BOUND
    for log in ("lineage", "arrivals", "ledger"):
        assert pointer_key(log) in table.properties, log
    assert len(fold_files(table)) >= 3

    # lineage: every entry, in order, with its batch (undo reads these)
    log = toolkit.lineage(table)
    assert [e.seq for e in log] == list(range(1, BATCHES + 1))
    assert [e.batch for e in log] == batch_ids
    rename = toolkit.ops.rename
    for k, entry in enumerate(log, 1):
        assert entry.operations == (rename(f"c{k - 1}", f"c{k}"),), k
        assert entry.inverse() == (rename(f"c{k}", f"c{k - 1}"),), k
    # statistics: what every batch brought (expired ones' counts, the others' own)
    stats = toolkit.statistics(table)
    for k in range(1, BATCHES + 1):
        assert stats.arrived(f"c{k}") == {"string": 1}, k
    assert stats.arrived("id") == {"long": BATCHES}
    assert stats.arrived("device.os") == {"string": BATCHES}
    # the ledger: every batch id, so none is ever published twice
    assert set(batch_ids) <= ingested_batches(table)
    write_id = str(uuid.uuid4())
    stage(table, batch_ids[0], write_id, table.metadata.snapshots[-1].manifest_list)
    assert publish(table, write_id, batch_ids[0]) is None
    # maintenance keeps the fold files: no snapshot references them, yet they are no orphans
    facts = table_facts(cat, "db.t")
    assert set(facts.fold_files) == set(fold_files(table))
    # and the next entry is numbered after the folded ones
    toolkit.evolve(cat, "db.t", [toolkit.ops.rename(f"c{BATCHES}", "last")])
    assert toolkit.lineage(cat.load_table("db.t"))[-1].seq == BATCHES + 1


def test_a_batch_adding_ten_thousand_columns_keeps_properties_bounded(tmp_path: Path) -> None:
    cat = catalog(tmp_path)
    cat.create_namespace("db")
    engine = Engine()
    first = engine.plan(Struct(), engine.observe([{"id": 1}]))
    table = cat.create_table("db.wide", schema=to_iceberg(first.after))
    # through the commit path: a batch whose entry is too big for the window goes to a
    # fold file at once (300 columns: working out a plan's inverse replays each change on
    # the schema, which takes minutes at 10,000)
    wide = {f"field_{i:05d}": "x" for i in range(300)}
    plan = engine.plan(from_iceberg(table.schema()), engine.observe([wide], 1), 1)
    table = commit_plan(table, plan, TableState.of(table), batch_id="wide")
    assert properties_size(table) <= WINDOW_BYTES
    assert pointer_key("lineage") in table.properties
    (entry,) = toolkit.lineage(table)
    assert entry.batch == "wide" and len(entry.operations) == 300
    assert len(entry.inverse() or ()) == 300  # undo reads it from the file

    # the 10,000-column batch's entry itself (2.35 MB as logged), set as a commit sets it
    adds = [AddField((f"f{i:05d}",), "string", f"upsolver_evolved_from:f{i:05d}")
            for i in range(10_000)]
    huge = _entry_properties(LineageEntry(
        next_seq(table.properties), at_ms=0, decided_by="RULES 3", batch="huge", reason=None,
        operations=tuple(adds), reasons=("a new field of the batch (RULES 3.2)",) * len(adds),
        inverse_operations=tuple(DropField(op.path) for op in adds), irreversible=(),
        guard=tuple(range(302, 302 + len(adds))), schema_id=None,
    ))
    assert len(next(iter(huge.values()))) > 1_000_000
    sets, removes = bounded_updates(table, huge)
    assert not removes and set(sets) == {pointer_key("lineage")}
    commit_updates(table, (), (SetPropertiesUpdate(updates=sets),))
    table = cat.load_table("db.wide")
    assert properties_size(table) <= WINDOW_BYTES
    first_entry, second = toolkit.lineage(table)
    assert (first_entry.seq, second.seq, second.batch) == (1, 2, "huge")
    assert second.operations == tuple(adds) and len(second.inverse() or ()) == 10_000
    assert len(fold_files(table)) == 2
