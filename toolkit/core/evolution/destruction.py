"""What a plan destroys: the stored values it makes unreadable from the current table.

RULES 6 lets a plan drop a column, and an undo of an added column is a drop. Iceberg keeps
the dropped values in older snapshots (time travel), but the current table no longer reads
them, and a column added again under the same name gets a new field ID and never reads them
either: to anyone reading the table, they are gone. Such a plan states what it destroys,
in counts, before it runs, and runs only when told so (``drop_data=True``, ``--yes``, the
notebook's second button). A dropped column that holds no value destroys nothing and needs
no yes; the statement says so.

This module is the one place of that rule: the counts (:class:`Destruction`), their words,
and whether they need a yes. The counts come from the adapter
(``toolkit.iceberg.destruction``: Iceberg's data file metrics).

>>> d = Destruction((DroppedColumn(("gift",), 3, 2, 120), DroppedColumn(("note",), 4, 0, 0)),
...                 rows=5, bytes=120)
>>> d.needs_yes, d.values
(True, 2)
>>> print(d)
drops 2 columns holding 2 values of 5 rows (120 B): gift (2 values), note (no values)
>>> print(Destruction((DroppedColumn(("v",), 2, None, None, "Avro files"),), rows=5))
drops 1 column of a table of 5 rows, not every value counted: v (values not counted: Avro files)
>>> print(Destruction((DroppedColumn(("v",), 2, None, None, "deletes"),), 5, rows_at_most=True))
drops 1 column of a table of up to 5 rows, not every value counted: v (values not counted: deletes)
>>> print(Destruction((DroppedColumn(("note",), 4, 0, 0),), rows=5, bytes=0))
drops 1 column holding no values (note): nothing stored is destroyed
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from toolkit.core.evolution.layout import Path, TableLayout, dotted, field_at
from toolkit.core.evolution.operations import DropField, Operation
from toolkit.core.maintenance.steps import size_text
from toolkit.core.values.types import Column, ColumnType, ListOf, MapOf, Struct
from toolkit.core.values.wording import counted

__all__ = ["Destruction", "DroppedColumn", "dropped_columns", "leaf_ids"]


@dataclass(frozen=True)
class DroppedColumn:
    """A column a plan drops: its path and field ID, and the non-null values it holds in
    the current snapshot (``values``; None when they could not be counted, ``uncounted``
    then says why) and their bytes on disk where known."""

    path: Path
    field_id: int
    values: int | None
    bytes: int | None = None
    uncounted: str | None = None

    @property
    def name(self) -> str:
        return dotted(self.path)

    @property
    def empty(self) -> bool:
        """Whether it holds no value for sure (nothing is destroyed by dropping it)."""
        return self.values == 0

    def __str__(self) -> str:
        if self.values is None:
            why = f": {self.uncounted}" if self.uncounted else ""
            return f"{self.name} (values not counted{why})"
        return f"{self.name} ({counted(self.values, 'value') if self.values else 'no values'})"


@dataclass(frozen=True)
class Destruction:
    """What a plan makes unreadable from the current table: the columns it drops with the
    values they hold, the rows of the table those values sit in, and the bytes the dropped
    columns take on disk (None when not known)."""

    columns: tuple[DroppedColumn, ...] = ()
    rows: int = 0
    bytes: int | None = None
    rows_at_most: bool = False
    """``rows`` counts rows delete files remove (no reader here applied them): a bound."""

    @property
    def values(self) -> int:
        """The non-null values destroyed (those counted)."""
        return sum(c.values or 0 for c in self.columns)

    @property
    def needs_yes(self) -> bool:
        """Whether the plan destroys stored values (or may: a count that is missing), so it
        runs only when told so. Dropping columns that hold no values needs no yes."""
        return any(not c.empty for c in self.columns)

    @property
    def holding(self) -> tuple[DroppedColumn, ...]:
        """The dropped columns that hold values (or may)."""
        return tuple(c for c in self.columns if not c.empty)

    def __bool__(self) -> bool:
        return bool(self.columns)

    def __str__(self) -> str:
        if not self.columns:
            return "destroys no stored values"
        cols = counted(len(self.columns), "column")
        if not self.needs_yes:
            names = ", ".join(c.name for c in self.columns)
            return f"drops {cols} holding no values ({names}): nothing stored is destroyed"
        size = "" if not self.bytes else f" ({size_text(self.bytes)})"
        rows = ("up to " if self.rows_at_most else "") + counted(self.rows, "row")
        if any(c.values is None for c in self.holding):
            # a count that could not be made is said as such, never as "0 values"
            held = (f"holding at least {counted(self.values, 'value')} of"
                    if self.values else "of a table of")
            return (f"drops {cols} {held} {rows}{size}, not every value counted: "
                    + ", ".join(str(c) for c in self.columns))
        return (
            f"drops {cols} holding {counted(self.values, 'value')} of "
            f"{rows}{size}: " + ", ".join(str(c) for c in self.columns)
        )


def dropped_columns(
    operations: Sequence[Operation], layouts: Sequence[TableLayout]
) -> tuple[tuple[Path, Column], ...]:
    """The columns a plan's drops remove, each with its path in the table before the plan
    (``layouts``: the layout before each operation, as :attr:`Evolution.layouts` gives)
    and the column as it was. A column the plan itself added and then dropped holds no
    stored value and is left out."""
    first = layouts[0] if layouts else None
    out: list[tuple[Path, Column]] = []
    for op, before in zip(operations, layouts, strict=False):
        if not isinstance(op, DropField):
            continue
        located = op.located(before)
        column, _ = field_at(before.schema, located.path)
        if first is not None and column.id > first.last_column_id:
            continue  # added by this very plan: nothing stored yet
        out.append((located.path, column))
    return tuple(out)


def leaf_ids(column: Column) -> tuple[int, ...]:
    """The field IDs of a column's primitive leaves (a struct's fields, a list's element,
    recursively): the IDs Iceberg keeps value counts for.

    >>> leaf_ids(Column(1, "a", Struct((Column(2, "b", "long"), Column(3, "c", "string")))))
    (2, 3)
    """
    return tuple(_leaves(column))


def _leaves(column: Column) -> Iterable[int]:
    return _type_leaves(column.type, column.id)


def _type_leaves(t: ColumnType, own: int) -> Iterable[int]:
    if isinstance(t, Struct):
        for child in t.fields:
            yield from _type_leaves(child.type, child.id)
    elif isinstance(t, ListOf):
        yield from _type_leaves(t.element, t.element_id)
    elif isinstance(t, MapOf):
        yield from _type_leaves(t.key, t.key_id)
        yield from _type_leaves(t.value, t.value_id)
    else:
        yield own
