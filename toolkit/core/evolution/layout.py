"""The table an operation applies to (schema, partition spec, sort order), and the walk
from a path to a field: the vocabulary every operation (RULES 6) and adapter shares.

Paths are tuples of names (keys may contain dots); list levels may be written as
``element`` and map values as ``value``, as in Iceberg's full names, or skipped:
``points.x`` and ``points.element.x``, ``locations.lat`` and ``locations.value.lat``
name the same field. A map's key cannot change (Iceberg: keys decide equality).

>>> from toolkit.core.values.types import Column, ListOf, Struct
>>> s = Struct((Column(1, "a", ListOf(2, Struct((Column(3, "b", "long"),)))),))
>>> find(s, ("a", "element", "b"), "look").column.id
3
>>> print(TableLayout(s))
table {
  1: a: optional list<struct<b: long>>
}
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Final, Literal, TypeAlias, get_args

from toolkit.core.values.naming import TakenNames
from toolkit.core.values.types import (
    Column,
    ColumnType,
    ListOf,
    MapOf,
    Struct,
    iter_ids,
    type_to_str,
)
from toolkit.errors import OperationError

Path: TypeAlias = tuple[str, ...]
#: a path as a tuple of names, or a dotted string (only when no name contains a dot)
PathLike: TypeAlias = "str | Sequence[str]"
Position: TypeAlias = Literal["first", "before", "after"]
Direction: TypeAlias = Literal["asc", "desc"]
NullOrder: TypeAlias = Literal["nulls-first", "nulls-last"]
DIRECTIONS: Final = get_args(Direction)
NULL_ORDERS: Final = get_args(NullOrder)

ELEMENT: Final = "element"
KEY: Final = "key"
VALUE: Final = "value"


def as_path(path: PathLike) -> Path:
    """A tuple of names; a string is split on dots (pass a tuple when a name has a dot)."""
    parts = tuple(path.split(".")) if isinstance(path, str) else tuple(path)
    if not parts or any(not p for p in parts):
        raise ValueError(f"invalid field path {path!r}: names must be non-empty")
    return parts


def dotted(path: Path) -> str:
    return ".".join(path)


# --- the table an operation applies to -------------------------------------------------------


@dataclass(frozen=True)
class PartitionField:
    """One field of a partition spec; the source is tracked by field ID, like Iceberg."""

    source_id: int
    transform: str
    name: str


@dataclass(frozen=True)
class SortField:
    """One field of a sort order, by source field ID."""

    source_id: int
    transform: str = "identity"
    direction: Direction = "asc"
    null_order: NullOrder = "nulls-first"


@dataclass(frozen=True)
class TableLayout:
    """What evolution operations change: the schema, partition spec and sort order.

    ``last_column_id`` is the highest field ID the table ever assigned (Iceberg never
    reuses one, even after a drop); by default the highest in ``schema``.
    ``identifier_ids`` are the schema's identifier fields (Iceberg's row identity: required
    primitives, not float or double, outside lists, maps and optional structs).
    ``has_rows``: whether rows may exist (a required field can be added only where none
    does; a layout not read from a table assumes there may be).
    """

    schema: Struct
    partition: tuple[PartitionField, ...] = ()
    sort: tuple[SortField, ...] = ()
    last_column_id: int = -1
    format_version: int = 2
    identifier_ids: tuple[int, ...] = ()
    has_rows: bool = field(default=True, compare=False)

    def __post_init__(self) -> None:
        if self.last_column_id < 0:
            object.__setattr__(self, "last_column_id", max(iter_ids(self.schema), default=0))

    def column_name(self, field_id: int) -> str:
        """The dotted full name of a field, or ``<dropped id N>``."""
        path = path_of_id(self.schema, field_id)
        return f"<dropped id {field_id}>" if path is None else dotted(path)

    def __str__(self) -> str:
        lines = ["table {"]
        lines += [f"  {c.id}: {c.name}: {column_text(c)}" for c in self.schema.fields]
        lines.append("}")
        if self.identifier_ids:
            lines.append(
                "identified by " + ", ".join(self.column_name(i) for i in self.identifier_ids)
            )
        if self.partition:
            lines.append(
                "partitioned by "
                + ", ".join(
                    f"{p.transform}({self.column_name(p.source_id)}) as {p.name}"
                    for p in self.partition
                )
            )
        if self.sort:
            lines.append(
                "sorted by "
                + ", ".join(
                    f"{sort_text(s.transform, self.column_name(s.source_id))} "
                    f"{s.direction} {s.null_order}"
                    for s in self.sort
                )
            )
        return "\n".join(lines)


def column_text(c: Column) -> str:
    text = f"{'required' if c.required else 'optional'} {type_to_str(c.type)}"
    return text + (f" ({c.doc})" if c.doc else "")


def sort_text(transform: str, name: str) -> str:
    return name if transform == "identity" else f"{transform}({name})"


def as_layout(before: TableLayout | Struct) -> TableLayout:
    return before if isinstance(before, TableLayout) else TableLayout(before)


# --- walking the schema by path --------------------------------------------------------------

#: the words of Iceberg's full names for a list's element and a map's key and value
LEVELS: Final = (ELEMENT, KEY, VALUE)


def struct_in(t: ColumnType) -> Struct | None:
    """The struct a path continues into from a column of type ``t`` (through list elements
    and map values)."""
    while isinstance(t, ListOf | MapOf):
        t = t.element if isinstance(t, ListOf) else t.value
    return t if isinstance(t, Struct) else None


@dataclass(frozen=True)
class Found:
    column: Column
    parent: Path  # the canonical path of the enclosing struct's column (no element/value)
    siblings: Struct


def _key_error(op: str, path: Path) -> OperationError:
    return OperationError(
        op,
        f"{dotted(path)} is inside a map's key, which cannot change (Iceberg: a key decides "
        "which entry a value belongs to)",
    )


def find(struct: Struct, path: Path, op: str) -> Found:
    """The field at ``path``; list elements (``element``) and map values (``value``) may be
    written out or skipped."""
    parent: Path = ()
    cur = struct
    names = list(path)
    walked: list[str] = []
    while True:
        name = names.pop(0)
        walked.append(name)
        col = cur.by_name().get(name)
        if col is None:
            where = f" in {dotted(parent)}" if parent else ""
            near = [c.name for c in cur.fields if c.name.lower() == name.lower()]
            hint = f"; did you mean {near[0]!r}? names are case-sensitive" if near else ""
            known = ", ".join(c.name for c in cur.fields) or "none"
            raise OperationError(op, f"no field {name!r}{where} (fields: {known}){hint}")
        if not names:
            return Found(col, parent, cur)
        t = col.type
        while isinstance(t, ListOf | MapOf):
            if isinstance(t, ListOf):
                what = "a list element"
                if names and names[0] == ELEMENT:
                    walked.append(names.pop(0))  # written out, as in Iceberg's full names
                t = t.element
            else:
                what = "a map value"
                if names and names[0] == KEY:
                    raise _key_error(op, (*walked, KEY))
                if names and names[0] == VALUE:
                    walked.append(names.pop(0))
                t = t.value
            if not names:
                raise OperationError(op, f"{dotted(path)} is {what}, not a field")
        if not isinstance(t, Struct):
            raise OperationError(
                op, f"{dotted((*parent, col.name))} is {type_to_str(col.type)}, not a struct"
            )
        parent, cur = (*parent, col.name), t


def field_at(struct: Struct, path: Path) -> tuple[Column, Struct]:
    """The column at ``path`` (list levels written as ``element`` or skipped) and the
    struct that holds it, for adapters staging an operation the core already checked.

    >>> s = Struct((Column(1, "a", ListOf(2, Struct((Column(3, "b", "long"),)))),))
    >>> field_at(s, ("a", "b"))[0].id, field_at(s, ("a", "element", "b"))[0].id
    (3, 3)
    """
    found = find(struct, path, "find")
    return found.column, found.siblings


@dataclass(frozen=True)
class Slot:
    """What a path names: a field (``steps`` empty), or a list element, map key or map value
    inside the type of the field ``found`` (``steps``: the levels from that field's type
    down, ``("element",)``, ``("value", "element")``...)."""

    found: Found
    steps: tuple[str, ...]
    type: ColumnType
    required: bool
    id: int

    @property
    def path(self) -> Path:
        """The path in canonical form, levels written out: ``points.element``."""
        return (*self.found.parent, self.found.column.name, *self.steps)


def find_slot(struct: Struct, path: Path, op: str) -> Slot:
    """The field, list element or map value (or key) at ``path``: a field's path, then the
    levels written out (``points.element``, ``m.value``, ``m.key``).

    >>> s = Struct((Column(1, "m", MapOf(2, "string", 3, ListOf(4, "int", True))),))
    >>> slot = find_slot(s, ("m", "value", "element"), "look")
    >>> slot.id, slot.type, slot.required, slot.path
    (4, 'int', True, ('m', 'value', 'element'))
    """
    i = len(path)
    while i > 1 and path[i - 1] in LEVELS:
        i -= 1
    if i < len(path):
        try:
            found: Found | None = find(struct, path[:i], op)
        except OperationError:
            found = None
        if found is not None:
            t: ColumnType = found.column.type
            required, slot_id = found.column.required, found.column.id
            for step in path[i:]:
                level = t
                if step == ELEMENT and isinstance(level, ListOf):
                    t, required, slot_id = level.element, level.element_required, level.element_id
                elif step == KEY and isinstance(level, MapOf):
                    t, required, slot_id = level.key, True, level.key_id
                elif step == VALUE and isinstance(level, MapOf):
                    t, required, slot_id = level.value, level.value_required, level.value_id
                else:
                    break
            else:
                return Slot(found, path[i:], t, required, slot_id)
    found = find(struct, path, op)
    col = found.column
    return Slot(found, (), col.type, col.required, col.id)


def _edit_level(
    t: ColumnType,
    steps: tuple[str, ...],
    edit: Callable[[ColumnType, bool], tuple[ColumnType, bool]],
) -> ColumnType:
    step, rest = steps[0], steps[1:]
    if step == ELEMENT:
        assert isinstance(t, ListOf)
        if rest:
            return replace(t, element=_edit_level(t.element, rest, edit))
        element, required = edit(t.element, t.element_required)
        return replace(t, element=element, element_required=required)
    assert isinstance(t, MapOf)
    if step == KEY:
        assert not rest, "a map key's inside never changes"
        key, _ = edit(t.key, True)
        return replace(t, key=key)
    if rest:
        return replace(t, value=_edit_level(t.value, rest, edit))
    value, required = edit(t.value, t.value_required)
    return replace(t, value=value, value_required=required)


def replace_slot(
    struct: Struct, slot: Slot, type: ColumnType | None = None, required: bool | None = None
) -> Struct:
    """``struct`` with the slot's type and/or required-ness replaced (None: kept)."""

    def edit(old: ColumnType, was: bool) -> tuple[ColumnType, bool]:
        return (old if type is None else type), (was if required is None else required)

    col = slot.found.column
    if not slot.steps:
        new_type, new_required = edit(col.type, col.required)
        new = replace(col, type=new_type, required=new_required)
    else:
        new = replace(col, type=_edit_level(col.type, slot.steps, edit))
    return replace_column(struct, slot.found, new)


