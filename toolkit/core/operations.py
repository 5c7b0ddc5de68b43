"""RULES 6: Iceberg's own evolution operations, as values a user (or a rule) writes into a plan.

Each operation is a frozen dataclass. Schema operations preview purely with
``apply(struct) -> Struct`` and Iceberg-like validation (errors name the field); every
operation applies to a whole :class:`TableLayout` (schema, partition spec, sort order) with
``apply_to`` and offers ``inverse(before)``: the operation that undoes it, or None when no
schema change can (``why_irreversible`` says why). An :class:`Evolution` groups operations
with who decided them and why, previews the result, and offers its own inverse.

Paths are tuples of names (keys may contain dots); the constructors also take a dotted
string for convenience.

>>> from toolkit.core.types import Column, Struct
>>> table = Struct((Column(1, "id", "long"), Column(2, "name", "string")))
>>> evo = plan_evolution(table, [rename("name", "full_name"), add("age", "int")])
>>> [(c.id, c.name, c.type) for c in evo.schema.fields]
[(1, 'id', 'long'), (2, 'full_name', 'string'), (3, 'age', 'int')]
>>> print(evo.inverse())
user: 2 operation(s): undo
  - drop age
  ~ rename full_name -> name
>>> rename("nope", "x").apply(table)
Traceback (most recent call last):
...
toolkit.errors.OperationError: rename nope: no field 'nope' (fields: id, name)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, ClassVar, Final, Literal, TypeAlias, get_args

from toolkit.core.types import Column, ColumnType, ListOf, Opaque, Struct, iter_ids, type_to_str
from toolkit.core.widening import in_place, matrix_name, widen
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


def as_path(path: PathLike) -> Path:
    """A tuple of names; a string is split on dots (pass a tuple when a name has a dot)."""
    parts = tuple(path.split(".")) if isinstance(path, str) else tuple(path)
    if not parts or any(not p for p in parts):
        raise ValueError(f"invalid field path {path!r}: names must be non-empty")
    return parts


def dotted(path: Path) -> str:
    return ".".join(path)


# --- Iceberg type strings --------------------------------------------------------------------

_PRIMITIVE_NAMES: Final = frozenset(
    {
        "boolean", "int", "long", "float", "double", "date", "time", "timestamp",
        "timestamptz", "timestamp_ns", "timestamptz_ns", "string", "uuid", "binary",
    }
)  # fmt: skip
_DECIMAL: Final = re.compile(r"decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)")
_FIXED: Final = re.compile(r"fixed\[\s*(\d+)\s*\]")


def parse_type(text: str) -> ColumnType:
    """An Iceberg type string (``"long"``, ``"decimal(9,2)"``, ``"list<string>"``,
    ``"struct<a: long, b: list<int>>"``) in the core's model; field IDs are 0 until the
    type is added to a table.

    >>> parse_type("struct<a: long, b: list<decimal(9,2)>>")
    Struct(fields=(Column(id=0, name='a', type='long', doc=None, required=False), \
Column(id=0, name='b', type=ListOf(element_id=0, element='decimal(9, 2)'), doc=None, \
required=False)))
    """
    parser = _TypeParser(text)
    t = parser.type()
    parser.end()
    return t


class _TypeParser:
    def __init__(self, text: str) -> None:
        self.text, self.pos = text, 0

    def error(self, why: str) -> ValueError:
        return ValueError(f"invalid Iceberg type {self.text!r} at position {self.pos}: {why}")

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def take(self, token: str) -> bool:
        self.skip()
        if self.text.startswith(token, self.pos):
            self.pos += len(token)
            return True
        return False

    def expect(self, token: str) -> None:
        if not self.take(token):
            raise self.error(f"expected {token!r}")

    def end(self) -> None:
        self.skip()
        if self.pos != len(self.text):
            raise self.error("unexpected text after the type")

    def type(self) -> ColumnType:
        self.skip()
        if self.take("list<"):
            element = self.type()
            self.expect(">")
            return ListOf(0, element)
        if self.take("struct<"):
            fields: list[Column] = []
            if not self.take(">"):
                while True:
                    fields.append(self.field())
                    if self.take(">"):
                        break
                    self.expect(",")
            return Struct(tuple(fields))
        if self.text.startswith("map<", self.pos):
            raise self.error("maps cannot be added by a plan (the core keeps them opaque)")
        match = re.compile(r"[a-z_]+(\([^)]*\)|\[[^\]]*\])?").match(self.text, self.pos)
        if match is None:
            raise self.error("expected a type name")
        self.pos = match.end()
        word = match[0]
        if word in _PRIMITIVE_NAMES:
            return word
        if (d := _DECIMAL.fullmatch(word)) is not None:
            precision, scale = int(d[1]), int(d[2])
            if not 0 < precision <= 38 or scale > precision:
                raise self.error(f"decimal({precision}, {scale}) is out of range")
            return f"decimal({precision}, {scale})"
        if (f := _FIXED.fullmatch(word)) is not None:
            return f"fixed[{int(f[1])}]"
        raise self.error(f"unknown type {word!r}")

    def field(self) -> Column:
        self.skip()
        colon = self.text.find(":", self.pos)
        if colon < 0:
            raise self.error("expected 'name: type'")
        name = self.text[self.pos : colon].strip()
        if not name:
            raise self.error("a struct field needs a name")
        self.pos = colon + 1
        return Column(0, name, self.type())


def _as_type(t: ColumnType | str) -> ColumnType:
    return parse_type(t) if isinstance(t, str) else t


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
    """

    schema: Struct
    partition: tuple[PartitionField, ...] = ()
    sort: tuple[SortField, ...] = ()
    last_column_id: int = -1
    format_version: int = 2

    def __post_init__(self) -> None:
        if self.last_column_id < 0:
            object.__setattr__(self, "last_column_id", max(iter_ids(self.schema), default=0))

    def column_name(self, field_id: int) -> str:
        """The dotted full name of a field, or ``<dropped id N>``."""
        path = _path_of_id(self.schema, field_id)
        return f"<dropped id {field_id}>" if path is None else dotted(path)

    def __str__(self) -> str:
        lines = ["table {"]
        lines += [f"  {c.id}: {c.name}: {_col_text(c)}" for c in self.schema.fields]
        lines.append("}")
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
                    f"{_sort_text(s.transform, self.column_name(s.source_id))} "
                    f"{s.direction} {s.null_order}"
                    for s in self.sort
                )
            )
        return "\n".join(lines)


