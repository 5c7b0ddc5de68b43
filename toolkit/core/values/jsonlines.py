"""Parsing JSON-lines text without losing a digit, a value or a byte (RULES 1;
docs/rules.md, "Bytes from other systems").

orjson is fast, but it reads an integer beyond 64 bits as a float (rounded) rather than
failing. Lines holding a run of 19 or more digits therefore go through the standard
library, which keeps every integer exact; so do NaN and Infinity, which orjson refuses.

>>> parse_line('{"n": 1180591620717411303424, "x": 1.5}')
{'n': 1180591620717411303424, 'x': 1.5}
>>> parse_line('{"a": NaN}')
{'a': nan}

A number beyond the double range (``1e400``, which a double reads as infinity), a nonzero
one below it (``1e-400``, read as 0.0), or one with more digits than a double holds
(``3.14159265358979323846``, which a double reads as ``3.141592653589793``) is kept exactly
as its literal's text, as integers beyond 64 bits are (RULES 1: its observed type is
string). A literal the double gives back (its shortest digits, as the table shows it) stays
a double, however it is spelled:

>>> parse_line('{"x": 1e400, "y": -2.5E-400, "z": 1e300}')
{'x': '1e400', 'y': '-2.5E-400', 'z': 1e+300}
>>> parse_line('{"pi": 3.14159265358979323846, "one": 1.0000000000000001, "sub": 1.23e-322}')
{'pi': '3.14159265358979323846', 'one': '1.0000000000000001', 'sub': '1.23e-322'}
>>> parse_line('{"ok": 0.30000000000000004, "z": 1.50000000000000000, "id": 12345678901234567}')
{'ok': 0.30000000000000004, 'z': 1.5, 'id': 12345678901234567}

A text holding a lone surrogate (``"\\ud800"`` without its pair) is valid JSON but has no
UTF-8 form, so no Parquet file can store it: such a line is refused as malformed (and kept
whole in the quarantine as the text it arrived as), rather than failing the batch later.
So is an object naming a key twice (:class:`~toolkit.errors.DuplicateKeyError`: no value
is taken over the other), and a line whose bytes are not UTF-8
(:class:`~toolkit.errors.NotUtf8LineError`, kept as its bytes):

>>> parse_line('{"id": 2, "r": {"a": 1, "a": 2}}')
Traceback (most recent call last):
  ...
toolkit.errors.DuplicateKeyError: duplicate key 'r.a' in '{"id": 2, "r": {"a": 1, "a": 2}}': \
a JSON object names each key once, and neither value is taken over the other
"""

from __future__ import annotations

import gzip
import itertools
import json
import math
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Context, Decimal
from pathlib import Path
from typing import IO, Any, Final

import orjson

from toolkit.errors import (
    DuplicateKeyError,
    LineTooDeepError,
    MalformedLineError,
    NotARecordLineError,
    NotUtf8LineError,
)

#: what the standard library reads instead of orjson (:func:`_many_digits`): a run of 17
#: digits and dots may be an integer orjson would round (19 digits) or a number with more
#: digits than a double holds (16 or more); and a negative exponent of three digits
#: (:func:`_tiny`). (This class is twice as fast to search for as ``\d{19}``.)
_DIGIT_RUN: Final = re.compile(r"[0-9][0-9.]{16}")
#: what may follow a number's digits: its exponent
_EXPONENT: Final = re.compile(r"[eE][+-]?[0-9]+")
#: a double keeps every literal of at most 15 significant digits (DBL_DIG)
_DOUBLE_DIGITS: Final = 15
#: an escape of a UTF-16 surrogate: orjson refuses lone ones, the standard library not
_SURROGATE_ESCAPE: Final = re.compile(r"\\u[dD][89a-fA-F]")
#: what may precede a JSON document: whitespace, and a UTF-8 byte order mark
_BLANK: Final = " \t\r\n\ufeff"
#: a key's closing quote, JSON blanks, and its colon (``"a" :``); ``":`` is counted apart
_KEY_GAP: Final = re.compile(r'"[ \t\r\n]+:')
#: the UTF-8 byte order mark Windows tools write first; Spark's text reader (Hadoop's
#: LineRecordReader) drops it at the start of a file, so the first line is a record there
_UTF8_BOM: Final = b"\xef\xbb\xbf"


