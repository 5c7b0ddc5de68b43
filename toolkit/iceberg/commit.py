"""Commit a plan's schema changes to a real Iceberg table, in one atomic commit.

RULES 6: a plan made against one state of the table is never applied to a table that
has moved on since; :class:`StalePlanError` says what changed, and the caller re-plans.

:func:`commit_plan` is the fast path of :func:`toolkit.iceberg.operations.evolve` (the one
entry that commits any plan) for a policy's schema-only plans: one catalog commit whose
schema is the plan's own, no transaction replaying the operations one by one.
"""

from __future__ import annotations

from dataclasses import replace

from pyiceberg.exceptions import CommitFailedException
from pyiceberg.schema import Schema, index_by_id
from pyiceberg.table import Table
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.refs import MAIN_BRANCH
from pyiceberg.table.update import (
    AddSchemaUpdate,
    AssertCurrentSchemaId,
    AssertLastAssignedFieldId,
    AssertRefSnapshotId,
    AssertTableUUID,
    RemovePropertiesUpdate,
    RemoveSchemasUpdate,
    SetCurrentSchemaUpdate,
    SetPropertiesUpdate,
    TableRequirement,
    TableUpdate,
)

from toolkit.core.evolution.batch_plan import Plan, max_field_id
from toolkit.core.evolution.field_operations import refuse_identifier_changes
from toolkit.core.evolution.lineage import plan_lineage_properties
from toolkit.core.evolution.state import TableState
from toolkit.core.values.naming import shared_index_names
from toolkit.core.values.types import ColumnType, ListOf, MapOf, Struct
from toolkit.core.values.widening import in_place
from toolkit.errors import OperationError, StalePlanError
from toolkit.iceberg.folds import bounded_updates
from toolkit.iceberg.name_mapping import mapping_properties
from toolkit.iceberg.schema import from_iceberg, to_iceberg


