"""Bounded table properties: the toolkit's logs keep a recent window in the table's
properties and fold older entries into files in the table's metadata folder.

Every commit re-reads and re-writes every table property (they live in the table's
metadata file), so a log kept there whole would make each commit slower than the last.
Three logs live in properties:

* ``lineage``: one property per committed plan, ``toolkit.lineage.<n>`` (RULES 6);
* ``arrivals``: what one batch brought, ``toolkit.arrivals.<snapshot id>``;
* ``ledger``: the batch ids of expired snapshots, ``toolkit.ledger``.

Each keeps at most :data:`WINDOW_BYTES` in properties. The commit whose new entry makes a
window overflow also folds its oldest entries (down to :data:`KEEP_BYTES`) into one new
*fold file*, and an entry larger than :data:`ENTRY_BYTES` (a batch that adds 10,000
columns) goes to a fold file at once. The file is written before the commit and the commit
sets the log's pointer property ``toolkit.folded.<log>`` to it, so a fold that crashes
leaves an unreferenced file, never a lost entry.

The chain is one file per fold: each fold file lists every earlier fold file of its log
(oldest first), and the pointer names the newest; reading a log reads the newest file,
then the ones it lists. Fold files never change once written.

>>> window = [(f"toolkit.lineage.{n}", "x" * 300) for n in range(1, 80)]
>>> fold = choose_fold(window)
>>> fold[0], fold[-1], len(window) - len(fold)
('toolkit.lineage.1', 'toolkit.lineage.54', 25)
>>> choose_fold(window[:10]), choose_fold([("toolkit.ledger", "x" * 5000)])
((), ('toolkit.ledger',))
>>> p = Pointer("s3://b/t/metadata/toolkit-lineage-fold-00001-ab.json.gz", 1, 54)
>>> Pointer.decode(p.encode()) == p
True
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal, get_args

__all__ = [
    "ARRIVALS_PREFIX",
    "ENTRY_BYTES",
    "KEEP_BYTES",
    "LEDGER_KEY",
    "LINEAGE_PREFIX",
    "LOGS",
    "POINTER_PREFIX",
    "PROPERTIES_BOUND",
    "WINDOW_BYTES",
    "FoldFile",
    "Log",
    "Pointer",
    "choose_fold",
    "entry_size",
    "folded_high",
    "log_of",
    "merged",
    "number_of",
    "pointer_key",
]

#: the logs that fold
Log = Literal["lineage", "arrivals", "ledger"]
LOGS: Final[tuple[Log, ...]] = get_args(Log)

#: table properties holding the lineage: ``toolkit.lineage.1``, ``toolkit.lineage.2``...
LINEAGE_PREFIX: Final = "toolkit.lineage."
#: table properties holding what the batch of one snapshot brought: the prefix, then the
#: snapshot's id
ARRIVALS_PREFIX: Final = "toolkit.arrivals."
#: the table property keeping the batch ids of snapshots that may since have expired
LEDGER_KEY: Final = "toolkit.ledger"
#: the pointer to a log's newest fold file: the prefix, then the log's name
POINTER_PREFIX: Final = "toolkit.folded."

#: the most one log keeps in properties (keys and values, in UTF-8 bytes)
WINDOW_BYTES: Final = 16 * 1024
#: what a fold leaves in the window (folding to half the window: folds stay rare)
KEEP_BYTES: Final = WINDOW_BYTES // 2
#: an entry larger than this goes to a fold file at once
ENTRY_BYTES: Final = 4 * 1024
#: the bound the tests hold a table's properties to: three windows, their pointers and
#: room for the other properties a table carries (Iceberg's own, the toolkit's settings)
PROPERTIES_BOUND: Final = 64 * 1024


def log_of(key: str) -> Log | None:
    """The log a table property belongs to as an entry (None for any other property).

    >>> log_of("toolkit.lineage.12"), log_of("toolkit.arrivals.-5"), log_of("toolkit.ledger")
    ('lineage', 'arrivals', 'ledger')
    >>> log_of("toolkit.arrivals-expired"), log_of("toolkit.folded.lineage")
    (None, None)
    """
    if key == LEDGER_KEY:
        return "ledger"
    for prefix, log in ((LINEAGE_PREFIX, "lineage"), (ARRIVALS_PREFIX, "arrivals")):
        if key.startswith(prefix) and key[len(prefix):].lstrip("-").isdigit():
            return log  # type: ignore[return-value]  # (one of the Literal's values)
    return None


def number_of(key: str) -> int:
    """The number at the end of a numbered entry's key (a lineage entry's seq, an
    arrivals entry's snapshot id)."""
    return int(key.rsplit(".", 1)[-1])


