"""The command that goes back in a table's history: ``undo`` commits the inverse of a
logged plan (a rename, an added column...), numbered as ``toolkit lineage`` shows it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from toolkit.cli.common import catalog_options, emit, existing_table, json_option, open_catalog
from toolkit.cli.exits import CommandFailed, ExitCode, guarded
from toolkit.errors import AlreadyUndoneError, IrreversibleError

if TYPE_CHECKING:
    from toolkit.core.lineage import LineageEntry

__all__ = ["undo"]

def _entry_json(e: LineageEntry) -> dict[str, Any]:
    return {"seq": e.seq, "decided_by": e.decided_by, "batch": e.batch, "reason": e.reason,
            "operations": [op.to_json() for op in e.operations]}


@click.command()
@click.argument("table", metavar="TABLE")
@click.argument("entry", metavar="N", type=int)
@catalog_options()
@json_option
@guarded
def undo(table: str, entry: int, catalog_spec: str, warehouse: str | None,
         as_json: bool) -> None:
    """Undo lineage entry N of TABLE (the number `toolkit lineage TABLE` shows): commit its
    inverse (rename back, drop the added column...) and log that as a new entry.

    Refused, changing nothing: an entry that does not exist or has no inverse (a drop, a
    widening: exit 2), one already undone, or one whose field changed since (exit 1).
    """
    from toolkit.iceberg.lineage import lineage
    from toolkit.iceberg.lineage import undo as undo_entry

    where = open_catalog(catalog_spec, warehouse, must_exist=True)
    entries = lineage(existing_table(where, table))
    found = next((e for e in entries if e.seq == entry), None)
    if found is None:
        known = (f"its entries are {entries[0].seq} to {entries[-1].seq}" if entries
                 else "it has no logged plan yet")
        raise CommandFailed(
            f"{table} has no lineage entry {entry}: {known} (see `toolkit lineage {table}`)",
            ExitCode.BAD_INPUT, as_json)
    try:  # the rule is toolkit.core.lineage.undo_plan's; here, the words of a command
        done = undo_entry(where.catalog, table, found)
    except IrreversibleError as exc:
        raise CommandFailed(f"{exc}; nothing was changed", ExitCode.BAD_INPUT, as_json) from exc
    except AlreadyUndoneError as exc:
        raise CommandFailed(
            f"{table}: lineage entry {entry} was already undone by entry {exc.by}; nothing "
            f"was changed (to redo it, run: toolkit undo {table} {exc.by})",
            ExitCode.FAILED, as_json) from exc
    steps = "; ".join(str(op) for op in done.operations) or "nothing"
    text = f"{table}: undid lineage entry {entry} as entry {done.seq}: {steps}"
    emit(as_json, text, {"table": table, "undone": _entry_json(found),
                         "entry": _entry_json(done)})
