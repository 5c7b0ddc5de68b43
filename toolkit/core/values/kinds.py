"""The kinds of value a reader tells apart (a boolean, a number, text, a time, bytes), and
the conversions across them that RULES 2 makes exactly but that change what a value
means: ``true`` written into a number column reads as 1, and ``SUM(quantity)`` counts it.

Such a conversion is told as a conversion warning (``toolkit.core.batch.conversion_warnings``)
and is no "holding" for a contract (``toolkit.core.batch.contracts``): a field under
``freeze`` refuses a boolean its number column would take as 1. One table serves both, so
a warning's advice (``a contract `quantity=freeze` refuses them``) is what the contract
does.

>>> crosses("boolean", "long"), crosses("long", "double"), crosses("date", "timestamp")
(True, False, False)
"""

from __future__ import annotations

from typing import Final

__all__ = ["CROSSINGS", "crosses", "kind_of_type"]

#: the kind of value each type is, as a reader of a column sees it
_KINDS: Final[dict[str, str]] = {
    "boolean": "boolean",
    "int": "number", "long": "number", "float": "number", "double": "number",
    "decimal": "number",
    "string": "text",
    "date": "time", "timestamp": "time", "timestamptz": "time",
    "binary": "binary",
}
#: the conversions across kinds, (from, to), that are warned and refused by ``freeze``.
#: Not here: conversions within a kind (long -> double, date -> timestamp), and a date or
#: timestamp written as text (it arrived as text; RULES 1 only detected it)
CROSSINGS: Final[frozenset[tuple[str, str]]] = frozenset({
    ("boolean", "number"), ("boolean", "text"), ("number", "text"), ("number", "time"),
    ("time", "number"),
})


def kind_of_type(type_name: str) -> str | None:
    """The kind of value of a type name (``decimal(10, 2)`` is a number), or None.

    >>> kind_of_type("decimal(10, 2)"), kind_of_type("long"), kind_of_type("record")
    ('number', 'number', None)
    """
    return _KINDS.get(type_name.split("(")[0])


def crosses(came: object, written: object) -> bool:
    """Whether a value of type ``came`` written as type ``written`` (type names; anything
    else, a record or no type, crosses nothing) changes kind as :data:`CROSSINGS` lists."""
    if not isinstance(came, str) or not isinstance(written, str):
        return False
    return (kind_of_type(came), kind_of_type(written)) in CROSSINGS
