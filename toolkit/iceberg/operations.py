"""Commit a plan of Iceberg evolution operations (RULES 6) to a real table, atomically.

A plan (:class:`~toolkit.core.evolution.plans.Evolution`) is staged in one PyIceberg
transaction: one schema update per operation, in order (so each sees the previous one,
exactly as the preview did), partition spec and sort order updates, the lineage property,
and for a widening Iceberg cannot do in place, an overwrite snapshot replacing every data
file with the data rewritten in the new type. All of it is one metadata commit: readers see
the table before or after, never half of it. A plan made against another state of the
table is refused (:class:`~toolkit.iceberg.commit.StalePlanError`).

A rewrite keeps the column's name and place but gives it a new field ID, like a drop and
an add: older snapshots keep reading the old values through the old field ID (time travel),
and no reader ever reads an old data file's values as the new type.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Final, overload

import pyarrow as pa
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import CommitFailedException, NotInstalledError, ValidationError
from pyiceberg.io.pyarrow import _dataframe_to_data_files, schema_to_pyarrow
from pyiceberg.manifest import FileFormat
from pyiceberg.schema import Schema
from pyiceberg.table import Table, Transaction
from pyiceberg.table.snapshots import Snapshot
from pyiceberg.table.sorting import NullOrder
from pyiceberg.table.update import (
    AssertCurrentSchemaId,
    AssertDefaultSortOrderId,
    AssertDefaultSpecId,
    AssertRefSnapshotId,
)
from pyiceberg.transforms import parse_transform
from pyiceberg.types import (
    IcebergType,
    ListType,
    MapType,
    NestedField,
    PrimitiveType,
    StructType,
)

from toolkit.core.evolution.batch_plan import Plan
from toolkit.core.evolution.destruction import Destruction
from toolkit.core.evolution.layout import (
    PartitionField,
    Path,
    Position,
    SortField,
    TableLayout,
    dotted,
    field_at,
)
from toolkit.core.evolution.lineage import (
    LineageEntry,
    evolution_of_plan,
    lineage_properties,
    read_lineage,
    undoes,
)
from toolkit.core.evolution.operation_base import WideningLike
from toolkit.core.evolution.operations import Operation, SortKey, Widening
from toolkit.core.evolution.plans import Evolution, plan_evolution
from toolkit.core.evolution.state import TableState
from toolkit.core.values.types import ColumnType
from toolkit.core.values.widening import retype_value
from toolkit.errors import (
    DataLossError,
    EqualityDeletesError,
    FileFormatError,
    OperationError,
    RewriteLossError,
    RewriteNotApprovedError,
    StalePlanError,
    ToolkitError,
    WriteFormatError,
)
from toolkit.iceberg.catalog import ViewCachingTransaction
from toolkit.iceberg.commit import check_planned_schema, commit_plan
from toolkit.iceberg.destruction import destruction_of, format_names
from toolkit.iceberg.folds import bounded_updates, with_folded
from toolkit.iceberg.name_mapping import mapping_properties
from toolkit.iceberg.schema import from_iceberg, identifier_ids, type_to_iceberg

#: the table property naming the format new data files are written in (Iceberg's)
WRITE_FORMAT: Final = "write.format.default"
#: snapshot summary property naming the lineage entry a rewrite belongs to
REWRITE_PROPERTY: Final = "toolkit.rewrite-of"


def layout_of(table: Table) -> TableLayout:
    """The table's schema, partition spec and sort order in the core's model."""
    meta = table.metadata
    return TableLayout(
        from_iceberg(table.schema()),
        tuple(PartitionField(f.source_id, str(f.transform), f.name) for f in table.spec().fields),
        tuple(
            SortField(f.source_id, str(f.transform), f.direction.value, f.null_order.value)
            for f in table.sort_order().fields
        ),
        meta.last_column_id,
        meta.format_version,
        identifier_ids(table.schema()),
        has_rows=_has_rows(table),
    )


def _has_rows(table: Table) -> bool:
    """Whether the table's current snapshot may hold rows (a required field can be added
    only where none does)."""
    snap = table.current_snapshot()
    if snap is None:
        return False
    summary = snap.summary
    records = None if summary is None else summary.get("total-records")
    return records is None or int(records) > 0


def rewrite_cost(table: Table) -> tuple[int, int]:
    """Rows and bytes of data files a rewrite of ``table`` touches (its whole current
    snapshot), from the snapshot summary; no data file is read."""
    snap = table.current_snapshot()
    if snap is None or snap.summary is None:
        return 0, 0
    summary = snap.summary
    return int(summary.get("total-records") or 0), int(summary.get("total-files-size") or 0)


@dataclass(frozen=True)
class EvolutionPreview:
    """A plan checked against a table, with the state it was made against. Approve it by
    passing ``plan`` and ``state`` to :func:`evolve`."""

    table: str
    plan: Evolution
    state: TableState
    destruction: Destruction = Destruction()
    """What committing the plan makes unreadable from the table (the columns it drops
    and the values they hold); committing it takes ``drop_data=True`` when
    ``destruction.needs_yes``."""

    def __str__(self) -> str:
        text = f"table {self.table}\n{self.plan}\n\nafter:\n{self.plan.after}"
        if self.destruction:
            text += f"\n\nthis plan {self.destruction}"
        return text


def preview_evolution(
    catalog: Catalog,
    table: str,
    operations: Iterable[Operation],
    *,
    decided_by: str = "user",
    batch: str | None = None,
    reason: str | None = None,
) -> EvolutionPreview:
    """Plan ``operations`` against ``table`` as it is now, changing nothing: the schema
    after, which widenings rewrite data and the rows and bytes they touch. Fields named by
    ID are looked up in the table now; the plan names them by path and ID."""
    tbl = catalog.load_table(table)
    plan = _with_costs(
        plan_evolution(
            layout_of(tbl),
            operations,
            decided_by=decided_by,
            batch=batch,
            reason=reason,
            table=table,
        ),
        tbl,
    )
    return EvolutionPreview(table, plan, TableState.of(tbl), destruction_of(tbl, plan))


def check_destruction(
    table: Table, name: str, plan: Evolution, drop_data: bool
) -> Destruction:
    """What ``plan`` destroys on ``table`` (:mod:`toolkit.core.evolution.destruction`); refused with
    :class:`DataLossError` when it drops stored values and ``drop_data`` is not set."""
    destruction = destruction_of(table, plan)
    if destruction.needs_yes and not drop_data:
        undone = undoes(plan)
        what = "this plan" if undone is None else f"undoing lineage entry {undone}"
        raise DataLossError(name, what, destruction)
    return destruction


def _with_costs(plan: Evolution, table: Table) -> Evolution:
    if not plan.rewrites:
        return plan
    rows, size = rewrite_cost(table)
    ops = tuple(
        op.with_cost(rows, size) if isinstance(op, Widening) and op.rewrite else op
        for op in plan.operations
    )
    return replace(plan, operations=ops)


@overload
def evolve(
    catalog: Catalog,
    table: str | Table,
    plan: Plan,
    *,
    expected: TableState | None = None,
    decided_by: str = "user",
    batch: str | None = None,
    reason: str | None = None,
    drop_data: bool = False,
) -> LineageEntry | None: ...


@overload
def evolve(
    catalog: Catalog,
    table: str | Table,
    plan: Evolution | Iterable[Operation],
    *,
    expected: TableState | None = None,
    decided_by: str = "user",
    batch: str | None = None,
    reason: str | None = None,
    drop_data: bool = False,
) -> LineageEntry: ...


def evolve(
    catalog: Catalog,
    table: str | Table,
    plan: Plan | Evolution | Iterable[Operation],
    *,
    expected: TableState | None = None,
    decided_by: str = "user",
    batch: str | None = None,
    reason: str | None = None,
    drop_data: bool = False,
) -> LineageEntry | None:
    """Commit a plan to ``table`` (a name, or a loaded table) in one atomic commit and log
    it; returns the log entry. The one entry for every kind of plan (RULES 6).

    ``plan`` is a previewed :class:`Evolution` (``preview.plan``: committing it approves
    its rewrites) or a list of operations (a widening that rewrites data must then say
    ``rewrite=True``). With ``expected`` (``preview.state``), a table that moved since is
    refused with :class:`StalePlanError`; a previewed plan is always checked against the
    table's current schema, spec and sort order. An operation that cannot apply raises
    before anything is committed.

    A plan that drops columns holding values (they would no longer be readable from the
    table) is refused with :class:`~toolkit.errors.DataLossError`, naming the columns and
    counting their values, unless ``drop_data=True``; dropping columns that hold no values
    needs no such yes (``preview_evolution(...).destruction`` says what a plan destroys).

    A table whose data files are ORC or Avro (``write.format.default``, set by Spark, Flink
    or Trino users), which PyIceberg cannot write (nor read, for Avro), has its rows
    rewritten in its own format, and a drop's values counted, by the process's Spark
    session that sees ``catalog`` under its name (``toolkit.spark_session(catalog)``; the
    one ``ingest`` is given). Without one, such a rewrite is refused with
    :class:`~toolkit.errors.FileFormatError`, and a drop's values in Avro files are said to
    be uncounted.

    ``plan`` may also be a policy's :class:`~toolkit.core.evolution.batch_plan.Plan`
    (RULES 3 and 5),
    logged as decided by its rule (``decided_by`` and ``reason`` are the rule's; ``batch``
    defaults to the plan's). A schema-only one (columns added, widenings in place, columns
    made optional) takes the fast path, :func:`~toolkit.iceberg.commit.commit_plan`: one
    catalog commit whose schema is ``plan.after`` itself, refused through the catalog's
    requirements when the table moved since ``expected`` (default: the table as loaded).
    One with approved rewrites is staged in one transaction like any other plan. Returns
    None when the plan changes nothing (nothing is logged).
    """
    if isinstance(plan, Plan):
        return _evolve_plan(catalog, table, plan, expected, batch)
    tbl = catalog.load_table(table) if isinstance(table, str) else table
    table = table if isinstance(table, str) else ".".join(tbl.name())
    tbl.refresh()
    now = TableState.of(tbl)
    if expected is not None and now != expected:
        raise StalePlanError(table, expected, now)
    layout = layout_of(tbl)
    if isinstance(plan, Evolution):
        if plan.before != layout:
            raise StalePlanError(
                table, expected or now, now, " (its schema, partition spec or sort order differ)"
            )
        wanted, decided_by, batch, reason = (
            plan.operations,
            plan.decided_by,
            plan.batch,
            plan.reason,
        )
        reasons: Sequence[str | None] = plan.reasons
    else:
        wanted, reasons = tuple(plan), ()
    planned = _with_costs(
        plan_evolution(
            layout,
            wanted,
            decided_by=decided_by,
            batch=batch,
            reason=reason,
            reasons=reasons,
            table=table,
        ),
        tbl,
    )
    # a rewrite runs only where the operation asking for it approved it (rewrite=True); one
    # that a union by name expands to was approved by nobody
    expands = len(planned.operations) != len(wanted)
    approved = {(w.path, w.field_id) for w in wanted if isinstance(w, Widening) and w.rewrite}
    for i, (op, before) in enumerate(zip(planned.operations, planned.layouts, strict=False)):
        if isinstance(op, Widening) and op.rewrite:
            asked = wanted[i] if not expands else None
            ok = (
                isinstance(asked, Widening) and asked.rewrite
                if not expands
                else any(op.path == p or (i_d is not None and op.field_id == i_d)
                         for p, i_d in approved)
            )  # fmt: skip
            if not ok:
                _, old = op.resolve(before)
                raise RewriteNotApprovedError(table, op, old)
    check_destruction(tbl, table, planned, drop_data)
    return _commit(tbl, table, planned, now)


def _evolve_plan(
    catalog: Catalog,
    table: str | Table,
    plan: Plan,
    expected: TableState | None,
    batch: str | None,
) -> LineageEntry | None:
    """:func:`evolve` for a policy's plan: the fast schema commit, or one transaction."""
    tbl = catalog.load_table(table) if isinstance(table, str) else table
    name = ".".join(tbl.name())
    state = TableState.of(tbl) if expected is None else expected
    if not plan.rewrites:
        # the fast path ingest depends on (benchmarks): one commit_table call, no reload
        commit_plan(tbl, plan, state, batch_id=batch)
        if not plan.changed:
            return None  # nothing committed, nothing logged
        # the entry logged with the schema this commit added
        schema_id = tbl.metadata.current_schema_id
        logged = read_lineage(with_folded(tbl, "lineage"))
        return [e for e in logged if e.schema_id == schema_id][-1]
    tbl.refresh()
    now = TableState.of(tbl)
    if now != state:
        raise StalePlanError(name, state, now)
    check_planned_schema(tbl, plan)
    # RULES 5: the approved rewrites run after the plan's other changes, in the same commit
    evolution = evolution_of_plan(plan, batch, before=layout_of(tbl), rewrites=True)
    return _commit(tbl, name, _with_costs(evolution, tbl), now)


