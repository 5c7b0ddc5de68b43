"""What every operation of a plan offers (RULES 6): the :class:`Operation` protocol, the
:class:`TableEditor` an adapter stages them with, and the shared behaviour of schema
operations (named by path or field ID). The operations themselves live in
:mod:`toolkit.core.evolution.operations` (add, drop, rename, widen, make optional, move) and
:mod:`toolkit.core.evolution.field_operations` (doc, identifier fields, union by name)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, Self

from toolkit.core.evolution.field_ids import NamedById, label
from toolkit.core.evolution.layout import Path, Position, TableLayout, find_slot
from toolkit.core.evolution.spec_operations import SpecEditor
from toolkit.core.values.types import Column, ColumnType, Struct


class WideningLike(Protocol):
    """What an adapter reads of a widening it stages
    (:class:`toolkit.core.evolution.operations.Widening`)."""

    @property
    def path(self) -> Path: ...

    @property
    def to(self) -> str: ...

    @property
    def rewrite(self) -> bool: ...

    def resolve(self, table: TableLayout) -> tuple[Column, str]: ...


# --- what every operation offers -------------------------------------------------------------


class Operation(Protocol):
    """One schema, partition spec or sort order change (RULES 6). ``op`` is its JSON name
    (a key of :data:`OPERATIONS`); ``name`` says what it does, in errors and previews."""

    op: ClassVar[str]

    @property
    def name(self) -> str: ...

    @property
    def why_irreversible(self) -> str | None:
        """Why no schema change undoes the operation; None when :meth:`inverse` does."""

    def apply_to(self, table: TableLayout) -> TableLayout:
        """The layout after the operation; raises :class:`OperationError` naming the field."""

    def planned_on(self, table: TableLayout) -> Operation:
        """The operation as a plan against ``table`` commits it (a widening learns whether
        it rewrites data); raises like :meth:`apply_to`."""

    def inverse(self, before: TableLayout | Struct) -> Operation | None:
        """The operation that undoes this one, applied to the layout after it."""

    def subject_id(self, table: TableLayout) -> int | None:
        """The field ID it acts on in ``table`` (None: adds, partition removals, sorts)."""

    def stage(self, editor: TableEditor, before: TableLayout, after: TableLayout) -> None:
        """Stage the operation on a real table (``before``/``after``: the layouts around it)."""

    def to_json(self) -> dict[str, Any]:
        """A compact JSON-able form (types as Iceberg type strings), for lineage."""

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Operation:
        """The operation :meth:`to_json` wrote."""


class TableEditor(SpecEditor, Protocol):
    """How an adapter stages operations on a real table (``toolkit.iceberg``): each operation
    calls the one method that does it, so the adapter needs no list of operation classes."""

    def add_column(
        self, path: Path, type: ColumnType, doc: str | None, required: bool = False
    ) -> None: ...

    def delete_column(self, path: Path) -> None: ...

    def rename_column(self, path: Path, new_name: str) -> None: ...

    def make_column_optional(self, path: Path) -> None:
        """``path``: a field, or a list element / map value (``points.element``)."""

    def update_column_doc(self, path: Path, doc: str | None) -> None: ...

    def set_identifier_fields(self, paths: Sequence[Path]) -> None: ...

    def move_column(self, path: Path, position: Position, anchor: Path | None) -> None: ...

    def widen_column(self, op: WideningLike, before: TableLayout, after: TableLayout) -> None: ...


def path_of_json(data: Mapping[str, Any]) -> Path:
    return tuple(data.get("path", ()))


# --- schema operations -----------------------------------------------------------------------


class SchemaOperation(NamedById):
    """Shared behaviour: a schema operation applies to the layout's schema, and may name
    its field by ID (:class:`~toolkit.core.evolution.field_ids.NamedById`)."""

    op: ClassVar[str]
    verb: ClassVar[str]
    if TYPE_CHECKING:  # a field of each dataclass (a property of the planner's AddColumn)

        @property
        def path(self) -> Path: ...

    def apply(self, struct: Struct) -> Struct:
        return self.apply_to(TableLayout(struct)).schema

    def apply_to(self, table: TableLayout) -> TableLayout:
        return self.located(table)._apply(table)

    def _apply(self, table: TableLayout) -> TableLayout:
        raise NotImplementedError

    def planned_on(self, table: TableLayout) -> Self:
        return self.located(table)

    @property
    def what(self) -> str:
        """What the operation does, as errors name it (``rename a.b``, ``rename #3``)."""
        return f"{self.verb} {label(self.path, self.field_id)}"

    @property
    def name(self) -> str:
        return self.what

    @property
    def why_irreversible(self) -> str | None:
        """Why no schema change undoes this operation; None when :meth:`inverse` does."""
        return None

    def subject_id(self, table: TableLayout) -> int | None:
        """The ID of the field (or list element, map value) the operation names."""
        op = self.located(table)
        return find_slot(table.schema, op.path, op.what).id


__all__ = ["Operation", "SchemaOperation", "TableEditor", "WideningLike", "path_of_json"]
