"""RULES 6: Iceberg's own evolution operations, as values a user (or a rule) writes into a plan.

Each operation is a frozen dataclass. Schema operations preview purely with
``apply(struct) -> Struct`` and Iceberg-like validation (errors name the field); every
operation applies to a whole :class:`~toolkit.core.layout.TableLayout` (schema, partition
spec, sort order) with ``apply_to`` and offers ``inverse(before)``: the operation that
undoes it, or None when no schema change can (``why_irreversible`` says why). A plan of
them is a :class:`~toolkit.core.evolution.Evolution`.

Paths are tuples of names (keys may contain dots); the constructors also take a dotted
string for convenience.

>>> from toolkit.core.types import Column, Struct
>>> table = Struct((Column(1, "id", "long"), Column(2, "name", "string")))
>>> [(c.id, c.name) for c in rename("name", "full_name").apply(table).fields]
[(1, 'id'), (2, 'full_name')]
>>> rename("nope", "x").apply(table)
Traceback (most recent call last):
...
toolkit.errors.OperationError: rename nope: no field 'nope' (fields: id, name)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import ClassVar, Final, TypeAlias, get_args

from toolkit.core.layout import (
    DIRECTIONS,
    ELEMENT,
    NULL_ORDERS,
    Direction,
    NullOrder,
    PartitionField,
    Path,
    PathLike,
    Position,
    SortField,
    TableLayout,
    as_layout,
    as_path,
    canonical,
    check_free,
    dotted,
    edit_struct,
    find,
    fresh_ids,
    id_counter,
    id_of_name,
    inside_list,
    path_of_id,
    referenced_by_layout,
    replace_column,
    sort_text,
    strip_elements,
    struct_in,
)
from toolkit.core.types import (
    Column,
    ColumnType,
    ListOf,
    Opaque,
    Struct,
    as_type,
    type_to_str,
)
from toolkit.core.widening import in_place, matrix_name, widen
from toolkit.errors import OperationError

# --- schema operations -----------------------------------------------------------------------


class _SchemaOperation:
    """Shared behaviour: a schema operation applies to the layout's schema."""

    path: Path
    verb: ClassVar[str]

    def apply(self, struct: Struct) -> Struct:
        return self.apply_to(TableLayout(struct)).schema

    def apply_to(self, table: TableLayout) -> TableLayout:
        raise NotImplementedError

    @property
    def name(self) -> str:
        return f"{self.verb} {dotted(self.path)}"

    @property
    def why_irreversible(self) -> str | None:
        """Why no schema change undoes this operation; None when :meth:`inverse` does."""
        return None


@dataclass(frozen=True)
class AddField(_SchemaOperation):
    """Add an optional field at ``path`` (top level or inside a struct, through lists).

    Iceberg gives it a new field ID, so it never reads values of a dropped field, even one
    that had the same name (Iceberg correctness #1).
    """

    path: Path
    type: ColumnType
    doc: str | None = None

    verb: ClassVar[str] = "add"

    def apply_to(self, table: TableLayout) -> TableLayout:
        parent, name = strip_elements(self.path[:-1]), self.path[-1]
        if parent:
            holder = find(table.schema, parent, self.name).column
            if struct_in(holder.type) is None:
                raise OperationError(
                    self.name,
                    f"{dotted(parent)} is {type_to_str(holder.type)}, not a struct: "
                    "fields are added to structs",
                )
        if isinstance(self.type, Opaque):
            raise OperationError(self.name, f"type {self.type.text} cannot be added by a plan")
        check_free(table.schema, parent, name, self.name)
        next_id = id_counter(table.last_column_id)
        col = Column(next_id(), name, fresh_ids(self.type, next_id), self.doc)

        def edit(s: Struct) -> Struct:
            return Struct((*s.fields, col))

        schema = edit_struct(table.schema, canonical(table.schema, parent, self.name), edit)
        return replace(table, schema=schema, last_column_id=next_id() - 1)

    def inverse(self, before: TableLayout | Struct) -> DropField:
        return DropField(self.path)

    def __str__(self) -> str:
        doc = f"  doc={self.doc!r}" if self.doc else ""
        return f"+ add {dotted(self.path)}: {type_to_str(self.type)}{doc}"


