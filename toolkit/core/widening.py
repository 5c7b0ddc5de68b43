"""RULES 5: the widening matrix (Onehouse reading), and which widenings Iceberg does in place.

The matrix is one table of data: incoming type x table type -> the table's new type, or
``None`` for the X cells (incompatible). Everything else about the widening policy reads
this table.

>>> widen("int", "long"), widen("long", "string"), widen("bytes", "long")
('long', 'string', None)
>>> in_place("int", "long"), in_place("long", "string")
(True, False)
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Final

from toolkit.core.conversions import render_double

#: The types of RULES 5's matrix, in its order.
MATRIX_TYPES: Final = ("int", "long", "float", "double", "string", "bytes")

_X: Final = None
#: RULES 5, row = incoming type, column = table type, cell = new table type (None: X).
_ROWS: Final[dict[str, tuple[str | None, ...]]] = {
    #          int       long      float     double    string    bytes
    "int":    ("int",    "long",   "float",  "double", "string", _X),
    "long":   ("long",   "long",   "float",  "double", "string", _X),
    "float":  ("float",  "float",  "float",  "double", "string", _X),
    "double": ("double", "double", "double", "double", "string", _X),
    "string": ("string", "string", "string", "string", "string", "bytes"),
    "bytes":  (_X,       _X,       _X,       _X,       "string", "bytes"),
}  # fmt: skip
MATRIX: Final[dict[tuple[str, str], str | None]] = {
    (incoming, table): cell
    for incoming, row in _ROWS.items()
    for table, cell in zip(MATRIX_TYPES, row, strict=True)
}

#: Iceberg's in-place type promotions (RULES 5); date -> timestamp needs format v3.
_IN_PLACE: Final = frozenset({("int", "long"), ("float", "double")})
_IN_PLACE_V3: Final = frozenset({("date", "timestamp"), ("date", "timestamptz")})
_DECIMAL: Final = re.compile(r"decimal\((\d+),\s*(\d+)\)")


#: Iceberg primitive type -> the name the matrix knows it by.
_MATRIX_NAME: Final = {"binary": "bytes", "timestamptz": "timestamp"}


def matrix_name(iceberg_type: str) -> str:
    """The matrix's name for an Iceberg primitive type (``binary`` is ``bytes``)."""
    return _MATRIX_NAME.get(iceberg_type, iceberg_type)


def widen(incoming: str, table: str) -> str | None:
    """The table type after a value of type ``incoming`` arrives in a column of type
    ``table`` (RULES 5), or None when incompatible. Types outside the matrix (booleans,
    dates, timestamps, decimals, complex types) do not widen: only their own type is
    compatible with them."""
    if (incoming, table) in MATRIX:
        return MATRIX[incoming, table]
    return table if incoming == table else None


def in_place(old: str, new: str, format_version: int = 2) -> bool:
    """Whether Iceberg changes a column from ``old`` to ``new`` without rewriting data:
    int->long, float->double, decimal(P,S)->decimal(P',S) with P'>P, and date->timestamp
    on format v3 tables. Every other widening is a rewrite."""
    if (old, new) in _IN_PLACE or old == new:
        return True
    if format_version >= 3 and (old, new) in _IN_PLACE_V3:
        return True
    a, b = _DECIMAL.fullmatch(old), _DECIMAL.fullmatch(new)
    return bool(a and b and a[2] == b[2] and int(b[1]) > int(a[1]))


def retype_value(value: Any, old: str, new: str) -> Any:
    """A value stored under Iceberg type ``old`` as it reads, or is rewritten, under the
    wider ``new`` (in-place promotions read the same way). Numbers become text as the
    router writes them (``render_double`` for doubles), so rows written before and after a
    rewrite agree.

    >>> retype_value(3, "long", "string"), retype_value(2.5, "double", "string")
    ('3', '2.5')
    """
    if value is None or old == new:
        return value
    if new == "string":
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, float):
            return render_double(value)
        if isinstance(value, bytes):
            return value.decode("utf-8", errors="surrogateescape")
        return str(value)
    if new in ("float", "double") and isinstance(value, int):
        return float(value)
    if new.startswith("timestamp") and type(value) is dt.date:
        ts = dt.datetime(value.year, value.month, value.day)
        return ts.replace(tzinfo=dt.UTC) if new == "timestamptz" else ts
    return value


__all__ = ["MATRIX", "MATRIX_TYPES", "in_place", "matrix_name", "retype_value", "widen"]
