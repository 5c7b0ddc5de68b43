"""The command that goes back in a table's history: ``undo`` commits the inverse of a
logged plan (a rename, an added column...), numbered as ``toolkit lineage`` shows it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from toolkit.cli.common import catalog_options, emit, existing_table, json_option, open_catalog
from toolkit.cli.exits import CommandFailed, ExitCode, guarded
from toolkit.errors import AlreadyUndoneError, IrreversibleError

if TYPE_CHECKING:
    from toolkit.core.evolution.destruction import Destruction
    from toolkit.core.evolution.lineage import LineageEntry

__all__ = ["undo"]


def _entry_json(e: LineageEntry) -> dict[str, Any]:
    return {"seq": e.seq, "decided_by": e.decided_by, "batch": e.batch, "reason": e.reason,
            "operations": [op.to_json() for op in e.operations]}


def _destruction_json(d: Destruction) -> dict[str, Any]:
    return {"columns": [{"name": c.name, "field_id": c.field_id, "values": c.values,
                         "bytes": c.bytes} for c in d.columns],
            "values": d.values, "rows": d.rows, "bytes": d.bytes, "needs_yes": d.needs_yes}


@click.command(epilog="Exit codes: 0 undone (or --dry-run); 2 no such entry, or it has no "
               "inverse; 3 the undo drops columns holding values (printed with their "
               "counts; run again with --yes); 1 already undone, or its field changed since; "
               "4 the table moved meanwhile.")
@click.argument("table", metavar="TABLE")
@click.argument("entry", metavar="N", type=int)
@catalog_options()
@click.option("--dry-run", is_flag=True,
              help="Print what the undo would do and destroy; change nothing.")
@click.option("--yes", "-y", is_flag=True,
              help="Run it even when it drops columns holding values. Without it such an "
                   "undo prints the columns and value counts and exits 3 (needs approval).")
@json_option
@guarded
def undo(table: str, entry: int, catalog_spec: str, warehouse: str | None, dry_run: bool,
         yes: bool, as_json: bool) -> None:
    """Undo lineage entry N of TABLE (the number `toolkit lineage TABLE` shows): commit its
    inverse (rename back, drop the added column...) and log that as a new entry.

    An undo that drops columns holding values (the values an added column received since)
    makes them unreadable from the table: it prints the columns and their value counts
    and exits 3, changing nothing, unless --yes. Dropping columns that hold no values needs
    no --yes (the output says so).

    Refused, changing nothing: an entry that does not exist or has no inverse (a drop, a
    widening: exit 2), one already undone, or one whose field changed since (exit 1).
    """
    from toolkit.iceberg.lineage import lineage, undo_preview
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
    try:  # the rule is toolkit.core.evolution.lineage.undo_plan's; here, the words of a command
        preview = undo_preview(where.catalog, table, found)
        destroys = preview.destruction
        steps = "; ".join(str(op) for op in preview.plan.operations) or "nothing"
        told = f"\nIt {destroys}." if destroys else ""
        data: dict[str, Any] = {"table": table, "undone": _entry_json(found),
                                "operations": [op.to_json() for op in preview.plan.operations],
                                "destroys": _destruction_json(destroys), "applied": False}
        if dry_run or (destroys.needs_yes and not yes):
            if dry_run:
                end = "nothing was changed (--dry-run)"
            else:
                end = (f"nothing was changed: those values would no longer be readable from "
                       f"the table (older snapshots keep them until they expire); to undo it "
                       f"anyway, run: toolkit undo {table} {entry} --yes")
            text = f"{table}: undoing lineage entry {entry} would: {steps}{told}\n{end}"
            emit(as_json, text, {**data, "needs_approval": destroys.needs_yes and not dry_run})
            if not dry_run:
                raise click.exceptions.Exit(ExitCode.NEEDS_APPROVAL)
            return
        done = undo_entry(where.catalog, table, found, expected=preview.state,
                          drop_data=yes)
    except IrreversibleError as exc:
        raise CommandFailed(f"{exc}; nothing was changed", ExitCode.BAD_INPUT, as_json) from exc
    except AlreadyUndoneError as exc:
        raise CommandFailed(
            f"{table}: lineage entry {entry} was already undone by entry {exc.by}; nothing "
            f"was changed (to redo it, run: toolkit undo {table} {exc.by})",
            ExitCode.FAILED, as_json) from exc
    steps = "; ".join(str(op) for op in done.operations) or "nothing"
    text = f"{table}: undid lineage entry {entry} as entry {done.seq}: {steps}"
    if destroys:
        text += f"\nIt {destroys}" + ("." if not destroys.needs_yes else " (--yes).")
    emit(as_json, text, {**data, "applied": True, "entry": _entry_json(done)})