def _col_text(c: Column) -> str:
    text = f"{'required' if c.required else 'optional'} {type_to_str(c.type)}"
    return text + (f" ({c.doc})" if c.doc else "")


def _sort_text(transform: str, name: str) -> str:
    return name if transform == "identity" else f"{transform}({name})"


def _layout(before: TableLayout | Struct) -> TableLayout:
    return before if isinstance(before, TableLayout) else TableLayout(before)


# --- walking the schema by path --------------------------------------------------------------


def _struct_in(t: ColumnType) -> Struct | None:
    """The struct a path continues into from a column of type ``t`` (through lists)."""
    while isinstance(t, ListOf):
        t = t.element
    return t if isinstance(t, Struct) else None


@dataclass(frozen=True)
class _Found:
    column: Column
    parent: Path  # the canonical path of the enclosing struct's column (no "element")
    siblings: Struct


def _find(struct: Struct, path: Path, op: str) -> _Found:
    """The field at ``path``; list levels may be written as ``element`` or skipped."""
    parent: Path = ()
    cur = struct
    names = [n for n in path]
    while True:
        name = names.pop(0)
        col = cur.by_name().get(name)
        if col is None:
            where = f" in {dotted(parent)}" if parent else ""
            near = [c.name for c in cur.fields if c.name.lower() == name.lower()]
            hint = f"; did you mean {near[0]!r}? names are case-sensitive" if near else ""
            known = ", ".join(c.name for c in cur.fields) or "none"
            raise OperationError(op, f"no field {name!r}{where} (fields: {known}){hint}")
        if not names:
            return _Found(col, parent, cur)
        while names and names[0] == ELEMENT and isinstance(col.type, ListOf):
            names.pop(0)  # written out, as in Iceberg's full names
        if not names:
            raise OperationError(op, f"{dotted(path)} is a list element, not a field")
        inner = _struct_in(col.type)
        if inner is None:
            raise OperationError(
                op, f"{dotted((*parent, col.name))} is {type_to_str(col.type)}, not a struct"
            )
        parent, cur = (*parent, col.name), inner