@dataclass(frozen=True)
class DropField(_SchemaOperation):
    """Drop the field at ``path``; no other column's values change (Iceberg correctness #2)."""

    path: Path

    verb: ClassVar[str] = "drop"

    def apply_to(self, table: TableLayout) -> TableLayout:
        found = find(table.schema, self.path, self.name)
        user = referenced_by_layout(table, found.column)
        if user is not None:
            raise OperationError(
                self.name, f"{dotted(self.path)} is used by {user}: change that first"
            )
        if not found.parent and len(table.schema.fields) == 1:
            raise OperationError(self.name, "a table keeps at least one column")
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

    def __str__(self) -> str:
        return f"- drop {dotted(self.path)}"


@dataclass(frozen=True)
class RenameField(_SchemaOperation):
    """Rename the field at ``path`` to ``new_name``; its data stays (tracked by field ID)."""

    path: Path
    new_name: str

    verb: ClassVar[str] = "rename"

    def apply_to(self, table: TableLayout) -> TableLayout:
        found = find(table.schema, self.path, self.name)
        check_free(table.schema, found.parent, self.new_name, self.name, found.column.id)
        renamed = replace(found.column, name=self.new_name)
        return replace(table, schema=replace_column(table.schema, found, renamed))

    def inverse(self, before: TableLayout | Struct) -> RenameField:
        old = find(as_layout(before).schema, self.path, self.name)
        return RenameField((*old.parent, self.new_name), old.column.name)

    def __str__(self) -> str:
        return f"~ rename {dotted(self.path)} -> {self.new_name}"


