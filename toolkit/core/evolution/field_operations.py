"""Operations on what a field carries besides its type (RULES 6): its doc and the table's
identifier fields; and the checks Iceberg makes on a plan's final schema.

Order semantics of a plan (docs/rules.md, "Order of a plan"): each operation sees the
results of the ones before it (a field renamed in step 1 is named by its new name in step
2); the checks Iceberg makes on the schema a commit produces -- a table keeps at least one
column, identifier fields exist and are valid -- are made once, on the plan's result
(:func:`check_result`), so ``[drop("id"), add("key", "long")]`` or
``[set_identifier_fields("key"), drop("id")]`` are plans like any other.

>>> from toolkit.core.evolution.layout import TableLayout
>>> from toolkit.core.values.types import Column, Struct
>>> table = TableLayout(Struct((Column(1, "id", "long", required=True), Column(2, "x", "double"))))
>>> op = set_identifier_fields("id")
>>> print(op, "|", op.apply_to(table).identifier_ids, "|", op.to_json())
= identifier fields: id | (1,) | {'op': 'identifier', 'paths': [['id']]}
>>> print(update_doc(2, "metres").located(table))
~ doc x (#2) -> 'metres'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Final, Protocol, runtime_checkable

from toolkit.core.evolution.field_ids import field_target, label, path_of_field_id
from toolkit.core.evolution.layout import (
    Path,
    PathLike,
    TableLayout,
    as_layout,
    dotted,
    find,
    find_slot,
    path_of_id,
    replace_column,
    struct_in,
)
from toolkit.core.evolution.operation_base import (
    Operation,
    SchemaOperation,
    TableEditor,
    path_of_json,
)
from toolkit.core.values.types import ColumnType, ListOf, MapOf, Struct
from toolkit.errors import OperationError

#: Iceberg: identifier fields are never floating point (equality of NaN and -0.0)
_NOT_IDENTIFIER: Final = frozenset({"float", "double"})


@dataclass(frozen=True, repr=False)
class UpdateDoc(SchemaOperation):
    """Set (or with None, remove) the doc of the field at ``path`` (or with ID
    ``field_id``); undone by setting the old doc back."""

    path: Path
    doc: str | None
    field_id: int | None = None

    op: ClassVar[str] = "doc"
    verb: ClassVar[str] = "doc"

    def _apply(self, table: TableLayout) -> TableLayout:
        slot = find_slot(table.schema, self.path, self.what)
        if slot.steps:
            raise OperationError(
                self.what,
                f"{dotted(self.path)} is a list element or map value, which has no doc "
                "(Iceberg keeps docs on fields)",
            )
        new = replace(slot.found.column, doc=self.doc)
        return replace(table, schema=replace_column(table.schema, slot.found, new))

    def inverse(self, before: TableLayout | Struct) -> UpdateDoc:
        layout = as_layout(before)
        op = self.located(layout)
        found = find(layout.schema, op.path, op.what)
        return UpdateDoc((*found.parent, found.column.name), found.column.doc)

    def stage(self, editor: TableEditor, before: TableLayout, after: TableLayout) -> None:
        editor.update_column_doc(self.located(before).path, self.doc)

    def to_json(self) -> dict[str, Any]:
        return self._json({"op": self.op, "path": list(self.path), "doc": self.doc})

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> UpdateDoc:
        return cls(path_of_json(data), data.get("doc"), data.get("id"))

    def __str__(self) -> str:
        return f"~ doc {label(self.path, self.field_id)} -> {self.doc!r}"


@dataclass(frozen=True)
class SetIdentifierFields:
    """Make ``paths`` (each a path, or with its ``ids`` entry a field ID) the table's
    identifier fields, replacing the ones it has; none: the table has none. Iceberg's rules
    (required, primitive, not float or double, outside lists and maps, every enclosing struct
    required) are checked on the plan's result (:func:`check_result`)."""

    paths: tuple[Path, ...]
    ids: tuple[int | None, ...] = ()

    op: ClassVar[str] = "identifier"

    def __post_init__(self) -> None:
        if not self.ids:
            object.__setattr__(self, "ids", (None,) * len(self.paths))

    @property
    def name(self) -> str:
        shown = ", ".join(label(p, i) for p, i in zip(self.paths, self.ids, strict=True))
        return f"set identifier fields ({shown or 'none'})"

    @property
    def why_irreversible(self) -> str | None:
        return None

    def located(self, table: TableLayout, where: str | None = None) -> SetIdentifierFields:
        paths = tuple(
            p if i is None else path_of_field_id(table, i, self.name, where)
            for p, i in zip(self.paths, self.ids, strict=True)
        )
        return self if paths == self.paths else replace(self, paths=paths)

    def planned_on(self, table: TableLayout) -> SetIdentifierFields:
        return self.located(table)

    def apply_to(self, table: TableLayout) -> TableLayout:
        op = self.located(table)
        ids: list[int] = []
        for path in op.paths:
            slot = find_slot(table.schema, path, op.name)
            if slot.steps:
                raise OperationError(
                    op.name,
                    f"{dotted(path)} is a list element or map part: identifier fields are "
                    "fields outside lists and maps (Iceberg)",
                )
            if slot.id not in ids:
                ids.append(slot.id)
        return replace(table, identifier_ids=tuple(sorted(ids)))

    def inverse(self, before: TableLayout | Struct) -> SetIdentifierFields:
        layout = as_layout(before)
        paths = tuple(path_of_id(layout.schema, i) or () for i in layout.identifier_ids)
        return SetIdentifierFields(paths)

    def subject_id(self, table: TableLayout) -> None:
        return None

    def stage(self, editor: TableEditor, before: TableLayout, after: TableLayout) -> None:
        editor.set_identifier_fields(self.located(before).paths)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.op, "paths": [list(p) for p in self.paths]}
        if any(i is not None for i in self.ids):
            out["ids"] = list(self.ids)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SetIdentifierFields:
        paths = tuple(tuple(p) for p in data.get("paths", ()))
        return cls(paths, tuple(data.get("ids") or (None,) * len(paths)))

    def __str__(self) -> str:
        shown = ", ".join(label(p, i) for p, i in zip(self.paths, self.ids, strict=True))
        return f"= identifier fields: {shown or 'none'}"


