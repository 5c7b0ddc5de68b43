"""The commands on records set aside: ``quarantine`` lists what a table's quarantine
holds (by batch, field and reason, with a sample value), ``replay`` sends them back
through ingest once the table or the policy can take them (RULES 5)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from toolkit.cli.common import (
    catalog_options,
    emit,
    evolution_settings,
    existing_table,
    json_option,
    open_catalog,
    policy_options,
    spark_options,
    start_spark,
    status,
    table_argument,
)
from toolkit.cli.exits import CommandFailed, ExitCode, guarded
from toolkit.core.batch.quarantine import (
    REASONS,
    QuarantinedRow,
    reason_name,
    reason_words,
    types_text,
)
from toolkit.core.values.wording import clip, counted, value_text

if TYPE_CHECKING:
    from toolkit.pipeline.replay import CannotLand, ReplayReport

__all__ = ["quarantine", "replay", "value_of"]


def _walk(value: Any, path: Sequence[str]) -> Any:
    """The value at ``path`` (keys) under ``value``; through a list, its first element's
    that has one; ``KeyError`` if none."""
    if not path:
        return value
    if isinstance(value, dict):
        for cut in range(len(path), 0, -1):  # a key with a dot in its name, whole first
            key = ".".join(path[:cut])
            if key in value:
                try:
                    return _walk(value[key], path[cut:])
                except KeyError:
                    continue
    if isinstance(value, list):
        for item in value:
            try:
                return _walk(item, path)
            except KeyError:
                continue
    raise KeyError(".".join(path))


def value_of(row: QuarantinedRow) -> str:
    """The value that sent ``row`` to quarantine, as JSON text (the whole record's text
    when no field is at fault or the record is not an object), clipped as every face
    clips a value (:func:`~toolkit.core.values.wording.value_text`).

    >>> from toolkit.core.batch.quarantine import QuarantinedRow
    >>> row = QuarantinedRow("id", '{"a": {"b.c": "x"}}', "incompatible", "a.b.c", "string",
    ...                      "boolean", "", "day2", 0, None)
    >>> value_of(row), value_of(QuarantinedRow("id", "{oops", "malformed", None, None,
    ...                                         None, "", "day2", 1, None))
    ('"x"', '{oops')
    """
    if row.field is not None and row.reason != "malformed":
        try:
            return value_text(_walk(row.record, row.field.split(".")))
        except (KeyError, ValueError):
            pass  # the field is not in the record (or it does not parse): show it whole
    return clip(row.raw)


def _groups(rows: Sequence[QuarantinedRow]) -> list[dict[str, Any]]:
    """Rows by batch, reason, field and types: the count, a sample value, the ids. Batches
    in the order they set records aside; in each, what can be replayed first, then the
    largest groups."""
    grouped: dict[tuple[str, str, str, str, str], list[QuarantinedRow]] = {}
    for r in rows:
        key = (r.batch_id, r.reason, r.field or "", r.observed or "", r.table_type or "")
        grouped.setdefault(key, []).append(r)
    batches = list(dict.fromkeys(r.batch_id for r in rows))
    ordered = sorted(grouped.items(), key=lambda kv: (
        batches.index(kv[0][0]), not kv[1][0].replayable, -len(kv[1]), kv[0]))
    return [
        {"batch_id": rs[0].batch_id, "reason": rs[0].reason, "field": rs[0].field,
         "observed": rs[0].observed, "table_type": rs[0].table_type, "count": len(rs),
         "value": value_of(rs[0]), "replayable": rs[0].replayable,
         "ids": [r.id for r in rs]}
        for _, rs in ordered
    ]


def _table_text(groups: list[dict[str, Any]]) -> list[str]:
    rows = [("batch", "field", "reason", "types", "value", "count")]
    for g in groups:
        types = types_text(g["observed"] or None, g["table_type"] or None) or "-"
        # the reason in words; --json keeps its key, what --reason takes
        reason = reason_words(g["reason"]) + ("" if g["replayable"] else " (cannot be replayed)")
        rows.append((g["batch_id"], g["field"] or "-", reason, types, g["value"],
                     f"{g['count']:,}"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
            for r in rows]


def _chosen(rows: Sequence[QuarantinedRow], batch_ids: Sequence[str], reason: str | None,
            ids: Sequence[str]) -> list[QuarantinedRow]:
    return [r for r in rows
            if (not batch_ids or r.batch_id in batch_ids)
            and (reason is None or r.reason == reason)
            and (not ids or r.id in ids)]


_batch_option = click.option(
    "--batch-id", "batch_ids", multiple=True, metavar="BATCH",
    help="Only the records this batch set aside (repeatable).")
_reason_option = click.option(
    "--reason", type=click.Choice(REASONS), metavar="REASON",
    help="Only the records set aside for this reason (the reasons are listed below).")

#: the epilog of the commands taking --reason: each reason's key beside its words (\b: as
#: laid out, so no key breaks at a hyphen)
REASONS_EPILOG = "\b\nReasons (--reason takes the key on the left):\n" + "\n".join(
    f"  {key.ljust(max(map(len, REASONS)))}  {reason_words(key)}" for key in REASONS)


def _cannot_json(cannot: Sequence[CannotLand]) -> list[dict[str, Any]]:
    return [{"id": c.id, "reason": c.reason, "field": c.field, "why": str(c)} for c in cannot]


def _cannot_lines(cannot: Sequence[CannotLand], shown: int = 5) -> list[str]:
    """The records that cannot land now, one line per reason with how many."""
    if not cannot:
        return []
    why: dict[str, int] = {}
    for c in cannot:
        why[str(c)] = why.get(str(c), 0) + 1
    lines = [f"{counted(len(cannot), 'record')} cannot land now (a replay leaves them in the "
             "quarantine):"]
    lines += [f"  {n:>6,}  {clip(text, 120)}" for text, n in list(why.items())[:shown]]
    if len(why) > shown:
        lines.append(f"  ... and {len(why) - shown:,} more reasons")
    return lines


@click.command(epilog=REASONS_EPILOG)
@table_argument
@catalog_options()
@_batch_option
@_reason_option
@policy_options
@json_option
@guarded
def quarantine(table: str, catalog_spec: str, warehouse: str | None,
               batch_ids: tuple[str, ...], reason: str | None, policy: str,
               on_incompatible: str, detect_dates: bool, rare_type_percent: float | None,
               hints: dict[str, str],
               as_json: bool) -> None:
    """The records TABLE's quarantine holds (TABLE__quarantine): per batch, field and
    reason, how many, with a sample of the value at fault, and which of them cannot land
    in the table now (under --policy, the one the table is fed with), with why. --json
    adds every record's id, for `toolkit replay --id`."""
    from toolkit.core.batch.options import make_options
    from toolkit.iceberg.quarantine import quarantine as quarantine_of
    from toolkit.pipeline.replay import sort_out

    options = evolution_settings(policy, on_incompatible, detect_dates, rare_type_percent,
                                 hints)

    where = open_catalog(catalog_spec, warehouse, must_exist=True)
    existing_table(where, table)
    with status("Reading the quarantine..."):
        q = quarantine_of(where.catalog, table)
    rows = _chosen(q.rows, batch_ids, reason, ())
    groups = _groups(rows)
    cannot: tuple[CannotLand, ...] = ()
    if any(r.replayable for r in rows):
        with status("Checking what can land now..."):
            _, _, cannot = sort_out(where.catalog, table, [r for r in rows if r.replayable],
                                    make_options(**options))
    data = {"table": table, "quarantine_table": q.quarantine_table, "records": len(rows),
            "replayable": sum(1 for r in rows if r.replayable) - len(cannot),
            "groups": groups, "cannot_land": _cannot_json(cannot)}
    if not q.exists:
        text = f"{table}: nothing was ever quarantined"
    elif not rows:
        text = f"{q.quarantine_table}: no quarantined record" + (
            " matches" if batch_ids or reason else "")
    else:
        replayable = data["replayable"]
        text = "\n".join([
            f"{q.quarantine_table}: {counted(len(rows), 'record')}, {replayable:,} replayable",
            *_table_text(groups),
            *_cannot_lines(cannot),
            *([f"Replay them once the table can take them: toolkit replay {table}"]
              if replayable else []),
        ])
    emit(as_json, text, data)


