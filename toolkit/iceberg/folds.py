"""Fold files on a real table: the toolkit's logs (lineage, arrivals, the ingest ledger)
keep a recent window in the table's properties; older entries are folded into files in
the table's metadata folder (``toolkit.core.maintenance.folding`` says when and how).

Files are written and read through the table's own FileIO, so this works wherever the
table lives (a local folder, S3...). A fold file never changes once written, so each is
read once per process (kept parsed, by location).

Every commit that sets a log entry passes its property updates through
:func:`bounded_updates`, which writes the fold file first and returns the updates that set
the pointer and remove the folded entries, for the same commit. Readers use
:func:`with_folded` (a log's entries, folded and in properties alike).
"""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING

from toolkit.core.maintenance.folding import (
    LOGS,
    FoldFile,
    Log,
    Pointer,
    choose_fold,
    log_of,
    merged,
    number_of,
    pointer_key,
)

if TYPE_CHECKING:
    from pyiceberg.io import FileIO
    from pyiceberg.table import Table

__all__ = [
    "METADATA_PATH_PROPERTY",
    "bounded_updates",
    "fold_files",
    "folded_entries",
    "metadata_folder",
    "with_folded",
]

#: Iceberg's table property that moves a table's metadata files out of its folder
METADATA_PATH_PROPERTY = "write.metadata.path"

#: fold files kept parsed, by location (they never change once written)
_KEEP = 256
_parsed: OrderedDict[str, FoldFile] = OrderedDict()
_lock = threading.Lock()


def metadata_folder(table: Table) -> str:
    """The folder of the table's metadata files (where fold files go)."""
    meta = table.metadata
    custom = meta.properties.get(METADATA_PATH_PROPERTY)
    return (custom or f"{meta.location.rstrip('/')}/metadata").rstrip("/")


def _pointer(properties: Mapping[str, str], log: Log) -> Pointer | None:
    text = properties.get(pointer_key(log))
    return None if not text else Pointer.decode(text)


def _read(io: FileIO, location: str) -> FoldFile:
    with _lock:
        found = _parsed.get(location)
        if found is not None:
            _parsed.move_to_end(location)
            return found
    with io.new_input(location).open() as stream:
        fold = FoldFile.decode(stream.read())
    _keep(location, fold)
    return fold


def _keep(location: str, fold: FoldFile) -> None:
    with _lock:
        _parsed[location] = fold
        while len(_parsed) > _KEEP:
            _parsed.popitem(last=False)


def _chain(table: Table, log: Log) -> tuple[str, ...]:
    """``log``'s fold files, oldest first (none when it never folded)."""
    pointer = _pointer(table.metadata.properties, log)
    if pointer is None:
        return ()
    return (*_read(table.io, pointer.file).previous, pointer.file)


def fold_files(table: Table) -> tuple[str, ...]:
    """Every fold file the table's properties reach: maintenance must keep them (no
    snapshot references them, so they look like orphan files to Iceberg)."""
    return tuple(f for log in LOGS for f in _chain(table, log))


def folded_entries(table: Table, log: Log) -> tuple[tuple[str, str], ...]:
    """The entries ``log`` folded into files, oldest fold first."""
    return tuple(e for f in _chain(table, log) for e in _read(table.io, f).entries)


def with_folded(table: Table, log: Log) -> dict[str, str]:
    """Every entry of ``log`` as table properties would hold them, were nothing folded:
    the folded ones and those in the window."""
    return merged(folded_entries(table, log), table.metadata.properties, log)


def _ordered(table: Table, log: Log, window: Mapping[str, str],
             new: Mapping[str, str]) -> list[tuple[str, str]]:
    """A window's entries, oldest first: lineage by number; arrivals by their snapshot's
    place in the metadata (entries of snapshots gone first, the new ones last)."""
    if log == "lineage":
        return sorted(window.items(), key=lambda kv: number_of(kv[0]))
    if log == "arrivals":
        place = {s.snapshot_id: i for i, s in enumerate(table.metadata.snapshots)}
        old = sorted(((k, v) for k, v in window.items() if k not in new),
                     key=lambda kv: place.get(number_of(kv[0]), -1))
        return [*old, *((k, v) for k, v in window.items() if k in new)]
    return list(window.items())


def bounded_updates(
    table: Table, updates: Mapping[str, str]
) -> tuple[dict[str, str], tuple[str, ...]]:
    """The property updates that set ``updates`` on ``table`` (as its metadata is now)
    with every log kept within its window: ``(properties to set, properties to
    remove)``, for one commit. A log whose window overflows gets a new fold file, written
    here, before the commit (a commit that then fails leaves it unreferenced: an orphan
    file, no entry lost); the properties to set then point to it."""
    props = table.metadata.properties
    sets = dict(updates)
    removes: list[str] = []
    for log in LOGS:
        new = {k: v for k, v in updates.items() if log_of(k) == log}
        if not new:
            continue
        window = {k: v for k, v in props.items() if log_of(k) == log}
        window.update(new)
        fold = choose_fold(_ordered(table, log, window, new))
        if not fold:
            continue
        sets[pointer_key(log)] = _write(table, log, tuple((k, window[k]) for k in fold))
        for key in fold:
            sets.pop(key, None)
            if key in props:
                removes.append(key)
    return sets, tuple(removes)


def _write(table: Table, log: Log, entries: tuple[tuple[str, str], ...]) -> str:
    """Write one fold file of ``entries``; the new pointer property's value."""
    pointer = _pointer(table.metadata.properties, log)
    previous = _chain(table, log)
    fold = FoldFile(log, previous, entries)
    n = len(previous) + 1
    location = f"{metadata_folder(table)}/toolkit-{log}-fold-{n:05d}-{uuid.uuid4()}.json.gz"
    with table.io.new_output(location).create(overwrite=False) as stream:
        stream.write(fold.encode())
    _keep(location, fold)
    high = fold.high(None if pointer is None else pointer.high)
    return Pointer(location, n, high).encode()
