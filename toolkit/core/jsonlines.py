"""Parsing JSON-lines text without losing a digit (RULES 1).

orjson is fast, but it reads an integer beyond 64 bits as a float (rounded) rather than
failing. Lines holding a run of 19 or more digits therefore go through the standard
library, which keeps every integer exact; so do NaN and Infinity, which orjson refuses.

>>> parse_line('{"n": 1180591620717411303424, "x": 1.5}')
{'n': 1180591620717411303424, 'x': 1.5}
>>> parse_line('{"a": NaN}')
{'a': nan}

A text holding a lone surrogate (``"\\ud800"`` without its pair) is valid JSON but has no
UTF-8 form, so no Parquet file can store it: such a line is refused as malformed (and kept
whole in the quarantine as the text it arrived as), rather than failing the batch later.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Final

import orjson

from toolkit.errors import LineTooDeepError, MalformedLineError

_LONG_DIGITS: Final = re.compile(r"\d{19}")
#: an escape of a UTF-16 surrogate: orjson refuses lone ones, the standard library not
_SURROGATE_ESCAPE: Final = re.compile(r"\\u[dD][89a-fA-F]")
#: what may precede a JSON document: whitespace, and a UTF-8 byte order mark
_BLANK: Final = " \t\r\n\ufeff"


def parse_line(line: str | bytes, number: int | None = None) -> Any:
    """One JSON value, integers exact."""
    text = line.decode() if isinstance(line, bytes) else line
    if _LONG_DIGITS.search(text) is None:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass  # NaN/Infinity, too deep, or malformed: the standard library decides
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise MalformedLineError(text, str(exc), number) from None
    except RecursionError:  # the standard library's decoder recurses once per level
        raise LineTooDeepError(text, number) from None
    if _SURROGATE_ESCAPE.search(text) is not None and has_lone_surrogate(value):
        raise MalformedLineError(
            text, "a lone surrogate escape: the text has no UTF-8 form", number
        )
    return value


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