def field_at(struct: Struct, path: Path) -> tuple[Column, Struct]:
    """The column at ``path`` (list levels written as ``element`` or skipped) and the
    struct that holds it, for adapters staging an operation the core already checked.

    >>> s = Struct((Column(1, "a", ListOf(2, Struct((Column(3, "b", "long"),)))),))
    >>> field_at(s, ("a", "b"))[0].id, field_at(s, ("a", "element", "b"))[0].id
    (3, 3)
    """
    found = _find(struct, path, "find")
    return found.column, found.siblings


def _edit_struct(struct: Struct, parent: Path, edit: Callable[[Struct], Struct]) -> Struct:
    """``struct`` with the struct at canonical path ``parent`` replaced by ``edit(it)``."""
    if not parent:
        return edit(struct)
    head, rest = parent[0], parent[1:]

    def into(t: ColumnType) -> ColumnType:
        if isinstance(t, ListOf):
            return replace(t, element=into(t.element))
        assert isinstance(t, Struct)
        return _edit_struct(t, rest, edit)

    return Struct(
        tuple(replace(c, type=into(c.type)) if c.name == head else c for c in struct.fields)
    )


def _inside_list(struct: Struct, parent: Path, op: str) -> bool:
    """Whether a field under the canonical ``parent`` sits inside a list."""
    return any(
        isinstance(_find(struct, parent[: i + 1], op).column.type, ListOf)
        for i in range(len(parent))
    )


def _replace_column(struct: Struct, found: _Found, new: Column | None) -> Struct:
    def edit(s: Struct) -> Struct:
        out = (new if c.id == found.column.id else c for c in s.fields)
        return Struct(tuple(c for c in out if c is not None))

    return _edit_struct(struct, found.parent, edit)


def _full_names(struct: Struct) -> set[str]:
    """Lower-cased Iceberg full names of every field (list elements as ``element``)."""
    out: set[str] = set()

    def walk(prefix: Path, t: ColumnType) -> None:
        if isinstance(t, ListOf):
            inner = (*prefix, ELEMENT)
            out.add(dotted(inner).lower())
            walk(inner, t.element)
        elif isinstance(t, Struct):
            for c in t.fields:
                out.add(dotted((*prefix, c.name)).lower())
                walk((*prefix, c.name), c.type)

    walk((), struct)
    return out


def _iceberg_name(struct: Struct, parent: Path) -> Path:
    """The Iceberg full name of the struct at canonical ``parent`` (with list elements)."""
    out: list[str] = []
    cur: ColumnType = struct
    for name in parent:
        s = _struct_in(cur)
        assert s is not None
        col = s.by_name()[name]
        out.append(name)
        t = col.type
        while isinstance(t, ListOf):
            out.append(ELEMENT)
            t = t.element
        cur = t
    return tuple(out)


def _check_free(
    struct: Struct, parent: Path, name: str, op: str, own_id: int | None = None
) -> None:
    """RULES 4 / Iceberg: names are unique per struct case-insensitively, and as full names."""
    if not name or name.strip() != name:
        raise OperationError(op, f"invalid field name {name!r}")
    siblings = _find(struct, parent, op).column.type if parent else struct
    inner = _struct_in(siblings) if parent else struct
    assert inner is not None
    for c in inner.fields:
        if c.name.lower() == name.lower() and c.id != own_id:
            where = f" in {dotted(parent)}" if parent else ""
            raise OperationError(op, f"name {name!r} is taken by field {c.name!r}{where}")
    full = dotted((*_iceberg_name(struct, parent), name)).lower()
    taken = _full_names(struct)
    if own_id is not None:
        own = _path_of_id(struct, own_id)
        if own is not None:
            taken -= {n for n in taken if n == dotted(own).lower()}
    if full in taken:
        raise OperationError(op, f"full name {full!r} is taken by another field")