def _commit(tbl: Table, name: str, plan: Evolution, state: TableState) -> LineageEntry:
    meta = tbl.metadata
    old_schema = tbl.schema()
    txn = ViewCachingTransaction(tbl)  # a dozen looks at the staged metadata, one copy
    # The plan was made against exactly this metadata: any concurrent commit (schema,
    # data, spec, sort order) fails ours, so the lineage numbering cannot collide either.
    snap = tbl.current_snapshot()
    # (PyIceberg's models take these field names; mypy sees only their JSON aliases)
    requirements = (
        AssertCurrentSchemaId(current_schema_id=meta.current_schema_id),  # type: ignore[call-arg]
        AssertRefSnapshotId(  # type: ignore[call-arg]
            snapshot_id=None if snap is None else snap.snapshot_id, ref="main"
        ),
        AssertDefaultSpecId(default_spec_id=meta.default_spec_id),  # type: ignore[call-arg]
        AssertDefaultSortOrderId(  # type: ignore[call-arg]
            default_sort_order_id=meta.default_sort_order_id
        ),
    )
    txn._stage((), requirements)  # PyIceberg has no public way to add a requirement
    rewritten: dict[int, tuple[int, str, str]] = {}  # new field ID -> (old ID, old, new type)
    for i, (op, before, after) in enumerate(
        zip(plan.operations, plan.layouts, plan.layouts[1:], strict=False)
    ):
        try:
            _stage(txn, op, before, after, rewritten)
        except (ValueError, TypeError, KeyError, ValidationError) as exc:
            if isinstance(exc, ToolkitError):
                raise
            # the core checked the operation; what PyIceberg still refuses is said in its
            # words, as a ToolkitError naming the operation, before anything is committed
            raise OperationError(
                f"operation {i + 1} ({op.name})", f"Iceberg refused it: {exc}"
            ) from exc
    entry_props = lineage_properties(
        plan, tbl.properties, schema_id=txn.table_metadata.current_schema_id
    )
    sets, folded = bounded_updates(tbl, entry_props)  # the log stays bounded (folding)
    # the mapping for files without field IDs, as the table had it before PyIceberg's
    # update_schema moved names to new fields (toolkit.iceberg.name_mapping)
    txn.set_properties({**sets, **mapping_properties(tbl.metadata, txn.table_metadata.schema())})
    if folded:
        txn.remove_properties(*folded)
    try:
        if rewritten:
            seq = next(iter(entry_props)).rsplit(".", 1)[-1]
            _stage_rewrite(tbl, txn, old_schema, rewritten, seq)
        txn.commit_transaction()
    except CommitFailedException as exc:
        tbl.refresh()
        raise StalePlanError(name, state, TableState.of(tbl), f" ({exc})") from exc
    except (ValueError, TypeError, ValidationError) as exc:
        if isinstance(exc, ToolkitError):
            raise
        raise OperationError(f"the plan on {name}", f"nothing was applied: {exc}") from exc
    tbl.refresh()
    # the entry as committed (in the window, or folded at once when too big for it); only
    # it is read back, not the whole log
    logged = read_lineage({key: text for key, text in with_folded(tbl, "lineage").items()
                           if key in entry_props})
    return logged[0]


