"""The quarantine table next to a target table: write, read, discard (RULES 5).

Records the engine will not write as they are (:class:`~toolkit.core.batch.quarantine.Quarantined`)
are kept whole in ``<namespace>.<name>__quarantine``, one row per record: its raw JSON
text, why, the field and types involved, and the batch that set it aside. Nothing is
dropped: a row leaves the quarantine only when it is replayed into the target (and so
written there, or quarantined again) or discarded by an explicit :func:`discard`.

Idempotence follows the target table's rule: the batch id goes into the snapshot summary
(``toolkit.batch-id``) and a batch id already there is not appended again; row ids are
derived from the batch id, the record's position and its text, so the same batch always
yields the same ids.

>>> quarantine_table_id("db.events")
'db.events__quarantine'
>>> quarantine_row_id("day1", 0, '{"n":"x"}')  # the same batch, position and text: same id
'02c3fb018e317719b22a2a9cae3d6197'
>>> quarantine_row_id("day1", 1, '{"n":"x"}') != quarantine_row_id("day1", 0, '{"n":"x"}')
True
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import warnings
from collections.abc import Iterable, Sequence
from typing import Any, Final, cast

import pyarrow as pa
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import (
    TableAlreadyExistsError,
)
from pyiceberg.expressions import BooleanExpression, EqualTo, In
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.types import LongType, NestedField, StringType, TimestamptzType

from toolkit.core.batch.quarantine import Quarantine, Quarantined, QuarantinedRow
from toolkit.errors import UnknownIdsError
from toolkit.iceberg.catalog import NEW_TABLE_PROPERTIES, ensure_namespace, load_table
from toolkit.iceberg.ledger import BATCH_ID_PROPERTY, ingested_batches

__all__ = [
    "ARROW_SCHEMA",
    "PENDING_REPLAY_PROPERTY",
    "QUARANTINE_SCHEMA",
    "QUARANTINE_SUFFIX",
    "append_quarantined",
    "discard",
    "ensure_quarantine_table",
    "mark_replay",
    "pending_replay",
    "quarantine",
    "quarantine_row_id",
    "quarantine_rows",
    "quarantine_table_id",
    "quarantine_tuples",
    "read_rows",
    "replayed_batches",
    "set_aside_against",
    "settle_replay",
    "target_batches",
]

QUARANTINE_SUFFIX: Final = "__quarantine"


#: The quarantine table's property naming a replay under way (see :func:`replay`).
PENDING_REPLAY_PROPERTY: Final = "toolkit.replay.pending"
#: The snapshot summary property of a delete made by a replay: the replay's batch id.
REPLAYED_BY_PROPERTY: Final = "toolkit.replayed-by"
#: The snapshot summary property of a delete made by :func:`discard`.
DISCARDED_PROPERTY: Final = "toolkit.discarded"
#: The snapshot summary property of an append: the target table's schema ID the records
#: were set aside against (replay routes their keys by field ID from it).
TARGET_SCHEMA_PROPERTY: Final = "toolkit.target-schema-id"

# Every column is optional: Spark's DataFrames are nullable, and Iceberg refuses to write
# a nullable Spark column into a required one. ``id`` and ``raw`` are never null anyway.
QUARANTINE_SCHEMA: Final = Schema(
    NestedField(1, "id", StringType(), required=False, doc="unique per row: batch, position, raw"),
    NestedField(2, "raw", StringType(), required=False, doc="the record as JSON text"),
    NestedField(3, "reason", StringType(), required=False, doc="why it was set aside"),
    NestedField(4, "field", StringType(), required=False, doc="dotted path of the value at fault"),
    NestedField(5, "observed", StringType(), required=False, doc="the value's observed type"),
    NestedField(6, "table_type", StringType(), required=False, doc="the column's type"),
    NestedField(7, "detail", StringType(), required=False, doc="field, types and value"),
    NestedField(8, "batch_id", StringType(), required=False, doc="the batch that set it aside"),
    NestedField(9, "position", LongType(), required=False, doc="its position in that batch"),
    NestedField(10, "quarantined_at", TimestamptzType(), required=False),
)

#: What the quarantine table's rows look like in Arrow (and, through
#: ``pyspark.sql.pandas.types.from_arrow_schema``, in Spark); same names, same order.
ARROW_SCHEMA: Final = pa.schema(
    [
        pa.field("id", pa.string()),
        pa.field("raw", pa.string()),
        pa.field("reason", pa.string()),
        pa.field("field", pa.string()),
        pa.field("observed", pa.string()),
        pa.field("table_type", pa.string()),
        pa.field("detail", pa.string()),
        pa.field("batch_id", pa.string()),
        pa.field("position", pa.int64()),
        pa.field("quarantined_at", pa.timestamp("us", tz="UTC")),
    ]
)

#: One row as a plain tuple, in :data:`ARROW_SCHEMA`'s order.
RowTuple = tuple[str, str, str, str | None, str | None, str | None, str, str, int, dt.datetime]


def quarantine_table_id(table_id: str) -> str:
    """The identifier of ``table_id``'s quarantine table, in the same namespace.

    >>> quarantine_table_id("lake.db.events")
    'lake.db.events__quarantine'
    """
    namespace, _, name = table_id.rpartition(".")
    if not namespace or not name:
        raise ValueError(f"table {table_id!r}: expected 'namespace.name'")
    return f"{namespace}.{name}{QUARANTINE_SUFFIX}"


def quarantine_row_id(batch_id: str, position: int, raw: str) -> str:
    """A row id that depends only on the batch, the record's position in it and its text,
    so writing the same batch again gives the same ids."""
    digest = hashlib.sha256(f"{batch_id}\0{position}\0{raw}".encode())
    return digest.hexdigest()[:32]


def quarantine_tuples(
    items: Iterable[Quarantined],
    batch_id: str,
    *,
    start: int = 0,
    at: dt.datetime | None = None,
) -> list[RowTuple]:
    """The quarantine rows of ``items`` as tuples in :data:`ARROW_SCHEMA`'s order.

    ``start`` is the position of the first item in its batch (a Spark partition passes
    its own offset so ids stay unique across partitions); ``at`` the time to record
    (default now, UTC).
    """
    when = at if at is not None else dt.datetime.now(dt.UTC)
    rows: list[RowTuple] = []
    for position, item in enumerate(items, start):
        raw = item.stored
        rows.append(
            (
                quarantine_row_id(batch_id, position, raw),
                raw,
                item.reason,
                item.field,
                item.observed,
                item.table_type,
                item.detail,
                batch_id,
                position,
                when,
            )
        )
    return rows


def quarantine_rows(
    items: Iterable[Quarantined],
    batch_id: str,
    *,
    start: int = 0,
    at: dt.datetime | None = None,
) -> pa.Table:
    """The quarantine rows of ``items`` as an Arrow table of :data:`ARROW_SCHEMA`."""
    rows = quarantine_tuples(items, batch_id, start=start, at=at)
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in ARROW_SCHEMA]
    return pa.Table.from_arrays(
        [pa.array(list(c), type=f.type) for c, f in zip(columns, ARROW_SCHEMA, strict=True)],
        schema=ARROW_SCHEMA,
    )


def ensure_quarantine_table(catalog: Catalog, table_id: str) -> Table:
    """The quarantine table of ``table_id``, created (with its namespace) if missing."""
    qid = quarantine_table_id(table_id)
    existing = load_table(catalog, qid)
    if existing is not None:
        return existing
    ensure_namespace(catalog, qid.rsplit(".", 1)[0])
    try:
        return catalog.create_table(qid, schema=QUARANTINE_SCHEMA,
                                    properties=dict(NEW_TABLE_PROPERTIES))
    except TableAlreadyExistsError:  # another writer created it meanwhile
        return catalog.load_table(qid)


# PyIceberg's expressions are pydantic models whose generated signatures mypy misreads.
_IN: Any = In
_EQUAL_TO: Any = EqualTo


def _id_in(ids: Iterable[str]) -> BooleanExpression:
    return cast(BooleanExpression, _IN("id", list(ids)))


def _batch_is(batch_id: str) -> BooleanExpression:
    return cast(BooleanExpression, _EQUAL_TO("batch_id", batch_id))


def _batch_ids(table: Table) -> set[str]:
    return ingested_batches(table)  # the ledger: batch ids outlive expired snapshots


def append_quarantined(
    catalog: Catalog,
    table_id: str,
    items: Sequence[Quarantined],
    batch_id: str,
    *,
    at: dt.datetime | None = None,
    schema_id: int | None = None,
) -> int:
    """Append ``items`` to ``table_id``'s quarantine table (created on first use) in one
    commit whose snapshot summary holds ``batch_id`` (and ``schema_id``, the target's
    schema the records were set aside against); returns the rows appended.

    A batch id already in the quarantine table appends nothing (0), like ``ingest`` on the
    target, so a batch that is run again is not quarantined twice. No items, no commit.
    """
    if not items:
        return 0
    table = ensure_quarantine_table(catalog, table_id)
    if batch_id in _batch_ids(table):
        return 0
    summary = {BATCH_ID_PROPERTY: batch_id}
    if schema_id is not None:
        summary[TARGET_SCHEMA_PROPERTY] = str(schema_id)
    table.append(quarantine_rows(items, batch_id, at=at), snapshot_properties=summary)
    return len(items)


def set_aside_against(table: Table) -> dict[str, int]:
    """Per batch id, the target's schema ID its records were set aside against, as the
    quarantine table's appends recorded it (batches quarantined before it was recorded,
    or whose snapshot expired, are missing)."""
    out: dict[str, int] = {}
    for s in table.snapshots():
        props = {} if s.summary is None else s.summary.additional_properties
        if BATCH_ID_PROPERTY in props and TARGET_SCHEMA_PROPERTY in props:
            out[props[BATCH_ID_PROPERTY]] = int(props[TARGET_SCHEMA_PROPERTY])
    return out


# --- reading ---------------------------------------------------------------------------------














def _row(d: dict[str, Any]) -> QuarantinedRow:
    return QuarantinedRow.stored_as((
        d["id"], d["raw"], d["reason"], d["field"], d["observed"], d["table_type"],
        d["detail"] or "", d["batch_id"], int(d["position"] or 0), d["quarantined_at"],
    ))


def read_rows(table: Table) -> tuple[QuarantinedRow, ...]:
    rows = [_row(d) for d in table.scan().to_arrow().to_pylist()]
    epoch = dt.datetime.min.replace(tzinfo=dt.UTC)
    rows.sort(key=lambda r: (r.quarantined_at or epoch, r.batch_id, r.position, r.id))
    return tuple(rows)


def quarantine(catalog: Catalog, table_id: str) -> Quarantine:
    """What ``table_id``'s quarantine holds: rows, groups, counts (see :class:`Quarantine`).

    A table that never quarantined anything gives an empty result (``exists`` False).
    """
    qid = quarantine_table_id(table_id)
    table = load_table(catalog, qid)
    if table is None:
        return Quarantine(table_id, qid, False, ())
    return Quarantine(table_id, qid, True, read_rows(table))


# --- the marks a replay leaves (``toolkit.pipeline.replay``), and discard --------------------


def pending_replay(table: Table) -> tuple[str, tuple[str, ...]] | None:
    """The batch id and row ids of a replay under way on the quarantine ``table``."""
    text = table.properties.get(PENDING_REPLAY_PROPERTY)
    if not text:
        return None
    data = json.loads(text)
    return str(data["batch_id"]), tuple(data["ids"])


def replayed_batches(table: Table) -> set[str]:
    """The batch ids of the replays whose rows left ``table`` (a quarantine table)."""
    return {
        s.summary.additional_properties[REPLAYED_BY_PROPERTY]
        for s in table.snapshots()
        if s.summary is not None and REPLAYED_BY_PROPERTY in s.summary.additional_properties
    }


def target_batches(catalog: Catalog, table_id: str) -> set[str]:
    """The batch ids committed to the target ``table_id`` (none when it does not exist)."""
    target = load_table(catalog, table_id)
    return set() if target is None else _batch_ids(target)


def mark_replay(qtable: Table, batch_id: str, ids: Iterable[str]) -> None:
    """Record on the quarantine table that a replay of ``ids`` as ``batch_id`` is under way
    (:func:`settle_replay` ends it, whether or not the batch reached the target)."""
    qtable.transaction().set_properties(
        {PENDING_REPLAY_PROPERTY: json.dumps({"batch_id": batch_id, "ids": list(ids)})}
    ).commit_transaction()


def settle_replay(qtable: Table, reached_target: bool) -> tuple[str, ...]:
    """End the pending replay marked on ``qtable``, crash-safe either way.

    If its batch reached the target, the replayed rows are deleted (the records are in the
    target, or were quarantined again under the replay's batch id). If not, nothing of it
    was written to the target: the originals stay, and any copy the replay had already
    quarantined again is deleted, so a later replay neither loses nor doubles a record.
    """
    pending = pending_replay(qtable)
    if pending is None:
        return ()
    batch_id, ids = pending
    with qtable.transaction() as tx:
        if reached_target:
            if ids:
                tx.delete(_id_in(ids), snapshot_properties={REPLAYED_BY_PROPERTY: batch_id})
        else:
            with warnings.catch_warnings():  # usually there is no copy to delete
                warnings.filterwarnings("ignore", "Delete operation did not match")
                tx.delete(_batch_is(batch_id))
        tx.remove_properties(PENDING_REPLAY_PROPERTY)
    qtable.refresh()
    return ids if reached_target else ()








def discard(catalog: Catalog, table_id: str, ids: Iterable[str]) -> int:
    """Remove the rows ``ids`` from ``table_id``'s quarantine for good (e.g. malformed
    lines nobody can replay); returns how many. Every id must be there
    (:class:`UnknownIdsError` otherwise); nothing is discarded without being named."""
    wanted = sorted(set(ids))
    if not wanted:
        return 0
    qid = quarantine_table_id(table_id)
    qtable = load_table(catalog, qid)
    if qtable is None:
        raise UnknownIdsError(qid, wanted)
    present = {r.id for r in read_rows(qtable)}
    missing = set(wanted) - present
    if missing:
        raise UnknownIdsError(qid, missing)
    qtable.delete(_id_in(wanted), snapshot_properties={DISCARDED_PROPERTY: str(len(wanted))})
    return len(wanted)
