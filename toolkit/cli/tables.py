"""The commands that only read: ``profile`` a source, and a table's COALESCE ``view``,
``lineage`` and written data ``stats``."""

from __future__ import annotations

from typing import Any

import click

from toolkit.cli.common import (
    catalog_options,
    check_source,
    emit,
    json_option,
    open_catalog,
    status,
    table_argument,
)
from toolkit.cli.exits import guarded
from toolkit.core.batch.profile import FieldStats, Profile, share_text
from toolkit.core.policies import DEFAULT_POLICY, policy_names
from toolkit.core.values.wording import a_shape, counted, shape_words

__all__ = ["lineage", "profile", "stats", "view"]


def drift_line(path: tuple[str, ...], stats: FieldStats) -> str | None:
    """A drifting field in one sentence, its rarer types by their exact counts (None for
    a field of one type).

    >>> from toolkit.core.batch.profile import profile
    >>> p = profile([{"n": 1}] * 19_997 + [{"n": "x"}] * 3)
    >>> print(drift_line(("n",), p.fields[("n",)]))
    n: 3 of 20,000 values are strings (19,997 longs)
    >>> print(drift_line(("t",), profile([{"t": [[1]]}] * 3 + [{"t": "x"}]).fields[("t",)]))
    t: 1 of 4 values is a string (3 lists of lists of longs)
    >>> print(drift_line(("z",), profile([{"z": None}]).fields[("z",)]))
    None
    """
    total = stats.present
    ordered = sorted(stats.counts.items(), key=lambda kv: (kv[1], str(kv[0])))
    if len(ordered) < 2:  # one type, or only nulls: nothing drifts
        return None
    *rare, (top, most) = ordered
    parts = [
        f"{n:,} of {total:,} values " + (f"is {a_shape(s)}" if n == 1
                                         else f"are {shape_words(s, many=True)}")
        for s, n in rare
    ]
    return (f"{'.'.join(path)}: {'; '.join(parts)} "
            f"({most:,} {shape_words(top, many=most != 1)})")


def _nulls(s: FieldStats) -> str:
    """Null or missing values: a count, with its share of the records when there are any."""
    return f"{s.nulls:,} ({share_text(s.nulls, s.present + s.nulls)})" if s.nulls else "0"


def _profile_text(p: Profile, sample: int) -> str:
    rows = [("field", "type", "values", "share", "nulls", "samples")]
    for path in sorted(p.fields):
        s = p.fields[path]
        for shape, n in sorted(s.counts.items(), key=lambda kv: -kv[1]):
            samples = ", ".join(repr(v) for v in s.samples.get(shape, ()))
            rows.append((".".join(path), str(shape), f"{n:,}", share_text(n, s.present),
                         _nulls(s), samples[:40]))
        if not s.counts:
            rows.append((".".join(path), "null", "0", "-", f"{s.nulls:,}", ""))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    table = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    drift = [line for path in sorted(p.fields)
             if (line := drift_line(path, p.fields[path])) is not None]
    starts = p.drift_sentences()
    times = [r.sentence() or "" for r in p.timestamp_reports()]
    head = f"{counted(p.records, 'record')} profiled" + (f" (the first {sample:,})" if
                                                 p.records == sample else "")
    return "\n".join([head, *table, *(["", "Drift:", *drift] if drift else []),
                      *(["", "Where drift starts:", *starts] if starts else []),
                      *(["", "Timestamp formats and epoch units:", *times] if times else [])])


def _profile_json(p: Profile) -> dict[str, Any]:
    return {
        "records": p.records,
        "fields": [
            {
                "path": list(path),
                "values": s.present,
                "nulls": s.nulls,
                "types": [
                    {"type": str(shape), "values": n, "share": share_text(n, s.present),
                     "samples": [repr(v) for v in s.samples.get(shape, ())],
                     # where it arrived: records counted from 1 (docs/rules.md)
                     **({"first_record": firsts[shape] + 1, "last_record": lasts[shape] + 1}
                        if shape in firsts else {})}
                    for shape, n in sorted(s.counts.items(), key=lambda kv: -kv[1])
                ],
                **_timestamps_json(s),
            }
            for path, s in sorted(p.fields.items())
            for firsts, lasts in [(s.first_at, s.last_at)]
        ],
    }


def _timestamps_json(s: FieldStats) -> dict[str, Any]:
    """A field's timestamp formats and epoch units (``timestamps``), when it received any."""
    r = s.timestamps
    return {} if r.empty else {"timestamps": r.as_json()}


@click.command()
@click.argument("source")
@click.option("--sample", default=20_000, show_default=True, type=click.IntRange(min=1),
              help="How many records to profile (the first ones).")
@click.option("--format", "source_format", metavar="KIND",
              help="The kind of the source when its name cannot tell it (jsonl, parquet...).")
@click.option("--detect-dates/--no-detect-dates", default=True, show_default=True,
              help="Type ISO-8601 date and date-time texts as date and timestamp (RULES 1).")
@click.option("--policy", type=click.Choice(policy_names()), default=DEFAULT_POLICY.name,
              show_default=True,
              help="The policy whose conversions are warned of, for a new table of SOURCE.")