def _exact_float(text: str) -> float | str:
    """A JSON number with a fraction or an exponent: its double, or its text when the
    double would not be that number (beyond the double range, or a nonzero number that
    reads as 0.0)."""
    value = float(text)
    mantissa = text.partition("e")[0].partition("E")[0]
    if math.isinf(value) or (value == 0.0 and any(c in "123456789" for c in mantissa)):
        return text
    # (a subnormal double holds fewer digits: 1.23e-322 reads as 1.24e-322)
    significant = _significant(mantissa)
    if significant > _DOUBLE_DIGITS or abs(value) < sys.float_info.min:
        shown = repr(value)
        if shown == text:  # (as most writers print a double: at once)
            return value
        # a double's own digits, however many a writer printed (its shortest, ``%.17g``,
        # Java's ``4.9E-324``), give it back; any other digits were the writer's
        # (docs/rules.md)
        written = Decimal(text)
        rounded = Context(prec=max(significant, 1), rounding=ROUND_HALF_EVEN).plus(
            Decimal(value))
        if written != rounded and written != Decimal(shown):
            return text
    return value


def _significant(mantissa: str) -> int:
    """How many significant digits a number's mantissa has (``-0.0012300`` has 3)."""
    return len(mantissa.lstrip("+-").replace(".", "").strip("0"))


def _many_digits(text: str) -> bool:
    """Whether ``text`` may hold a number orjson would read otherwise than its literal: an
    integer of 19 digits or more (rounded to a double), or a number with a fraction or an
    exponent whose digits its double does not give back. A run of 17 or 18 digits (an id)
    is neither, and a long fraction that round-trips (``0.14285714285714285``, as most
    writers print doubles) neither: orjson reads those lines, as it reads the others."""
    at = 0
    while (m := _DIGIT_RUN.search(text, at)) is not None:
        end = m.end()
        while end < len(text) and text[end] in "0123456789.":
            end += 1
        exponent = _EXPONENT.match(text, end)
        at = end if exponent is None else exponent.end()
        literal = text[m.start():at]
        if exponent is None and "." not in literal:
            if len(literal) >= 19:
                return True
            continue
        try:
            if isinstance(_exact_float(literal), str):
                return True
        except ValueError:  # no number (inside a text, ``1.2.3``): the slow path decides
            return True
    return False


_EXACT: Final = json.JSONDecoder(parse_float=_exact_float)


def parse_line(line: str | bytes, number: int | None = None) -> Any:
    """One JSON value, integers exact; a line that cannot be taken whole raises a
    :class:`~toolkit.errors.MalformedLineError` (naming ``number``, when given)."""
    if isinstance(line, bytes):
        try:
            text = line.decode()
        except UnicodeDecodeError as exc:
            raise NotUtf8LineError(line, exc, number) from None
    else:
        text = line
    if not _many_digits(text) and not _tiny(text):
        try:
            return _whole(text, orjson.loads(text), number)
        except orjson.JSONDecodeError:
            pass  # NaN/Infinity, too deep, or malformed: the standard library decides
    try:
        value = _EXACT.decode(text)
    except ValueError as exc:
        raise MalformedLineError(text, str(exc), number) from None
    except RecursionError:  # the standard library's decoder recurses once per level
        raise LineTooDeepError(text, number) from None
    if _SURROGATE_ESCAPE.search(text) is not None and has_lone_surrogate(value):
        raise MalformedLineError(
            text, "a lone surrogate escape: the text has no UTF-8 form", number
        )
    return _whole(text, value, number)


def parse_record(line: str | bytes, number: int | None = None) -> dict[str, Any]:
    """A line that must be one record: :func:`parse_line`, and a
    :class:`~toolkit.errors.NotARecordLineError` for any other JSON value, which keeps the
    line's text (a value rendered again would not be the line: ``[1E22]`` is no
    ``[1e+22]``, and ``" "`` no `` ``).

    >>> parse_record('[1E22]', 3)
    Traceback (most recent call last):
      ...
    toolkit.errors.NotARecordLineError: line 3: expected a JSON object, got list '[1E22]'
    """
    value = parse_line(line, number)
    if type(value) is not dict:
        text = line if isinstance(line, str) else line.decode()  # (parsed: it is UTF-8)
        raise NotARecordLineError(text, value, number)
    return value


