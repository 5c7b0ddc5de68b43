"""Type hints per field (docs/rules.md, *Type hints*): a user names the Iceberg type of a
top-level field, and the field's column has that type from its first batch.

This module holds what a hint is and which values it takes; :mod:`toolkit.core.batch.hint_plans`
holds what it does to a batch's plan (the options import the hints, the planner imports
the options, so the two halves live apart):

* :func:`parse_hints` reads ``{"price": "decimal(10,2)", "ts": "timestamp[ms]"}`` (Iceberg
  type names; ``[s|ms|us|ns]`` is the epoch unit of longs read as timestamps) and refuses a
  type it does not know or take, naming the field;
* :func:`convert_hinted` converts, before a batch is observed, every value of a hinted
  field that converts exactly into the hint's type (RULES 2 conversions, and texts that
  spell a value of that type); the others stay as they came, and the rules route them
  (RULES 3: the family's suffixed columns; RULES 5: the quarantine, or a failed batch);
* :func:`hints_property` and :func:`hints_from_property`: the table keeps its hints.

>>> hints = parse_hints({"price": "decimal(10,2)"})
>>> rows = [{"price": 12.5}, {"price": "12.50"}, {"price": 3}, {"price": "n/a"}]
>>> convert_hinted(rows, hints, Conversions())
[{'price': Decimal('12.50')}, {'price': Decimal('12.50')}, {'price': Decimal('3.00')}, \
{'price': 'n/a'}]
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from toolkit.core.maintenance.folding import ENTRY_BYTES
from toolkit.core.values.conversions import (
    LOSSY,
    Conversions,
    LongTimestampUnit,
    as_utc,
    decimal_fits,
    decimal_text,
    long_to_double,
    parse_date,
    parse_timestamp,
    render_double,
)
from toolkit.core.values.types import DECIMAL_DIGITS, DECIMAL_TYPE, Primitive, Shape
from toolkit.errors import HintError

__all__ = [
    "HINTS_PROPERTY",
    "Hint",
    "HintTally",
    "convert_hinted",
    "hints_from_property",
    "hints_property",
    "parse_hint",
    "parse_hints",
    "to_hint",
]

#: the table property keeping a table's hints, as JSON ``{"field": "type", ...}``: every
#: later batch obeys them until hints are given again (which replace them)
HINTS_PROPERTY: Final = "toolkit.hints"

#: the Iceberg primitive types a hint takes, with the lattice type their values have
#: (RULES 2); a decimal's precision and scale are checked apart (:func:`parse_hint`)
_TAKEN: Final[dict[str, Primitive]] = {
    "boolean": "boolean",
    "long": "long",
    "double": "double",
    "decimal": "decimal",
    "date": "date",
    "timestamp": "timestamp",
    "timestamptz": "timestamp",
    "string": "string",
}
#: Iceberg types a hint does not take (yet), said apart from names that are no type at all:
#: the upsolver policy routes no value into them (docs/rules.md)
_NOT_TAKEN: Final = ("int", "float", "time", "timestamp_ns", "timestamptz_ns", "uuid",
                     "fixed", "binary")
_UNITS: Final = ("s", "ms", "us", "ns")
_HINT_RE: Final = re.compile(
    r"\s*(?P<name>[a-z_]+)\s*"
    r"(?:\(\s*(?P<p>\d+)\s*(?:,\s*(?P<s>\d+)\s*)?\))?\s*"
    r"(?:\[\s*(?P<arg>\w+)\s*\])?\s*",
)
#: a decimal number as text: what a text must look like to convert into a number
_NUMBER_RE: Final = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_INT_RE: Final = re.compile(r"-?(0|[1-9]\d*)")


@dataclass(frozen=True)
class Hint:
    """One field's hint: the column type its field gets (``type``, Iceberg's text),
    the lattice type of its values (``lattice``), and for a timestamp the epoch ``unit``
    of longs read as timestamps (None: the ``long_timestamp_unit`` option's).

    >>> parse_hint("price", "Decimal(10,2)")
    Hint(field='price', type='decimal(10, 2)', lattice='decimal', unit=None)
    >>> parse_hint("ts", "timestamp[ms]").text
    'timestamp[ms]'
    """

    field: str
    type: str
    lattice: Primitive
    unit: LongTimestampUnit | None = None

    @property
    def text(self) -> str:
        """The hint as a user writes it (the type, then the unit): what the table keeps."""
        return self.type if self.unit is None else f"{self.type}[{self.unit}]"

    @property
    def digits(self) -> tuple[int, int]:
        """A decimal hint's precision and scale."""
        p, s = self.type[len("decimal("):-1].split(",")
        return int(p), int(s)

    @property
    def shape(self) -> Shape:
        return Shape(self.lattice, 0)


def parse_hint(field: str, text: str) -> Hint:
    """The hint ``text`` gives ``field``; a type the hints do not know or take is refused
    with a :class:`~toolkit.errors.HintError` naming the field and the type.

    >>> parse_hint("n", "int")
    Traceback (most recent call last):
    ...
    toolkit.errors.HintError: hint for `n`: int is an Iceberg type the hints do not take; \
give one of boolean, long, double, decimal(P, S), date, timestamp, timestamptz, string
    >>> parse_hint("n", "lnog")
    Traceback (most recent call last):
    ...
    toolkit.errors.HintError: hint for `n`: lnog is no Iceberg type (did you mean long?); \
give one of boolean, long, double, decimal(P, S), date, timestamp, timestamptz, string
    """
    if not isinstance(field, str) or not field:
        raise HintError(str(field), str(text), "a hint names a field by its key, a text")
    if not isinstance(text, str):
        raise HintError(field, repr(text), "a hint is a type name, a text")
    m = _HINT_RE.fullmatch(text.lower())
    name = m.group("name") if m else text.strip().lower()
    if m is None or name not in _TAKEN:
        if name in _NOT_TAKEN:
            why = f"{name} is an Iceberg type the hints do not take"
        else:
            near = difflib.get_close_matches(name, [*_TAKEN, *_NOT_TAKEN], n=1)
            why = f"{text.strip()} is no Iceberg type" + (
                f" (did you mean {near[0]}?)" if near else "")
        raise HintError(field, text, f"{why}; give one of {_ACCEPTED}")
    p, s, arg = m.group("p"), m.group("s"), m.group("arg")
    if (s is None) != (name != "decimal"):
        raise HintError(field, text, "a decimal takes its precision and scale, "
                        "decimal(P, S), and no other type does")
    unit: LongTimestampUnit | None = None
    if arg is not None:
        if name not in ("timestamp", "timestamptz") or arg not in _UNITS:
            raise HintError(field, text, "only a timestamp takes an epoch unit, one of "
                            f"{', '.join(_UNITS)} (timestamp[ms])")
        unit = arg  # type: ignore[assignment]  # one of _UNITS
    type_text = name
    if p is not None:
        precision, scale = int(p), int(s)
        # the engine types a decimal value by the column evolution creates for decimals
        # (DECIMAL_TYPE): a hint within its digits sees every value it holds as a decimal
        whole, fraction = DECIMAL_DIGITS[0] - DECIMAL_DIGITS[1], DECIMAL_DIGITS[1]
        if not (0 < precision <= DECIMAL_DIGITS[0] and scale <= precision
                and scale <= fraction and precision - scale <= whole):
            raise HintError(field, text, f"a decimal hint holds at most {whole} digits before "
                            f"the point and {fraction} after it ({DECIMAL_TYPE} at most)")
        type_text = f"decimal({precision}, {scale})"
    return Hint(field, type_text, _TAKEN[name], unit)


_ACCEPTED: Final = ", ".join(
    "decimal(P, S)" if n == "decimal" else n for n in _TAKEN)


def parse_hints(given: Mapping[str, str] | Sequence[Hint] | None) -> tuple[Hint, ...]:
    """Hints from ``{field: type}`` (or hints already parsed), in field order; what the
    ``hints`` option holds. Their JSON must fit one table property entry
    (:data:`~toolkit.core.maintenance.folding.ENTRY_BYTES`), as the table keeps them.

    >>> [h.text for h in parse_hints({"b": "timestamp[s]", "a": "long"})]
    ['long', 'timestamp[s]']
    """
    if not given:
        return ()
    if isinstance(given, Mapping):
        hints = tuple(parse_hint(f, t) for f, t in given.items())
    elif all(isinstance(h, Hint) for h in given):
        hints = tuple(given)
    else:
        raise HintError("", repr(given), "give hints as a mapping of field to type name")
    hints = tuple(sorted(hints, key=lambda h: h.field))
    size = len(hints_property(hints)[HINTS_PROPERTY].encode())
    if size > ENTRY_BYTES:
        raise HintError("", f"{len(hints)} hints", f"they take {size:,} bytes as a table "
                        f"property; a table keeps at most {ENTRY_BYTES:,}")
    return hints


def hints_property(hints: Sequence[Hint]) -> dict[str, str]:
    """The table property keeping ``hints`` (:data:`HINTS_PROPERTY`).

    >>> hints_property(parse_hints({"price": "decimal(10,2)"}))
    {'toolkit.hints': '{"price": "decimal(10, 2)"}'}
    """
    return {HINTS_PROPERTY: json.dumps({h.field: h.text for h in hints}, ensure_ascii=False)}


def hints_from_property(properties: Mapping[str, str]) -> tuple[Hint, ...]:
    """The hints a table keeps (none when it keeps none).

    >>> hints_from_property({"toolkit.hints": '{"ts": "timestamp[ms]"}'})[0].unit
    'ms'
    """
    text = properties.get(HINTS_PROPERTY)
    return parse_hints(json.loads(text)) if text else ()


# --- values: what converts exactly into a hint's type (RULES 2) ---------------------------


def to_hint(value: Any, hint: Hint, conversions: Conversions) -> Any:
    """``value`` in the hint's type, or :data:`~toolkit.core.values.conversions.LOSSY` when it
    does not convert exactly. Conversions are those of RULES 2 (boolean <= long <= double,
    date <= timestamp, a long into a timestamp in the hint's epoch unit, anything to its
    lossless text) and a text that spells a value of the type (``"12.50"``, ``"true"``);
    a number converts into a decimal when its digits (a double's round-trip digits) fit.

    >>> c = Conversions()
    >>> h = parse_hint("p", "decimal(4,2)")
    >>> to_hint(12.5, h, c), to_hint("1.234", h, c), to_hint(True, h, c)
    (Decimal('12.50'), LOSSY, LOSSY)
    >>> to_hint(1704164645000, parse_hint("t", "timestamp[ms]"), c)
    datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    """
    if isinstance(value, (dict, list)):
        return LOSSY  # a record or an array keeps its own column (RULES 3)
    convert = _TO[hint.lattice]
    return convert(value, hint, conversions)


def _to_boolean(v: Any, hint: Hint, c: Conversions) -> Any:
    if type(v) is bool:
        return v
    if isinstance(v, str) and v in ("true", "false"):  # the text a boolean renders as
        return v == "true"
    return LOSSY


def _to_long(v: Any, hint: Hint, c: Conversions) -> Any:
    if isinstance(v, bool):
        return int(v)  # RULES 2: boolean <= long
    if isinstance(v, int):
        return int(v) if -(2**63) <= v < 2**63 else LOSSY
    if isinstance(v, str):
        return _to_long(int(v), hint, c) if _INT_RE.fullmatch(v) else LOSSY
    if isinstance(v, Decimal):
        return _to_long(int(v), hint, c) if v.is_finite() and v == v.to_integral_value() \
            else LOSSY
    if isinstance(v, dt.datetime):
        return c.convert(v, "timestamp", "long")  # RULES 2: timestamp -> epoch value
    if isinstance(v, dt.date):
        return c.convert(v, "date", "long")
    return LOSSY


def _to_double(v: Any, hint: Hint, c: Conversions) -> Any:
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, int):
        return long_to_double(int(v))
    if isinstance(v, float):
        return float(v)
    if isinstance(v, str | Decimal):
        number = _number(v)
        if number is None:
            return LOSSY
        f = float(number)
        # exact when the double's own digits are the number's (``"12.50"`` is 12.5)
        return f if Decimal(render_double(f)) == number else LOSSY
    if isinstance(v, dt.datetime):
        return c.convert(v, "timestamp", "double")
    if isinstance(v, dt.date):
        return c.convert(v, "date", "double")
    return LOSSY