def edit_struct(struct: Struct, parent: Path, edit: Callable[[Struct], Struct]) -> Struct:
    """``struct`` with the struct at canonical path ``parent`` replaced by ``edit(it)``."""
    if not parent:
        return edit(struct)
    head, rest = parent[0], parent[1:]

    def into(t: ColumnType) -> ColumnType:
        if isinstance(t, ListOf):
            return replace(t, element=into(t.element))
        if isinstance(t, MapOf):
            return replace(t, value=into(t.value))
        assert isinstance(t, Struct)
        return edit_struct(t, rest, edit)

    return replace(
        struct,
        fields=tuple(replace(c, type=into(c.type)) if c.name == head else c for c in struct.fields),
    )


def inside_list(struct: Struct, parent: Path, op: str) -> bool:
    """Whether a field under the canonical ``parent`` sits inside a list or a map."""
    return any(
        isinstance(find(struct, parent[: i + 1], op).column.type, ListOf | MapOf)
        for i in range(len(parent))
    )


def replace_column(struct: Struct, found: Found, new: Column | None) -> Struct:
    def edit(s: Struct) -> Struct:
        out = (new if c.id == found.column.id else c for c in s.fields)
        return replace(s, fields=tuple(c for c in out if c is not None))

    return edit_struct(struct, found.parent, edit)


