"""The commands around plans: ``preview`` writes a plan file, ``apply`` commits exactly
that plan with its batch, ``ingest`` writes a batch (or stops for approval), ``export``
prints a plan as code."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from toolkit.cli.common import (
    catalog_options,
    check_source,
    emit,
    evolution_options,
    evolution_settings,
    json_option,
    open_catalog,
    read_plan_file,
    recorded_catalog,
    spark_options,
    start_spark,
    status,
)
from toolkit.cli.exits import ExitCode, guarded
from toolkit.core.evolution.planfile import PlanFile, dumps, plan_file_name
from toolkit.core.evolution.state import TableState
from toolkit.core.values.secrets import masked
from toolkit.core.values.wording import counted
from toolkit.errors import PlanChangedError, StalePlanError

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog

    from toolkit.core.evolution.batch_plan import Plan
    from toolkit.pipeline.ingest import IngestReport

__all__ = ["apply", "export", "ingest", "preview"]

#: ``export --as`` targets, and the dialect each is rendered in
TARGETS = {"spark-sql": "spark", "trino": "trino", "pyiceberg": "pyiceberg"}


def _plan_file(
    source: str, table: str, catalog: Catalog, recorded: str, warehouse: str | None,
    batch_id: str, source_format: str | None, options: dict[str, Any],
) -> tuple[PlanFile, int, list[str]]:
    """Plan ``source`` against ``table`` now (no Spark); the plan file, the records the
    batch would set aside, and its conversion warnings (values written only as another
    kind of value). The source's files are hashed first: should one change while it is
    planned, the plan file binds the content before, and is refused."""
    from toolkit.core.batch.conversion_warnings import conversion_warnings
    from toolkit.core.batch.options import make_options
    from toolkit.pipeline.preview import plan_preview
    from toolkit.pipeline.reviewed import source_digest

    with status("Planning..."):
        digest = source_digest(source)
        made = plan_preview(source, table, catalog, format=source_format, **options)
    planfile = PlanFile(
        table, made.plan, made.state, batch_id, source, source_format, options, recorded,
        None if warehouse is None else masked(warehouse), source_digest=digest,
    )
    opts = make_options(**options)
    aside = [q for _, q in made.set_aside(opts)[0]]
    warned = conversion_warnings(made.plan, made.profile, opts, aside)
    return planfile, len(aside), [str(w) for w in warned]


def _write(planfile: PlanFile, path: str) -> None:
    Path(path).write_text(dumps(planfile), encoding="utf-8")


def _view_folds(planfile: PlanFile) -> list[str]:
    """What each field of the table's view would fold to after the plan, and what that
    costs (issue 28; ``toolkit view`` prints the view's SQL, which says the same)."""
    from toolkit.core.batch.options import make_options
    from toolkit.core.views import view_folds

    opts = make_options(**planfile.options)
    return [str(f) for f in view_folds(
        planfile.plan.after, lattice=opts.lattice, timestamp_unit=opts.timestamp_unit,
        long_timestamp_unit=opts.long_timestamp_unit, hints=opts.hints)]


def _planned(planfile: PlanFile, path: str | None, aside: int) -> dict[str, Any]:
    return {
        "table": planfile.table,
        "batch_id": planfile.batch_id,
        "changes_schema": planfile.plan.changed,
        "operations": [op.to_json() for op in planfile.plan.operations],
        "rewrites": [r.to_json() for r in planfile.plan.rewrites],
        "summary": planfile.summary.split("\n"),
        "set_aside": aside,
        "plan_file": path,
        "view_folds": _view_folds(planfile),
    }


@click.command()
@click.argument("source")
@click.option("--table", "-t", required=True, help="The table, namespace.name.")
@catalog_options()
@evolution_options
@click.option("--batch-id", help="The batch's id, stored with it (default: a new one).")
@click.option("--save", type=click.Path(dir_okay=False), metavar="PLAN_FILE",
              help="Write the plan file here, to review and `toolkit apply` later.")
@json_option
@guarded
def preview(
    source: str, table: str, catalog_spec: str, warehouse: str | None, source_format: str | None,
    policy: str, on_incompatible: str, detect_dates: bool, rare_type_percent: float | None,
    hints: dict[str, str],
    batch_id: str | None, save: str | None, as_json: bool,
) -> None:
    """Plan SOURCE (all its records, one batch) against TABLE without changing anything.

    Prints the plan; with --save, writes the plan file: the plan, the table state it was
    made against, the batch id, the source and a summary (docs/plan-files.md).
    """
    options = evolution_settings(policy, on_incompatible, detect_dates, rare_type_percent,
                                 hints)
    source = check_source(source)
    where = open_catalog(catalog_spec, warehouse)
    planfile, aside, warned = _plan_file(
        source, table, where.catalog, where.recorded, warehouse,
        batch_id or uuid.uuid4().hex, source_format, options,
    )
    if save:
        _write(planfile, save)
    lines = [planfile.summary, *(f"Warning: {w}" for w in warned)]
    folds = _view_folds(planfile)
    if folds:
        lines += ["The view (toolkit view) folds each field into one column:",
                  *(f"  {f}" for f in folds)]
    if aside:
        lines.append(f"{counted(aside, 'record')} would be set aside (quarantine)")
    if save:
        lines.append(f"Plan written to {save}; review it, then run: toolkit apply {save}")
    emit(as_json, "\n".join(lines),
         {**_planned(planfile, save, aside), **({"warnings": warned} if warned else {})})


def _report(report: IngestReport, already: bool = False) -> tuple[str, dict[str, Any]]:
    data = {
        "table": report.table,
        "batch_id": report.batch_id,
        "already_applied": already or report.skipped,
        "rows_written": report.rows_written,
        "snapshot_id": report.snapshot_id,
        "set_aside": report.quarantined,
        "operations": [op.to_json() for op in report.plan.operations],
        "summary": str(report.plan).split("\n"),
        **({"warnings": list(report.warnings)} if report.warnings else {}),
    }
    return str(report), data


def _already_applied(planfile: PlanFile) -> tuple[str, dict[str, Any]]:
    # named by its id alone (the summary's "batch 2 (id day2)"): the id is what the table
    # holds, while the number is the one this plan would have given the batch
    text = (f"{planfile.table}: the batch with id {planfile.batch_id} was already applied; "
            "nothing written")
    return text, {"table": planfile.table, "batch_id": planfile.batch_id,
                  "already_applied": True, "rows_written": 0, "snapshot_id": None}


@click.command()
@click.argument("plan_file", type=click.Path(exists=True, dir_okay=False))
@catalog_options(default=None)
@spark_options
@json_option
@guarded
def apply(
    plan_file: str, catalog_spec: str | None, warehouse: str | None, spark_conf: tuple[str, ...],
    as_json: bool,
) -> None:
    """Commit exactly the plan of PLAN_FILE and write its batch.

    Refused as stale (exit 4, nothing written) if the table moved since the preview, the
    data needs other changes than the plan, or the plan file no longer binds what was
    reviewed: a source file changed, its table, catalog or options were edited, or
    --catalog names another catalog (docs/plan-files.md). Applying a plan file again
    writes nothing (its batch id is already in the table) and exits 0.
    """
    from toolkit.iceberg.catalog import load_table
    from toolkit.iceberg.ledger import ingested_batches
    from toolkit.pipeline.ingest import ingest as ingest_batch
    from toolkit.pipeline.reviewed import check_parts, check_source

    planfile = read_plan_file(plan_file)
    if planfile.source is None:
        raise click.BadParameter(
            f"{plan_file}: the plan file names no source to read (its records were given in "
            "Python); apply it with toolkit.ingest", param_hint="PLAN_FILE")
    # before the catalog is opened: an edited catalog would be created by opening it
    check_parts(planfile, plan_file,
                catalog=None if catalog_spec is None else recorded_catalog(catalog_spec),
                warehouse=None if warehouse is None else masked(warehouse))
    where = open_catalog(catalog_spec or planfile.catalog or "lakehouse",
                         warehouse or planfile.warehouse)
    # both checks again inside ingest, atomically; here they answer before Spark starts
    table = load_table(where.catalog, planfile.table)
    if table is not None and planfile.batch_id in ingested_batches(table):
        emit(as_json, *_already_applied(planfile))
        return
    check_source(planfile, plan_file)
    if TableState.of(table) != planfile.state:
        raise StalePlanError(planfile.table, planfile.state, TableState.of(table))
    spark = start_spark(where.catalog, spark_conf)
    with status("Writing the batch..."):
        report = ingest_batch(
            planfile.source, planfile.table, where.catalog, spark, planfile.batch_id,
            approved=planfile.plan, expected=planfile.state, format=planfile.format,
            **planfile.options,
        )
    emit(as_json, *_report(report))


@click.command()
@click.argument("source")
@click.option("--table", "-t", required=True, help="The table, namespace.name.")
@catalog_options()
@evolution_options
@click.option("--batch-id", help="The batch's id: ingesting an id again writes nothing "
              "(default: a new one).")
@click.option("--require-approval", is_flag=True,
              help="If the batch needs a schema change, write a plan file and exit 3 "
              "instead of evolving the table.")
@click.option("--save", type=click.Path(dir_okay=False), metavar="PLAN_FILE",
              help="Where --require-approval writes the plan file "
              "[default: TABLE.BATCH_ID.plan.json in --plan-dir].")
@click.option("--plan-dir", type=click.Path(file_okay=False), default=".", metavar="FOLDER",
              help="The folder of the plan file --require-approval names itself (from the "
              "table and batch id, made safe as a file name) [default: the working folder].")
@spark_options
@json_option
@guarded
def ingest(
    source: str, table: str, catalog_spec: str, warehouse: str | None,
    source_format: str | None, policy: str, on_incompatible: str, detect_dates: bool,
    rare_type_percent: float | None, hints: dict[str, str], batch_id: str | None,
    require_approval: bool,
    save: str | None, plan_dir: str, spark_conf: tuple[str, ...], as_json: bool,
) -> None:
    """Ingest SOURCE into TABLE as one batch: evolve the schema and write the rows.

    With --require-approval, a batch that needs a schema change (a new table too) is not
    written: its plan file is, and the command exits 3 (needs approval).
    """
    from toolkit.pipeline.ingest import ingest as ingest_batch

    options = evolution_settings(policy, on_incompatible, detect_dates, rare_type_percent,
                                 hints)
    source = check_source(source)
    where = open_catalog(catalog_spec, warehouse)
    batch_id = batch_id or uuid.uuid4().hex

    def plan_or_stop() -> Plan:
        """The batch's plan if it changes nothing; else its plan file, and exit 3."""
        planfile, aside, _ = _plan_file(source, table, where.catalog, where.recorded,
                                        warehouse, batch_id, source_format, options)
        if not planfile.plan.changed:
            return planfile.plan
        # a name of its own stays in its folder whatever the table and batch id hold
        path = save or str(Path(plan_dir) / plan_file_name(table, batch_id))
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        _write(planfile, path)
        text = (f"{planfile.summary}\nThe batch needs approval: plan written to {path}; "
                f"review it, then run: toolkit apply {path}")
        emit(as_json, text, {**_planned(planfile, path, aside), "needs_approval": True})
        raise click.exceptions.Exit(ExitCode.NEEDS_APPROVAL)

    # held to a plan that changes nothing: should the batch need a change by the time
    # Spark has read it (another writer moved the table), it stops for approval after all
    approved = plan_or_stop() if require_approval else None
    spark = start_spark(where.catalog, spark_conf)
    try:
        with status("Writing the batch..."):
            report = ingest_batch(source, table, where.catalog, spark, batch_id,
                                  approved=approved, format=source_format, **options)
    except PlanChangedError:
        plan_or_stop()
        raise
    emit(as_json, *_report(report))


@click.command()
@click.argument("plan_file", type=click.Path(exists=True, dir_okay=False))
@click.option("--as", "target", type=click.Choice(list(TARGETS)), required=True,
              help="spark-sql or trino: ALTER TABLE statements; pyiceberg: Python code.")
@click.option("--table", help="The table the code names [default: the plan file's].")
@json_option
@guarded
def export(plan_file: str, target: str, table: str | None, as_json: bool) -> None:
    """Print the plan of PLAN_FILE as code, to review or to run with another engine.

    SQL names are quoted; docs become COMMENTs. A plan that rewrites data, or that an
    engine cannot express, is refused with exit 2.
    """
    planfile = read_plan_file(plan_file)
    name = table or planfile.table
    dialect = TARGETS[target]
    code = (planfile.plan.to_pyiceberg(name) if dialect == "pyiceberg"
            else planfile.plan.to_sql("spark" if dialect == "spark" else "trino", name))
    emit(as_json, code, {"table": name, "as": target, "code": code})