def _stage(
    txn: Transaction,
    op: Operation,
    before: TableLayout,
    after: TableLayout,
    rewritten: dict[int, tuple[int, str, str]],
) -> None:
    """Stage one operation in ``txn``; the core already checked it against ``before``. The
    operation calls the one :class:`_TransactionEditor` method that does it."""
    op.stage(_TransactionEditor(txn, rewritten), before, after)


@dataclass(frozen=True)
class _TransactionEditor:
    """The core's :class:`~toolkit.core.evolution.operations.TableEditor` over a PyIceberg
    transaction: one schema, spec or sort order update per call, so each operation sees
    the previous one (as the preview did)."""

    txn: Transaction
    rewritten: dict[int, tuple[int, str, str]]  # new field ID -> (old ID, old, new type)

    def add_column(
        self, path: Path, type: ColumnType, doc: str | None, required: bool = False
    ) -> None:
        # a required add: the core allowed it only on a table with no rows (Iceberg's
        # "incompatible change" is about rows that lack the value)
        with self.txn.update_schema(allow_incompatible_changes=required) as update:
            update.add_column(path, type_to_iceberg(type), doc=doc, required=required)

    def delete_column(self, path: Path) -> None:
        schema = self.txn.table_metadata.schema()
        gone = schema.find_field(dotted(path))
        inside = {gone.field_id, *_ids_in(gone.field_type)}
        keep = [i for i in schema.identifier_field_ids if i not in inside]
        with self.txn.update_schema() as update:
            if len(keep) != len(schema.identifier_field_ids):
                # the plan's result has valid identifier fields (the core checked it): until
                # a later step sets them, the ones left are those not dropped
                update.set_identifier_fields(*(schema.find_column_name(i) or "" for i in keep))
            update.delete_column(path)

    def update_column_doc(self, path: Path, doc: str | None) -> None:
        with self.txn.update_schema() as update:
            if doc is not None:
                update.update_column(path, doc=doc)
                return
            # PyIceberg reads doc=None as "unchanged"; Iceberg (Java updateColumnDoc) removes
            # it: staged as the field itself without its doc
            field = self.txn.table_metadata.schema().find_field(dotted(path))
            update._updates[field.field_id] = NestedField(
                field_id=field.field_id, name=field.name, field_type=field.field_type,
                required=field.required, doc=None, initial_default=field.initial_default,
                write_default=field.write_default,
            )

    def set_identifier_fields(self, paths: Sequence[Path]) -> None:
        with self.txn.update_schema() as update:
            update.set_identifier_fields(*(dotted(p) for p in paths))

    def rename_column(self, path: Path, new_name: str) -> None:
        with self.txn.update_schema() as update:
            update.rename_column(path, new_name)

    def make_column_optional(self, path: Path) -> None:
        with self.txn.update_schema() as update:
            update.make_column_optional(path)

    def move_column(self, path: Path, position: Position, anchor: Path | None) -> None:
        with self.txn.update_schema() as update:
            if anchor is None:
                update.move_first(path)
            elif position == "before":
                update.move_before(path, anchor)
            else:
                update.move_after(path, anchor)

    def widen_column(self, op: WideningLike, before: TableLayout, after: TableLayout) -> None:
        _stage_widen(self.txn, op, before, after, self.rewritten)

    def add_partition_field(self, source: Path, transform: str, name: str) -> None:
        with self.txn.update_spec() as spec:
            spec.add_field(dotted(source), transform, name)

    def remove_partition_field(self, name: str) -> None:
        with self.txn.update_spec() as spec:
            spec.remove_field(name)

    def replace_sort_order(self, keys: tuple[SortKey, ...]) -> None:
        _stage_sort(self.txn, keys)