def iceberg_name(struct: Struct, parent: Path) -> Path:
    """The Iceberg full name of the struct at canonical ``parent`` (with list elements and
    map values written out)."""
    out: list[str] = []
    cur: ColumnType = struct
    for name in parent:
        s = struct_in(cur)
        assert s is not None
        col = s.by_name()[name]
        out.append(name)
        t = col.type
        while isinstance(t, ListOf | MapOf):
            out.append(ELEMENT if isinstance(t, ListOf) else VALUE)
            t = t.element if isinstance(t, ListOf) else t.value
        cur = t
    return tuple(out)


def check_free(
    struct: Struct, parent: Path, name: str, op: str, own_id: int | None = None
) -> None:
    """RULES 4 / Iceberg: names are unique per struct case-insensitively, and as full names.
    ``own_id``: the field being renamed (its own name never blocks it)."""
    if not name or name.strip() != name:
        raise OperationError(op, f"invalid field name {name!r}")
    siblings = find(struct, parent, op).column.type if parent else struct
    inner = struct_in(siblings) if parent else struct
    assert inner is not None
    own_name, low = None, name.lower()
    for c in inner.fields:
        if c.id == own_id:
            own_name = c.name
        elif c.name.lower() == low:
            where = f" in {dotted(parent)}" if parent else ""
            raise OperationError(op, f"name {name!r} is taken by field {c.name!r}{where}")
    if own_name is not None and own_name.lower() == name.lower():
        return  # its own names: a change of case
    full_parent = iceberg_name(struct, parent)
    full = dotted((*full_parent, name)).lower()
    # Iceberg's index holds short names too (``dot.key`` for ``dot.element.key``), and
    # refuses to add a field under any name it holds (RULES 4)
    held = _index_holder(struct, full_parent, name)
    if held == full:
        raise OperationError(op, f"full name {full!r} is taken by another field")
    if held is not None:
        raise OperationError(
            op, f"name {held!r} (Iceberg's name of {full!r} too) is taken by another field"
        )


