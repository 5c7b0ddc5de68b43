"""Commit a plan's schema changes through Iceberg's Java API, inside Spark's JVM.

PyIceberg deep-copies the whole table metadata several times per commit, so its commit
time grows with every schema version a table has (BASELINES.md: 13 ms at 5 versions,
517 ms at 60). Iceberg's Java ``UpdateSchema`` does not: the pipeline, which has a Spark
session anyway, commits through it. Same guarantees: the table is loaded, its state
checked against the plan's, and the commit made on that loaded table, which Iceberg
refuses if another writer committed in between (RULES 6).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyiceberg.schema import Schema

from toolkit.core.planner import Plan
from toolkit.iceberg.commit import StalePlanError, TableState, commit_plan
from toolkit.iceberg.schema import column_to_iceberg

if TYPE_CHECKING:
    from pyiceberg.table import Table
    from pyspark.sql import SparkSession


def _java_state(jtable: Any) -> TableState:
    snap = jtable.currentSnapshot()
    return TableState(jtable.schema().schemaId(), None if snap is None else snap.snapshotId())


def commit_plan_in_spark(
    spark: SparkSession, spark_name: str, table: Table, plan: Plan, planned: TableState
) -> Table:
    """Apply ``plan``'s added columns in one commit of Iceberg's Java API; refused with
    :class:`StalePlanError` if the table moved since ``planned``. Returns the refreshed
    PyIceberg table."""
    if not plan.changes:
        return commit_plan(table, plan, planned)  # only the state check
    if any("." in part for change in plan.changes for part in change.parent):
        # Java resolves a parent path by its dotted name, ambiguous when names hold dots
        return commit_plan(table, plan, planned)
    jvm: Any = spark._jvm
    jsession: Any = spark._jsparkSession
    jtable = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(jsession, spark_name)
    jtable.refresh()
    now = _java_state(jtable)
    if now != planned:
        raise StalePlanError(spark_name, planned, now)
    update = jtable.updateSchema()
    parser = jvm.org.apache.iceberg.SchemaParser
    for change in plan.changes:
        col = change.column
        field = column_to_iceberg(col)
        jtype = parser.fromJson(Schema(field).model_dump_json()).findField(col.id).type()
        parent = ".".join(change.parent) if change.parent else None
        update.addColumn(parent, col.name, jtype, col.doc)
    try:
        update.commit()
    except Exception as exc:  # py4j wraps Iceberg's CommitFailedException
        if "CommitFailedException" not in str(exc):
            raise
        jtable.refresh()
        raise StalePlanError(spark_name, planned, _java_state(jtable), " (commit refused)") from exc
    table.refresh()
    return table