def _path_of_id(struct: Struct, field_id: int) -> Path | None:
    """The canonical path (no ``element``) of field ``field_id``."""
    for c in struct.fields:
        if c.id == field_id:
            return (c.name,)
        inner = _struct_in(c.type)
        if inner is not None:
            sub = _path_of_id(inner, field_id)
            if sub is not None:
                return (c.name, *sub)
    return None


def _fresh_ids(t: ColumnType, next_id: Callable[[], int]) -> ColumnType:
    """``t`` renumbered as Iceberg assigns a new column's type: a struct's fields first,
    then their types; a list's element, then its type."""
    if isinstance(t, Struct):
        ids = [next_id() for _ in t.fields]
        return Struct(
            tuple(
                replace(c, id=i, type=_fresh_ids(c.type, next_id))
                for i, c in zip(ids, t.fields, strict=True)
            )
        )
    if isinstance(t, ListOf):
        element_id = next_id()
        return ListOf(element_id, _fresh_ids(t.element, next_id))
    return t


def _counter(start: int) -> Callable[[], int]:
    box = [start]

    def next_id() -> int:
        box[0] += 1
        return box[0]

    return next_id


def _referenced_by_layout(layout: TableLayout, col: Column) -> str | None:
    """Which partition or sort field uses ``col`` or a field inside it, if any."""
    ids = {col.id, *iter_ids(col.type)}
    for p in layout.partition:
        if p.source_id in ids:
            return f"partition field {p.name!r}"
    for s in layout.sort:
        if s.source_id in ids:
            return "the sort order"
    return None


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
        parent, name = _strip_elements(self.path[:-1]), self.path[-1]
        if parent:
            holder = _find(table.schema, parent, self.name).column
            if _struct_in(holder.type) is None:
                raise OperationError(
                    self.name,
                    f"{dotted(parent)} is {type_to_str(holder.type)}, not a struct: "
                    "fields are added to structs",
                )
        if isinstance(self.type, Opaque):
            raise OperationError(self.name, f"type {self.type.text} cannot be added by a plan")
        _check_free(table.schema, parent, name, self.name)
        next_id = _counter(table.last_column_id)
        col = Column(next_id(), name, _fresh_ids(self.type, next_id), self.doc)

        def edit(s: Struct) -> Struct:
            return Struct((*s.fields, col))

        schema = _edit_struct(table.schema, _canonical(table.schema, parent, self.name), edit)
        return replace(table, schema=schema, last_column_id=next_id() - 1)

    def inverse(self, before: TableLayout | Struct) -> DropField:
        return DropField(self.path)

    def __str__(self) -> str:
        doc = f"  doc={self.doc!r}" if self.doc else ""
        return f"+ add {dotted(self.path)}: {type_to_str(self.type)}{doc}"


def _strip_elements(parent: Path) -> Path:
    """A struct's Iceberg full name (``items.element``) as the path of its column."""
    while parent and parent[-1] == ELEMENT:
        parent = parent[:-1]
    return parent


def _canonical(struct: Struct, parent: Path, op: str) -> Path:
    """``parent`` without written-out ``element`` levels."""
    parent = _strip_elements(parent)
    if not parent:
        return ()
    found = _find(struct, parent, op)
    return (*found.parent, found.column.name)


