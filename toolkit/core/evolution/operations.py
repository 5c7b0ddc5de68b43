"""RULES 6: Iceberg's own evolution operations, as values a user (or a rule) writes into a plan.

One vocabulary of schema change: each operation is a frozen dataclass that carries its own
name (``op``, its JSON name; :data:`OPERATIONS` lists them) and JSON form (``to_json`` /
``from_json``). Schema operations preview purely with ``apply(struct) -> Struct`` and
Iceberg-like validation (errors name the field); every operation applies to a whole
:class:`~toolkit.core.evolution.layout.TableLayout` (schema, partition spec, sort order) with
``apply_to``, offers ``inverse(before)`` (the operation that undoes it, or None when no
schema change can: ``why_irreversible`` says why), names the field it acts on
(``subject_id``) and stages itself on a real table through a :class:`TableEditor` (the
adapter's side). A plan of them is a :class:`~toolkit.core.evolution.plans.Evolution`; the
policies' own changes (:mod:`toolkit.core.evolution.batch_plan`) are operations of the
same kinds.

Paths are tuples of names (keys may contain dots); the constructors also take a dotted
string for convenience, or a field ID (an ``int``) for a field that exists, looked up when
the plan is made (:mod:`toolkit.core.evolution.field_ids`).

>>> from toolkit.core.values.types import Column, Struct
>>> table = Struct((Column(1, "id", "long"), Column(2, "name", "string")))
>>> [(c.id, c.name) for c in rename("name", "full_name").apply(table).fields]
[(1, 'id'), (2, 'full_name')]
>>> rename("nope", "x").apply(table)
Traceback (most recent call last):
...
toolkit.errors.OperationError: rename nope: no field 'nope' (fields: id, name)
>>> rename("name", "n").to_json(), sorted(OPERATIONS)[:3]
({'op': 'rename', 'path': ['name'], 'to': 'n'}, ['add', 'doc', 'drop'])
>>> by_id = rename(2, "full_name")
>>> print(by_id, "|", by_id.located(TableLayout(table)))
~ rename #2 -> full_name | ~ rename name (#2) -> full_name
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, Final, Self, cast, get_args

from toolkit.core.evolution.field_ids import (
    PartitionById,
    SortById,
    field_target,
    label,
    path_of_field_id,
)
from toolkit.core.evolution.field_operations import (
    SetIdentifierFields,
    UpdateDoc,
    set_identifier_fields,
    update_doc,
)
from toolkit.core.evolution.layout import (
    KEY,
    Path,
    PathLike,
    Position,
    Slot,
    TableLayout,
    as_layout,
    canonical,
    check_free,
    dotted,
    edit_struct,
    field_at,
    find,
    find_slot,
    fresh_ids,
    id_counter,
    inside_list,
    referenced_by_layout,
    replace_column,
    replace_slot,
    struct_in,
)
from toolkit.core.evolution.operation_base import (
    Operation,
    SchemaOperation,
    TableEditor,
    path_of_json,
)
from toolkit.core.evolution.spec_operations import (
    AddPartitionField,
    RemovePartitionField,
    ReplaceSortOrder,
    SortKey,
)
from toolkit.core.values.types import (
    Column,
    ColumnType,
    Opaque,
    Struct,
    as_type,
    parse_type,
    type_to_str,
)
from toolkit.core.values.widening import in_place, matrix_name, widen
from toolkit.core.values.wording import counted
from toolkit.errors import OperationError


class Adding(SchemaOperation):
    """The add kind (JSON ``add``): a user's :class:`AddField`, or a policy's
    :class:`~toolkit.core.evolution.batch_plan.AddColumn`. Iceberg gives the field a new ID,
    so it never reads values of a dropped field, even one that had the same name (Iceberg
    correctness #1).
    """

    op: ClassVar[str] = "add"
    verb: ClassVar[str] = "add"
    if TYPE_CHECKING:  # fields of AddField, properties of AddColumn (its column has them)

        @property
        def type(self) -> ColumnType: ...

        @property
        def doc(self) -> str | None: ...

    @property
    def required(self) -> bool:
        """Whether the field is added required (a user's explicit add on a table with no
        rows; columns evolution creates are always optional, RULES 3.5)."""
        return False

    def apply_to(self, table: TableLayout) -> TableLayout:
        parent, name = canonical(table.schema, self.path[:-1], self.what), self.path[-1]
        if parent:
            holder = find(table.schema, parent, self.what).column
            if struct_in(holder.type) is None:
                raise OperationError(
                    self.what,
                    f"{dotted(parent)} is {type_to_str(holder.type)}, not a struct: "
                    "fields are added to structs",
                )
        if isinstance(self.type, Opaque):
            raise OperationError(self.what, f"type {self.type.text} cannot be added by a plan")
        if self.required and table.has_rows:
            # Iceberg (Java UpdateSchema.addRequiredColumn, PyIceberg add_column) refuses a
            # required column without allow_incompatible_changes: rows written before it have
            # no value, so every reader would fail on them. Where no row exists, it is safe.
            raise OperationError(
                self.what,
                "a required field needs a value in every existing row, and this table may "
                "have rows (Iceberg refuses it unless incompatible changes are allowed): add "
                "it optional, or add it to a table with no rows",
            )
        check_free(table.schema, parent, name, self.what)
        next_id = id_counter(table.last_column_id)
        col = Column(next_id(), name, fresh_ids(self.type, next_id), self.doc, self.required)

        def edit(s: Struct) -> Struct:
            return replace(s, fields=(*s.fields, col))

        schema = edit_struct(table.schema, parent, edit)
        return replace(table, schema=schema, last_column_id=next_id() - 1)

    def inverse(self, before: TableLayout | Struct) -> DropField:
        return DropField(self.path)

    def subject_id(self, table: TableLayout) -> None:
        return None

    def stage(self, editor: TableEditor, before: TableLayout, after: TableLayout) -> None:
        added, _ = field_at(after.schema, self.path)
        editor.add_column(self.path, added.type, self.doc, self.required)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": "add", "path": list(self.path), "type": type_to_str(self.type)}
        if self.doc is not None:
            out["doc"] = self.doc
        if self.required:
            out["required"] = True
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AddField:
        return AddField(
            path_of_json(data), parse_type(data["type"]), data.get("doc"),
            bool(data.get("required", False)),
        )


@dataclass(frozen=True)
class AddField(Adding):
    """Add a field at ``path`` (top level or inside a struct, through list elements and map
    values); optional unless ``required`` (only where the table has no rows)."""

    path: Path
    type: ColumnType
    doc: str | None = None
    required: bool = False  # a field here, a property of Adding

    def __str__(self) -> str:
        doc = f"  doc={self.doc!r}" if self.doc else ""
        flag = "required " if self.required else ""
        return f"+ add {dotted(self.path)}: {flag}{type_to_str(self.type)}{doc}"


@dataclass(frozen=True, repr=False)
class DropField(SchemaOperation):
    """Drop the field at ``path`` (or with ID ``field_id``); no other column's values change
    (Iceberg correctness #2)."""

    path: Path
    field_id: int | None = None

    op: ClassVar[str] = "drop"
    verb: ClassVar[str] = "drop"

    def _apply(self, table: TableLayout) -> TableLayout:
        found = find(table.schema, self.path, self.name)
        user = referenced_by_layout(table, found.column)
        if user is not None:
            raise OperationError(
                self.name, f"{dotted(self.path)} is used by {user}: change that first"
            )
        # the checks Iceberg makes on the final schema (at least one column, identifier
        # fields exist) are made on the plan's result: plan_evolution (docs/rules.md)
        return replace(table, schema=replace_column(table.schema, found, None))

    def inverse(self, before: TableLayout | Struct) -> None:
        return None

    @property
    def why_irreversible(self) -> str:
        return (
            f"a drop cannot be undone by a schema change: a column added again as "
            f"{dotted(self.path)} gets a new field ID and never reads the dropped values "
            "(older snapshots still hold them)"
        )

    def stage(self, editor: TableEditor, before: TableLayout, after: TableLayout) -> None:
        editor.delete_column(self.located(before).path)

    def to_json(self) -> dict[str, Any]:
        return self._json({"op": self.op, "path": list(self.path)})

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DropField:
        return cls(path_of_json(data), data.get("id"))

    def __str__(self) -> str:
        return f"- drop {label(self.path, self.field_id)}"


@dataclass(frozen=True, repr=False)
class RenameField(SchemaOperation):
    """Rename the field at ``path`` (or with ID ``field_id``) to ``new_name``; its data
    stays (tracked by field ID)."""

    path: Path
    new_name: str
    field_id: int | None = None

    op: ClassVar[str] = "rename"
    verb: ClassVar[str] = "rename"

    def _apply(self, table: TableLayout) -> TableLayout:
        found = find(table.schema, self.path, self.name)
        check_free(table.schema, found.parent, self.new_name, self.name, found.column.id)
        renamed = replace(found.column, name=self.new_name)
        return replace(table, schema=replace_column(table.schema, found, renamed))

    def inverse(self, before: TableLayout | Struct) -> RenameField:
        layout = as_layout(before)
        op = self.located(layout)
        old = find(layout.schema, op.path, op.name)
        return RenameField((*old.parent, self.new_name), old.column.name)

    def stage(self, editor: TableEditor, before: TableLayout, after: TableLayout) -> None:
        editor.rename_column(self.located(before).path, self.new_name)

    def to_json(self) -> dict[str, Any]:
        return self._json({"op": self.op, "path": list(self.path), "to": self.new_name})

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RenameField:
        return cls(path_of_json(data), data["to"], data.get("id"))

    def __str__(self) -> str:
        return f"~ rename {label(self.path, self.field_id)} -> {self.new_name}"


class Widening(SchemaOperation):
    """The widen kind (JSON ``widen``, RULES 5): a user's :class:`WidenField`, or a policy's
    :class:`~toolkit.core.evolution.batch_plan.Retype`. ``rewrite`` is False when Iceberg
    widens in place
    (int->long, float->double, wider decimal, date->timestamp on v3); any other widening of
    the matrix rewrites the data (the column keeps its name and position, gets a new field
    ID, and old snapshots keep the old values). ``rows``/``bytes`` say what a rewrite
    touches, when known.
    """

    op: ClassVar[str] = "widen"
    verb: ClassVar[str] = "widen"
    if TYPE_CHECKING:  # fields of WidenField; Retype derives ``to`` and ``rewrite``

        @property
        def to(self) -> str: ...

        @property
        def rewrite(self) -> bool: ...

        @property
        def rows(self) -> int | None: ...

        @property
        def bytes(self) -> int | None: ...

    def with_cost(self, rows: int, bytes: int) -> Widening:
        """The same widening, with the rows and bytes its rewrite touches."""
        raise NotImplementedError

    def as_widen_field(self) -> WidenField:
        """The :class:`WidenField` a user would write for this widening."""
        return WidenField(self.path, self.to, self.rewrite, self.rows, self.bytes)

    def resolve(self, table: TableLayout) -> tuple[Column, str]:
        """The column being widened (or holding the list element or map value widened) and
        its current type; checks the widening. Widening to the type it has is allowed and
        changes nothing (Iceberg treats it as a no-op)."""
        slot = self._slot(table)
        old = slot.type
        if not isinstance(old, str):
            raise OperationError(
                self.what, f"{dotted(self.path)} is {type_to_str(old)}: only primitives widen"
            )
        if old != self.to and not self.allowed(old, self.to, table.format_version):
            raise OperationError(
                self.what,
                f"{dotted(self.path)} cannot widen from {old} to {self.to} "
                "(RULES 5 matrix; booleans, dates, timestamps, decimals and complex types "
                "only widen where Iceberg promotes them in place)",
            )
        return slot.found.column, old

    def _slot(self, table: TableLayout) -> Slot:
        slot = find_slot(table.schema, self.path, self.what)
        if KEY in slot.steps:
            raise OperationError(
                self.what,
                f"{dotted(self.path)} is a map's key, which cannot change type (Iceberg: a "
                "key decides which entry a value belongs to)",
            )
        return slot

    @staticmethod
    def allowed(old: str, new: str, format_version: int = 2) -> bool:
        """Whether a column of type ``old`` may become ``new`` (RULES 5 or in place)."""
        if in_place(old, new, format_version):
            return old != new
        m_old, m_new = matrix_name(old), matrix_name(new)
        return m_old != m_new and widen(m_new, m_old) == m_new

    def needs_rewrite(self, table: TableLayout) -> bool:
        _, old = self.resolve(table)
        return old != self.to and not in_place(old, self.to, table.format_version)

    def _apply(self, table: TableLayout) -> TableLayout:
        col, old = self.resolve(table)
        if old == self.to:
            return table  # Iceberg: updating a column to its own type is a no-op
        slot = self._slot(table)
        if in_place(old, self.to, table.format_version):
            return replace(table, schema=replace_slot(table.schema, slot, self.to))
        # A rewrite: the column is replaced by one of the new type, same name and place.
        found = slot.found
        if slot.steps or inside_list(table.schema, found.parent, self.what):
            raise OperationError(
                self.what,
                f"widening {dotted(self.path)} from {old} to {self.to} rewrites the data, "
                "which is supported for fields outside lists and maps only",
            )
        user = referenced_by_layout(table, col)
        if user is None and col.id in table.identifier_ids:
            user = "the table's identifier fields"
        if user is not None:
            raise OperationError(
                self.what,
                f"widening {dotted(self.path)} from {old} to {self.to} rewrites the column, "
                f"which {user} uses: remove it first",
            )
        new_id = table.last_column_id + 1
        new_col = replace(col, id=new_id, type=self.to)
        return replace(
            table,
            schema=replace_column(table.schema, found, new_col),
            last_column_id=new_id,
        )

    def inverse(self, before: TableLayout | Struct) -> None:
        return None

    @property
    def why_irreversible(self) -> str:
        if self.rewrite:
            return (
                f"{dotted(self.path)} was rewritten as {self.to}: no schema change narrows it "
                "back (snapshots before the rewrite still read the old values)"
            )
        return f"Iceberg never narrows a type: {dotted(self.path)} stays {self.to}"

    def stage(self, editor: TableEditor, before: TableLayout, after: TableLayout) -> None:
        editor.widen_column(self.located(before), before, after)

    def to_json(self) -> dict[str, Any]:
        out = {"op": "widen", "path": list(self.path), "to": self.to, "rewrite": self.rewrite}
        out.update({k: v for k, v in (("rows", self.rows), ("bytes", self.bytes)) if v is not None})
        return self._json(out)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> WidenField:
        path, to = path_of_json(data), data["to"]
        return WidenField(
            path, to, data["rewrite"], data.get("rows"), data.get("bytes"), data.get("id")
        )


@dataclass(frozen=True, repr=False)
class WidenField(Widening):
    """Widen the type of the field (or list element) at ``path`` (or with ID ``field_id``:
    a list element's own ID names the element) to ``to`` (RULES 5)."""

    path: Path
    to: str
    rewrite: bool = False
    rows: int | None = None
    bytes: int | None = None
    field_id: int | None = None

    def planned_on(self, table: TableLayout) -> Self:
        # marked as a rewrite exactly when Iceberg cannot widen in place, so a preview shows it
        op = self.located(table)
        return replace(op, rewrite=op.needs_rewrite(table))

    def with_cost(self, rows: int, bytes: int) -> WidenField:
        return replace(self, rows=rows, bytes=bytes)

    def as_widen_field(self) -> WidenField:
        return self

    def __str__(self) -> str:
        text = f"^ widen {label(self.path, self.field_id)} -> {self.to}"
        if self.rewrite:
            touched = []
            if self.rows is not None:
                touched.append(counted(self.rows, "row"))
            if self.bytes is not None:
                touched.append(f"{self.bytes:,} bytes")
            text += "  REWRITE" + (f" ({', '.join(touched)})" if touched else "")
        return text


@dataclass(frozen=True, repr=False)
class MakeOptional(SchemaOperation):
    """Make a required field optional (never the reverse: RULES 5).

    A user writes ``MakeOptional(path)``; the ``widen`` policy's plans also say which column
    (``column_id``) and why (``reason``), and show it as a plan line (``? a: required ->
    optional (id 3)``) named by the column, not by the operation.
    """

    path: Path
    column_id: int | None = None
    reason: str = ""
    field_id: int | None = None  # the ID a user named the field by (make_optional(3))

    op: ClassVar[str] = "optional"
    verb: ClassVar[str] = "make optional"

    @property
    def name(self) -> str:
        return self.what if self.column_id is None else dotted(self.path)

    def _apply(self, table: TableLayout) -> TableLayout:
        # a field, or a list element / map value (``points.element``, ``m.value``)
        slot = find_slot(table.schema, self.path, self.what)
        if KEY in slot.steps:
            raise OperationError(self.what, "a map's key is always required (Iceberg)")
        if not slot.required:
            return table  # Iceberg: making an optional field optional is a no-op
        return replace(table, schema=replace_slot(table.schema, slot, required=False))

    def inverse(self, before: TableLayout | Struct) -> None:
        return None

    @property
    def why_irreversible(self) -> str:
        return f"a column may go from required to optional, never back ({dotted(self.path)})"

    def stage(self, editor: TableEditor, before: TableLayout, after: TableLayout) -> None:
        editor.make_column_optional(self.located(before).path)

    def to_json(self) -> dict[str, Any]:
        return self._json({"op": self.op, "path": list(self.path)})

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MakeOptional:
        return cls(path_of_json(data), field_id=data.get("id"))

    def __str__(self) -> str:
        if self.column_id is None:
            return f"? make optional {label(self.path, self.field_id)}"
        where = dotted(self.path)
        return f"? {where}: required -> optional (id {self.column_id})\n    {self.reason}"


@dataclass(frozen=True, repr=False)
class MoveField(SchemaOperation):
    """Move a field first, or before/after a sibling; no value changes (correctness #4).
    The field and the sibling may be named by ID (``field_id``, ``anchor_id``)."""

    path: Path
    position: Position
    anchor: Path | None = None
    field_id: int | None = None
    anchor_id: int | None = None

    op: ClassVar[str] = "move"
    verb: ClassVar[str] = "move"

    def __post_init__(self) -> None:
        me = label(self.path, self.field_id)
        if self.position not in get_args(Position):
            raise ValueError(f"move {me}: position must be first, before or after")
        if (self.position == "first") != (self.anchor is None and self.anchor_id is None):
            raise ValueError(f"move {me}: 'first' takes no anchor; before/after need one")

    def located(self, table: TableLayout, where: str | None = None) -> Self:
        op = super().located(table, where)
        if self.anchor_id is None:
            return op
        anchor = path_of_field_id(table, self.anchor_id, op.what, where)
        return op if anchor == op.anchor else replace(op, anchor=anchor)

    def _apply(self, table: TableLayout) -> TableLayout:
        found = find(table.schema, self.path, self.name)
        fields = [c for c in found.siblings.fields if c.id != found.column.id]
        if self.anchor is None:
            index = 0
        else:
            anchor = find(table.schema, self.anchor, self.name)
            if anchor.parent != found.parent or anchor.siblings != found.siblings:
                raise OperationError(
                    self.name,
                    f"{label(self.anchor or (), self.anchor_id)} is not in the same struct as "
                    f"{label(self.path, self.field_id)}",
                )
            if anchor.column.id == found.column.id:
                raise OperationError(self.name, f"cannot move {dotted(self.path)} next to itself")
            index = [c.id for c in fields].index(anchor.column.id)
            index += 1 if self.position == "after" else 0
        fields.insert(index, found.column)
        schema = edit_struct(table.schema, found.parent, lambda _: Struct(tuple(fields)))
        return replace(table, schema=schema)

    def inverse(self, before: TableLayout | Struct) -> MoveField:
        layout = as_layout(before)
        path = self.located(layout).path
        found = find(layout.schema, path, self.name)
        index = [c.id for c in found.siblings.fields].index(found.column.id)
        if index == 0:
            return MoveField(path, "first")
        previous = found.siblings.fields[index - 1].name
        return MoveField(path, "after", (*found.parent, previous))

    def stage(self, editor: TableEditor, before: TableLayout, after: TableLayout) -> None:
        op = self.located(before)
        editor.move_column(op.path, op.position, op.anchor)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.op, "path": list(self.path), "position": self.position}
        if self.anchor:
            out["anchor"] = list(self.anchor)
        if self.anchor_id is not None:
            out["anchor_id"] = self.anchor_id
        return self._json(out)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MoveField:
        anchor = data.get("anchor")
        return cls(
            path_of_json(data),
            data["position"],
            None if anchor is None else tuple(anchor),
            data.get("id"),
            data.get("anchor_id"),
        )

    def __str__(self) -> str:
        anchor = label(self.anchor or (), self.anchor_id)
        where = "first" if self.position == "first" else f"{self.position} {anchor}"
        return f"> move {label(self.path, self.field_id)} {where}"


#: every operation by its JSON name (``op``): what lineage reads back, and what a UI lists
OPERATIONS: Final[dict[str, type[Operation]]] = {
    cls.op: cls
    for cls in (AddField, DropField, RenameField, WidenField, MakeOptional, MoveField,
                UpdateDoc, SetIdentifierFields,
                AddPartitionField, RemovePartitionField, ReplaceSortOrder)
}  # fmt: skip
SCHEMA_OPERATIONS: Final = (AddField, DropField, RenameField, WidenField, MakeOptional, MoveField,
                            UpdateDoc, SetIdentifierFields)  # fmt: skip
#: the forms of :data:`OPERATIONS` that name a partition or sort source by field ID (each
#: reads the by-path form too): what lineage reads a JSON ``partition`` or ``sort`` with
BY_ID_OPERATIONS: Final[dict[str, type[Operation]]] = {
    PartitionById.op: PartitionById,
    SortById.op: SortById,
}


# --- constructors ----------------------------------------------------------------------------


def add(
    path: PathLike, type: ColumnType | str, doc: str | None = None, *, required: bool = False
) -> AddField:
    """Add a column: ``add("address.zip", "string")``, ``add(("a.b",), "long")``,
    ``add("locations.value.zip", "string")`` (into a map's value struct). A new field has no
    ID yet: it is named by path only. ``required=True`` only where the table has no rows
    (Iceberg refuses a required column old rows lack)."""
    where, _ = field_target(path, "add", new=True)
    return AddField(where, as_type(type), doc, required)


def drop(path: PathLike | int) -> DropField:
    """Drop a column or nested field: ``drop("address.zip")``, or by field ID ``drop(4)``."""
    where, field_id = field_target(path, "drop")
    return DropField(where, field_id)


def rename(path: PathLike | int, new_name: str) -> RenameField:
    """Rename a column or nested field, named by path or field ID (``new_name`` is a name,
    not a path): ``rename("name", "full_name")``, ``rename(2, "full_name")``."""
    where, field_id = field_target(path, "rename")
    return RenameField(where, new_name, field_id)


def widen_to(path: PathLike | int, to: str, *, rewrite: bool = False) -> WidenField:
    """Widen a column (or ``"tags.element"``, or a field or list element by ID) to type
    ``to``. Pass ``rewrite=True`` to approve a widening Iceberg cannot do in place (a
    preview sets it for you)."""
    where, field_id = field_target(path, "widen")
    return WidenField(where, to, rewrite, field_id=field_id)


def make_optional(path: PathLike | int) -> MakeOptional:
    """Make a required column optional (named by path or field ID), or a list's elements or
    a map's values: ``make_optional("points.element")``, ``make_optional("m.value")``."""
    where, field_id = field_target(path, "make optional")
    return MakeOptional(where, field_id=field_id)


def move_first(path: PathLike | int) -> MoveField:
    """Move a field (named by path or field ID) first in its struct."""
    where, field_id = field_target(path, "move")
    return MoveField(where, "first", field_id=field_id)


def _move(path: PathLike | int, position: Position, anchor: PathLike | int) -> MoveField:
    where, field_id = field_target(path, "move")
    at, anchor_id = field_target(anchor, "move")
    return MoveField(where, position, at or None, field_id, anchor_id)


def move_before(path: PathLike | int, anchor: PathLike | int) -> MoveField:
    """Move a field just before a sibling (``anchor``: a full path, or a field ID)."""
    return _move(path, "before", anchor)


def move_after(path: PathLike | int, anchor: PathLike | int) -> MoveField:
    """Move a field just after a sibling (``anchor``: a full path, or a field ID)."""
    return _move(path, "after", anchor)


def partition_by(
    source: PathLike | int, transform: str = "identity", name: str | None = None
) -> AddPartitionField:
    """Add a partition field: ``partition_by("id", "bucket[8]")``, ``partition_by("ts", "day")``,
    or by the source's field ID, ``partition_by(3, "day")``."""
    where, field_id = field_target(source, "partition by")
    if field_id is None:
        return AddPartitionField(where, transform, name)
    return PartitionById(where, transform, name, source_id=field_id)


def remove_partition(name: str) -> RemovePartitionField:
    """Remove a partition field by its name (``"id_bucket_8"``, ``"ts_day"``)."""
    return RemovePartitionField(name)


def sort_by(*keys: PathLike | int | SortKey) -> ReplaceSortOrder:
    """Replace the sort order: ``sort_by("id", SortKey(("ts",), "desc"))``; no key: unsorted.
    A key may name its source by field ID: ``sort_by(1, SortKey(4, "desc"))``."""
    built: list[SortKey] = []
    ids: list[int | None] = []
    for k in keys:
        key = k if isinstance(k, SortKey) else SortKey(cast(Any, k))
        where, field_id = field_target(cast(Any, key.source), "sort by")
        built.append(replace(key, source=where))
        ids.append(field_id)
    if all(i is None for i in ids):
        return ReplaceSortOrder(tuple(built))
    return SortById(tuple(built), key_ids=tuple(ids))


__all__ = [
    "OPERATIONS",
    "SCHEMA_OPERATIONS",
    "SetIdentifierFields",
    "UpdateDoc",
    "AddField",
    "AddPartitionField",
    "Adding",
    "BY_ID_OPERATIONS",
    "DropField",
    "MakeOptional",
    "MoveField",
    "Operation",
    "RemovePartitionField",
    "RenameField",
    "ReplaceSortOrder",
    "SortKey",
    "TableEditor",
    "WidenField",
    "Widening",
    "add",
    "drop",
    "make_optional",
    "move_after",
    "move_before",
    "move_first",
    "partition_by",
    "remove_partition",
    "rename",
    "set_identifier_fields",
    "sort_by",
    "update_doc",
    "widen_to",
]