def _tiny(text: str) -> bool:
    """Whether ``text`` may hold a number with a negative exponent of three digits, which
    orjson would read as 0.0 (a positive one it refuses). Two substring searches in the
    common case: a regex over the whole line costs about half of orjson's parse."""
    for mark in ("e-", "E-"):
        i = text.find(mark)
        while i > 0:
            if text[i - 1].isdigit() and text[i + 2:i + 5].isdigit() and len(text) >= i + 5:
                return True
            i = text.find(mark, i + 2)
    return False


def _whole(text: str, value: Any, number: int | None) -> Any:
    """``value`` when its objects hold every key of ``text`` (no key twice), else a
    :class:`DuplicateKeyError`. Both parsers keep a repeated key's last value silently, so
    the keys are counted: every key ends in ``"`` and ``:``, so the text holds at least as
    many such marks as the objects hold keys, and exactly as many unless a key comes twice
    (or a text holds an escaped quote before a colon): only then is the line parsed again,
    pair by pair. A flat record costs two counts over its text."""
    t = type(value)
    if t is not dict and t is not list:
        return value
    marks = text.count('":')
    if ('" ' in text or '"\t' in text or '"\r' in text or '"\n' in text) and (
        _KEY_GAP.search(text) is not None
    ):
        marks += len(_KEY_GAP.findall(text))
    if (t is dict and marks == len(value)) or marks == _key_count(value):
        return value
    path = _duplicate_path(text)
    if path is not None:
        raise DuplicateKeyError(text, path, number)
    return value


def _key_count(value: Any) -> int:
    """How many keys the objects of a JSON value hold, at every depth."""
    try:
        return _keys_in(value)
    except RecursionError:  # a line nested about a thousand levels deep: a loop instead
        n = 0
        stack = [value]
        while stack:
            v = stack.pop()
            if type(v) is dict:
                n += len(v)
                stack += [x for x in v.values() if type(x) is dict or type(x) is list]
            else:
                stack += [x for x in v if type(x) is dict or type(x) is list]
        return n


def _keys_in(value: Any) -> int:
    """:func:`_key_count` by recursion: quicker on the shallow records most lines are."""
    if type(value) is dict:
        n = len(value)
        values = value.values()
    else:
        n = 0
        values = value
    for x in values:
        t = type(x)
        if t is dict or t is list:
            n += _keys_in(x)
    return n


class _Pairs(dict[str, Any]):
    """An object as the pair-by-pair parse reads it: the first key it names twice."""

    twice: str | None = None