def update_doc(path: PathLike | int, doc: str | None) -> UpdateDoc:
    """Set a field's doc (named by path or field ID); ``None`` removes it:
    ``update_doc("price", "in euros")``."""
    where, field_id = field_target(path, "doc")
    return UpdateDoc(where, doc, field_id)


def set_identifier_fields(*paths: PathLike | int) -> SetIdentifierFields:
    """Make these fields (paths or field IDs) the table's identifier fields:
    ``set_identifier_fields("id")``, ``set_identifier_fields("tenant", "id")``; none: no
    identifier fields."""
    targets = [field_target(p, "set identifier fields") for p in paths]
    return SetIdentifierFields(tuple(p for p, _ in targets), tuple(i for _, i in targets))


@runtime_checkable
class Expanding(Protocol):
    """An operation that stands for several (union by name): a plan is made of the ones it
    expands to against the layout it applies to, so previews and lineage show those."""

    def expand(self, table: TableLayout) -> list[Operation]: ...


# --- the checks Iceberg makes on the final schema ------------------------------------------


def _parents(struct: Struct, field_id: int) -> list[tuple[ColumnType, bool, int]] | None:
    """The types, required flags and IDs from the top down to the field ``field_id``
    (the field last); None when it is not in a struct reachable without lists or maps."""

    def walk(s: Struct) -> list[tuple[ColumnType, bool, int]] | None:
        for c in s.fields:
            if c.id == field_id:
                return [(c.type, c.required, c.id)]
            inner = struct_in(c.type)
            if inner is not None:
                sub = walk(inner)
                if sub is not None:
                    return [(c.type, c.required, c.id), *sub]
        return None

    return walk(struct)


