"""RULES 5: the widening matrix (Onehouse reading), and which widenings Iceberg does in place.

The matrix is one table of data: incoming type x table type -> the table's new type, or
``None`` for the X cells (incompatible). Everything else about the ``widen`` policy reads
this table. How a value crosses a cell is a second table, :data:`VALUE_CONVERSIONS`
(:func:`convert_value`), the only one the router, the simulation and the rewrite of a
real table's data files use.

>>> widen("int", "long"), widen("long", "string"), widen("bytes", "long")
('long', 'string', None)
>>> in_place("int", "long"), in_place("long", "string")
(True, False)
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any, Final

from toolkit.core.values.conversions import (
    LOSSY,
    Lossy,
    as_utc,
    bytes_text,
    decimal_fits,
    long_to_double,
    long_to_float,
    render_double,
    render_float,
    render_timestamp,
)
from toolkit.core.values.families import families
from toolkit.core.values.types import Column, Struct
from toolkit.errors import RewriteLossError

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
_ICEBERG_NAME: Final = {"bytes": "binary"}


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


# --- RULES 5 value conversions ------------------------------------------------------------
#
# One table, keyed (from type, to type) in Iceberg names, for every user of a RULES 5 value
# conversion: the router writing an incoming value into its column (toolkit.core.
# widen_policy), the simulation reading old values under a widened type and the rewrite of
# data files (retype_value, toolkit.iceberg.operations). A converter takes a value in its
# own type (an int for int/long, a float for float/double, bytes for binary, a datetime
# aware in UTC for timestamptz) and returns the value in the new type, or LOSSY when that
# would change this particular value (RULES 2: "exactness is checked per value", e.g. a
# long beyond 2**53 as a double). Texts are lossless (RULES 2's text forms).


def _float_text(v: float) -> str | Lossy:
    try:
        return render_float(v)
    except OverflowError:  # beyond any 32-bit float: not a float's value
        return LOSSY


def _utf8(text: str) -> bytes | Lossy:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate has no UTF-8 form (docs/rules.md)
        return LOSSY


def _midnight(v: dt.date) -> dt.datetime:
    return dt.datetime(v.year, v.month, v.day)


def _same(v: Any) -> Any:
    return v


#: RULES 5 (the matrix's cells, Iceberg names: ``bytes`` is ``binary``), plus the temporal
#: values RULES 5 lets through: date -> timestamp in place (v3), and the texts of dates and
#: timestamps observed in JSON. Same type and decimal(P,S) -> decimal(P',S): the value.
VALUE_CONVERSIONS: Final[dict[tuple[str, str], Callable[[Any], Any]]] = {
    # in place: Iceberg reads the old values as the new type
    ("int", "long"): _same,
    ("float", "double"): _same,
    ("date", "timestamp"): _midnight,
    ("date", "timestamptz"): lambda v: _midnight(v).replace(tzinfo=dt.UTC),
    # rewrites (and incoming values): exact, or LOSSY
    ("int", "float"): long_to_float,
    ("long", "float"): long_to_float,
    ("int", "double"): long_to_double,
    ("long", "double"): long_to_double,
    ("int", "string"): str,
    ("long", "string"): str,
    ("float", "string"): _float_text,
    ("double", "string"): render_double,
    ("string", "binary"): _utf8,
    ("binary", "string"): bytes_text,
    # values observed as dates and instants (a text keeps its spelling: it is a string)
    ("date", "string"): dt.date.isoformat,
    ("date", "binary"): lambda v: _utf8(v.isoformat()),
    ("timestamptz", "string"): render_timestamp,
    ("timestamptz", "binary"): lambda v: _utf8(render_timestamp(v)),
    ("timestamptz", "timestamp"): lambda v: as_utc(v).replace(tzinfo=None),  # naive UTC
}


def convert_value(value: Any, old: str, new: str) -> Any:
    """``value`` of Iceberg type ``old`` as a value of type ``new`` (RULES 5), or
    :data:`~toolkit.core.values.conversions.LOSSY` when no exact conversion exists for it.

    >>> convert_value(3, "int", "string"), convert_value("é", "string", "binary")
    ('3', b'\\xc3\\xa9')
    >>> convert_value(2**53, "long", "double"), convert_value(2**53 + 1, "long", "double")
    (9007199254740992.0, LOSSY)
    >>> convert_value(2**24 + 1, "int", "float"), convert_value(True, "boolean", "string")
    (LOSSY, LOSSY)
    """
    if value is None:
        return None
    if new.startswith("decimal(") and isinstance(value, Decimal):
        # a decimal fits a decimal column when its digits do, whatever it was typed as
        p, s = (int(n) for n in _DECIMAL.fullmatch(new).groups())  # type: ignore[union-attr]
        return value if decimal_fits(value, p, s) else LOSSY
    if old == new or (old.startswith("decimal") and in_place(old, new)):
        return value
    fn = VALUE_CONVERSIONS.get((old, new))
    return LOSSY if fn is None else fn(value)


#: The column type changes the matrix allows, ``(old, new)`` in Iceberg names: a column
#: of the matrix's table type takes the cell's new type.
RETYPES: Final = frozenset(
    (_ICEBERG_NAME.get(table, table), _ICEBERG_NAME.get(cell, cell))
    for (_, table), cell in MATRIX.items()
    if cell is not None and cell != table
)
#: The cells of :data:`VALUE_CONVERSIONS` a data rewrite runs (Iceberg cannot do in place).
REWRITES: Final = {cell: VALUE_CONVERSIONS[cell] for cell in RETYPES if not in_place(*cell)}


def retype_value(value: Any, old: str, new: str, field: str = "a column") -> Any:
    """A value stored under Iceberg type ``old`` as it reads, or is rewritten, under the
    wider ``new`` (in-place promotions read the same way), by :func:`convert_value`; a
    value no exact conversion holds raises :class:`~toolkit.errors.RewriteLossError`, as
    the rewrite of a real table does.

    >>> retype_value(3, "long", "string"), retype_value(2.5, "double", "string")
    ('3', '2.5')
    >>> retype_value(2**53 + 1, "long", "double", field="n")
    Traceback (most recent call last):
    ...
    toolkit.errors.RewriteLossError: cannot rewrite n from long to double: value 9007199254740993...
    """
    out = convert_value(value, old, new)
    if out is LOSSY:
        raise RewriteLossError(field, old, new, value)
    return out


__all__ = [
    "MATRIX",
    "MATRIX_TYPES",
    "RETYPES",
    "REWRITES",
    "TEXTUAL",
    "VALUE_CONVERSIONS",
    "accepted",
    "convert_value",
    "in_place",
    "matrix_name",
    "primary_columns",
    "retype_value",
    "widen",
]


#: Texts are strings in JSON: a value observed as a date or timestamp is still a string
#: to a string column (docs/rules.md, widening policy).
TEXTUAL = frozenset({"date", "timestamp"})


def accepted(incoming: str, table: str) -> str | None:
    """The table type after a value observed as ``incoming`` (a lattice kind name) arrives
    in a column whose matrix type is ``table``; None when incompatible (an X cell).
    A decimal value is accepted by every decimal column, if it holds the value exactly
    (checked per value when it is converted)."""
    incoming = matrix_name(incoming)
    if incoming == "decimal" and table.startswith("decimal"):
        return table
    out = widen(incoming, table)
    if out is None and incoming in TEXTUAL and table in ("string", "bytes"):
        return table
    return out


def primary_columns(struct: Struct) -> dict[str, Column]:
    """The column each key is written to under the ``widen`` policy: the one named after the key,
    else the first of its family (a table switched over from the ``upsolver`` policy)."""
    out: dict[str, Column] = {}
    for key, members in families(struct).items():
        named = [c for c in members if c.name == key]
        out[key] = named[0] if named else members[0]
    return out