def _pairs(pairs: list[tuple[str, Any]]) -> _Pairs:
    out = _Pairs(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        out.twice = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
    return out


_PAIRS: Final = json.JSONDecoder(object_pairs_hook=_pairs, parse_float=_exact_float)


def _duplicate_path(text: str) -> tuple[str, ...] | None:
    """The key path (keys from the top; array levels add none) of the first key an object
    of ``text`` names twice, or None."""
    stack: list[tuple[Any, tuple[str, ...]]] = [(_PAIRS.decode(text), ())]
    while stack:
        v, path = stack.pop()
        if isinstance(v, _Pairs):
            if v.twice is not None:
                return (*path, v.twice)
            stack += [(x, (*path, k)) for k, x in reversed(v.items())]
        elif type(v) is list:
            stack += [(x, path) for x in reversed(v)]
    return None


def has_lone_surrogate(value: Any) -> bool:
    """Whether a JSON-like value holds a text, key or value, with no UTF-8 form.

    >>> has_lone_surrogate({"a": ["ok", "\\U0001f600"]}), has_lone_surrogate({"\\udc00": 1})
    (False, True)
    """
    stack = [value]
    while stack:  # iterative: a line may be nested a thousand levels deep
        v = stack.pop()
        if isinstance(v, str):
            try:
                v.encode()
            except UnicodeEncodeError:
                return True
        elif isinstance(v, dict):
            stack.extend(v)
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False


def parse_lines(lines: Iterable[str | bytes]) -> Iterator[Any]:
    """The values of non-blank lines; errors name the line number (1-based)."""
    for number, line in enumerate(lines, 1):
        if line and line.strip():
            yield parse_line(line, number)


@dataclass(frozen=True)
class UnreadLine:
    """A line of a JSON-lines file that cannot be taken whole as a record (not UTF-8, not
    JSON, a key twice, JSON that is not an object...): where a record would be, so the
    engine sets it aside with ``error``'s reason (``error.reason_key``) and the line as it
    arrived (bytes when not UTF-8)."""

    raw: str | bytes
    number: int
    error: MalformedLineError


def read_lines(path: str | Path) -> list[Any]:
    """Every record of a JSON-lines file (gzipped when its name ends ``.gz``), in order,
    with an :class:`UnreadLine` in the place of each line that cannot be taken whole as
    one (JSON that is not an object included): one such line never stops the rest of the
    file. Lines end as Spark's text reader ends them (``\\n``, ``\\r\\n`` or ``\\r``);
    blank lines are skipped, and counted."""
    with _open_bytes(path) as f:
        chunks = iter(f)
        first = next(chunks, b"").removeprefix(_UTF8_BOM)  # at the file's start only, as Spark
        return read_values(
            line for chunk in itertools.chain((first,), chunks) for line in chunk.splitlines()
        )


class ReadRecords(list[Any]):
    """The records of JSON lines, in order, as :func:`read_values` reads them, and the line
    each was parsed from: a record set aside after it was read is kept as its line,
    numbered, as ``ingest`` keeps it. The lines are kept beside the records, in order (two
    appends a line: a mapping made as they are read cost a third of the reading); a record
    is found by its identity, once something asks (the list keeps the records alive)."""

    def __init__(self) -> None:
        super().__init__()
        self.numbers: list[int] = []
        self.texts: list[bytes | str | None] = []
        self._at: dict[int, int] | None = None

    def line_of(self, record: object) -> tuple[int, str] | None:
        """The number and text of the line ``record`` was parsed from, or None."""
        if self._at is None:
            self._at = {id(r): i for i, r in enumerate(self)}
        i = self._at.get(id(record))
        if i is None or i >= len(self.texts):
            return None
        line = self.texts[i]
        if line is None or self[i] is not record:
            return None
        return self.numbers[i], line.decode() if isinstance(line, bytes) else line  # UTF-8


def read_values(lines: Iterable[bytes | str | None]) -> ReadRecords:
    """The records of JSON lines (bytes as read, or texts), numbered from 1, with an
    :class:`UnreadLine` in the place of each line that cannot be taken whole as one;
    blank and null lines are skipped, and counted."""
    out = ReadRecords()
    numbers, texts = out.numbers, out.texts
    for number, line in enumerate(lines, 1):
        if line is None or not line.strip():
            continue
        try:
            out.append(parse_record(line, number))
        except MalformedLineError as err:
            raw: str | bytes = line if isinstance(err, NotUtf8LineError) else err.line
            out.append(UnreadLine(raw, number, err))
            line = None  # kept by the UnreadLine itself
        numbers.append(number)
        texts.append(line)
    return out


def _open_bytes(path: str | Path) -> IO[bytes]:
    if str(path).lower().endswith(".gz"):
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")


def open_text(path: str | Path) -> IO[str]:
    """A text file opened for reading as UTF-8, through gzip when its name ends ``.gz``
    (as Spark's readers tell a compressed file: by its extension)."""
    if str(path).lower().endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def read_jsonl(path: str | Path) -> list[Any]:
    """Every record of a JSON-lines file (gzipped when its name ends ``.gz``)."""
    with open_text(path) as f:
        return list(parse_lines(f))


def starts_with_array(path: str | Path) -> bool:
    """Whether the first character of a text file that is not blank is ``[``: the file
    is one JSON array (a ``.json`` document), not JSON lines."""
    with open_text(path) as f:
        while chunk := f.read(1 << 16):
            text = chunk.lstrip(_BLANK)
            if text:
                return text[0] == "["
    return False


def read_json_array(path: str | Path) -> list[Any]:
    """The items of a file holding one JSON array (integers exact, as :func:`parse_line`
    reads them); a file that is not one JSON array raises :class:`MalformedLineError`.

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    ...     _ = f.write(' [{"a": 1}, {"a": 12345678901234567890123}]')
    >>> read_json_array(f.name)
    [{'a': 1}, {'a': 12345678901234567890123}]
    >>> os.unlink(f.name)
    """
    with open_text(path) as f:
        text = f.read().lstrip(_BLANK)
    try:
        value = parse_line(text)
    except MalformedLineError as err:  # the whole document: name the file
        raise MalformedLineError(text, f"{path} is not one JSON array ({err})") from None
    if not isinstance(value, list):
        raise MalformedLineError(text, f"{path} is not one JSON array")
    return value
