"""RULES 1 for typed values: numpy and pandas scalars, decimals, bytes, UUIDs and times
as the plain Python values the engine types.

The engine reads JSON-like values: None, bool, int, float, str, ``datetime.date``,
``datetime.datetime``, dict and list, plus three typed ones a typed source brings:
:class:`Int` (an integer of a 32-bit-or-narrower column: int, short, byte), :class:`Float`
(a 32-bit float), :class:`~decimal.Decimal` and ``bytes``. RULES 1 types an ``Int`` as
``long`` and a ``Float`` as ``double`` under the ``upsolver`` policy, and as ``int`` and
``float`` under the ``widen`` policy, which keeps a typed source's own types.

:func:`plain_record` turns what users hold (``df.to_dict("records")`` of a pandas frame,
rows of numpy scalars) into those values, and nothing else: a value it cannot type
exactly is left alone, for the engine to refuse with an error naming field and value.
numpy and pandas are recognised by their type names, never imported.

>>> import decimal, uuid
>>> plain_record({"id": uuid.UUID(int=1), "amount": decimal.Decimal("1.10"), "b": bytearray(b"x")})
{'id': '00000000-0000-0000-0000-000000000001', 'amount': Decimal('1.10'), 'b': b'x'}
>>> plain_record({"t": dt.time(12, 30)})
{'t': '12:30:00'}
>>> type(plain_value(Int(5))).__name__
'Int'
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, Final

__all__ = ["Float", "Int", "has_foreign", "plain_record", "plain_value"]


class Int(int):
    """An integer of a typed source's int, short or byte column (RULES 1)."""

    # Its text and repr are the integer's own: every rendering (RULES 2) stays the same.
    __slots__ = ()


class Float(float):
    """A value of a typed source's 32-bit float column (RULES 1): the float's exact value
    as a double."""

    __slots__ = ()


#: the types the engine reads as they are
PLAIN: Final[frozenset[type]] = frozenset({
    type(None), bool, int, float, str, dt.date, dt.datetime, dict, list,
    Int, Float, Decimal, bytes,
})

#: numpy's integer types that RULES 1 calls int, short or byte (an Iceberg int holds them)
_NARROW_INTS: Final = frozenset({"int8", "int16", "int32", "uint8", "uint16"})
_WIDE_INTS: Final = frozenset({"int64", "uint32", "uint64", "longlong", "ulonglong", "intc"})
_NARROW_FLOATS: Final = frozenset({"float16", "float32"})


def _numpy(value: Any) -> Any:
    """A numpy scalar as a plain value; the value itself when it has no exact one."""
    name = type(value).__name__
    if name == "bool":  # numpy.bool (numpy.bool_)
        return bool(value)
    if name in _NARROW_INTS:
        return Int(int(value))
    if name in _WIDE_INTS or (name.startswith(("int", "uint")) and hasattr(value, "dtype")):
        return int(value)
    if name in _NARROW_FLOATS:
        return Float(float(value))
    if name == "float64":
        return float(value)
    if name == "datetime64":
        return _datetime64(value)
    if name == "str_":
        return str(value)
    if name == "bytes_":
        return bytes(value)
    if name == "ndarray":
        return [plain_value(v) for v in value]
    return value


def _datetime64(value: Any) -> Any:
    """A numpy datetime64: null for NaT, a datetime (naive: UTC, RULES 1) when it is a
    whole number of microseconds, else its ISO text, so no nanosecond is dropped."""
    if value != value:  # NaT
        return None
    micros = value.astype("datetime64[us]")
    if micros != value:
        return str(value)
    out = micros.item()
    return out if isinstance(out, dt.datetime | dt.date) else str(value)


def _pandas(value: Any) -> Any:
    """A pandas Timestamp, Period or NaT as a plain value (the value itself when it is
    none of them)."""
    name = type(value).__name__
    if name == "NaTType":
        return None
    if name == "Period":  # a span ('2024-01', a month): its text, as a UUID's or a time's
        return str(value)
    if name == "Timestamp":
        if value.nanosecond:  # below a microsecond: its ISO text keeps every digit
            return value.isoformat()
        return value.to_pydatetime()
    return value


def plain_value(value: Any) -> Any:
    """``value`` as one of the values the engine reads (see the module's doc), recursively;
    a value with no exact plain form is returned as it is, for the engine to refuse."""
    t = type(value)
    if t in PLAIN:
        if t is dict:
            return plain_record(value)
        if t is list:
            return [plain_value(v) for v in value]
        return value
    module = t.__module__
    if module.startswith("numpy"):
        return _numpy(value)
    if module.startswith("pandas"):
        return _pandas(value)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, dt.datetime):
        return dt.datetime.combine(value.date(), value.timetz())
    if isinstance(value, dt.date):
        return dt.date(value.year, value.month, value.day)
    if isinstance(value, dt.time):  # no Spark type holds a time of day: its ISO text
        return value.isoformat()
    if isinstance(value, uuid.UUID):  # nor a UUID: its canonical text
        return str(value)
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, Mapping):
        return plain_record(value)
    if isinstance(value, tuple):
        if t.__name__ == "MonthDayNano":  # an Arrow interval (months, days, nanoseconds):
            return value  # no type holds it, as none holds a timedelta; not an array
        return [plain_value(v) for v in value]
    return value


def plain_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """A record with every value as :func:`plain_value` gives it."""
    return {k: plain_value(v) for k, v in record.items()}


def has_foreign(value: Any) -> bool:
    """Whether ``value`` holds, at any depth, a value :func:`plain_value` would change."""
    stack = [value]  # a loop, not recursion: a value may be nested thousands deep
    while stack:
        v = stack.pop()
        t = type(v)
        if t is dict:
            stack.extend(v.values())
        elif t is list:
            stack.extend(v)
        elif t not in PLAIN and plain_value(v) is not v:
            return True
    return False