def commit_plan(
    table: Table,
    plan: Plan,
    planned: TableState,
    *,
    remove_unused_schemas: bool = True,
    batch_id: str | None = None,
) -> Table:
    """Apply ``plan`` in one schema commit: its added columns with their docs, and the
    widenings Iceberg makes in place (int to long, required to optional, ...).

    The new schema is ``plan.after`` itself, so the table gets exactly the plan's field
    IDs, names, types and docs; a schema that would not read the table's data files (a
    field dropped, or retyped in a way that needs a rewrite) is refused with a
    ``ValueError`` before anything is committed.

    Refused with :class:`StalePlanError` if the table is no longer in the ``planned``
    state: the commit carries that state as requirements (current schema ID, ``main``'s
    snapshot, last assigned field ID), which the catalog checks atomically, so another
    writer that commits first makes this commit fail, not merge.

    One exception to the plan's IDs: a table that dropped columns has assigned IDs above
    its current schema's highest; Iceberg never reuses an ID (old data files still hold
    the dropped column under it), so the plan's new IDs are shifted above the table's last
    assigned ID, as Iceberg's own ``UpdateSchema`` would number them.

    With ``remove_unused_schemas`` (the default), the same commit removes the older schemas
    that no snapshot was written with: PyIceberg parses and copies the whole metadata on
    every commit, so a table that kept every schema version would commit ever slower. Time
    travel is unaffected (each snapshot keeps its schema); what is lost is the record of
    intermediate schema versions no data was written with. The schema current before the
    commit is always kept (a writer that loaded it may still commit a snapshot with it).

    Returns ``table``, holding the committed metadata.

    >>> import tempfile
    >>> from toolkit.core.engine import Engine
    >>> from toolkit.core.values.types import Struct
    >>> from toolkit.iceberg import catalog
    >>> from toolkit.iceberg.schema import from_iceberg, to_iceberg
    >>> cat = catalog(tempfile.mkdtemp())
    >>> cat.create_namespace("db")
    >>> engine = Engine()
    >>> first = engine.plan(Struct(), engine.observe([{"size": 4}]))
    >>> table = cat.create_table("db.t", schema=to_iceberg(first.after))
    >>> plan = engine.plan(from_iceberg(table.schema()), engine.observe([{"size": 2.5}]), 1)
    >>> print(commit_plan(table, plan, TableState.of(table)).schema())
    table {
      1: size: optional long
      2: size_double: optional double (upsolver_evolved_from:size)
    }
    """
    name = ".".join(table.name())
    if TableState.of(table) != planned or not plan.changed:
        # a plan that changes nothing has no commit to carry the check: look now
        table.refresh()
        now = TableState.of(table)
        if now != planned:
            raise StalePlanError(name, planned, now)
    if not plan.changed:
        return table
    metadata = table.metadata
    check_planned_schema(table, plan)
    after = _above_assigned_ids(plan, metadata.last_column_id)
    _check_names(name, after, metadata.last_column_id)
    schema_id = max(s.schema_id for s in metadata.schemas) + 1
    # the policies never change identifier fields: the table's stay (a field they would make
    # optional is refused by the check below, as Iceberg would refuse it)
    schema = _with_identifiers(name, after, schema_id, table.schema().identifier_field_ids)
    _check_evolution(name, table.schema(), schema, metadata.format_version)
    requirements: tuple[TableRequirement, ...] = (
        AssertTableUUID(uuid=metadata.table_uuid),
        # (by the wire names: PyIceberg's models take them, and mypy sees only those)
        AssertCurrentSchemaId.model_validate({"current-schema-id": planned.schema_id}),
        AssertRefSnapshotId.model_validate(
            {"ref": MAIN_BRANCH, "snapshot-id": planned.snapshot_id}
        ),
        AssertLastAssignedFieldId.model_validate(
            {"last-assigned-field-id": metadata.last_column_id}
        ),
    )
    updates: tuple[TableUpdate, ...] = (
        AddSchemaUpdate(schema=schema),
        SetCurrentSchemaUpdate.model_validate({"schema-id": -1}),  # -1: the one just added
    )
    unused = _unused_schema_ids(metadata) if remove_unused_schemas else []
    if unused:
        updates += (RemoveSchemasUpdate.model_validate({"schema-ids": unused}),)
    # RULES 6 lineage: the plan is logged in the table by the very commit that applies it
    log = plan_lineage_properties(plan, metadata.properties, batch_id, schema_id=schema_id)
    if log:
        # ... its older entries folded into a file when the window overflows (folding)
        sets, folded = bounded_updates(table, log)
        updates += (SetPropertiesUpdate(updates=sets),)
        if folded:
            updates += (RemovePropertiesUpdate(removals=list(folded)),)
    # files without field IDs keep reading under the new schema, by the same commit
    mapping = mapping_properties(metadata, schema)
    if mapping:
        updates += (SetPropertiesUpdate(updates=mapping),)
    try:
        return commit_updates(table, requirements, updates)
    except CommitFailedException as exc:
        table.refresh()
        raise StalePlanError(name, planned, TableState.of(table), f" ({exc})") from exc


def commit_updates(
    table: Table,
    requirements: tuple[TableRequirement, ...],
    updates: tuple[TableUpdate, ...],
) -> Table:
    """One catalog commit of ``updates`` under ``requirements``; ``table`` then holds the
    committed metadata. PyIceberg's own transactions apply their updates to a deep copy of
    the whole metadata each time they look at it (several times per commit), which grows
    with every schema and snapshot a table keeps; this applies them once."""
    response = table.catalog.commit_table(table, requirements, updates)
    # the response holds the committed metadata: loading the table again would parse it
    # a second time (what Table's own commit does too)
    table.metadata = response.metadata
    table.metadata_location = response.metadata_location
    return table


def check_planned_schema(table: Table, plan: Plan) -> None:
    """Refuse (``ValueError``) a plan made against another schema than the table's."""
    if from_iceberg(table.schema()) != plan.before:
        raise ValueError(
            f"table {'.'.join(table.name())}: the plan was made against another schema than "
            f"the table's current one (schema id {table.metadata.current_schema_id}); plan again"
        )