def pointer_key(log: Log) -> str:
    """The table property pointing to ``log``'s newest fold file."""
    return f"{POINTER_PREFIX}{log}"


def entry_size(key: str, value: str) -> int:
    """What one property costs the metadata (UTF-8 bytes of its key and value)."""
    return len(key.encode()) + len(value.encode())


def choose_fold(
    window: Sequence[tuple[str, str]],
    *,
    window_bytes: int = WINDOW_BYTES,
    keep_bytes: int = KEEP_BYTES,
    entry_bytes: int = ENTRY_BYTES,
) -> tuple[str, ...]:
    """The keys to fold out of a log's ``window`` (its entries, oldest first, the new
    ones included): every entry over ``entry_bytes``; and when the rest exceeds
    ``window_bytes``, the oldest of it until ``keep_bytes`` or less is left. Oldest first."""
    big = {k for k, v in window if entry_size(k, v) > entry_bytes}
    left = sum(entry_size(k, v) for k, v in window if k not in big)
    old: set[str] = set()
    if left > window_bytes:
        for k, v in window:
            if left <= keep_bytes:
                break
            if k not in big:
                old.add(k)
                left -= entry_size(k, v)
    return tuple(k for k, _ in window if k in big or k in old)


@dataclass(frozen=True)
class Pointer:
    """A log's pointer property: its newest fold file, how many files the chain holds,
    and (numbered logs) the highest number folded, so that numbering goes on from it
    when every entry is in files."""

    file: str
    files: int
    high: int | None = None

    def encode(self) -> str:
        return json.dumps({"file": self.file, "files": self.files, "high": self.high},
                          separators=(",", ":"))

    @classmethod
    def decode(cls, text: str) -> Pointer:
        data = json.loads(text)
        return cls(str(data["file"]), int(data["files"]), data.get("high"))


def folded_high(properties: Mapping[str, str], log: Log) -> int | None:
    """The highest number ``log`` folded into files (None when it folded none)."""
    text = properties.get(pointer_key(log))
    return None if text is None else Pointer.decode(text).high


@dataclass(frozen=True)
class FoldFile:
    """One fold: the entries it took out of a log's window, and the log's earlier fold
    files (oldest first). Stored as gzipped JSON.

    >>> f = FoldFile("ledger", ("a.json.gz",), (("toolkit.ledger", "z1:..."),))
    >>> FoldFile.decode(f.encode()) == f
    True
    """

    log: Log
    previous: tuple[str, ...]
    entries: tuple[tuple[str, str], ...]

    def encode(self) -> bytes:
        doc = {"version": 1, "log": self.log, "previous": list(self.previous),
               "entries": [list(e) for e in self.entries]}
        raw = json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()
        return gzip.compress(raw, 6, mtime=0)

    @classmethod
    def decode(cls, data: bytes) -> FoldFile:
        doc = json.loads(gzip.decompress(data))
        if doc.get("version") != 1 or doc.get("log") not in LOGS:
            raise ValueError(f"not a fold file this toolkit wrote: {str(doc)[:80]!r}")
        return cls(doc["log"], tuple(doc["previous"]),
                   tuple((str(k), str(v)) for k, v in doc["entries"]))

    def high(self, before: int | None) -> int | None:
        """The highest number among this fold's entries and ``before``."""
        numbers = [number_of(k) for k, _ in self.entries if self.log == "lineage"]
        return max([*numbers, *([] if before is None else [before])], default=None)


def merged(entries: Iterable[tuple[str, str]], properties: Mapping[str, str],
           log: Log) -> dict[str, str]:
    """``log``'s folded ``entries`` then its entries in ``properties`` (those win: an
    entry is in one place or the other, but a window entry is the newest word)."""
    out = dict(entries)
    out.update((k, v) for k, v in properties.items() if log_of(k) == log)
    return out