def identifier_problem(table: TableLayout, field_id: int) -> str | None:
    """Why field ``field_id`` cannot be an identifier field of ``table`` (Iceberg's rules,
    PyIceberg ``Schema._validate_identifier_field``), or None when it can."""
    chain = _parents(table.schema, field_id)
    if chain is None:
        return "it is not in the table (dropped?): identifier fields must exist"
    name = table.column_name(field_id)
    for t, required, _ in chain[:-1]:
        if isinstance(t, ListOf | MapOf):
            return f"{name} is inside a list or map: identifier fields are outside them"
        if not required:
            return f"{name} is inside an optional struct: every enclosing struct is required"
    t, required, _ = chain[-1]
    if not isinstance(t, str):
        return f"{name} is not a primitive type"
    if not required:
        return f"{name} is optional: identifier fields are required"
    if t in _NOT_IDENTIFIER:
        return f"{name} is {t}: identifier fields are not float or double"
    return None


def refuse_identifier_changes(
    where: str, after: Struct, ids: Sequence[int], rewritten: Mapping[int, str] | None = None
) -> None:
    """Refuse (:class:`OperationError`) a batch's plan that would change one of the table's
    identifier fields ``ids``: the policies never change them (docs/rules.md, *Identifier
    fields and the policies*), so a batch that needs one made optional or rewritten (a new
    column, RULES 5; ``rewritten``: the names of the columns rewritten, by field ID) is
    refused whole, in
    ``simulate`` as on a real table. An in-place promotion (int -> long) keeps the field:
    Iceberg allows it."""
    layout = TableLayout(after, identifier_ids=tuple(ids))
    for field_id in ids:
        problem = (
            f"{rewritten[field_id]} would be rewritten as a new column under a new field ID "
            "(RULES 5)"
            if rewritten and field_id in rewritten else identifier_problem(layout, field_id)
        )
        if problem is not None:
            raise OperationError(
                where,
                f"identifier field {problem}; nothing was committed (a batch that needs it "
                "changed is refused whole: change the identifier fields first)",
            )


def check_result(
    before: TableLayout, operations: Sequence[Operation], layouts: Sequence[TableLayout]
) -> None:
    """Iceberg's checks on the schema a plan commits, made once on the result (the order
    semantics above): at least one column, and valid identifier fields. The error names the
    last operation that touched the field (``layouts``: before each operation, then after)."""
    after = layouts[-1]
    if not operations:
        return
    if before.schema.fields and not after.schema.fields:
        _raise(
            operations,
            len(operations) - 1,
            "a table keeps at least one column (Iceberg): "
            "the plan's result has none; add one in the same plan",
        )
    for field_id in after.identifier_ids:
        problem = identifier_problem(after, field_id)
        if problem is None:
            continue
        shown = before.column_name(field_id) if path_of_id(before.schema, field_id) else None
        who = _last_touching(operations, layouts, field_id)
        what = f"identifier field {shown or f'#{field_id}'}: {problem}"
        if not isinstance(operations[who], SetIdentifierFields):
            what += "; change the identifier fields first (set_identifier_fields)"
        _raise(operations, who, what)


def _raise(operations: Sequence[Operation], index: int, detail: str) -> None:
    raise OperationError(f"operation {index + 1} ({operations[index].name})", detail)


def _last_touching(
    operations: Sequence[Operation], layouts: Sequence[TableLayout], field_id: int
) -> int:
    """The index of the last operation acting on ``field_id`` or a struct holding it, or
    setting the identifier fields; the last operation when none does."""
    chain = _parents(layouts[0].schema, field_id) or []
    ids = {i for _, _, i in chain} | {field_id}
    found = len(operations) - 1
    for index, (op, before) in enumerate(zip(operations, layouts, strict=False)):
        if isinstance(op, SetIdentifierFields):
            found = index
            continue
        try:
            subject = op.subject_id(before)
        except OperationError:
            continue
        if subject in ids:
            found = index
    return found


__all__ = [
    "Expanding",
    "SetIdentifierFields",
    "UpdateDoc",
    "check_result",
    "identifier_problem",
    "set_identifier_fields",
    "update_doc",
]
