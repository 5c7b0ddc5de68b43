r"""Counts, lists, values and types as a person reads them: one helper each, for every face
(the notebook panels, the command line, errors and the reasons of plans).

Counts carry thousands separators and the right plural, never ``batch(es)``:

>>> counted(1, "batch"), counted(2, "batch"), counted(5000, "column")
('1 batch', '2 batches', '5,000 columns')

Values read as JSON texts, clipped to a table cell:

>>> value_text("7"), value_text(7), clip("abcdef", 4)
('"7"', '7', 'abc…')

Names and values from data are shown with what cannot be seen written out: control
characters (a terminal would obey them), invisible and bidi characters (a name would read
as another), as Python writes them:

>>> visible("user\u202egnp.exe"), visible("ad\u200bmin"), visible("\x1b[2J")
('user\\u202egnp.exe', 'ad\\u200bmin', '\\x1b[2J')

Types are words, not notation (``long[][]``), where a sentence names them:

>>> a_shape(Shape("long", 0)), a_shape(Shape("long", 2)), a_shape(Shape(None, 1))
('a long', 'a list of lists of longs', 'an empty list')
>>> shape_words(Shape("string", 1), many=True), and_join(["a long", "a double", "a string"])
('lists of strings', 'a long, a double and a string')
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable
from typing import Any

from toolkit.core.values.types import Shape
from toolkit.errors import batch_number  # errors' messages count batches too (layer below)

__all__ = [
    "VALUE_WIDTH",
    "a_shape",
    "and_join",
    "batch_number",
    "clip",
    "counted",
    "lookalike_key",
    "or_join",
    "ordinal",
    "plural",
    "shape_words",
    "value_text",
    "visible",
    "visible_json",
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


# --- texts from data, made visible (issue #25) -------------------------------------------

#: Unicode categories no reader sees as what they are: control characters (a terminal
#: obeys ESC, BEL...), format characters (zero-width spaces and joiners, bidi overrides
#: and isolates, the byte-order mark, tag characters), lone surrogates (bytes that were
#: not UTF-8), line and paragraph separators
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
#: letters and marks that draw nothing: Hangul fillers, the braille blank, the combining
#: grapheme joiner (variation selectors are kept: they change how emoji look)
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u034f")
#: Python's short escapes, which read better than their numbers
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _hidden(ch: str) -> bool:
    """Whether ``ch`` is shown by its escape: a character a reader cannot see as itself (a
    space other than the plain one looks like it, and is hidden too)."""
    if ch == " ":
        return False
    category = unicodedata.category(ch)
    return category in _HIDDEN_CATEGORIES or category == "Zs" or ch in _BLANK_LETTERS


def _escape(ch: str) -> str:
    if ch in _SHORT:
        return _SHORT[ch]
    n = ord(ch)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def visible(text: str, *, keep_lines: bool = False) -> str:
    r"""``text`` as a terminal or a page can show it without being steered by it: every
    control, invisible and bidi character (and every space but the plain one) written as
    Python escapes it (``\x1b``, ``\u200b``, ``\u202e``, ``\n``), so ``user\u202egnp.exe``
    never reads as ``userexe.png`` and ``ad\u200bmin`` never as ``admin``. A backslash
    already in the text stays as it is (a value's JSON text has its own escapes, which must
    not be doubled). ``keep_lines``: line breaks and tabs stay, for a text of several lines
    (a message, a report); a name's are written out.

    It escapes nothing for a markup: HTML escaping still applies after it.

    >>> visible("café 名前 🚀"), visible('"a\\nb"')
    ('café 名前 🚀', '"a\\nb"')
    >>> print(visible("tab\there\x07\x9b\u00a0\U000e0041"))
    tab\there\x07\x9b\xa0\U000e0041
    >>> visible("one\ntwo"), visible("one\ntwo", keep_lines=True)
    ('one\\ntwo', 'one\ntwo')
    """
    if text.isprintable():  # the common case, at C speed
        return text
    return "".join(
        ch if keep_lines and ch in "\n\t" else _escape(ch) if _hidden(ch) else ch
        for ch in text
    )


def visible_json(text: str) -> str:
    r"""JSON text with every character :func:`visible` writes out given as a JSON escape
    (``\u001b``, ``\u202e``) instead: the same JSON value, safe on a terminal. Such
    characters can stand only inside a JSON string, where the escape means the very same
    character; line breaks between values stay.

    >>> visible_json(json.dumps({"k\u202e": "\x1b[2J"}, ensure_ascii=False))
    '{"k\\u202e": "\\u001b[2J"}'
    """
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch != "\n" and _hidden(ch):
            n = ord(ch)
            if n >= 0x10000:  # JSON writes it as a UTF-16 surrogate pair
                n -= 0x10000
                out.append(f"\\u{0xd800 + (n >> 10):04x}\\u{0xdc00 + (n & 0x3ff):04x}")
            else:
                out.append(f"\\u{n:04x}")
        else:
            out.append(ch)
    return "".join(out)


def lookalike_key(name: str) -> str:
    r"""What a reader takes ``name`` for: its NFKC form, case folded, without the
    characters that draw nothing. Names with the same key look alike (``café`` composed
    and decomposed, ``ad\u200bmin`` and ``admin``, ``ﬁle`` and ``File``).

    >>> lookalike_key("Cafe\u0301") == lookalike_key("caf\u00e9"), lookalike_key("ad\u200bmin")
    (True, 'admin')
    """
    kept = "".join(ch for ch in name if ch == " " or not _hidden(ch))
    return unicodedata.normalize("NFKC", kept).casefold()


def from_record(places: Iterable[int]) -> str:
    """``, from record 1,501``: where in its batch a field's values start, said when not at
    its first record (issue #28); "" when unknown.

    >>> from_record([1_501, 1_700]), from_record([1]), from_record([])
    (', from record 1,501', '', '')
    """
    first = min(places, default=1)
    return "" if first == 1 else f", from record {first:,}"