def _ids_in(t: IcebergType) -> list[int]:
    if isinstance(t, StructType):
        return [i for f in t.fields for i in (f.field_id, *_ids_in(f.field_type))]
    if isinstance(t, ListType):
        return [t.element_id, *_ids_in(t.element_type)]
    if isinstance(t, MapType):
        return [t.key_id, t.value_id, *_ids_in(t.key_type), *_ids_in(t.value_type)]
    return []


def _stage_widen(
    txn: Transaction,
    op: WideningLike,
    before: TableLayout,
    after: TableLayout,
    rewritten: dict[int, tuple[int, str, str]],
) -> None:
    new_type = type_to_iceberg(op.to)
    assert isinstance(new_type, PrimitiveType)
    if not op.rewrite:
        if before == after:
            return  # widening to its own type: Iceberg's no-op
        with txn.update_schema() as update:
            update.update_column(op.path, field_type=new_type)
        return
    old_col, old_type = op.resolve(before)
    new_col, holder = field_at(after.schema, op.path)
    # A rewrite is a new column under the same name (drop, then add in a second update so
    # the move below finds the new field and not the dropped one), moved to the old place.
    with txn.update_schema() as update:
        update.delete_column(op.path)
    siblings = holder.fields
    index = [c.id for c in siblings].index(new_col.id)
    # Adding a required column is an "incompatible" change to PyIceberg only because old
    # files would lack it; here every row is rewritten with a value.
    with txn.update_schema(allow_incompatible_changes=new_col.required) as update:
        update.add_column(op.path, new_type, doc=new_col.doc, required=new_col.required)
        if index == 0:
            update.move_first(op.path)
        else:
            update.move_after(op.path, (*op.path[:-1], siblings[index - 1].name))
    staged = txn.table_metadata.schema().find_field(dotted(op.path))
    rewritten[staged.field_id] = (old_col.id, old_type, op.to)