@dataclass(frozen=True)
class DropField(_SchemaOperation):
    """Drop the field at ``path``; no other column's values change (Iceberg correctness #2)."""

    path: Path

    verb: ClassVar[str] = "drop"

    def apply_to(self, table: TableLayout) -> TableLayout:
        found = _find(table.schema, self.path, self.name)
        user = _referenced_by_layout(table, found.column)
        if user is not None:
            raise OperationError(
                self.name, f"{dotted(self.path)} is used by {user}: change that first"
            )
        if not found.parent and len(table.schema.fields) == 1:
            raise OperationError(self.name, "a table keeps at least one column")
        return replace(table, schema=_replace_column(table.schema, found, None))

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
        found = _find(table.schema, self.path, self.name)
        _check_free(table.schema, found.parent, self.new_name, self.name, found.column.id)
        renamed = replace(found.column, name=self.new_name)
        return replace(table, schema=_replace_column(table.schema, found, renamed))

    def inverse(self, before: TableLayout | Struct) -> RenameField:
        old = _find(_layout(before).schema, self.path, self.name)
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
        found = _find(table.schema, target[:-1] if element else target, self.name)
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
        found = _find(
            table.schema, self.path[:-1] if self.path[-1] == ELEMENT else self.path, self.name
        )
        if in_place(old, self.to, table.format_version):
            if isinstance(col.type, ListOf):
                new_col = replace(col, type=replace(col.type, element=self.to))
            else:
                new_col = replace(col, type=self.to)
            return replace(table, schema=_replace_column(table.schema, found, new_col))
        # A rewrite: the column is replaced by one of the new type, same name and place.
        if self.path[-1] == ELEMENT or _inside_list(table.schema, found.parent, self.name):
            raise OperationError(
                self.name,
                f"widening {dotted(self.path)} from {old} to {self.to} rewrites the data, "
                "which is supported for fields outside lists only",
            )
        user = _referenced_by_layout(table, col)
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
            schema=_replace_column(table.schema, found, new_col),
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
        found = _find(table.schema, self.path, self.name)
        if not found.column.required:
            raise OperationError(self.name, f"{dotted(self.path)} is already optional")
        new = replace(found.column, required=False)
        return replace(table, schema=_replace_column(table.schema, found, new))

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
        found = _find(table.schema, self.path, self.name)
        fields = [c for c in found.siblings.fields if c.id != found.column.id]
        if self.anchor is None:
            index = 0
        else:
            anchor = _find(table.schema, self.anchor, self.name)
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
        schema = _edit_struct(table.schema, found.parent, lambda _: Struct(tuple(fields)))
        return replace(table, schema=schema)

    def inverse(self, before: TableLayout | Struct) -> MoveField:
        found = _find(_layout(before).schema, self.path, self.name)
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
    found = _find(table.schema, path, op)
    if _inside_list(table.schema, found.parent, op):
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
        source_name = dotted(_path_of_id(table.schema, col.id) or self.source)
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
        clash = _path_of_name(table.schema, name)
        if clash is not None and not (transform == "identity" and clash == col.id):
            raise OperationError(self.name, f"partition name {name!r} is a column's name")
        field_ = PartitionField(col.id, transform, name)
        return replace(table, partition=(*table.partition, field_))

    def inverse(self, before: TableLayout | Struct) -> RemovePartitionField:
        after = self.apply_to(_layout(before))
        return RemovePartitionField(after.partition[-1].name)

    @property
    def why_irreversible(self) -> None:
        return None

    def __str__(self) -> str:
        alias = f" as {self.partition_name}" if self.partition_name else ""
        return f"+ partition by {self.transform}({dotted(self.source)}){alias}"


def _path_of_name(struct: Struct, name: str) -> int | None:
    for c in struct.fields:
        if c.name == name:
            return c.id
    return None


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
        layout = _layout(before)
        removed = next(p for p in layout.partition if p.name == self.partition_name)
        source = _path_of_id(layout.schema, removed.source_id)
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
        return f"{_sort_text(self.transform, dotted(self.source))} {self.direction} {self.nulls}"


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
        layout = _layout(before)
        keys = []
        for s in layout.sort:
            path = _path_of_id(layout.schema, s.source_id)
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
    return AddField(as_path(path), _as_type(type), doc)


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


