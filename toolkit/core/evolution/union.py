"""Union by name (RULES 6): evolve a table so it holds a given schema, as PyIceberg's
``UpdateSchema.union_by_name`` and Iceberg Java's ``UnionByNameVisitor`` do.

Fields are matched by name, struct by struct (through list elements and map values):
a field the table lacks is added (with its nested fields and docs); a primitive type
widens where the schema's is wider (to its own type, or one that fits the table's: no
change); a field optional in the schema becomes optional; a new doc replaces the old.
Nothing is dropped, moved or renamed. A plan shows the union as those operations
(:meth:`UnionByName.expand`), so previews and lineage list each add and widening.

One deliberate difference (docs/rules.md): a field the schema declares required is added
required only to a table with no rows; otherwise optional, since rows written before it
have no value (PyIceberg refuses such a union unless incompatible changes are allowed).

>>> from toolkit.core.evolution.layout import TableLayout
>>> from toolkit.core.values.types import Column, Struct, parse_type
>>> table = TableLayout(Struct((Column(1, "id", "int", required=True),)))
>>> wanted = parse_type("struct<id: long, tags: list<string>>")
>>> for op in UnionByName(wanted).expand(table):
...     print(op)
? make optional id
^ widen id -> long
+ add tags: list<string>
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from toolkit.core.evolution.field_operations import UpdateDoc
from toolkit.core.evolution.layout import ELEMENT, VALUE, Path, TableLayout, as_layout
from toolkit.core.evolution.operation_base import Operation, TableEditor
from toolkit.core.evolution.operations import AddField, MakeOptional, WidenField
from toolkit.core.evolution.planfile import schema_from_json, schema_to_json
from toolkit.core.values.types import ColumnType, ListOf, MapOf, Opaque, Struct, type_to_str
from toolkit.core.values.widening import in_place, matrix_name, widen
from toolkit.errors import OperationError

_WHAT = "union by name"


@dataclass(frozen=True)
class UnionByName:
    """Evolve the table to hold ``target`` (a schema in the core's model; its field IDs
    do not matter). Planned, it is the operations :meth:`expand` lists."""

    target: Struct

    op: ClassVar[str] = "union"

    @property
    def name(self) -> str:
        return _WHAT

    @property
    def why_irreversible(self) -> str | None:
        return None  # never in a planned plan: its operations are

    def expand(self, table: TableLayout) -> list[Operation]:
        """The adds, widenings, docs and fields made optional that give ``table`` every
        field of the target; raises :class:`OperationError` where Iceberg cannot."""
        out: list[Operation] = []
        _union_struct(table.schema, self.target, (), out, table)
        return out

    def planned_on(self, table: TableLayout) -> UnionByName:
        return self

    def apply_to(self, table: TableLayout) -> TableLayout:
        for op in self.expand(table):
            table = op.planned_on(table).apply_to(table)
        return table

    def inverse(self, before: TableLayout | Struct) -> None:
        return None

    def subject_id(self, table: TableLayout) -> None:
        return None

    def stage(self, editor: TableEditor, before: TableLayout, after: TableLayout) -> None:
        layout = as_layout(before)
        for op in self.expand(layout):
            planned = op.planned_on(layout)
            nxt = planned.apply_to(layout)
            planned.stage(editor, layout, nxt)
            layout = nxt

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "schema": schema_to_json(self.target)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> UnionByName:
        return cls(schema_from_json(data["schema"]))

    def __str__(self) -> str:
        return f"u union by name with {type_to_str(self.target)}"


def _union_struct(
    existing: Struct, target: Struct, path: Path, out: list[Operation], table: TableLayout
) -> None:
    mine = existing.by_name()
    for f in target.fields:
        old = mine.get(f.name)
        here = (*path, f.name)
        if old is None:
            if isinstance(f.type, Opaque):
                raise OperationError(_WHAT, f"{'.'.join(here)}: type {f.type.text} cannot be added")
            # required only where no row lacks it (docs/rules.md: a deliberate difference)
            out.append(AddField(here, f.type, f.doc, f.required and not table.has_rows))
            continue
        _union_slot(old.type, old.required, f.type, f.required, here, out, table)
        if f.doc is not None and f.doc != old.doc:
            out.append(UpdateDoc(here, f.doc))


def _fits(new: str, old: str, format_version: int) -> bool:
    """Whether values of type ``new`` already fit a column of type ``old`` (no change)."""
    if new == old or in_place(new, old, format_version):
        return True
    m_new, m_old = matrix_name(new), matrix_name(old)
    return m_new != m_old and widen(m_old, m_new) == m_old


def _union_slot(
    old: ColumnType,
    old_required: bool,
    new: ColumnType,
    new_required: bool,
    path: Path,
    out: list[Operation],
    table: TableLayout,
) -> None:
    if old_required and not new_required:
        out.append(MakeOptional(path))
    if isinstance(old, str) and isinstance(new, str):
        if not _fits(new, old, table.format_version):
            out.append(WidenField(path, new))
    elif isinstance(old, Struct) and isinstance(new, Struct):
        _union_struct(old, new, path, out, table)
    elif isinstance(old, ListOf) and isinstance(new, ListOf):
        _union_slot(old.element, old.element_required, new.element, new.element_required,
                    (*path, ELEMENT), out, table)  # fmt: skip
    elif isinstance(old, MapOf) and isinstance(new, MapOf):
        if old.key != new.key and not (
            isinstance(old.key, str)
            and isinstance(new.key, str)
            and _fits(new.key, old.key, table.format_version)
        ):
            raise OperationError(
                _WHAT,
                f"{'.'.join(path)}: map keys are {type_to_str(old.key)} in the table and "
                f"{type_to_str(new.key)} in the schema; a map's key cannot change (Iceberg)",
            )
        _union_slot(old.value, old.value_required, new.value, new.value_required,
                    (*path, VALUE), out, table)  # fmt: skip
    elif old != new:
        raise OperationError(
            _WHAT,
            f"{'.'.join(path)} is {type_to_str(old)} in the table and {type_to_str(new)} in "
            "the schema: Iceberg cannot change one into the other",
        )


__all__ = ["UnionByName"]
