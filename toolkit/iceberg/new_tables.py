"""A new table made under a name of its own, then given its real name in one step.

A batch of typed columns into a table that does not exist yet is written in one pass
(``toolkit.pipeline.typed``): the table is created from a guess of the batch's kinds
before the batch is read, and the guess is checked by the counts of that same pass. The
table is made under a staging name, so that a wrong guess (or a failed write) leaves
nothing under the real name and touches nothing another writer could see; a right one is
renamed to the real name, which the catalog does atomically, and refuses when another
writer created the table meanwhile. The staging table lives where the real table would
(its folder is the real table's), so a renamed table is laid out as any other.

>>> staging_identifier("shop.orders", "0123abcd")
'shop.orders__toolkit_new_0123abcd'
"""

from __future__ import annotations

import contextlib
import logging
import uuid

from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import NoSuchTableError, TableAlreadyExistsError
from pyiceberg.table import Table

__all__ = ["STAGING_MARK", "discard_table", "new_table_location", "promote",
           "staging_identifier"]

log = logging.getLogger(__name__)

#: what a staging table's name holds after the real name (a leftover of a process that
#: died between creating and renaming one is recognisable by it)
STAGING_MARK = "__toolkit_new_"


def staging_identifier(identifier: str, tag: str | None = None) -> str:
    """The name a new table ``identifier`` is made under before it gets its own."""
    return f"{identifier}{STAGING_MARK}{tag or uuid.uuid4().hex[:12]}"


def new_table_location(cat: Catalog, identifier: str) -> str | None:
    """Where ``cat`` would put a new table ``identifier`` (``namespace.name``); None for
    a catalog whose server decides it (a staging table there would live elsewhere)."""
    resolve = getattr(cat, "_resolve_table_location", None)
    if resolve is None:
        return None
    namespace, name = identifier.rsplit(".", 1)
    location = resolve(None, namespace, name)
    return str(location) if location else None


def promote(cat: Catalog, staging: str, identifier: str) -> Table | None:
    """Give the staging table its real name; None (the staging table untouched) when a
    table of that name exists already."""
    try:
        return cat.rename_table(staging, identifier)
    except TableAlreadyExistsError:
        return None


def discard_table(cat: Catalog, identifier: str) -> None:
    """Drop a staging table and delete the files it wrote (best effort: it was never
    seen under a real name, and nothing else refers to its files)."""
    try:
        table = cat.load_table(identifier)
    except NoSuchTableError:
        return
    paths = _files(table)
    with contextlib.suppress(NoSuchTableError):
        cat.drop_table(identifier)
    for path in paths:
        try:
            table.io.delete(path)
        except Exception as exc:  # noqa: BLE001 - a leftover is an orphan for maintenance
            log.info("could not delete %s: %s", path, exc)


def _files(table: Table) -> list[str]:
    """Every file of ``table``: data files, manifests, manifest lists, metadata files."""
    io, meta = table.io, table.metadata
    out: list[str] = []
    for snap in meta.snapshots:
        with contextlib.suppress(Exception):
            for manifest in snap.manifests(io):
                out += [e.data_file.file_path for e in manifest.fetch_manifest_entry(io)]
                out.append(manifest.manifest_path)
        out.append(snap.manifest_list)
    out += [m.metadata_file for m in meta.metadata_log]
    out.append(table.metadata_location)
    return out
