"""RULES 3: families of columns, and which column accepts which value.

A family is a source key together with every column evolution created for it; the
membership is read from the columns' docs (RULES 4), so it survives a round trip
through any catalog.

>>> from toolkit.core.values.lattice import UPSOLVER
>>> col = Column(1, "a", ListOf(2, "long"))
>>> accepts(UPSOLVER, Kind("boolean", 0), col), accepts(UPSOLVER, Kind("double", 0), col)
(True, False)
"""

from __future__ import annotations

from dataclasses import replace

from toolkit.core.values.lattice import Lattice
from toolkit.core.values.types import RECORD, Column, ColumnType, Kind, ListOf, Struct


def families(struct: Struct) -> dict[str, list[Column]]:
    """The columns of one struct level grouped by the source key they hold."""
    out: dict[str, list[Column]] = {}
    for col in struct.fields:
        out.setdefault(col.family, []).append(col)
    return out


def accepts(lattice: Lattice, kind: Kind, column: Column) -> bool:
    """RULES 3: a value of type p, dimension d is compatible with a column of type q,
    dimension e when p <= q (exactly, for this value) and d <= e. Records only go to
    record columns; an array with no typed leaf goes to any column of dimension >= its own.
    Opaque declared types (decimal, binary...) accept nothing."""
    shape = column.shape
    if shape.type is None or kind.dim > shape.dim:
        return False
    if kind.type is None:
        return True
    if kind.type == RECORD or shape.type == RECORD:
        return kind.type == shape.type
    return lattice.fits(kind, shape.type)


def receives(lattice: Lattice, kind: Kind, column: Column) -> bool:
    """RULES 3.1: a column receives every value it accepts and, by the exception of
    RULES 2 (seed edge case 2), longs into timestamp columns of dimension >= theirs.
    The exception is for routing only: the planner asks :func:`accepts`."""
    if accepts(lattice, kind, column):
        return True
    shape = column.shape
    return kind.type == "long" and shape.type == "timestamp" and kind.dim <= shape.dim


def wrap_type(leaf: str | Struct, dim: int, ids: list[int]) -> str | ListOf | Struct:
    """``leaf`` under ``dim`` list levels, whose element IDs are ``ids`` (outermost first)."""
    t: str | ListOf | Struct = leaf
    for element_id in reversed(ids[:dim]):
        t = ListOf(element_id, t)
    return t


def with_leaf(t: ColumnType, leaf: ColumnType) -> ColumnType:
    """``t`` with the type under all its list levels replaced by ``leaf``; each level keeps
    its element ID and whether its elements are required."""
    if isinstance(t, ListOf):
        return replace(t, element=with_leaf(t.element, leaf))
    return leaf


def list_ids(column: Column) -> list[int]:
    """The element IDs of a column's list levels, outermost first."""
    ids, t = [], column.type
    while isinstance(t, ListOf):
        ids.append(t.element_id)
        t = t.element
    return ids