@dataclass(frozen=True)
class WidenField(_SchemaOperation):
    """Widen the type of the field (or list element) at ``path`` to ``to`` (RULES 5).

    ``rewrite`` is False when Iceberg widens in place (int->long, float->double, wider
    decimal, date->timestamp on v3); any other widening of the matrix rewrites the data
    (the column keeps its name and position, gets a new field ID, and old snapshots keep
    the old values). ``rows``/``bytes`` say what a rewrite touches, when known.
    """

    path: Path
    to: str
    rewrite: bool = False
    rows: int | None = None
    bytes: int | None = None

    verb: ClassVar[str] = "widen"

    def resolve(self, table: TableLayout) -> tuple[Column, str]:
        """The column being widened and its current (leaf) type; checks the widening."""
        target = self.path
        element = target[-1] == ELEMENT and len(target) > 1
        found = find(table.schema, target[:-1] if element else target, self.name)
        old: ColumnType = found.column.type
        if element:
            if not isinstance(old, ListOf):
                raise OperationError(self.name, f"{dotted(target[:-1])} is not a list")
            old = old.element
        if not isinstance(old, str):
            raise OperationError(
                self.name, f"{dotted(self.path)} is {type_to_str(old)}: only primitives widen"
            )
        if old == self.to:
            raise OperationError(self.name, f"{dotted(self.path)} is already {old}")
        if not self.allowed(old, self.to, table.format_version):
            raise OperationError(
                self.name,
                f"{dotted(self.path)} cannot widen from {old} to {self.to} "
                "(RULES 5 matrix; booleans, dates, timestamps, decimals and complex types "
                "only widen where Iceberg promotes them in place)",
            )
        return found.column, old

    @staticmethod
    def allowed(old: str, new: str, format_version: int = 2) -> bool:
        """Whether a column of type ``old`` may become ``new`` (RULES 5 or in place)."""
        if in_place(old, new, format_version):
            return old != new
        m_old, m_new = matrix_name(old), matrix_name(new)
        return m_old != m_new and widen(m_new, m_old) == m_new

    def needs_rewrite(self, table: TableLayout) -> bool:
        _, old = self.resolve(table)
        return not in_place(old, self.to, table.format_version)

    def apply_to(self, table: TableLayout) -> TableLayout:
        col, old = self.resolve(table)
        found = find(
            table.schema, self.path[:-1] if self.path[-1] == ELEMENT else self.path, self.name
        )
        if in_place(old, self.to, table.format_version):
            if isinstance(col.type, ListOf):
                new_col = replace(col, type=replace(col.type, element=self.to))
            else:
                new_col = replace(col, type=self.to)
            return replace(table, schema=replace_column(table.schema, found, new_col))
        # A rewrite: the column is replaced by one of the new type, same name and place.
        if self.path[-1] == ELEMENT or inside_list(table.schema, found.parent, self.name):
            raise OperationError(
                self.name,
                f"widening {dotted(self.path)} from {old} to {self.to} rewrites the data, "
                "which is supported for fields outside lists only",
            )
        user = referenced_by_layout(table, col)
        if user is not None:
            raise OperationError(
                self.name,
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

    def __str__(self) -> str:
        text = f"^ widen {dotted(self.path)} -> {self.to}"
        if self.rewrite:
            touched = []
            if self.rows is not None:
                touched.append(f"{self.rows:,} rows")
            if self.bytes is not None:
                touched.append(f"{self.bytes:,} bytes")
            text += "  REWRITE" + (f" ({', '.join(touched)})" if touched else "")
        return text


@dataclass(frozen=True)
class MakeOptional(_SchemaOperation):
    """Make a required field optional (never the reverse: RULES 5)."""

    path: Path

    verb: ClassVar[str] = "make optional"

    def apply_to(self, table: TableLayout) -> TableLayout:
        found = find(table.schema, self.path, self.name)
        if not found.column.required:
            raise OperationError(self.name, f"{dotted(self.path)} is already optional")
        new = replace(found.column, required=False)
        return replace(table, schema=replace_column(table.schema, found, new))

    def inverse(self, before: TableLayout | Struct) -> None:
        return None

    @property
    def why_irreversible(self) -> str:
        return f"a column may go from required to optional, never back ({dotted(self.path)})"

    def __str__(self) -> str:
        return f"? make optional {dotted(self.path)}"


@dataclass(frozen=True)
class MoveField(_SchemaOperation):
    """Move a field first, or before/after a sibling; no value changes (correctness #4)."""

    path: Path
    position: Position
    anchor: Path | None = None

    verb: ClassVar[str] = "move"

    def __post_init__(self) -> None:
        if self.position not in get_args(Position):
            raise ValueError(f"move {dotted(self.path)}: position must be first, before or after")
        if (self.position == "first") != (self.anchor is None):
            raise ValueError(
                f"move {dotted(self.path)}: 'first' takes no anchor; before/after need one"
            )

    def apply_to(self, table: TableLayout) -> TableLayout:
        found = find(table.schema, self.path, self.name)
        fields = [c for c in found.siblings.fields if c.id != found.column.id]
        if self.anchor is None:
            index = 0
        else:
            anchor = find(table.schema, self.anchor, self.name)
            if anchor.parent != found.parent or anchor.siblings != found.siblings:
                raise OperationError(
                    self.name,
                    f"{dotted(self.anchor)} is not in the same struct as {dotted(self.path)}",
                )
            if anchor.column.id == found.column.id:
                raise OperationError(self.name, f"cannot move {dotted(self.path)} next to itself")
            index = [c.id for c in fields].index(anchor.column.id)
            index += 1 if self.position == "after" else 0
        fields.insert(index, found.column)
        schema = edit_struct(table.schema, found.parent, lambda _: Struct(tuple(fields)))
        return replace(table, schema=schema)

    def inverse(self, before: TableLayout | Struct) -> MoveField:
        found = find(as_layout(before).schema, self.path, self.name)
        index = [c.id for c in found.siblings.fields].index(found.column.id)
        if index == 0:
            return MoveField(self.path, "first")
        previous = found.siblings.fields[index - 1].name
        return MoveField(self.path, "after", (*found.parent, previous))

    def __str__(self) -> str:
        where = "first" if self.anchor is None else f"{self.position} {dotted(self.anchor)}"
        return f"> move {dotted(self.path)} {where}"


# --- partition spec and sort order -----------------------------------------------------------

_TRANSFORM: Final = re.compile(r"(identity|void|year|month|day|hour)|(bucket|truncate)\[(\d+)\]")
_TIME_TRANSFORMS: Final = frozenset({"year", "month", "day", "hour"})
_INTEGRAL: Final = frozenset({"int", "long"})
_TIMES: Final = frozenset({"timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"})
_BUCKETABLE: Final = _INTEGRAL | _TIMES | {"date", "time", "string", "uuid", "binary"}


def _transform_accepts(transform: str, source: str) -> bool:
    """Whether Iceberg's ``transform`` applies to a source of type ``source``."""
    kind = transform.split("[")[0]
    decimal = source.startswith("decimal(")
    fixed = source.startswith("fixed[")
    if kind in ("identity", "void"):
        return True
    if kind == "bucket":
        return source in _BUCKETABLE or decimal or fixed
    if kind == "truncate":
        return source in _INTEGRAL | {"string", "binary"} or decimal
    if kind in ("year", "month", "day"):
        return source in _TIMES | {"date"}
    return kind == "hour" and source in _TIMES


def _check_transform(transform: str, op: str) -> str:
    m = _TRANSFORM.fullmatch(transform.replace(" ", ""))
    if m is None:
        raise OperationError(
            op,
            f"unknown transform {transform!r} (identity, bucket[N], truncate[W], year, month, "
            "day, hour, void)",
        )
    if m[2] is not None and int(m[3]) <= 0:
        raise OperationError(op, f"{m[2]} needs a positive parameter, got {transform!r}")
    return m[0]


def _partition_name(source: str, transform: str) -> str:
    """Iceberg's default partition field names."""
    kind, _, arg = transform.partition("[")
    arg = arg.rstrip("]")
    if kind == "identity":
        return source
    if kind == "bucket":
        return f"{source}_bucket_{arg}"
    if kind == "truncate":
        return f"{source}_trunc_{arg}"
    if kind == "void":
        return f"{source}_null"
    return f"{source}_{kind}"


def _partition_source(table: TableLayout, path: Path, transform: str, op: str) -> Column:
    found = find(table.schema, path, op)
    if inside_list(table.schema, found.parent, op):
        raise OperationError(op, f"{dotted(path)} is inside a list: it cannot be a source")
    t = found.column.type
    if not isinstance(t, str):
        raise OperationError(op, f"{dotted(path)} is {type_to_str(t)}: sources are primitives")
    if not _transform_accepts(transform, t):
        raise OperationError(op, f"{transform} cannot transform {t} values of {dotted(path)}")
    return found.column


@dataclass(frozen=True)
class AddPartitionField:
    """Add ``transform(source)`` to the partition spec; old data keeps its layout, new data is
    written with the new spec. Transforms: identity, bucket[N], truncate[W], year, month,
    day, hour, void."""

    source: Path
    transform: str
    partition_name: str | None = None

    @property
    def name(self) -> str:
        return f"partition by {self.transform}({dotted(self.source)})"

    def apply_to(self, table: TableLayout) -> TableLayout:
        transform = _check_transform(self.transform, self.name)
        col = _partition_source(table, self.source, transform, self.name)
        source_name = dotted(path_of_id(table.schema, col.id) or self.source)
        name = self.partition_name or _partition_name(source_name, transform)
        for p in table.partition:
            if p.source_id == col.id and p.transform == transform:
                raise OperationError(self.name, f"the spec already has it as {p.name!r}")
            if p.name.lower() == name.lower():
                raise OperationError(self.name, f"partition name {name!r} is taken")
            if (
                p.source_id == col.id
                and p.transform in _TIME_TRANSFORMS
                and transform in _TIME_TRANSFORMS
            ):
                raise OperationError(
                    self.name,
                    f"{source_name} is already partitioned by {p.transform} ({p.name!r}): "
                    "remove it first",
                )
        # Iceberg: a partition name may equal a column name only for identity on that column
        clash = id_of_name(table.schema, name)
        if clash is not None and not (transform == "identity" and clash == col.id):
            raise OperationError(self.name, f"partition name {name!r} is a column's name")
        field_ = PartitionField(col.id, transform, name)
        return replace(table, partition=(*table.partition, field_))

    def inverse(self, before: TableLayout | Struct) -> RemovePartitionField:
        after = self.apply_to(as_layout(before))
        return RemovePartitionField(after.partition[-1].name)

    @property
    def why_irreversible(self) -> None:
        return None

    def __str__(self) -> str:
        alias = f" as {self.partition_name}" if self.partition_name else ""
        return f"+ partition by {self.transform}({dotted(self.source)}){alias}"


@dataclass(frozen=True)
class RemovePartitionField:
    """Remove the partition field called ``partition_name``; written data keeps its layout."""

    partition_name: str

    @property
    def name(self) -> str:
        return f"remove partition field {self.partition_name}"

    def apply_to(self, table: TableLayout) -> TableLayout:
        kept = tuple(p for p in table.partition if p.name != self.partition_name)
        if len(kept) == len(table.partition):
            known = ", ".join(p.name for p in table.partition) or "none"
            raise OperationError(
                self.name, f"no partition field {self.partition_name!r} (fields: {known})"
            )
        return replace(table, partition=kept)

    def inverse(self, before: TableLayout | Struct) -> AddPartitionField:
        layout = as_layout(before)
        removed = next(p for p in layout.partition if p.name == self.partition_name)
        source = path_of_id(layout.schema, removed.source_id)
        assert source is not None
        return AddPartitionField(source, removed.transform, removed.name)

    @property
    def why_irreversible(self) -> None:
        return None

    def __str__(self) -> str:
        return f"- partition field {self.partition_name}"


@dataclass(frozen=True)
class SortKey:
    """One key of a sort order, by path; Iceberg's default null order is nulls first when
    ascending and nulls last when descending."""

    source: Path
    direction: Direction = "asc"
    null_order: NullOrder | None = None
    transform: str = "identity"

    def __post_init__(self) -> None:
        if self.null_order is None:  # spelled out, so equal orders compare equal
            default = "nulls-first" if self.direction == "asc" else "nulls-last"
            object.__setattr__(self, "null_order", default)

    @property
    def nulls(self) -> NullOrder:
        assert self.null_order is not None
        return self.null_order

    def __str__(self) -> str:
        return f"{sort_text(self.transform, dotted(self.source))} {self.direction} {self.nulls}"


@dataclass(frozen=True)
class ReplaceSortOrder:
    """Replace the table's sort order (an empty one: unsorted). Old data keeps its order."""

    keys: tuple[SortKey, ...]

    name: ClassVar[str] = "sort order"

    def apply_to(self, table: TableLayout) -> TableLayout:
        fields = []
        for key in self.keys:
            if key.direction not in DIRECTIONS or key.nulls not in NULL_ORDERS:
                raise OperationError(self.name, f"invalid direction or null order in {key}")
            transform = _check_transform(key.transform, self.name)
            col = _partition_source(table, key.source, transform, self.name)
            fields.append(SortField(col.id, transform, key.direction, key.nulls))
        if len({f.source_id for f in fields}) != len(fields):
            raise OperationError(self.name, "a column appears twice in the sort order")
        return replace(table, sort=tuple(fields))

    def inverse(self, before: TableLayout | Struct) -> ReplaceSortOrder:
        layout = as_layout(before)
        keys = []
        for s in layout.sort:
            path = path_of_id(layout.schema, s.source_id)
            assert path is not None
            keys.append(SortKey(path, s.direction, s.null_order, s.transform))
        return ReplaceSortOrder(tuple(keys))

    @property
    def why_irreversible(self) -> None:
        return None

    def __str__(self) -> str:
        return "= sort by " + (", ".join(str(k) for k in self.keys) or "nothing (unsorted)")


Operation: TypeAlias = (
    "AddField | DropField | RenameField | WidenField | MakeOptional | MoveField"
    " | AddPartitionField | RemovePartitionField | ReplaceSortOrder"
)
SCHEMA_OPERATIONS: Final = (AddField, DropField, RenameField, WidenField, MakeOptional, MoveField)


# --- constructors ----------------------------------------------------------------------------


def add(path: PathLike, type: ColumnType | str, doc: str | None = None) -> AddField:
    """Add an optional column: ``add("address.zip", "string")``, ``add(("a.b",), "long")``."""
    return AddField(as_path(path), as_type(type), doc)


def drop(path: PathLike) -> DropField:
    """Drop a column or nested field."""
    return DropField(as_path(path))


def rename(path: PathLike, new_name: str) -> RenameField:
    """Rename a column or nested field (``new_name`` is a name, not a path)."""
    return RenameField(as_path(path), new_name)


def widen_to(path: PathLike, to: str, *, rewrite: bool = False) -> WidenField:
    """Widen a column (or ``"tags.element"``) to type ``to``. Pass ``rewrite=True`` to approve
    a widening Iceberg cannot do in place (a preview sets it for you)."""
    return WidenField(as_path(path), to, rewrite)


def make_optional(path: PathLike) -> MakeOptional:
    """Make a required column optional."""
    return MakeOptional(as_path(path))


def move_first(path: PathLike) -> MoveField:
    """Move a field first in its struct."""
    return MoveField(as_path(path), "first")


def move_before(path: PathLike, anchor: PathLike) -> MoveField:
    """Move a field just before a sibling (``anchor`` is a full path)."""
    return MoveField(as_path(path), "before", as_path(anchor))


def move_after(path: PathLike, anchor: PathLike) -> MoveField:
    """Move a field just after a sibling (``anchor`` is a full path)."""
    return MoveField(as_path(path), "after", as_path(anchor))


def partition_by(
    source: PathLike, transform: str = "identity", name: str | None = None
) -> AddPartitionField:
    """Add a partition field: ``partition_by("id", "bucket[8]")``, ``partition_by("ts", "day")``."""
    return AddPartitionField(as_path(source), transform, name)


def remove_partition(name: str) -> RemovePartitionField:
    """Remove a partition field by its name (``"id_bucket_8"``, ``"ts_day"``)."""
    return RemovePartitionField(name)


def sort_by(*keys: PathLike | SortKey) -> ReplaceSortOrder:
    """Replace the sort order: ``sort_by("id", SortKey(("ts",), "desc"))``; no key: unsorted."""
    return ReplaceSortOrder(
        tuple(k if isinstance(k, SortKey) else SortKey(as_path(k)) for k in keys)
    )


__all__ = [
    "SCHEMA_OPERATIONS",
    "AddField",
    "AddPartitionField",
    "DropField",
    "MakeOptional",
    "MoveField",
    "Operation",
    "RemovePartitionField",
    "RenameField",
    "ReplaceSortOrder",
    "SortKey",
    "WidenField",
    "add",
    "drop",
    "make_optional",
    "move_after",
    "move_before",
    "move_first",
    "partition_by",
    "remove_partition",
    "rename",
    "sort_by",
    "widen_to",
]
