"""Counts, lists, values and types as a person reads them: one helper each, for every face
(the notebook panels, the command line, errors and the reasons of plans).

Counts carry thousands separators and the right plural, never ``batch(es)``:

>>> counted(1, "batch"), counted(2, "batch"), counted(5000, "column")
('1 batch', '2 batches', '5,000 columns')

Values read as JSON texts, clipped to a table cell:

>>> value_text("7"), value_text(7), clip("abcdef", 4)
('"7"', '7', 'abc…')

Types are words, not notation (``long[][]``), where a sentence names them:

>>> a_shape(Shape("long", 0)), a_shape(Shape("long", 2)), a_shape(Shape(None, 1))
('a long', 'a list of lists of longs', 'an empty list')
>>> shape_words(Shape("string", 1), many=True), and_join(["a long", "a double", "a string"])
('lists of strings', 'a long, a double and a string')
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from toolkit.core.types import Shape
from toolkit.errors import batch_number  # errors' messages count batches too (layer below)

__all__ = [
    "VALUE_WIDTH",
    "a_shape",
    "and_join",
    "batch_number",
    "clip",
    "counted",
    "or_join",
    "ordinal",
    "plural",
    "shape_words",
    "value_text",
    "with_article",
]

#: how long a value's text may get in a table cell before it is clipped
VALUE_WIDTH = 60


def plural(noun: str) -> str:
    """The plural of an English noun (its last word): ``batches``, ``entries``, ``files``.

    >>> [plural(w) for w in ("record", "batch", "micro-batch", "entry", "replay", "data file")]
    ['records', 'batches', 'micro-batches', 'entries', 'replays', 'data files']
    """
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u"):
        return noun[:-1] + "ies"
    return noun + "s"


def counted(n: int, noun: str, many: str | None = None) -> str:
    """``n`` and the noun, singular for one, plural otherwise (``many`` when English does
    not make it by :func:`plural`), ``n`` with thousands separators.

    >>> counted(0, "record"), counted(1, "record"), counted(1234, "entry")
    ('0 records', '1 record', '1,234 entries')
    """
    return f"{n:,} {noun if n == 1 else many or plural(noun)}"


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``11th``: a position counted from 1, which a person
    cannot misread as counted from 0.

    >>> [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 102, 1000)]
    ['1st', '2nd', '3rd', '4th', '11th', '12th', '13th', '21st', '102nd', '1,000th']
    """
    last = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n:,}{last}"


def and_join(items: Iterable[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return _joined(items, "and")


def or_join(items: Iterable[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``.

    >>> or_join(["'s'", "'ms'", "'us'"]), or_join(["float", "None"])
    ("'s', 'ms' or 'us'", 'float or None')
    """
    return _joined(items, "or")


def _joined(items: Iterable[str], word: str) -> str:
    words = list(items)
    if len(words) <= 1:
        return "".join(words)
    return f"{', '.join(words[:-1])} {word} {words[-1]}"


def clip(text: str, width: int = VALUE_WIDTH) -> str:
    """``text`` cut to ``width`` characters, its last one ``…`` when it was cut."""
    return text if len(text) <= width else text[: width - 1] + "…"


def value_text(value: Any, width: int = VALUE_WIDTH) -> str:
    """A value as JSON text (``"7"`` for a string, ``7`` for a number), clipped to
    ``width`` characters (:func:`clip`).

    >>> value_text("x" * 80, 8), value_text({"a": [1, None]})
    ('"xxxxxx…', '{"a": [1, null]}')
    """
    if isinstance(value, str) and len(value) > width:
        # cut before encoding, as a value may be a huge text: the JSON text of its first
        # ``width`` characters is longer than ``width`` and starts as the whole one's does,
        # so the clipped text is the same
        value = value[:width]
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return clip(text, width)


def with_article(words: str) -> str:
    """``a long``, ``an int``, ``an empty list``."""
    return f"{'an' if words[:1].lower() in ('a', 'e', 'i', 'o', 'u') else 'a'} {words}"


def _leaf(shape: Shape, many: bool) -> str:
    if shape.mixed is not None:
        return f"mix{'es' if many else ''} of records and {_type_plural(shape.mixed)}"
    assert shape.type is not None
    return _type_plural(shape.type) if many else shape.type


def _type_plural(t: str) -> str:
    # decimal(38, 18) has no English plural: its values are named instead
    return plural(t) if t.isalpha() else f"{t} values"


def shape_words(shape: Shape, *, many: bool = False) -> str:
    """A type and its array dimension (RULES 1) in words, without an article: ``long``,
    ``list of longs``, ``list of lists of records``, ``empty list``; ``many``: the plural
    (``longs``, ``lists of longs``).

    >>> shape_words(Shape("long", 3)), shape_words(Shape(None, 3), many=True)
    ('list of lists of lists of longs', 'empty lists of lists of lists')
    >>> shape_words(Shape("decimal(38, 18)", 0), many=True)
    'decimal(38, 18) values'
    """
    if shape.type is None and shape.mixed is None:  # an array with no typed leaf
        head = ("lists" if many else "list") if shape.dim else "value"
        return f"empty {head}" + " of lists" * max(shape.dim - 1, 0)
    if shape.dim == 0:
        return _leaf(shape, many)
    inner = _leaf(shape, True)
    outer = "list" if not many else "lists"
    return f"{outer} of " + "lists of " * (shape.dim - 1) + inner


def a_shape(shape: Shape) -> str:
    """One value of ``shape`` in words, with its article: ``a long``, ``a list of longs``."""
    return with_article(shape_words(shape))