def _stage_sort(txn: Transaction, keys: tuple[SortKey, ...]) -> None:
    with txn.update_sort_order() as order:
        for key in keys:
            add = order.asc if key.direction == "asc" else order.desc
            add(dotted(key.source), parse_transform(key.transform), NullOrder(key.nulls))


# --- the data rewrite ------------------------------------------------------------------------


def _has_list_of_struct(t: IcebergType, inside_list: bool = False) -> bool:
    if isinstance(t, StructType):
        return inside_list or any(_has_list_of_struct(f.field_type, inside_list) for f in t.fields)
    if isinstance(t, ListType):
        return _has_list_of_struct(t.element_type, True)
    if isinstance(t, MapType):
        return _has_list_of_struct(t.key_type, inside_list) or _has_list_of_struct(
            t.value_type, inside_list
        )
    return False


#: the formats Iceberg writes data files in, by the name ``write.format.default`` gives
_WRITTEN_FORMATS: Final = {f.name.lower(): f for f in (FileFormat.PARQUET, FileFormat.ORC,
                                                        FileFormat.AVRO)}


def _stage_rewrite(
    tbl: Table,
    txn: Transaction,
    old_schema: Schema,
    rewritten: dict[int, tuple[int, str, str]],
    seq: str,
) -> None:
    """Stage an overwrite snapshot: every current data file replaced by the same rows with
    the rewritten columns converted, written with the plan's final schema and spec."""
    from toolkit.iceberg.spark_rewrite import data_files

    snap = tbl.current_snapshot()
    old_files = [] if snap is None else data_files(tbl, snap)
    default = str(txn.table_metadata.properties.get(WRITE_FORMAT, "parquet"))
    written = _WRITTEN_FORMATS.get(default.lower())  # Iceberg reads it without case
    columns = sorted(txn.table_metadata.schema().find_column_name(i) or str(i)
                     for i in rewritten)
    what = f"the rewrite of {', '.join(columns)}"
    if written is None and old_files:
        raise WriteFormatError(".".join(tbl.name()), what, default)
    foreign = {f.file_format for f in old_files} - {FileFormat.PARQUET}
    if written is not None and written != FileFormat.PARQUET:
        foreign.add(written)
    if foreign and old_files:
        # PyIceberg writes only Parquet (and reads no Avro): Spark rewrites the rows in the
        # table's own format, or nothing is applied
        from toolkit.iceberg.spark_rewrite import rewrite_with_spark, spark_seeing

        name = ".".join(tbl.name())
        spark = spark_seeing(tbl)
        if spark is None:
            raise FileFormatError(name, what, format_names(foreign), default)
        assert snap is not None
        new_schema = txn.table_metadata.schema()
        files = rewrite_with_spark(
            tbl, txn.table_metadata, snap, spark,
            lambda data: _rebuild_table(data, old_schema, new_schema, rewritten),
        )
        with txn.update_snapshot(snapshot_properties={REWRITE_PROPERTY: seq}).overwrite() as ow:
            for f in old_files:
                ow.delete_data_file(f)
            for f in files:
                ow.append_data_file(f)
        return
    if _has_list_of_struct(old_schema.as_struct()):
        # apache/iceberg-python#3833: PyIceberg reads a null list<struct> as [], so a rewrite
        # through it would change those values; nothing is lost by refusing.
        raise ValueError(
            f"table {'.'.join(tbl.name())}: a rewrite reads and rewrites every row with "
            "PyIceberg, which turns null list<struct> values into [] (apache/iceberg-python"
            "#3833); this table has such a column, so the rewrite was refused and nothing "
            "was applied"
        )
    new_schema = txn.table_metadata.schema()
    data = None if snap is None else _live_rows(tbl, snap, new_schema, rewritten)
    props = {REWRITE_PROPERTY: seq}
    with txn.update_snapshot(snapshot_properties=props).overwrite() as overwrite:
        for f in old_files:
            overwrite.delete_data_file(f)
        if data is not None and data.num_rows:
            rebuilt = _rebuild_table(data, old_schema, new_schema, rewritten)
            try:
                for f in _dataframe_to_data_files(
                    table_metadata=txn.table_metadata,
                    df=rebuilt,
                    io=tbl.io,
                    write_uuid=overwrite.commit_uuid,
                ):
                    overwrite.append_data_file(f)
            except NotInstalledError as exc:
                raise ValueError(
                    f"table {'.'.join(tbl.name())}: the rewrite writes data with the partition "
                    f"spec {txn.table_metadata.spec()}, which PyIceberg cannot do here ({exc}); "
                    "nothing was applied"
                ) from exc