def _index_holder(struct: Struct, full_parent: tuple[str, ...], name: str) -> str | None:
    """``TakenNames.holder(name, full_parent)`` over Iceberg's whole name index of
    ``struct``, built from the top-level columns that can hold such a name alone: every
    name in the index is its top-level column's lower-cased name, or starts with it and a
    dot, so the others cannot. Indexing every column for each added one made a batch of
    thousands of new keys quadratic in its slowest part (RULES 4 unchanged: the same
    index, the same answer)."""

    def could_hold(*targets: str) -> Struct:
        # a column can hold a target only under one of its dot-ended prefixes, or whole
        starts = {t[:i] for t in targets for i, ch in enumerate(t) if ch == "."}
        starts.update(targets)
        return replace(struct, fields=tuple(c for c in struct.fields
                                            if c.name.lower() in starts))

    head = ".".join(full_parent).lower() + "." if full_parent else ""
    target = head + name.lower()
    # the struct's short name (Iceberg's, without ``element``/``value``) comes from the
    # columns on its own path, which are among those that can hold its full names
    taken = TakenNames()
    taken.add_type((), could_hold(target))
    held = taken.holder(name, full_parent)
    short = taken.short_of(full_parent)
    if held is not None or short == head:
        return held
    taken = TakenNames()
    taken.add_type((), could_hold(target, short + name.lower()))
    return taken.holder(name, full_parent)