@json_option
@guarded
def profile(source: str, sample: int, source_format: str | None, detect_dates: bool,
            policy: str, as_json: bool) -> None:
    """Statistics of a sample of SOURCE: per field, the types that arrived, how often
    (a rare type by its exact count, never a rounded 0%), nulls and sample values, where
    each type first and last arrived, and the values a new table would write only as
    another kind of value (conversion warnings)."""
    from toolkit.core.batch.options import make_options
    from toolkit.core.batch.profile import profile as profile_records
    from toolkit.core.batch.quarantine import reason_name
    from toolkit.core.values.jsonlines import UnreadLine
    from toolkit.pipeline.sources import records_of

    with status("Reading..."):
        records = records_of(check_source(source), source_format)[:sample]
        opts = make_options(detect_dates=detect_dates, policy=policy)
        p = profile_records(records, options=opts)
        warned = [str(w) for w in _new_table_warnings(records, p, opts)]
    # lines that could not be taken whole are not profiled: said, never skipped silently
    unread = [r for r in records if type(r) is UnreadLine]
    told = [f"  {reason_name(u.error.reason_key)}: {u.error}" for u in unread]
    aside = [{"line": u.number, "reason": u.error.reason_key, "detail": str(u.error)}
             for u in unread]
    head = f"{len(unread):,} line{'s' * (len(unread) != 1)} set aside, not profiled:"
    warn = ["", "Conversion warnings (as a new table):", *warned] if warned else []
    text = "\n".join([_profile_text(p, sample), *warn, *(["", head, *told] if told else [])])
    emit(as_json, text, {**_profile_json(p), **({"set_aside": aside} if aside else {}),
                         **({"warnings": warned} if warned else {})})


def _new_table_warnings(records: list[Any], p: Profile, opts: Any) -> list[Any]:
    """The conversion warnings of ``records`` as the first batch of a new table."""
    from toolkit.core.batch.conversion_warnings import conversion_warnings
    from toolkit.core.engine import Engine
    from toolkit.core.values.types import Struct

    engine = Engine(opts)
    rows = [r for r in records if isinstance(r, dict)]
    plan = engine.plan(Struct(), engine.observe(rows), 0)
    return conversion_warnings(plan, p, opts)


@click.command()
@table_argument
@catalog_options()
@click.option("--dialect", type=click.Choice(["spark", "trino", "duckdb", "athena"]),
              default="spark", show_default=True)
@click.option("--view", "view_name", metavar="NAME",
              help="Print CREATE OR REPLACE VIEW NAME AS ... instead of the SELECT.")
@click.option("--view-type", "view_types", multiple=True, metavar="FIELD=TYPE",
              help="Read FIELD (dotted) as TYPE, e.g. quantity=long or ts=timestamp[s].")
@json_option
@guarded
def view(table: str, catalog_spec: str, warehouse: str | None, dialect: str,
         view_name: str | None, view_types: tuple[str, ...], as_json: bool) -> None:
    """The COALESCE view of TABLE (RULES 7): one column per field, each family of columns
    folded back into one (nested ones inside their structs); comments say what each field
    folds to."""
    from toolkit.iceberg.views import coalesce_sql

    chosen: dict[str, str] = {}
    for entry in view_types:
        # a type never holds "=", a field name may: split at the last one
        field, sep, type_name = entry.rpartition("=")
        if not sep or not field:
            raise click.BadParameter(f"{entry!r} is not FIELD=TYPE", param_hint="--view-type")
        chosen[field] = type_name
    tbl = open_catalog(catalog_spec, warehouse, must_exist=True).catalog.load_table(table)
    sql = coalesce_sql(tbl.schema(), table, dialect, view=view_name,  # type: ignore[arg-type]
                       pretty=not as_json, view_types=chosen,
                       properties=tbl.metadata.properties)
    emit(as_json, sql, {"table": table, "dialect": dialect, "sql": sql})


@click.command()
@table_argument
@catalog_options()
@json_option
@guarded
def lineage(table: str, catalog_spec: str, warehouse: str | None, as_json: bool) -> None:
    """Every plan committed to TABLE, oldest first: what changed, who or which rule
    decided it, the batch, and how to undo it."""
    from toolkit.iceberg.lineage import lineage as lineage_of

    tbl = open_catalog(catalog_spec, warehouse, must_exist=True).catalog.load_table(table)
    entries = lineage_of(tbl)
    data = {"table": table, "entries": [
        {"seq": e.seq, "at_ms": e.at_ms, "decided_by": e.decided_by, "batch": e.batch,
         "reason": e.reason, "operations": [op.to_json() for op in e.operations],
         "inverse": None if e.inverse_operations is None
         else [op.to_json() for op in e.inverse_operations],
         "irreversible": list(e.irreversible)}
        for e in entries]}
    text = "\n".join(str(e) for e in entries) or f"{table}: no plan logged yet"
    emit(as_json, text, data)


@click.command()
@table_argument
@catalog_options()
@json_option
@guarded
def stats(table: str, catalog_spec: str, warehouse: str | None, as_json: bool) -> None:
    """Written data statistics of TABLE from its metadata alone (no data file is read):
    per column its values and nulls, per batch the values each column received, and per
    field the types its values arrived as, with samples."""
    from toolkit.iceberg.statistics import statistics

    tbl = open_catalog(catalog_spec, warehouse, must_exist=True).catalog.load_table(table)
    with status("Reading manifests..."):
        s = statistics(tbl)
    data = {"table": table, "snapshot_id": s.snapshot_id, "records": s.records,
            "data_files": s.data_files, "columns": s.to_rows(), "batches": s.history_rows(),
            "arrived": {".".join(p): {"values": s.arrived(p), "null_or_missing": s.absent(p)}
                        for p in s.arrivals.paths}}
    emit(as_json, str(s), data)
