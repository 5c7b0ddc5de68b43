"""Fields named by field ID in operations (RULES 6, issue 15): ``rename(2, "full_name")``.

An operation on an existing field may name it by ID instead of path; the ID is looked up
in the table's layout when the plan is made (the operation's ``located``), and the planned
operation keeps the path found and the ID. Here: how such a field is shown (``#2``, then
``name (#2)``), the lookup with its error, and the partition and sort operations whose
source is named by ID (the schema operations carry a ``field_id`` themselves).

>>> from toolkit.core.values.types import Column, Struct
>>> table = TableLayout(Struct((Column(1, "id", "long"), Column(2, "ts", "timestamptz"))))
>>> op = PartitionById((), "day", source_id=2)
>>> print(op, "|", op.located(table), "|", op.to_json())
+ partition by day(#2) | + partition by day(ts (#2)) | \
{'op': 'partition', 'transform': 'day', 'source_id': 2}
>>> path_of_field_id(table, 3, "drop #3", "db.t")
Traceback (most recent call last):
...
toolkit.errors.OperationError: drop #3: no field has ID 3 in db.t (its fields' IDs: 1 id, 2 ts); ...
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, Final, Protocol, Self, TypeVar, cast, runtime_checkable

from toolkit.core.evolution.layout import (
    ELEMENT,
    KEY,
    VALUE,
    Path,
    PathLike,
    TableLayout,
    as_layout,
    as_path,
    dotted,
    sort_text,
)
from toolkit.core.evolution.spec_operations import (
    AddPartitionField,
    RemovePartitionField,
    ReplaceSortOrder,
    SortKey,
    SpecEditor,
)
from toolkit.core.values.types import ColumnType, ListOf, MapOf, Struct
from toolkit.errors import OperationError

#: how many fields an unknown-ID error lists
_IDS_SHOWN: Final = 30
#: the dataclass fields holding the IDs a user named fields by (not shown when unset)
_ID_FIELDS: Final = ("field_id", "anchor_id")

T = TypeVar("T")


def label(path: Path, field_id: int | None) -> str:
    """How an operation names its field: ``a.b``, ``#7`` (by ID, not looked up yet), or
    ``a.b (#7)`` (by ID, looked up)."""
    if field_id is None:
        return dotted(path)
    return f"#{field_id}" if not path else f"{dotted(path)} (#{field_id})"


def field_ids(struct: Struct) -> dict[int, Path]:
    """Every field ID of ``struct`` and the path an operation names it by: a field's
    canonical path (no ``element`` or ``value``), a list's element as ``<list>.element``, a
    map's key and value as ``<map>.key`` and ``<map>.value``.

    >>> from toolkit.core.values.types import Column, ListOf
    >>> field_ids(Struct((Column(1, "a", ListOf(2, Struct((Column(3, "b", "long"),)))),)))
    {1: ('a',), 2: ('a', 'element'), 3: ('a', 'b')}
    """
    out: dict[int, Path] = {}

    def walk(prefix: Path, t: ColumnType, canonical_prefix: Path) -> None:
        if isinstance(t, ListOf):
            out[t.element_id] = (*prefix, ELEMENT)
            walk((*prefix, ELEMENT), t.element, canonical_prefix)
        elif isinstance(t, MapOf):
            # a key's fields keep their full name (operations on them are refused by name)
            out[t.key_id] = (*prefix, KEY)
            walk((*prefix, KEY), t.key, (*prefix, KEY))
            out[t.value_id] = (*prefix, VALUE)
            walk((*prefix, VALUE), t.value, canonical_prefix)
        elif isinstance(t, Struct):
            for c in t.fields:
                out[c.id] = (*canonical_prefix, c.name)
                walk((*canonical_prefix, c.name), c.type, (*canonical_prefix, c.name))

    walk((), struct, ())
    return out


def path_of_field_id(table: TableLayout, field_id: int, op: str, where: str | None = None) -> Path:
    """The path of field ``field_id`` in ``table`` (``where``: the table's name, for the
    error); raises :class:`OperationError` listing the table's field IDs when none has it."""
    known = field_ids(table.schema)
    path = known.get(field_id)
    if path is not None:
        return path
    listed = ", ".join(f"{i} {dotted(p)}" for i, p in sorted(known.items())[:_IDS_SHOWN])
    if len(known) > _IDS_SHOWN:
        listed += f", ... ({len(known)} fields in all)"
    hint = (
        ""
        if where is None
        else f"; print(toolkit.preview_evolution(catalog, {where!r}, []).plan.before) shows "
        f"the columns' IDs, toolkit.edit_schema(catalog, {where!r}) every field's in a notebook"
    )
    raise OperationError(
        op,
        f"no field has ID {field_id} in {where or 'the table'} (its fields' IDs: "
        f"{listed or 'none'}){hint}",
    )


def field_target(
    path: PathLike | int, what: str, *, new: bool = False
) -> tuple[Path, int | None]:
    """A constructor's field: a path, or a field ID looked up when the plan is made (not for
    a ``new`` field: it has no ID yet)."""
    if isinstance(path, bool):
        raise OperationError(
            f"{what} {path!r}",
            'name the field by its path ("address.zip" or ("a.b",)) or its field ID (an int)',
        )
    if new and isinstance(path, int):
        raise OperationError(
            f"{what} {path!r}",
            "a new field has no field ID yet (Iceberg assigns one when it is added): name it "
            'by its path, e.g. add("zip", "string") or add("address.zip", "string")',
        )
    if isinstance(path, int):
        return (), path
    return as_path(path), None


class NamedById:
    """What an operation on one field (at ``path``) gains from naming it by ID instead:
    ``field_id`` (None: by path), :meth:`located`, the ID in its JSON form, and a repr
    that leaves out IDs not set (as it read before IDs existed)."""

    field_id: int | None = None
    if TYPE_CHECKING:  # the operation's

        @property
        def path(self) -> Path: ...

        @property
        def what(self) -> str: ...

    def located(self, table: TableLayout, where: str | None = None) -> Self:
        """The operation with its field's path looked up from its ID in ``table`` (keeping
        the ID); itself when it names the field by path. ``where`` names the table in the
        error an unknown ID raises."""
        if self.field_id is None:
            return self
        path = path_of_field_id(table, self.field_id, self.what, where)
        return self if path == self.path else cast(Self, replace(cast(Any, self), path=path))

    def _json(self, out: dict[str, Any]) -> dict[str, Any]:
        """``out`` (the JSON form by path) with the field ID, when it was named by one."""
        if self.field_id is None:
            return out
        if not self.path:
            out.pop("path", None)
        return {**out, "id": self.field_id}

    def __repr__(self) -> str:
        shown = (
            f"{f.name}={getattr(self, f.name)!r}"
            for f in fields(cast(Any, self))
            if f.repr and not (f.name in _ID_FIELDS and getattr(self, f.name) is None)
        )
        return f"{type(self).__name__}({', '.join(shown)})"


@runtime_checkable
class Locatable(Protocol):
    """An operation that may name fields by ID (:meth:`located` looks them up)."""

    def located(self, table: TableLayout, where: str | None = None) -> Any: ...


def locate(op: T, table: TableLayout, where: str | None = None) -> T:
    """``op`` with the fields it names by ID looked up in ``table`` (``where``: the table's
    name, for errors); ``op`` itself when it names them by path."""
    return cast(T, op.located(table, where)) if isinstance(op, Locatable) else op


@dataclass(frozen=True)
class PartitionById(AddPartitionField):
    """``partition_by(3, "day")``: an :class:`AddPartitionField` whose source is named by
    field ID; planned, it keeps the ID and the source's path (``day(ts (#3))``)."""

    source_id: int = field(kw_only=True)

    @property
    def name(self) -> str:
        return f"partition by {self.transform}({label(self.source, self.source_id)})"

    def located(self, table: TableLayout, where: str | None = None) -> Self:
        source = path_of_field_id(table, self.source_id, self.name, where)
        return self if source == self.source else replace(self, source=source)

    def planned_on(self, table: TableLayout) -> Self:
        return self.located(table)

    def apply_to(self, table: TableLayout) -> TableLayout:
        return AddPartitionField.apply_to(self.located(table), table)

    def inverse(self, before: TableLayout | Struct) -> RemovePartitionField:
        return AddPartitionField.inverse(self.located(as_layout(before)), before)

    def subject_id(self, table: TableLayout) -> int:
        return AddPartitionField.subject_id(self.located(table), table)

    def stage(self, editor: SpecEditor, before: TableLayout, after: TableLayout) -> None:
        AddPartitionField.stage(self.located(before), editor, before, after)

    def to_json(self) -> dict[str, Any]:
        out = {**super().to_json(), "source_id": self.source_id}
        if not self.source:
            del out["source"]
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AddPartitionField:
        if data.get("source_id") is None:  # written by path
            return AddPartitionField.from_json(data)
        return cls(
            tuple(data.get("source", ())),
            data["transform"],
            data.get("name"),
            source_id=data["source_id"],
        )

    def __str__(self) -> str:
        alias = f" as {self.partition_name}" if self.partition_name else ""
        return f"+ {self.name}{alias}"


@dataclass(frozen=True)
class SortById(ReplaceSortOrder):
    """``sort_by(3, SortKey(5, "desc"))``: a :class:`ReplaceSortOrder` some of whose keys
    name their source by field ID (``key_ids``, one per key; None: by path)."""

    key_ids: tuple[int | None, ...] = field(kw_only=True)

    def located(self, table: TableLayout, where: str | None = None) -> Self:
        keys = tuple(
            k if i is None else replace(k, source=path_of_field_id(table, i, self.name, where))
            for k, i in zip(self.keys, self.key_ids, strict=True)
        )
        return self if keys == self.keys else replace(self, keys=keys)

    def planned_on(self, table: TableLayout) -> Self:
        return self.located(table)

    def apply_to(self, table: TableLayout) -> TableLayout:
        return ReplaceSortOrder.apply_to(self.located(table), table)

    def stage(self, editor: SpecEditor, before: TableLayout, after: TableLayout) -> None:
        ReplaceSortOrder.stage(self.located(before), editor, before, after)

    def to_json(self) -> dict[str, Any]:
        out = super().to_json()
        for key, i in zip(out["keys"], self.key_ids, strict=True):
            if i is not None:
                key["id"] = i
                if not key["source"]:
                    del key["source"]
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ReplaceSortOrder:
        ids = tuple(k.get("id") for k in data["keys"])
        if all(i is None for i in ids):  # written by path
            return ReplaceSortOrder.from_json(data)
        keys = tuple(
            SortKey(tuple(k.get("source", ())), k["direction"], k["nulls"], k["transform"])
            for k in data["keys"]
        )
        return cls(keys, key_ids=ids)

    def __str__(self) -> str:
        shown = (
            f"{sort_text(k.transform, label(k.source, i))} {k.direction} {k.nulls}"
            for k, i in zip(self.keys, self.key_ids, strict=True)
        )
        return "= sort by " + (", ".join(shown) or "nothing (unsorted)")


__all__ = [
    "Locatable",
    "NamedById",
    "PartitionById",
    "SortById",
    "field_ids",
    "field_target",
    "label",
    "locate",
    "path_of_field_id",
]
