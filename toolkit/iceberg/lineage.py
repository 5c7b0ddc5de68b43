"""Lineage on a real table: read the log a table's properties hold, and undo an entry.

The log's format and the inverse of each plan are pure (``toolkit.core.evolution.lineage``); this
module reads them from a PyIceberg table and commits an undo through
:func:`toolkit.iceberg.operations.evolve`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolkit.core.evolution.lineage import LineageEntry, read_lineage, undo_plan
from toolkit.core.evolution.state import TableState
from toolkit.iceberg.destruction import destruction_of
from toolkit.iceberg.folds import with_folded
from toolkit.iceberg.operations import EvolutionPreview, evolve, layout_of

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyiceberg.table import Table



def lineage(table: Table) -> tuple[LineageEntry, ...]:
    """Every plan committed to ``table`` by the toolkit, oldest first (those folded into
    files in the table's metadata folder too)."""
    return read_lineage(with_folded(table, "lineage"))


def undo(
    catalog: Catalog,
    table: str,
    entry: LineageEntry | int,
    *,
    expected: TableState | None = None,
    drop_data: bool = False,
) -> LineageEntry:
    """Commit the inverse of a logged plan (``entry`` or its number) and log it too.

    Refused as :func:`toolkit.core.evolution.lineage.undo_plan` says: with
    :class:`IrreversibleError` when the plan has no inverse (a drop, a widening, making a
    column optional), :class:`AlreadyUndoneError` when a later entry undid it, and an error
    naming the field when the table changed so that the inverse would act on another field
    than the plan did (say the column it added was dropped and added again).

    An undo that drops columns holding values (the undo of an added column that has
    received values since) is refused with :class:`~toolkit.errors.DataLossError`, naming
    the columns and counting their values, unless ``drop_data=True``
    (:func:`undo_preview` shows the counts first).
    """
    preview = undo_preview(catalog, table, entry)
    # held to the state the caller saw, else to the one the inverse was planned against
    return evolve(catalog, table, preview.plan, expected=expected or preview.state,
                  drop_data=drop_data)


def undo_preview(
    catalog: Catalog, table: str, entry: LineageEntry | int
) -> EvolutionPreview:
    """The plan undoing ``entry`` (or its number) and what it destroys, changing nothing;
    refused as :func:`undo` is when it cannot be undone."""
    tbl = catalog.load_table(table)
    entries = lineage(tbl)
    if isinstance(entry, int):
        found = [e for e in entries if e.seq == entry]
        if not found:
            raise KeyError(f"table {table} has no lineage entry {entry}")
        entry = found[0]
    plan = undo_plan(entry, entries, layout_of(tbl))
    return EvolutionPreview(table, plan, TableState.of(tbl), destruction_of(tbl, plan))


__all__ = ["LineageEntry", "lineage", "undo", "undo_preview"]
