"""Writes of plans in one call into the JVM (toolkit.spark.plans, jvm/Plans.java): the
settings a write holds are its own and are put back after it, and the optimizer's
inference of constraints is skipped only where it could find nothing."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from pyiceberg.catalog import Catalog

import toolkit
from toolkit.spark import plans
from toolkit.spark.plans import PLANS, LazyFrame
from toolkit.spark.settings import settings_hash
from toolkit.spark.tally import jvm_class

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

CONSTRAINTS = "spark.sql.constraintPropagation.enabled"


@contextlib.contextmanager
def spark_conf(spark: SparkSession, name: str, value: str) -> Iterator[None]:
    before = spark.conf.get(name, None)
    spark.conf.set(name, value)
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(name)
        else:
            spark.conf.set(name, before)


def _inferable(spark: SparkSession, plan: Any) -> bool:
    return bool(jvm_class(spark, PLANS).inferable(plan))


def test_only_a_join_or_a_filter_of_the_callers_keeps_the_inference_of_constraints(
    spark: SparkSession,
) -> None:
    from pyspark.sql import functions as F

    from toolkit.core.batch.options import Options
    from toolkit.spark.class_tally import counting
    from toolkit.spark.columnar import classified, typed_columns

    rows = spark.createDataFrame([(1, "2024-01-02"), (2, "x")], "id long, at string")
    cols = typed_columns(rows)
    assert cols is not None
    counted = counting(classified(cols, Options()), Options(), 0)
    assert counted is not None
    # the one pass of typed columns: projections and the count's filter only
    assert not _inferable(spark, counted.lazy.plan)
    assert not _inferable(spark, rows._jdf.queryExecution().analyzed())
    # a caller's own filter or join below the toolkit's steps: the inference may use them
    rows.createOrReplaceTempView("plans_rows")
    subquery = spark.sql("SELECT id, (SELECT max(id) FROM plans_rows) AS top FROM plans_rows")
    for frame in (rows.where(F.col("id") > 1),
                  rows.join(rows.withColumnRenamed("at", "b"), "id"),
                  rows.intersect(rows), subquery):
        assert _inferable(spark, frame._jdf.queryExecution().analyzed())
        assert _inferable(spark, LazyFrame.positional_of(frame).plan)


@pytest.mark.parametrize("callers", [None, "true", "false"])
def test_a_write_leaves_its_session_with_the_settings_it_had(
    spark: SparkSession, lakehouse: Catalog, monkeypatch: pytest.MonkeyPatch,
    callers: str | None,
) -> None:
    """Whatever the caller set (or not) for the inference of constraints, the session a
    write used has its parent's settings again after it, and no write id."""
    name = f"plans.settings_{callers}"
    toolkit.ingest([{"id": 1}], name, lakehouse, spark, batch_id="first")
    used: list[SparkSession] = []
    appended = plans.appended

    def spy(session: SparkSession, *args: Any) -> None:
        used.append(session)
        appended(session, *args)

    monkeypatch.setattr(plans, "appended", spy)
    before = spark.conf.get(CONSTRAINTS, None)
    try:
        if callers is not None:
            spark.conf.set(CONSTRAINTS, callers)
        report = toolkit.ingest([{"id": 2}], name, lakehouse, spark, batch_id="second")
        assert report.rows_written == 1 and used
        for session in used:
            assert session.conf.get(CONSTRAINTS, None) == callers
            assert session.conf.get("spark.wap.id", None) is None
            assert settings_hash(session) == settings_hash(spark)
    finally:
        if before is None:
            spark.conf.unset(CONSTRAINTS)
        else:
            spark.conf.set(CONSTRAINTS, before)
    assert sorted(r["id"] for r in spark.table(f"{lakehouse.name}.{name}").collect()) == [1, 2]


def test_a_step_on_a_resolved_plan_is_resolved_as_spark_would_resolve_it(
    spark: SparkSession,
) -> None:
    """Names a step takes from a resolved plan are bound as it is made (the analysis of the
    whole stack then has less to do), to the very columns Spark's analysis binds; a name
    two columns answer to, but for case, is left to Spark, which refuses it."""
    from pyspark.errors import AnalysisException
    from pyspark.sql import functions as F

    from toolkit.spark.plans import java_columns

    rows = spark.createDataFrame([(1, "a")], "id long, name string")
    lazy = LazyFrame.positional_of(rows)
    square = (F.col("c0") * F.col("c0")).alias("next")  # no coercion: resolved at once
    step = lazy.select(java_columns(spark, [F.col("c1"), square]))
    assert step.plan.resolved()
    assert [tuple(r) for r in step.frame.collect()] == [("a", 1)]
    counted = step.stacked(lambda plan: jvm_class(spark, PLANS).where(
        plan, F.col("next")._jc))
    assert counted.plan.resolved()

    twins = spark.createDataFrame([(1, 2)], "a long, A long")
    with spark_conf(spark, "spark.sql.caseSensitive", "true"):
        lazy = LazyFrame.of(twins).select(java_columns(spark, [F.col("a")]))
        assert not lazy.plan.resolved()
        assert [tuple(r) for r in lazy.frame.collect()] == [(1,)]
    with pytest.raises(AnalysisException, match="(?i)ambiguous"):
        __ = LazyFrame.of(twins).select(java_columns(spark, [F.col("a")])).frame


def test_a_helper_call_is_one_round_trip_to_the_jvm(spark: SparkSession) -> None:
    """py4j asks the JVM what a class's name is at each look (a round trip of its own);
    the helpers' methods are looked up once, so a stream's every batch pays one round
    trip a call (toolkit.spark.tally.jvm_class)."""
    helper = jvm_class(spark, PLANS)
    client: Any = spark.sparkContext._gateway._gateway_client
    sent: list[str] = []
    send = client.send_command

    def counted(command: str, *args: Any, **kwargs: Any) -> Any:
        sent.append(command)
        return send(command, *args, **kwargs)

    client.send_command = counted
    try:
        plan = spark.range(3)._jdf.queryExecution().analyzed()
        helper.inferable(plan)  # looked up at its first call
        sent.clear()
        for _ in range(3):
            assert helper.inferable(plan) is False
            assert jvm_class(spark, PLANS).inferable(plan) is False
    finally:
        del client.send_command
    assert len(sent) == 6