def _replayed(report: ReplayReport, unfit: Sequence[str]) -> tuple[str, dict[str, Any]]:
    """The report as text and JSON; ``unfit``: chosen rows that cannot be replayed (left
    out of the ids replay was given)."""
    ingest = report.ingest
    kept = list(dict.fromkeys([*report.not_replayable, *unfit]))
    text = str(report)
    if kept and not report.not_replayable:
        text += (f"; {counted(len(kept), 'record')} cannot be replayed (malformed or not a "
                 "JSON object) and stay in the quarantine")
    if ingest is not None and ingest.plan.changed:
        text += "\n" + str(ingest.plan)
    data = {
        "table": report.table, "batch_id": report.batch_id, "replayed": len(report.replayed),
        "ids": list(report.replayed), "rows_written": report.written,
        "requarantined": report.requarantined, "not_replayable": kept,
        "already_replayed": report.already, "resumed": list(report.resumed),
        "operations": [] if ingest is None else [op.to_json() for op in ingest.plan.operations],
        "cannot_land": _cannot_json(report.cannot_land),
    }
    return text, data


@click.command(epilog=REASONS_EPILOG)
@table_argument
@catalog_options()
@_batch_option
@_reason_option
@click.option("--id", "ids", multiple=True, metavar="ID",
              help="Only this record (repeatable; `toolkit quarantine --json` lists ids).")
