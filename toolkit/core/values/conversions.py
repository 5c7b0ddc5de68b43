"""RULES 2: how a value of one lattice type is written into a column of another.

Conversions are a dispatch table keyed ``(from_type, to_type)``. Each returns the
converted value, or :data:`LOSSY` when the conversion would change this particular
value (RULES 2, "exactness is checked per value"). Text renderings are lossless and
identical to the Spark path's (booleans ``true``/``false``, longs in digits, dates
``YYYY-MM-DD``, timestamps ISO-8601 in UTC, doubles in Python's shortest round-trip
form).

>>> c = Conversions()
>>> c.convert(True, "boolean", "long"), c.convert(2**53 + 1, "long", "double")
(1, LOSSY)
>>> c.convert(dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC), "timestamp", "long")
1704164645000
>>> c.convert(1704164645, "long", "timestamp")    # epoch seconds, read from the magnitude
datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
import re
import struct
from collections.abc import Callable
from decimal import MAX_PREC, Context, Decimal
from typing import Any, Final, Literal, TypeAlias

EpochUnit: TypeAlias = Literal["s", "ms", "us"]
LongTimestampUnit: TypeAlias = Literal["auto", "s", "ms", "us", "ns"]


class Lossy:
    """Marks a conversion that would change the value."""

    _instance: Lossy | None = None

    def __new__(cls) -> Lossy:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "LOSSY"


LOSSY: Final = Lossy()

EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
MICROS_PER: Final[dict[str, int]] = {"s": 1_000_000, "ms": 1_000, "us": 1}

# RULES 1: ISO-8601 date and date-time texts. More than 6 fraction digits would be
# truncated by Python: such a text stays a string, so nothing is rounded.
_DATE_RE: Final = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIMESTAMP_RE: Final = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?"
)


def parse_date(text: str) -> dt.date | None:
    """The date an ISO ``YYYY-MM-DD`` text denotes, or None."""
    if _DATE_RE.fullmatch(text) is None:
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return None


def parse_timestamp(text: str) -> dt.datetime | None:
    """The UTC instant an ISO-8601 date-time text denotes (no offset: UTC), or None."""
    if _TIMESTAMP_RE.fullmatch(text) is None:
        return None
    try:
        return as_utc(dt.datetime.fromisoformat(text))
    except (ValueError, OverflowError):  # not a date-time, or its UTC instant is out of range
        return None


def as_utc(value: dt.datetime) -> dt.datetime:
    """An aware UTC datetime; naive ones are taken to be UTC already."""
    if value.tzinfo is None:
        return value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC)


def render_double(value: float) -> str:
    """Shortest round-trip text of a double; NaN and infinities as Spark spells them."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(value)


def render_timestamp(value: dt.datetime) -> str:
    """ISO-8601 in UTC: ``YYYY-MM-DDTHH:MM:SS[.ffffff]Z``."""
    v = as_utc(value)
    text = (
        f"{v.year:04d}-{v.month:02d}-{v.day:02d}T{v.hour:02d}:{v.minute:02d}:{v.second:02d}"
    )
    if v.microsecond:
        text += f".{v.microsecond:06d}"
    return text + "Z"


def render_json(value: Any) -> str:
    """Compact JSON text, for records set aside (the quarantine's ``raw``, docs/rules.md).

    The standard library's encoder, unlike orjson, keeps integers beyond 64 bits and spells
    NaN and infinities (as Python's and Spark's JSON readers accept them), so nothing is lost.
    """
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=_json_default)


def _json_default(value: Any) -> str:
    """JSON has no temporal, decimal or binary values: their texts (a decimal's digits as
    they came, bytes as UTF-8 text or else ``base64:`` and their Base64), so a record set
    aside keeps every value (docs/rules.md). Anything else: its repr, never an error."""
    if isinstance(value, dt.datetime):
        try:
            return render_timestamp(value)
        except OverflowError:  # its UTC instant is out of range: its own ISO text
            return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return decimal_text(value)
    if isinstance(value, bytes):
        text = bytes_text(value)
        return text if isinstance(text, str) else "base64:" + base64.b64encode(value).decode()
    return repr(value)