def _to_decimal(v: Any, hint: Hint, c: Conversions) -> Any:
    if isinstance(v, bool):
        return LOSSY  # a boolean is no number (RULES 2: it converts to long only)
    number: Decimal | None
    if isinstance(v, int):
        number = Decimal(int(v))
    elif isinstance(v, float):
        # a double's round-trip digits, as its text renders it (RULES 2): 12.5, 0.1
        number = Decimal(render_double(v)) if v == v and abs(v) != float("inf") else None
    elif isinstance(v, str | Decimal):
        number = _number(v)
    else:
        return LOSSY
    precision, scale = hint.digits
    if number is None or not decimal_fits(number, precision, scale):
        return LOSSY
    # the column's scale, as a reader gets it back: 3 -> 3.00 (the same number)
    return number.quantize(Decimal(1).scaleb(-scale))


def _to_date(v: Any, hint: Hint, c: Conversions) -> Any:
    if type(v) is dt.date:
        return v
    if isinstance(v, str):
        d = parse_date(v)
        return LOSSY if d is None else d
    return LOSSY


def _to_timestamp(v: Any, hint: Hint, c: Conversions) -> Any:
    if isinstance(v, dt.datetime):
        try:
            return as_utc(v)
        except OverflowError:
            return LOSSY
    if isinstance(v, dt.date):
        return c.convert(v, "date", "timestamp")  # RULES 2: date <= timestamp
    if isinstance(v, str):
        ts = parse_timestamp(v) if len(v) != 10 else None
        if ts is not None:
            return ts
        d = parse_date(v)
        return LOSSY if d is None else c.convert(d, "date", "timestamp")
    if isinstance(v, int) and not isinstance(v, bool):
        # a long read as a timestamp, in the hint's unit (else the option's, RULES 2)
        unit = hint.unit or c.long_timestamp_unit
        return Conversions(c.timestamp_unit, unit).long_to_timestamp(int(v))
    return LOSSY