@policy_options
@click.option("--dry-run", is_flag=True,
              help="Print the plan the replay would need, change nothing (no Spark).")
@spark_options
@json_option
@guarded
def replay(table: str, catalog_spec: str, warehouse: str | None, batch_ids: tuple[str, ...],
           reason: str | None, ids: tuple[str, ...], policy: str, on_incompatible: str,
           detect_dates: bool, rare_type_percent: float | None, hints: dict[str, str],
           dry_run: bool,
           spark_conf: tuple[str, ...], as_json: bool) -> None:
    """Send TABLE's quarantined records (all that can be replayed, or those chosen) back
    through ingest, as one batch, and remove them from the quarantine.

    Use the --policy the table is fed with. Records that still do not fit are quarantined
    again, so nothing is lost; replaying the same records again writes nothing twice.
    Malformed lines and JSON that is not an object cannot be replayed: they stay.
    """
    from toolkit.iceberg.quarantine import pending_replay, quarantine_table_id
    from toolkit.iceberg.quarantine import quarantine as quarantine_of
    from toolkit.pipeline.replay import replay as replay_records
    from toolkit.pipeline.replay import replay_preview

    options = evolution_settings(policy, on_incompatible, detect_dates, rare_type_percent,
                                 hints)
    where = open_catalog(catalog_spec, warehouse, must_exist=True)
    existing_table(where, table)
    q = quarantine_of(where.catalog, table)
    missing = sorted(set(ids) - set(q.ids))
    if missing:
        raise CommandFailed(
            f"{q.quarantine_table} holds no record with id {', '.join(missing[:5])}"
            f"{' ...' if len(missing) > 5 else ''}; `toolkit quarantine {table} --json` "
            "lists the ids", ExitCode.BAD_INPUT, as_json)
    absent = [b for b in batch_ids if b not in {r.batch_id for r in q.rows}]
    if absent:
        raise CommandFailed(
            f"{q.quarantine_table} holds no record of batch {', '.join(absent)}; "
            f"`toolkit quarantine {table}` lists the batches", ExitCode.BAD_INPUT, as_json)
    chosen = _chosen(q.rows, batch_ids, reason, ids)
    unfit = [r for r in chosen if not r.replayable]
    if ids and unfit:
        raise CommandFailed(
            f"{counted(len(unfit), 'chosen record')} cannot be replayed, as only JSON objects "
            f"can ({clip(unfit[0].raw)!r} is {reason_name(unfit[0].reason)}); leave out "
            f"{'its' if len(unfit) == 1 else 'their'} --id",
            ExitCode.BAD_INPUT, as_json)
    wanted = [r.id for r in chosen if r.replayable]
    # a selection by batch or id is passed as ids; by reason alone (or none), as is
    select: dict[str, Any] = (
        {"ids": wanted} if batch_ids or ids else {"reason": reason} if reason else {})
    qtable = where.catalog.load_table(quarantine_table_id(table)) if q.exists else None
    pending = qtable is not None and pending_replay(qtable) is not None
    if not wanted and not pending:
        text = f"{table}: nothing to replay" + (
            f"; {counted(len(unfit), 'record')} cannot be replayed (malformed or not a JSON "
            "object) and stay in the quarantine" if unfit else "")
        emit(as_json, text, {"table": table, "batch_id": None, "replayed": 0, "ids": [],
                             "rows_written": 0, "requarantined": 0,
                             "not_replayable": [r.id for r in unfit],
                             "already_replayed": False, "resumed": [], "operations": []})
        return
    if dry_run:
        with status("Planning..."):
            made = replay_preview(where.catalog, table, **select, **options)
        lands = len(made.ids)
        text = "\n".join([
            f"{table}: replaying {counted(lands, 'record')} would need: {made.plan}"
            if lands else f"{table}: none of the {counted(len(wanted), 'record')} can land now",
            *_cannot_lines(made.cannot),
            "Nothing was changed (--dry-run).",
        ])
        emit(as_json, text, {"table": table, "records": lands, "dry_run": True,
                             "changes_schema": bool(lands) and made.plan.changed,
                             "operations": [op.to_json() for op in made.plan.operations]
                             if lands else [],
                             "summary": str(made.plan).split("\n"),
                             "cannot_land": _cannot_json(made.cannot)})
        return
    spark = start_spark(where.catalog, spark_conf)
    with status(f"Replaying {counted(len(wanted), 'record')}..."):
        report = replay_records(where.catalog, table, spark, **select, **options)
    emit(as_json, *_replayed(report, [r.id for r in unfit]))