def path_of_id(struct: Struct, field_id: int) -> Path | None:
    """The canonical path (no ``element`` or ``value``) of field ``field_id``."""
    for c in struct.fields:
        if c.id == field_id:
            return (c.name,)
        inner = struct_in(c.type)
        if inner is not None:
            sub = path_of_id(inner, field_id)
            if sub is not None:
                return (c.name, *sub)
    return None


def fresh_ids(t: ColumnType, next_id: Callable[[], int]) -> ColumnType:
    """``t`` renumbered as Iceberg assigns a new column's type: a struct's fields first,
    then their types; a list's element, then its type; a map's key and value, then theirs."""
    if isinstance(t, Struct):
        ids = [next_id() for _ in t.fields]
        return replace(
            t,
            fields=tuple(
                replace(c, id=i, type=fresh_ids(c.type, next_id))
                for i, c in zip(ids, t.fields, strict=True)
            ),
        )
    if isinstance(t, ListOf):
        element_id = next_id()
        return replace(t, element_id=element_id, element=fresh_ids(t.element, next_id))
    if isinstance(t, MapOf):
        key_id, value_id = next_id(), next_id()
        return replace(
            t,
            key_id=key_id,
            key=fresh_ids(t.key, next_id),
            value_id=value_id,
            value=fresh_ids(t.value, next_id),
        )
    return t


def id_counter(start: int) -> Callable[[], int]:
    box = [start]

    def next_id() -> int:
        box[0] += 1
        return box[0]

    return next_id


def referenced_by_layout(layout: TableLayout, col: Column) -> str | None:
    """Which partition or sort field uses ``col`` or a field inside it, if any."""
    ids = {col.id, *iter_ids(col.type)}
    for p in layout.partition:
        if p.source_id in ids:
            return f"partition field {p.name!r}"
    for s in layout.sort:
        if s.source_id in ids:
            return "the sort order"
    return None


def strip_elements(parent: Path) -> Path:
    """A struct's Iceberg full name (``items.element``) as the path of its column."""
    while parent and parent[-1] in (ELEMENT, VALUE):
        parent = parent[:-1]
    return parent


def canonical(struct: Struct, parent: Path, op: str) -> Path:
    """``parent`` (a struct's path, maybe Iceberg's full name ``items.element`` or
    ``m.value``) without written-out levels: the path of the column holding the struct."""
    if not parent:
        return ()
    stripped = strip_elements(parent)
    if stripped != parent and stripped:
        try:
            holder = find(struct, stripped, op)
        except OperationError:
            holder = None
        if holder is not None and isinstance(holder.column.type, ListOf | MapOf):
            return (*holder.parent, holder.column.name)
    found = find(struct, parent, op)
    return (*found.parent, found.column.name)


def id_of_name(struct: Struct, name: str) -> int | None:
    for c in struct.fields:
        if c.name == name:
            return c.id
    return None


__all__ = [
    "DIRECTIONS",
    "ELEMENT",
    "KEY",
    "LEVELS",
    "NULL_ORDERS",
    "Direction",
    "Found",
    "NullOrder",
    "PartitionField",
    "Path",
    "PathLike",
    "Position",
    "Slot",
    "SortField",
    "TableLayout",
    "VALUE",
    "as_layout",
    "as_path",
    "canonical",
    "check_free",
    "dotted",
    "edit_struct",
    "field_at",
    "find",
    "find_slot",
    "fresh_ids",
    "id_counter",
    "id_of_name",
    "iceberg_name",
    "inside_list",
    "path_of_id",
    "referenced_by_layout",
    "replace_column",
    "replace_slot",
    "sort_text",
    "strip_elements",
    "struct_in",
]