def decimal_text(value: Decimal) -> str:
    """A decimal's digits, positional, with the scale it came with (``1.10``, never
    ``1.1E+0``): the text a string column takes for it."""
    return format(value, "f")


def decimal_fits(value: Decimal, precision: int, scale: int) -> bool:
    """Whether an Iceberg ``decimal(precision, scale)`` holds ``value`` exactly.

    >>> decimal_fits(Decimal("1.10"), 3, 2), decimal_fits(Decimal("1.105"), 9, 2)
    (True, False)
    >>> decimal_fits(Decimal("1E+3"), 3, 0), decimal_fits(Decimal("NaN"), 38, 18)
    (False, False)
    """
    if not value.is_finite():
        return False
    if value.is_zero():
        return True
    _, digits, exp = value.normalize(_WIDE).as_tuple()
    assert isinstance(exp, int)
    fraction = max(0, -exp)
    whole = max(0, len(digits) + exp)
    return fraction <= scale and whole <= precision - scale


#: enough digits that normalizing any decimal a source brings never rounds it
_WIDE: Final = Context(prec=MAX_PREC)


def bytes_text(data: bytes) -> str | Lossy:
    """Bytes as the UTF-8 text they spell (RULES 5: a string column takes binary that
    way), or LOSSY when they spell none."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return LOSSY


def epoch_unit_of(v: int) -> Literal["s", "ms", "us", "ns"]:
    """RULES 2, ``long_timestamp_unit="auto"``: the epoch unit a long's magnitude implies
    (below 1e11 seconds, below 1e14 milliseconds, below 1e17 microseconds, else
    nanoseconds). The one place of the rule: conversions and the profile's epoch report
    (:mod:`toolkit.core.values.timestamps`) both ask it.

    >>> epoch_unit_of(1704164645), epoch_unit_of(-1704164645000), epoch_unit_of(1704164645 * 10**9)
    ('s', 'ms', 'ns')
    """
    a = abs(v)
    return "s" if a < 10**11 else "ms" if a < 10**14 else "us" if a < 10**17 else "ns"


Converter: TypeAlias = Callable[[Any], Any]


class Conversions:
    """The conversion table for one choice of epoch units (RULES 2)."""

    def __init__(
        self, timestamp_unit: EpochUnit = "ms", long_timestamp_unit: LongTimestampUnit = "auto"
    ) -> None:
        self.timestamp_unit = timestamp_unit
        self.long_timestamp_unit = long_timestamp_unit
        per = MICROS_PER[timestamp_unit]

        def ts_to_long(v: dt.datetime) -> int | Lossy:
            micros = (v - EPOCH) // dt.timedelta(microseconds=1)
            whole, rest = divmod(micros, per)
            return LOSSY if rest else whole

        def ts_to_double(v: dt.datetime) -> float | Lossy:
            n = ts_to_long(v)
            return n if n is LOSSY else long_to_double(n)  # type: ignore[arg-type]

        def date_to_long(v: dt.date) -> int | Lossy:
            return ts_to_long(dt.datetime(v.year, v.month, v.day, tzinfo=dt.UTC))

        def date_to_double(v: dt.date) -> float | Lossy:
            n = date_to_long(v)
            return n if n is LOSSY else long_to_double(n)  # type: ignore[arg-type]

        # (from, to) -> converter on values already in their own type (see ``own``).
        self.table: dict[tuple[str, str], Converter] = {
            ("boolean", "long"): int,
            ("boolean", "double"): float,
            ("boolean", "string"): lambda v: "true" if v else "false",
            ("long", "double"): long_to_double,
            ("long", "string"): str,
            ("long", "timestamp"): self.long_to_timestamp,  # RULES 2 exception, routing only
            ("double", "string"): render_double,
            ("date", "timestamp"): lambda v: dt.datetime(v.year, v.month, v.day, tzinfo=dt.UTC),
            ("date", "long"): date_to_long,
            ("date", "double"): date_to_double,
            ("date", "string"): dt.date.isoformat,
            ("timestamp", "long"): ts_to_long,
            ("timestamp", "double"): ts_to_double,
            ("timestamp", "string"): render_timestamp,
            ("decimal", "string"): decimal_text,
            ("binary", "string"): bytes_text,
        }

    def long_to_timestamp(self, v: int) -> dt.datetime | Lossy:
        """RULES 2: the unit is read from the magnitude unless a fixed one is configured."""
        unit = self.long_timestamp_unit
        if unit == "auto":
            unit = epoch_unit_of(v)
        if unit == "ns":
            micros, rest = divmod(v, 1000)
            if rest:
                return LOSSY
        else:
            micros = v * MICROS_PER[unit]
        try:
            return EPOCH + dt.timedelta(microseconds=micros)
        except OverflowError:
            return LOSSY

    def convert(self, value: Any, from_type: str, to_type: str) -> Any:
        """Convert ``value`` (observed as ``from_type``) into ``to_type``, or LOSSY."""
        if to_type == "string" and type(value) is str:
            return value  # a text keeps its own spelling (an ISO date stays as it came)
        own = self.own(value, from_type)
        if from_type == to_type:
            return own
        fn = self.table.get((from_type, to_type))
        # No conversion (a boolean leaf of a long array headed for a timestamp column by
        # the routing exception, say): the value is not written there.
        return LOSSY if fn is None else fn(own)

    @staticmethod
    def own(value: Any, type_name: str) -> Any:
        """The value in its own observed type: ISO texts parsed, big integers as text."""
        if type_name == "timestamp":
            return parse_timestamp(value) if type(value) is str else as_utc(value)
        if type_name == "date":
            return parse_date(value) if type(value) is str else value
        if type_name == "string" and type(value) is not str:
            # RULES 1: integers beyond 64 bits are text; records are JSON (in a raw record);
            # a datetime whose UTC instant is out of range keeps its own ISO text.
            if type(value) is int:
                return str(value)
            if type(value) is Decimal:  # beyond the decimal column's digits: its text
                return decimal_text(value)
            if isinstance(value, dt.date):
                return value.isoformat()
            return render_json(value)
        return value


def long_to_double(v: int) -> float | Lossy:
    """A long as a double, unless the double would round it (beyond 2**53)."""
    f = float(v)
    return f if int(f) == v else LOSSY


def to_float32(v: float) -> float:
    """``v`` rounded to the nearest 32-bit float (OverflowError beyond its range)."""
    f: float = struct.unpack("<f", struct.pack("<f", v))[0]
    return f


def long_to_float(v: int) -> float | Lossy:
    """A long as a 32-bit float, unless the float would round it (beyond 2**24, say).

    >>> long_to_float(2**24), long_to_float(2**24 + 1)
    (16777216.0, LOSSY)
    """
    try:
        f = to_float32(float(v))
    except OverflowError:
        return LOSSY
    return f if int(f) == v else LOSSY


def render_float(value: float) -> str:
    """Shortest text that reads back as the same 32-bit float, written like a double's
    (:func:`render_double`): ``0.1``, not ``0.10000000149011612``.

    >>> render_float(to_float32(0.1)), render_float(2.0**40), render_float(float("nan"))
    ('0.1', '1099511600000.0', 'NaN')
    """
    if math.isnan(value) or math.isinf(value):
        return render_double(value)
    f = to_float32(value)
    for digits in range(1, 10):  # 9 significant digits always identify a 32-bit float
        text = f"{f:.{digits}g}"
        try:
            if to_float32(float(text)) == f:
                return repr(float(text))
        except OverflowError:  # rounded beyond the largest float: more digits
            continue
    return repr(f)  # unreachable