def _to_string(v: Any, hint: Hint, c: Conversions) -> Any:
    if isinstance(v, str):
        return v
    for t, name in ((bool, "boolean"), (int, "long"), (float, "double"),
                    (Decimal, "decimal"), (dt.datetime, "timestamp"), (dt.date, "date"),
                    (bytes, "binary")):
        if isinstance(v, t):
            try:
                return c.convert(Conversions.own(v, name), name, "string")
            except OverflowError:
                return LOSSY
    return LOSSY


def _number(v: str | Decimal) -> Decimal | None:
    if isinstance(v, Decimal):
        return v if v.is_finite() else None
    if _NUMBER_RE.fullmatch(v) is None:
        return None
    try:
        return Decimal(v)
    except InvalidOperation:
        return None


_TO: Final = {
    "boolean": _to_boolean,
    "long": _to_long,
    "double": _to_double,
    "decimal": _to_decimal,
    "date": _to_date,
    "timestamp": _to_timestamp,
    "string": _to_string,
}


#: per hinted key, per (type a value came as, type it was written as, the hint): how many
#: values, and the first one as it came and as written (what the conversion warnings tell)
HintTally = dict[str, dict[tuple[str, str, str], tuple[int, Any, Any]]]


def convert_hinted(
    rows: list[dict[str, Any]], hints: Sequence[Hint], conversions: Conversions,
    tally: HintTally | None = None,
) -> list[dict[str, Any]]:
    """``rows`` with the values of hinted fields that convert exactly into the hint's type
    converted (:func:`to_hint`); a record changes only when one of its values does, so
    converting twice gives the very same records. ``tally``, when given, counts the values
    converted (:data:`HintTally`): a text is counted as a string, the value it spells.

    A decimal that does not fit a decimal hint is taken as its text (RULES 1 keeps a number
    beyond a column's digits as text), so the hinted column never meets it.

    >>> tally: HintTally = {}
    >>> _ = convert_hinted([{"d": False}, {"d": True}, {"d": 2}], parse_hints({"d": "double"}),
    ...                    Conversions(), tally)
    >>> tally["d"]
    {('boolean', 'double', 'double'): (2, False, 0.0), ('long', 'double', 'double'): (1, 2, 2.0)}
    """
    if not hints:
        return rows
    out = []
    for r in rows:
        changed: dict[str, Any] | None = None
        for h in hints:
            v = r.get(h.field)
            if v is None:
                continue
            c = to_hint(v, h, conversions)
            if c is LOSSY:
                if h.lattice == "decimal" and isinstance(v, Decimal):
                    c = decimal_text(v)
                else:
                    continue
            if type(c) is type(v) and c == v:
                continue
            if changed is None:
                changed = dict(r)
            changed[h.field] = c
            if tally is not None:
                _count(tally, h, v, c)
        out.append(r if changed is None else changed)
    return out


def _count(tally: HintTally, hint: Hint, came: Any, went: Any) -> None:
    """One hinted value converted, counted by the type it came as and the one written."""
    written = "string" if type(went) is str else hint.lattice
    key = (_came_as(came), written, hint.text)
    field = tally.setdefault(hint.field, {})
    had = field.get(key)
    field[key] = (1, came, went) if had is None else (had[0] + 1, had[1], had[2])


def _came_as(v: Any) -> str:
    """The type name of a value as it came, for the tally (RULES 1, texts as strings: a
    text spells its value)."""
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "long"
    if isinstance(v, float):
        return "double"
    if isinstance(v, Decimal):
        return "decimal"
    if isinstance(v, dt.datetime):
        return "timestamp"
    if isinstance(v, dt.date):
        return "date"
    if isinstance(v, bytes):
        return "binary"
    return "string"