def _live_rows(
    tbl: Table, snap: Snapshot, new_schema: Schema, rewritten: dict[int, tuple[int, str, str]]
) -> pa.Table | None:
    """The rows of ``snap`` with its deletes applied: PyIceberg applies position deletes but
    not equality deletes (apache/iceberg#6568), so a table with those is read by the
    process's Spark session that sees its catalog, or the rewrite is refused."""
    from toolkit.iceberg.spark_rewrite import equality_delete_files, read_with_spark, spark_seeing

    by_key = equality_delete_files(tbl, snap)
    if not by_key:
        return tbl.scan().to_arrow()
    spark = spark_seeing(tbl)
    if spark is None:
        columns = sorted(new_schema.find_column_name(i) or str(i) for i in rewritten)
        raise EqualityDeletesError(
            ".".join(tbl.name()), f"the rewrite of {', '.join(columns)}", by_key)
    return read_with_spark(tbl, snap, spark)


def _rebuild_table(
    data: pa.Table,
    old_schema: Schema,
    new_schema: Schema,
    rewritten: dict[int, tuple[int, str, str]],
) -> pa.Table:
    """``data`` (read with ``old_schema``) laid out as ``new_schema``, matched by field ID."""
    target = schema_to_pyarrow(new_schema)
    data = data.combine_chunks()
    columns = [_whole(data.column(i)) for i in range(data.num_columns)]
    arrays = _rebuild_fields(
        columns, old_schema.fields, new_schema.fields, list(target), data.num_rows, rewritten
    )
    return pa.Table.from_arrays(arrays, schema=target)