# --- plans -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Evolution:
    """A plan of operations against one layout of a table, with who decided it and why.

    ``decided_by`` is ``"user"`` or the rule that made the plan (``"RULES 3"``); ``batch``
    the batch that triggered it; ``reasons`` an optional reason per operation. Build one
    with :func:`plan_evolution`, which checks every operation in order.
    """

    before: TableLayout
    operations: tuple[Operation, ...]
    decided_by: str = "user"
    batch: str | None = None
    reason: str | None = None
    reasons: tuple[str | None, ...] = field(default=())

    @cached_property
    def layouts(self) -> tuple[TableLayout, ...]:
        """The layout before each operation, then after the last one."""
        out = [self.before]
        for i, op in enumerate(self.operations):
            try:
                out.append(op.apply_to(out[-1]))
            except OperationError as exc:
                raise OperationError(f"operation {i + 1} ({exc.operation})", exc.detail) from exc
        return tuple(out)

    @property
    def after(self) -> TableLayout:
        return self.layouts[-1]

    @property
    def schema(self) -> Struct:
        """The schema the table has once the plan is committed."""
        return self.after.schema

    @property
    def rewrites(self) -> tuple[WidenField, ...]:
        """The widenings that rewrite data (shown with the rows/bytes they touch)."""
        return tuple(op for op in self.operations if isinstance(op, WidenField) and op.rewrite)

    @property
    def irreversible(self) -> tuple[str, ...]:
        """Why the plan cannot be undone by schema changes (empty: :meth:`inverse` works)."""
        return tuple(w for op in self.operations if (w := op.why_irreversible) is not None)

    def inverse(self) -> Evolution | None:
        """The plan that undoes this one, applied to the layout after it; None when one of
        its operations has no inverse (see :attr:`irreversible`)."""
        if self.irreversible:
            return None
        undo: list[Operation] = []
        for op, before in zip(self.operations, self.layouts, strict=False):
            back = op.inverse(before)
            assert back is not None
            undo.append(back)
        return plan_evolution(
            self.after,
            reversed(undo),
            decided_by=self.decided_by,
            batch=self.batch,
            reason=f"undo: {self.reason}" if self.reason else "undo",
        )

    def subject_ids(self) -> tuple[int | None, ...]:
        """Per operation, the field ID of the field it acts on when it applies (None for
        adds and partition removals). Undo compares them so it never acts on a field that
        merely has the same name as the one the plan changed."""
        return tuple(
            subject_id(op, before)
            for op, before in zip(self.operations, self.layouts, strict=False)
        )

    def __str__(self) -> str:
        head = f"{self.decided_by}: {len(self.operations)} operation(s)"
        if self.batch is not None:
            head += f" (batch {self.batch})"
        if self.reason:
            head += f": {self.reason}"
        lines = [head]
        for i, op in enumerate(self.operations):
            lines.append(f"  {op}")
            why = self.reasons[i] if i < len(self.reasons) else None
            if why:
                lines.append(f"      {why}")
        return "\n".join(lines)


def subject_id(op: Operation, layout: TableLayout) -> int | None:
    """The field ID an operation acts on in ``layout`` (None: adds, partition removals and
    sort orders)."""
    if isinstance(op, AddField | RemovePartitionField | ReplaceSortOrder):
        return None
    if isinstance(op, AddPartitionField):
        return _find(layout.schema, op.source, op.name).column.id
    path = op.path[:-1] if op.path[-1] == ELEMENT else op.path
    return _find(layout.schema, path, op.name).column.id


def plan_evolution(
    before: TableLayout | Struct,
    operations: Iterable[Operation],
    *,
    decided_by: str = "user",
    batch: str | None = None,
    reason: str | None = None,
    reasons: Sequence[str | None] = (),
) -> Evolution:
    """Check ``operations`` in order against ``before`` and return the plan; raises
    :class:`OperationError` naming the first operation and field that cannot apply.

    Each widening is marked as a rewrite exactly when Iceberg cannot do it in place, so
    the preview shows it; committing such a plan is the approval of that rewrite.
    """
    layout = _layout(before)
    ops: list[Operation] = []
    current = layout
    for i, op in enumerate(operations):
        if isinstance(op, WidenField):
            try:
                op = replace(op, rewrite=op.needs_rewrite(current))
            except OperationError as exc:
                raise OperationError(f"operation {i + 1} ({exc.operation})", exc.detail) from exc
        try:
            current = op.apply_to(current)
        except OperationError as exc:
            raise OperationError(f"operation {i + 1} ({exc.operation})", exc.detail) from exc
        ops.append(op)
    return Evolution(layout, tuple(ops), decided_by, batch, reason, tuple(reasons))