def _with_identifiers(name: str, after: Struct, schema_id: int, ids: list[int]) -> Schema:
    """The plan's schema with the table's identifier fields, which the policies never
    change; a plan that would make one optional or retype it is refused (Iceberg's rule:
    :func:`~toolkit.core.evolution.field_operations.refuse_identifier_changes`)."""
    refuse_identifier_changes(f"the plan for {name}", after, ids)
    return to_iceberg(after, schema_id=schema_id, identifier_ids=ids)


def _above_assigned_ids(plan: Plan, last_assigned: int) -> Struct:
    """``plan.after``, its new IDs shifted above ``last_assigned`` when the planner (which
    sees only the current schema) numbered them from a lower ID."""
    highest = max_field_id(plan.before)
    shift = last_assigned - highest
    if shift <= 0:
        return plan.after

    def new_id(i: int) -> int:
        return i + shift if i > highest else i

    def shifted(t: ColumnType) -> ColumnType:
        if isinstance(t, Struct):
            fields = (replace(c, id=new_id(c.id), type=shifted(c.type)) for c in t.fields)
            return replace(t, fields=tuple(fields))
        if isinstance(t, ListOf):
            return replace(t, element_id=new_id(t.element_id), element=shifted(t.element))
        if isinstance(t, MapOf):
            return replace(
                t, key_id=new_id(t.key_id), key=shifted(t.key),
                value_id=new_id(t.value_id), value=shifted(t.value),
            )
        return t  # primitives; declared opaque types are never new

    after = shifted(plan.after)
    assert isinstance(after, Struct)
    return after


def _check_names(table: str, after: Struct, last_assigned: int) -> None:
    """Refuse a new field whose name in Iceberg's name index is another field's too (a
    column ``dot.key`` beside records ``dot`` holding ``key``): Iceberg's own schema update
    (Spark's ALTER TABLE, PyIceberg's ``add_column``) refuses to add it, and this commit,
    which sets the whole schema, must not take what they refuse (RULES 4)."""
    for shared, ids in sorted(shared_index_names(after).items()):
        if max(ids) > last_assigned:
            raise OperationError(
                f"the plan for {table}",
                f"the name {shared!r} would name {len(ids)} fields (IDs "
                f"{', '.join(map(str, sorted(ids)))}) in Iceberg's name index, which "
                "refuses to add a column under a name it already holds; nothing was "
                "committed (plan again: the planners number such names, RULES 4)",
            )


def _check_evolution(table: str, now: Schema, new: Schema, format_version: int) -> None:
    """Refuse a schema that would not read the table's data files: a field dropped, made
    required, or retyped other than by Iceberg's in-place promotions."""
    fields = index_by_id(new)
    for field_id, old in index_by_id(now).items():
        path = now.find_column_name(field_id)
        field = fields.get(field_id)
        if field is None:
            raise ValueError(f"table {table}: the plan drops field {path} (id {field_id})")
        if field.required and not old.required:
            raise ValueError(f"table {table}: the plan makes optional field {path} required")
        was, becomes = old.field_type, field.field_type
        if was == becomes or (not was.is_primitive and type(was) is type(becomes)):
            continue  # a struct's or list's own fields are checked by their IDs
        if not (
            was.is_primitive and becomes.is_primitive
            and in_place(str(was), str(becomes), format_version)
        ):
            raise ValueError(
                f"table {table}: field {path} (id {field_id}) cannot go from {was} to "
                f"{becomes} without rewriting its data"
            )


def _unused_schema_ids(metadata: TableMetadata) -> list[int]:
    """The schemas no snapshot was written with, except the current one (which is about
    to become the previous one). Every ref points at a snapshot, so this keeps theirs."""
    used = {snap.schema_id for snap in metadata.snapshots}
    if None in used:  # a snapshot that does not say its schema: keep every schema
        return []
    used.add(metadata.current_schema_id)
    return [s.schema_id for s in metadata.schemas if s.schema_id not in used]
