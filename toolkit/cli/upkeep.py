"""The command that keeps a table in shape: ``maintain`` plans expiring snapshots,
compacting small files, rewriting manifests, removing orphan files and dropping the staging
tables stopped ingests left, prints the plan, and applies exactly it when told ``--yes``."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

import click

from toolkit.cli.common import (
    DURATION,
    catalog_options,
    duration_text,
    emit,
    existing_table,
    json_option,
    open_catalog,
    spark_options,
    start_spark,
    status,
    table_argument,
)
from toolkit.cli.exits import ExitCode, guarded
from toolkit.core.maintenance.steps import STEPS, ExpireSnapshots, check_steps

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from toolkit.core.maintenance.steps import MaintenancePlan, MaintenanceReport, StepName

__all__ = ["maintain", "steps_of"]


def steps_of(given: tuple[str, ...]) -> tuple[StepName, ...]:
    """The steps ``--steps`` names (comma-separated, repeatable; default all), in run
    order; an unknown one is refused as bad input, naming it.

    >>> steps_of(("expire_snapshots,compact",)), len(steps_of(()))
    (('compact', 'expire_snapshots'), 5)
    """
    names = [n.strip().replace("-", "_") for item in given for n in item.split(",") if n.strip()]
    try:
        return check_steps(names or STEPS)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--steps") from exc


def _plan_json(plan: MaintenancePlan) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    for s in plan.steps:
        step: dict[str, Any] = {"name": s.name, "todo": s.todo, "sentence": s.sentence}
        if isinstance(s, ExpireSnapshots):
            # what the --yes approves making unreadable, for a scheduler to check
            step["unreadable"] = [
                {"column": c.name, "field_id": c.field_id, "values": c.values,
                 "values_at_most": c.at_most, "lineage": c.lineage, "rewritten": c.rewritten}
                for c in s.losing]
            step["removed_rows"] = s.removed_rows
        steps.append(step)
    return steps


def _report_json(report: MaintenanceReport) -> list[dict[str, Any]]:
    return [{"name": r.name, "ran": r.ran, "counts": dict(r.counts), "sentence": r.sentence}
            for r in report.results]


@click.command(epilog="Exit codes: 0 applied, or nothing to do, or --dry-run; 3 the plan "
               "needs approval (printed; run again with --yes); 4 the table moved since the "
               "plan (nothing done; run again).")
@table_argument
@catalog_options()
@click.option("--older-than", type=DURATION, default="5d", show_default=True,
              metavar="DURATION",
              help="Expire snapshots older than this (5d, 12h, 30m, 0s...).")
@click.option("--retain-last", type=click.IntRange(min=1), default=5, show_default=True,
              metavar="N",
              help="Snapshots kept per branch whatever their age.")
@click.option("--orphans-older-than", type=DURATION, default="3d", show_default=True,
              metavar="DURATION",
              help="Remove only orphan files older than this (at least 1d: files of writes "
                   "in flight must survive).")
@click.option("--staging-older-than", type=DURATION, default="1d", show_default=True,
              metavar="DURATION",
              help="Drop only staging tables a stopped ingest left that have not changed "
                   "for this long (an ingest under way may be writing a younger one).")
@click.option("--steps", "step_names", multiple=True, metavar="STEP[,STEP...]",
              help=f"The steps to plan [default: all: {', '.join(STEPS)}].")
@click.option("--dry-run", is_flag=True, help="Print the plan and exit 0; change nothing.")
@click.option("--yes", "-y", is_flag=True,
              help="Apply the plan. Without it the plan is printed and the command exits 3 "
                   "(needs approval).")
@spark_options
@json_option
@guarded
def maintain(table: str, catalog_spec: str, warehouse: str | None, older_than: dt.timedelta,
             retain_last: int, orphans_older_than: dt.timedelta,
             staging_older_than: dt.timedelta, step_names: tuple[str, ...],
             dry_run: bool, yes: bool, spark_conf: tuple[str, ...], as_json: bool) -> None:
    """Plan TABLE's maintenance (expire old snapshots, compact small files, rewrite
    manifests, remove orphan files, drop the staging tables of ingests that stopped before
    renaming them), print it in plain words, and apply exactly that plan only with --yes.

    Nothing a reader or the ingest ledger needs is removed (the current snapshot, those a
    branch or tag holds, the last --retain-last of each branch). Without --yes a plan with
    work to do exits 3 (needs approval), so a scheduler can stop there for review; with
    --yes it is applied, or refused with exit 4 if the table moved since the plan.
    """
    from toolkit.pipeline.maintain import maintain as apply_plan
    from toolkit.pipeline.maintain import plan_maintenance

    steps = steps_of(step_names)
    if "remove_orphan_files" in steps and orphans_older_than < dt.timedelta(days=1):
        raise click.BadParameter(
            f"{duration_text(orphans_older_than)} is too recent: files of writes in flight "
            "must survive; use 1d or more", param_hint="--orphans-older-than")
    where = open_catalog(catalog_spec, warehouse, must_exist=True)
    existing_table(where, table)
    spark: SparkSession | None = None
    if "remove_orphan_files" in steps:  # its dry run lists the files on Spark
        spark = start_spark(where.catalog, spark_conf)
    with status("Planning maintenance..."):
        plan = plan_maintenance(table, where.catalog, spark, older_than=older_than,
                                retain_last=retain_last, orphans_older_than=orphans_older_than,
                                staging_older_than=staging_older_than, steps=steps)
    data: dict[str, Any] = {"table": table, "todo": plan.todo, "plan": _plan_json(plan),
                            "applied": False, "results": []}
    if not plan.todo or dry_run:
        done = "nothing to do" if not plan.todo else "nothing was changed (--dry-run)"
        emit(as_json, f"{plan}\n{table}: {done}", data)
        return
    if not yes:
        again = f"toolkit maintain {table} --yes"
        text = (f"{plan}\nThis plan needs approval: review it, then run it again with --yes "
                f"({again} ...)")
        emit(as_json, text, {**data, "needs_approval": True})
        raise click.exceptions.Exit(ExitCode.NEEDS_APPROVAL)
    if spark is None:
        spark = start_spark(where.catalog, spark_conf)
    with status("Maintaining..."):
        report = apply_plan(table, where.catalog, spark, plan)
    emit(as_json, f"{plan}\n{report}", {**data, "applied": True,
                                         "results": _report_json(report)})