# --- a plan as JSON (lineage) ----------------------------------------------------------------


def operation_to_json(op: Operation) -> dict[str, Any]:
    """A compact JSON-able form of an operation (types as Iceberg type strings)."""
    if isinstance(op, AddField):
        out: dict[str, Any] = {"op": "add", "path": list(op.path), "type": type_to_str(op.type)}
        if op.doc is not None:
            out["doc"] = op.doc
        return out
    if isinstance(op, DropField):
        return {"op": "drop", "path": list(op.path)}
    if isinstance(op, RenameField):
        return {"op": "rename", "path": list(op.path), "to": op.new_name}
    if isinstance(op, WidenField):
        out = {"op": "widen", "path": list(op.path), "to": op.to, "rewrite": op.rewrite}
        out.update({k: v for k, v in (("rows", op.rows), ("bytes", op.bytes)) if v is not None})
        return out
    if isinstance(op, MakeOptional):
        return {"op": "optional", "path": list(op.path)}
    if isinstance(op, MoveField):
        out = {"op": "move", "path": list(op.path), "position": op.position}
        if op.anchor is not None:
            out["anchor"] = list(op.anchor)
        return out
    if isinstance(op, AddPartitionField):
        out = {"op": "partition", "source": list(op.source), "transform": op.transform}
        if op.partition_name is not None:
            out["name"] = op.partition_name
        return out
    if isinstance(op, RemovePartitionField):
        return {"op": "unpartition", "name": op.partition_name}
    return {
        "op": "sort",
        "keys": [
            {"source": list(k.source), "direction": k.direction, "nulls": k.nulls,
             "transform": k.transform}
            for k in op.keys
        ],
    }  # fmt: skip


def operation_from_json(data: Mapping[str, Any]) -> Operation:
    """The operation :func:`operation_to_json` wrote."""
    kind = data.get("op")
    path = tuple(data.get("path", ()))
    if kind == "add":
        return AddField(path, parse_type(data["type"]), data.get("doc"))
    if kind == "drop":
        return DropField(path)
    if kind == "rename":
        return RenameField(path, data["to"])
    if kind == "widen":
        return WidenField(path, data["to"], data["rewrite"], data.get("rows"), data.get("bytes"))
    if kind == "optional":
        return MakeOptional(path)
    if kind == "move":
        anchor = data.get("anchor")
        return MoveField(path, data["position"], None if anchor is None else tuple(anchor))
    if kind == "partition":
        return AddPartitionField(tuple(data["source"]), data["transform"], data.get("name"))
    if kind == "unpartition":
        return RemovePartitionField(data["name"])
    if kind == "sort":
        return ReplaceSortOrder(
            tuple(
                SortKey(tuple(k["source"]), k["direction"], k["nulls"], k["transform"])
                for k in data["keys"]
            )
        )
    raise ValueError(f"unknown operation {kind!r} in {dict(data)!r}")


__all__ = [
    "AddField",
    "AddPartitionField",
    "DropField",
    "Evolution",
    "MakeOptional",
    "MoveField",
    "Operation",
    "OperationError",
    "PartitionField",
    "RemovePartitionField",
    "RenameField",
    "ReplaceSortOrder",
    "SortField",
    "SortKey",
    "TableLayout",
    "WidenField",
    "add",
    "as_path",
    "drop",
    "field_at",
    "make_optional",
    "move_after",
    "move_before",
    "move_first",
    "operation_from_json",
    "operation_to_json",
    "parse_type",
    "partition_by",
    "plan_evolution",
    "remove_partition",
    "rename",
    "sort_by",
    "subject_id",
    "widen_to",
]