def _whole(col: pa.ChunkedArray) -> pa.Array:
    if col.num_chunks == 1:
        return col.chunk(0)
    return pa.concat_arrays(col.chunks) if col.num_chunks else pa.array([], col.type)


def _rebuild_fields(
    old_arrays: Sequence[pa.Array],
    old_fields: Sequence[NestedField],
    new_fields: Sequence[NestedField],
    targets: Sequence[pa.Field],
    length: int,
    rewritten: dict[int, tuple[int, str, str]],
) -> list[pa.Array]:
    by_id = {f.field_id: (a, f) for a, f in zip(old_arrays, old_fields, strict=True)}
    out = []
    for new, target in zip(new_fields, targets, strict=True):
        source_id = rewritten[new.field_id][0] if new.field_id in rewritten else new.field_id
        if source_id not in by_id:
            out.append(pa.nulls(length, target.type))  # added by the plan: no value yet
            continue
        array, old = by_id[source_id]
        out.append(_rebuild(array, old.field_type, new, target.type, rewritten))
    return out


def _rebuild(
    array: pa.Array,
    old: IcebergType,
    new: NestedField,
    target: pa.DataType,
    rewritten: dict[int, tuple[int, str, str]],
) -> pa.Array:
    new_type = new.field_type
    if isinstance(old, StructType) and isinstance(new_type, StructType):
        children = [array.field(i) for i in range(len(old.fields))]
        fields = list(target)
        rebuilt = _rebuild_fields(
            children, old.fields, new_type.fields, fields, len(array), rewritten
        )
        return pa.StructArray.from_arrays(rebuilt, fields=fields, mask=array.is_null())
    if isinstance(old, ListType) and isinstance(new_type, ListType):
        values = _rebuild(array.values, old.element_type, new_type.element_field,
                          target.value_type, rewritten)  # fmt: skip
        cls = pa.LargeListArray if pa.types.is_large_list(target) else pa.ListArray
        offsets = array.offsets.cast(pa.int64() if cls is pa.LargeListArray else pa.int32())
        return cls.from_arrays(offsets, values, type=target, mask=array.is_null())
    if new.field_id in rewritten:
        # RULES 5: the core's one table of value conversions; a value it cannot convert
        # exactly raises RewriteLossError, before anything is committed
        _, old_name, new_name = rewritten[new.field_id]
        values = [retype_value(v, old_name, new_name, new.name) for v in array.to_pylist()]
        return pa.array(values, type=target)
    return array.cast(target)


__all__ = [
    "REWRITE_PROPERTY",
    "EvolutionPreview",
    "check_destruction",
    "RewriteLossError",
    "RewriteNotApprovedError",
    "evolve",
    "layout_of",
    "preview_evolution",
    "rewrite_cost",
]
