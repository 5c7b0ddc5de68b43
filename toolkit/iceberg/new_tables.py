"""A new table made under a name of its own, then given its real name in one step.

A batch of typed columns into a table that does not exist yet is written in one pass
(``toolkit.pipeline.typed``): the table is created from a guess of the batch's kinds
before the batch is read, and the guess is checked by the counts of that same pass. The
table is made under a staging name, so that a wrong guess (or a failed write) leaves
nothing under the real name and touches nothing another writer could see; a right one is
renamed to the real name, which the catalog does atomically, and refuses when another
writer created the table meanwhile. The staging table lives where the real table would
(its folder is the real table's), so a renamed table is laid out as any other.

A process that dies between the two steps leaves the staging table behind. It is marked
(:data:`STAGING_FOR_PROPERTY`, naming the table it stands in for), so that maintenance
finds it (:func:`staging_tables`) and drops it (:func:`drop_leftover`) without ever taking
a user's table whose name merely starts the same way for one.

>>> staging_identifier("shop.orders", "0123abcd")
'shop.orders__toolkit_new_0123abcd'
>>> is_staging_of("shop.orders", "shop.orders__toolkit_new_0123abcd",
...               {STAGING_FOR_PROPERTY: "shop.orders"})
True
>>> is_staging_of("shop.orders", "shop.orders__toolkit_new_0123abcd", {})
False
"""

from __future__ import annotations

import contextlib
import logging
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass

from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError, TableAlreadyExistsError
from pyiceberg.manifest import DataFileContent
from pyiceberg.table import Table

__all__ = ["STAGING_FOR_PROPERTY", "STAGING_MARK", "Dropped", "discard_table", "drop_leftover",
           "is_staging_of", "new_table_location", "promote", "staging_identifier",
           "staging_tables", "table_files", "written"]

log = logging.getLogger(__name__)

#: what a staging table's name holds after the real name (a leftover of a process that
#: died between creating and renaming one is recognisable by it)
STAGING_MARK = "__toolkit_new_"
#: the table property a staging table is made with, naming the table it stands in for. A
#: name alone is not enough (a user may name a table ``events__toolkit_new_x``), nor is
#: Iceberg's ``write.wap.enabled``, which every table the toolkit writes carries. The
#: renamed table keeps it, harmlessly: its name no longer holds the mark.
STAGING_FOR_PROPERTY = "toolkit.staging-for"
#: what follows the mark: a hex tag (:func:`staging_identifier`)
_TAG = re.compile(r"[0-9a-f]+")


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
    paths = table_files(table)
    with contextlib.suppress(NoSuchTableError):
        cat.drop_table(identifier)
    _delete(table, paths)


def is_staging_of(identifier: str, name: str, properties: Mapping[str, str]) -> bool:
    """Whether the table ``name``, with table ``properties``, is a staging table of
    ``identifier``: named ``<identifier>__toolkit_new_<hex>`` and marked as standing in
    for ``identifier`` (:data:`STAGING_FOR_PROPERTY`)."""
    prefix = identifier + STAGING_MARK
    return (name.startswith(prefix) and _TAG.fullmatch(name[len(prefix):]) is not None
            and properties.get(STAGING_FOR_PROPERTY) == identifier)


def staging_tables(cat: Catalog, identifier: str) -> list[tuple[str, Table]]:
    """The staging tables of ``identifier`` in ``cat`` (``namespace.name``), by name:
    leftovers of processes that died before renaming them, or those of ingests under
    way."""
    namespace, name = identifier.rsplit(".", 1)
    try:
        names = sorted(".".join(ident) for ident in cat.list_tables(namespace))
    except NoSuchNamespaceError:
        return []
    found = []
    for full in names:
        if not full.startswith(identifier + STAGING_MARK):
            continue
        try:
            table = cat.load_table(full)
        except NoSuchTableError:  # dropped or renamed since it was listed
            continue
        if is_staging_of(identifier, full, table.metadata.properties):
            found.append((full, table))
    return found


def written(table: Table) -> tuple[int, int]:
    """(data files, rows) every snapshot of ``table`` wrote, staged or published."""
    io = table.io
    rows: dict[str, int] = {}
    for snap in table.metadata.snapshots:
        with contextlib.suppress(Exception):  # a manifest already gone counts as nothing
            for manifest in snap.manifests(io):
                for entry in manifest.fetch_manifest_entry(io, discard_deleted=False):
                    if entry.data_file.content == DataFileContent.DATA:
                        rows[entry.data_file.file_path] = entry.data_file.record_count
    return len(rows), sum(rows.values())


@dataclass(frozen=True)
class Dropped:
    """What :func:`drop_leftover` did to one staging table."""

    identifier: str
    files: int
    """Files deleted (data files, manifests, metadata files)."""
    kept: str | None = None
    """Why it was not dropped, in words (None: it was)."""


def drop_leftover(cat: Catalog, identifier: str, staging: str, last_updated_ms: int) -> Dropped:
    """Drop ``staging``, a staging table of ``identifier`` a plan found last updated at
    ``last_updated_ms``, and delete its files: only if it is still there, still a staging
    table of ``identifier`` (renamed, it would now be the real table), and unchanged since
    (an ingest still writing it has moved it)."""
    try:
        table = cat.load_table(staging)
    except NoSuchTableError:
        return Dropped(staging, 0, "it no longer exists")
    if not is_staging_of(identifier, staging, table.metadata.properties):
        return Dropped(staging, 0, "it is no longer marked as a staging table")
    if table.metadata.last_updated_ms != last_updated_ms:
        return Dropped(staging, 0, "it changed since the plan (an ingest may be writing it)")
    paths = table_files(table)
    try:
        cat.drop_table(staging)
    except NoSuchTableError:  # renamed or dropped this very moment: its files are not ours
        return Dropped(staging, 0, "it no longer exists")
    return Dropped(staging, _delete(table, paths))


def _delete(table: Table, paths: list[str]) -> int:
    """Delete ``paths`` (best effort: a file left is an orphan for maintenance); how many
    were deleted."""
    deleted = 0
    for path in dict.fromkeys(paths):
        try:
            table.io.delete(path)
            deleted += 1
        except Exception as exc:  # noqa: BLE001
            log.info("could not delete %s: %s", path, exc)
    return deleted


def table_files(table: Table) -> list[str]:
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
