"""The quarantine table next to a target table: write, inspect, replay, discard (RULES 5).

Records the engine will not write as they are (:class:`~toolkit.core.quarantine.Quarantined`)
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

import contextlib
import datetime as dt
import hashlib
import json
import warnings
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, cast

import pyarrow as pa
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import (
    NamespaceAlreadyExistsError,
    NoSuchTableError,
    TableAlreadyExistsError,
)
from pyiceberg.expressions import BooleanExpression, EqualTo, In
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.types import LongType, NestedField, StringType, TimestamptzType

from toolkit.core.jsonlines import parse_line
from toolkit.core.quarantine import Quarantined, Reason
from toolkit.iceberg.commit import BATCH_ID_PROPERTY, batch_id_of

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from toolkit.core.planner import Plan
    from toolkit.iceberg.commit import TableState
    from toolkit.pipeline import IngestReport, Preview

__all__ = [
    "ARROW_SCHEMA",
    "PENDING_REPLAY_PROPERTY",
    "QUARANTINE_SCHEMA",
    "QUARANTINE_SUFFIX",
    "UNREPLAYABLE",
    "NotReplayableError",
    "Quarantine",
    "QuarantineGroup",
    "QuarantinedRow",
    "ReplayReport",
    "UnknownIdsError",
    "append_quarantined",
    "discard",
    "ensure_quarantine_table",
    "quarantine",
    "quarantine_row_id",
    "quarantine_rows",
    "quarantine_table_id",
    "quarantine_tuples",
    "replay",
    "replay_batch_id",
    "replay_preview",
    "replay_selection",
]

QUARANTINE_SUFFIX: Final = "__quarantine"

#: Reasons whose rows cannot go back through ``ingest``: a line that never parsed, and
#: JSON that is not an object (ingest takes records). They stay until :func:`discard`.
UNREPLAYABLE: Final[frozenset[str]] = frozenset({"malformed", "not-a-record"})

#: The quarantine table's property naming a replay under way (see :func:`replay`).
PENDING_REPLAY_PROPERTY: Final = "toolkit.replay.pending"
#: The snapshot summary property of a delete made by a replay: the replay's batch id.
REPLAYED_BY_PROPERTY: Final = "toolkit.replayed-by"
#: The snapshot summary property of a delete made by :func:`discard`.
DISCARDED_PROPERTY: Final = "toolkit.discarded"

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
        raw = item.raw
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


def _load(catalog: Catalog, identifier: str) -> Table | None:
    try:
        return catalog.load_table(identifier)
    except NoSuchTableError:
        return None


def ensure_quarantine_table(catalog: Catalog, table_id: str) -> Table:
    """The quarantine table of ``table_id``, created (with its namespace) if missing."""
    qid = quarantine_table_id(table_id)
    existing = _load(catalog, qid)
    if existing is not None:
        return existing
    with contextlib.suppress(NamespaceAlreadyExistsError):
        catalog.create_namespace(qid.rsplit(".", 1)[0])
    try:
        return catalog.create_table(qid, schema=QUARANTINE_SCHEMA)
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
    return {b for b in map(batch_id_of, table.snapshots()) if b is not None}


def append_quarantined(
    catalog: Catalog,
    table_id: str,
    items: Sequence[Quarantined],
    batch_id: str,
    *,
    at: dt.datetime | None = None,
) -> int:
    """Append ``items`` to ``table_id``'s quarantine table (created on first use) in one
    commit whose snapshot summary holds ``batch_id``; returns the rows appended.

    A batch id already in the quarantine table appends nothing (0), like ``ingest`` on the
    target, so a batch that is run again is not quarantined twice. No items, no commit.
    """
    if not items:
        return 0
    table = ensure_quarantine_table(catalog, table_id)
    if batch_id in _batch_ids(table):
        return 0
    table.append(
        quarantine_rows(items, batch_id, at=at),
        snapshot_properties={BATCH_ID_PROPERTY: batch_id},
    )
    return len(items)


# --- reading ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class QuarantinedRow:
    """One row of a quarantine table: a :class:`~toolkit.core.quarantine.Quarantined` with
    its row ``id``, the ``batch_id`` that set it aside and when."""

    id: str
    raw: str
    reason: str
    field: str | None
    observed: str | None
    table_type: str | None
    detail: str
    batch_id: str
    position: int
    quarantined_at: dt.datetime | None

    @property
    def replayable(self) -> bool:
        """Whether :func:`replay` can send it back through ``ingest`` (a JSON object)."""
        return self.reason not in UNREPLAYABLE

    @property
    def record(self) -> Any:
        """The record, parsed with every value exact; a line that never parsed is its text."""
        if self.reason == "malformed":
            return self.raw
        return parse_line(self.raw)

    def as_quarantined(self) -> Quarantined:
        return Quarantined(
            self.record, cast(Reason, self.reason), self.field, self.observed,
            self.table_type, self.batch_id, self.detail,
        )


GroupKey = tuple[str, str | None, str | None, str | None]


@dataclass(frozen=True)
class QuarantineGroup:
    """Rows that share a reason, a field, an observed type and a table type."""

    reason: str
    field: str | None
    observed: str | None
    table_type: str | None
    rows: tuple[QuarantinedRow, ...]

    @property
    def count(self) -> int:
        return len(self.rows)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(r.id for r in self.rows)

    @property
    def replayable(self) -> bool:
        return self.reason not in UNREPLAYABLE

    @property
    def label(self) -> str:
        """``incompatible: flag (string into boolean)``, in plain words."""
        return group_label(self.reason, self.field, self.observed, self.table_type)


def group_label(
    reason: str, field: str | None, observed: str | None, table_type: str | None
) -> str:
    """A group of quarantined records in plain words.

    >>> group_label("incompatible", "flag", "string", "boolean")
    'incompatible: flag (string into boolean)'
    """
    text = reason
    if field is not None:
        text += f": {field}"
    if observed is not None or table_type is not None:
        text += f" ({observed or '?'} into {table_type or '?'})"
    return text


def _key(r: QuarantinedRow) -> tuple[str, str, str, str]:
    return (r.reason, r.field or "", r.observed or "", r.table_type or "")


@dataclass(frozen=True)
class Quarantine:
    """What a target table's quarantine holds, read once.

    ``exists`` is False when nothing was ever quarantined for the table (no quarantine
    table); ``rows`` are in the order they were set aside.
    """

    table: str
    quarantine_table: str
    exists: bool
    rows: tuple[QuarantinedRow, ...]

    def __len__(self) -> int:
        return len(self.rows)

    def __bool__(self) -> bool:
        return bool(self.rows)

    @property
    def empty(self) -> bool:
        return not self.rows

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(r.id for r in self.rows)

    def counts(self) -> dict[str, int]:
        """Rows per reason, most frequent first."""
        return dict(Counter(r.reason for r in self.rows).most_common())

    def by_reason(self) -> dict[str, tuple[QuarantinedRow, ...]]:
        """Rows grouped by reason, most frequent reason first."""
        return {
            reason: tuple(r for r in self.rows if r.reason == reason) for reason in self.counts()
        }

    def groups(self) -> tuple[QuarantineGroup, ...]:
        """Rows grouped by reason, field, observed type and table type, largest first."""
        grouped: dict[tuple[str, str, str, str], list[QuarantinedRow]] = {}
        for r in self.rows:
            grouped.setdefault(_key(r), []).append(r)
        ordered = sorted(grouped.values(), key=lambda rs: (-len(rs), _key(rs[0])))
        return tuple(
            QuarantineGroup(rs[0].reason, rs[0].field, rs[0].observed, rs[0].table_type, tuple(rs))
            for rs in ordered
        )

    def select(
        self,
        *,
        ids: Iterable[str] | None = None,
        reason: str | None = None,
        field: str | None = None,
        observed: str | None = None,
    ) -> Quarantine:
        """The rows matching every criterion given; unknown ``ids`` raise
        :class:`UnknownIdsError`."""
        rows = self.rows
        if ids is not None:
            wanted = set(ids)
            missing = wanted - {r.id for r in rows}
            if missing:
                raise UnknownIdsError(self.quarantine_table, missing)
            rows = tuple(r for r in rows if r.id in wanted)
        if reason is not None:
            rows = tuple(r for r in rows if r.reason == reason)
        if field is not None:
            rows = tuple(r for r in rows if r.field == field)
        if observed is not None:
            rows = tuple(r for r in rows if r.observed == observed)
        return Quarantine(self.table, self.quarantine_table, self.exists, rows)

    def __str__(self) -> str:
        if not self.exists:
            return f"{self.table}: no quarantine table; no record was ever quarantined"
        if not self.rows:
            return f"{self.quarantine_table}: empty; nothing is quarantined"
        lines = [f"{self.quarantine_table}: {len(self.rows)} record(s)"]
        for g in self.groups():
            note = "" if g.replayable else "  (cannot be replayed; discard(ids) removes them)"
            lines.append(f"  {g.count:>6}  {g.label}{note}")
        return "\n".join(lines)


class UnknownIdsError(KeyError):
    """Ids that are not (or no longer) in the quarantine table."""

    def __init__(self, table: str, ids: Iterable[str]) -> None:
        self.table, self.ids = table, tuple(sorted(ids))
        shown = ", ".join(self.ids[:5]) + (" ..." if len(self.ids) > 5 else "")
        super().__init__(f"{table}: {len(self.ids)} id(s) not in the quarantine: {shown}")

    def __str__(self) -> str:
        return str(self.args[0])


class NotReplayableError(ValueError):
    """Chosen rows that cannot go back through ingest (a malformed line, not a record)."""

    def __init__(self, table: str, rows: Sequence[QuarantinedRow]) -> None:
        self.table, self.ids = table, tuple(r.id for r in rows)
        reasons = ", ".join(sorted({r.reason for r in rows}))
        sample = rows[0].raw if rows else ""
        super().__init__(
            f"{table}: {len(rows)} chosen row(s) cannot be replayed ({reasons}: e.g. "
            f"{sample[:80]!r}); they are not JSON objects. They stay in the quarantine; "
            f"discard(catalog, table, ids) removes them for good"
        )


def _row(d: dict[str, Any]) -> QuarantinedRow:
    return QuarantinedRow(
        d["id"], d["raw"], d["reason"], d["field"], d["observed"], d["table_type"],
        d["detail"] or "", d["batch_id"], int(d["position"] or 0), d["quarantined_at"],
    )


def _read_rows(table: Table) -> tuple[QuarantinedRow, ...]:
    rows = [_row(d) for d in table.scan().to_arrow().to_pylist()]
    epoch = dt.datetime.min.replace(tzinfo=dt.UTC)
    rows.sort(key=lambda r: (r.quarantined_at or epoch, r.batch_id, r.position, r.id))
    return tuple(rows)


def quarantine(catalog: Catalog, table_id: str) -> Quarantine:
    """What ``table_id``'s quarantine holds: rows, groups, counts (see :class:`Quarantine`).

    A table that never quarantined anything gives an empty result (``exists`` False).
    """
    qid = quarantine_table_id(table_id)
    table = _load(catalog, qid)
    if table is None:
        return Quarantine(table_id, qid, False, ())
    return Quarantine(table_id, qid, True, _read_rows(table))


# --- replay and discard ------------------------------------------------------------------------


def replay_batch_id(ids: Iterable[str]) -> str:
    """The batch id of a replay of ``ids``: the same rows always replay under the same
    batch id, so ``ingest`` writes them once even if the replay is run again."""
    digest = hashlib.sha256("\n".join(sorted(set(ids))).encode())
    return f"replay-{digest.hexdigest()[:24]}"


@dataclass(frozen=True)
class ReplayReport:
    """What :func:`replay` did."""

    table: str
    batch_id: str | None
    replayed: tuple[str, ...]
    """Ids sent back through ingest and removed from the quarantine."""
    requarantined: int
    """Of those, records quarantined again (under ``batch_id``) since they still do not fit."""
    not_replayable: tuple[str, ...]
    """Ids left in the quarantine because they cannot be replayed (malformed, not a record)."""
    ingest: IngestReport | None = None
    resumed: tuple[str, ...] = ()
    """Ids of an interrupted earlier replay, finished first."""
    already: bool = False
    """The very same ids were replayed before (as ``batch_id``): nothing was done again."""

    @property
    def written(self) -> int:
        return 0 if self.ingest is None else self.ingest.rows_written

    def __str__(self) -> str:
        if self.already:
            text = (
                f"{self.table}: these records were already replayed as batch {self.batch_id}; "
                "nothing was written again"
            )
        elif not self.replayed and not self.resumed:
            text = f"{self.table}: nothing to replay"
        else:
            text = (
                f"{self.table}: replayed {len(self.replayed)} record(s) as batch {self.batch_id}: "
                f"{self.written} row(s) written, {self.requarantined} quarantined again"
            )
            if self.resumed:
                text += f"; finished an interrupted replay of {len(self.resumed)} record(s)"
        if self.not_replayable:
            text += (
                f"; {len(self.not_replayable)} record(s) cannot be replayed (malformed or not "
                "a JSON object) and stay in the quarantine"
            )
        return text


def _pending(table: Table) -> tuple[str, tuple[str, ...]] | None:
    text = table.properties.get(PENDING_REPLAY_PROPERTY)
    if not text:
        return None
    data = json.loads(text)
    return str(data["batch_id"]), tuple(data["ids"])


def _replayed_batches(table: Table) -> set[str]:
    """The batch ids of the replays whose rows left ``table`` (a quarantine table)."""
    return {
        s.summary.additional_properties[REPLAYED_BY_PROPERTY]
        for s in table.snapshots()
        if s.summary is not None and REPLAYED_BY_PROPERTY in s.summary.additional_properties
    }


def _target_batches(catalog: Catalog, table_id: str) -> set[str]:
    target = _load(catalog, table_id)
    return set() if target is None else _batch_ids(target)


def _settle(qtable: Table, reached_target: bool) -> tuple[str, ...]:
    """End the pending replay marked on ``qtable``, crash-safe either way.

    If its batch reached the target, the replayed rows are deleted (the records are in the
    target, or were quarantined again under the replay's batch id). If not, nothing of it
    was written to the target: the originals stay, and any copy the replay had already
    quarantined again is deleted, so a later replay neither loses nor doubles a record.
    """
    pending = _pending(qtable)
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


def replay_selection(
    q: Quarantine, ids: Iterable[str] | None = None, reason: str | None = None
) -> tuple[tuple[QuarantinedRow, ...], tuple[QuarantinedRow, ...]]:
    """(rows to replay, rows that cannot be) for a selection: explicit ``ids`` must exist
    and be replayable; without ids, every row (of ``reason``) that can be replayed."""
    chosen = q.select(ids=ids, reason=reason).rows
    unfit = tuple(r for r in chosen if not r.replayable)
    if ids is not None and unfit:
        raise NotReplayableError(q.quarantine_table, unfit)
    return tuple(r for r in chosen if r.replayable), unfit


def replay_preview(
    catalog: Catalog,
    table_id: str,
    *,
    ids: Iterable[str] | None = None,
    reason: str | None = None,
    **options: Any,
) -> Preview:
    """The plan a replay of the selection would need, made without Spark and without
    changing anything: pass its ``plan`` and ``state`` to :func:`replay` as ``approved``
    and ``expected`` to replay under exactly that plan."""
    from toolkit.pipeline import plan_preview

    rows, _ = replay_selection(quarantine(catalog, table_id), ids, reason)
    return plan_preview([r.record for r in rows], table_id, catalog, **options)


def replay(
    catalog: Catalog,
    table_id: str,
    spark: SparkSession,
    *,
    ids: Iterable[str] | None = None,
    reason: str | None = None,
    approved: Plan | None = None,
    expected: TableState | None = None,
    **ingest_options: Any,
) -> ReplayReport:
    """Send quarantined records back through :func:`toolkit.pipeline.ingest` into
    ``table_id``, then remove them from the quarantine.

    Chooses every replayable row, the rows ``ids``, or those of one ``reason``. The records
    are parsed from their raw text with every value exact and ingested as one batch whose
    id derives from the chosen ids (:func:`replay_batch_id`): running the same replay
    again writes nothing twice. Records that still do not fit are quarantined again by
    ingest under that batch id, so nothing is lost. ``approved`` / ``expected`` (from
    :func:`replay_preview`) hold the replay to a plan a user approved, as in ``ingest``;
    ``ingest_options`` (``policy=``, ``on_incompatible=``...) are passed on.

    Malformed lines and JSON that is not an object cannot be replayed: chosen by id they
    raise :class:`NotReplayableError`; otherwise they are left in place and listed in the
    report. :func:`discard` removes them for good.

    Crash safety: before ingesting, the quarantine table records the replay under way
    (a table property); the next replay first settles it, from whether its batch reached
    the target, so an interrupted replay is neither lost nor written twice. Replaying ids
    that were already replayed together returns a report saying so (``already``).
    """
    from toolkit.pipeline import ingest

    qtable = _load(catalog, quarantine_table_id(table_id))
    if qtable is None:
        return ReplayReport(table_id, None, (), 0, ())
    wanted = None if ids is None else tuple(dict.fromkeys(ids))
    resumed: tuple[str, ...] = ()
    pending = _pending(qtable)
    if pending is not None:
        resumed = _settle(qtable, pending[0] in _target_batches(catalog, table_id))
    if wanted is not None:
        if replay_batch_id(wanted) in _replayed_batches(qtable):  # this very replay: done
            return ReplayReport(
                table_id, replay_batch_id(wanted), (), 0, (), resumed=resumed, already=True
            )
        wanted = tuple(i for i in wanted if i not in set(resumed))
        if not wanted:
            return ReplayReport(table_id, None, (), 0, (), resumed=resumed)

    q = Quarantine(table_id, quarantine_table_id(table_id), True, _read_rows(qtable))
    rows, unfit = replay_selection(q, wanted, reason)
    kept = tuple(r.id for r in unfit)
    if not rows:
        return ReplayReport(table_id, None, (), 0, kept, resumed=resumed)

    chosen = tuple(r.id for r in rows)
    batch_id = replay_batch_id(chosen)
    records = [r.record for r in rows]
    qtable.transaction().set_properties(
        {PENDING_REPLAY_PROPERTY: json.dumps({"batch_id": batch_id, "ids": list(chosen)})}
    ).commit_transaction()
    try:
        report = ingest(
            records, table_id, catalog, spark, batch_id=batch_id,
            approved=approved, expected=expected, **ingest_options,
        )
    except BaseException:
        qtable.refresh()
        _settle(qtable, batch_id in _target_batches(catalog, table_id))
        raise
    qtable.refresh()
    _settle(qtable, reached_target=True)
    again = sum(1 for r in _read_rows(qtable) if r.batch_id == batch_id)
    return ReplayReport(table_id, batch_id, chosen, again, kept, report, resumed)


def discard(catalog: Catalog, table_id: str, ids: Iterable[str]) -> int:
    """Remove the rows ``ids`` from ``table_id``'s quarantine for good (e.g. malformed
    lines nobody can replay); returns how many. Every id must be there
    (:class:`UnknownIdsError` otherwise); nothing is discarded without being named."""
    wanted = sorted(set(ids))
    if not wanted:
        return 0
    qid = quarantine_table_id(table_id)
    qtable = _load(catalog, qid)
    if qtable is None:
        raise UnknownIdsError(qid, wanted)
    present = {r.id for r in _read_rows(qtable)}
    missing = set(wanted) - present
    if missing:
        raise UnknownIdsError(qid, missing)
    qtable.delete(_id_in(wanted), snapshot_properties={DISCARDED_PROPERTY: str(len(wanted))})
    return len(wanted)
