"""Real tables: ingest on Spark gives exactly what the Python reference simulates."""

from __future__ import annotations

import copy
import datetime as dt
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.table import Table
from pyiceberg.types import StringType

import toolkit
from tests.integration.readers import (
    as_pyiceberg_reads_it,
    canonical,
    read_duckdb,
    read_pyiceberg,
    read_spark,
    schema_summary,
)
from toolkit.core.engine import Engine
from toolkit.core.evolution.batch_plan import Plan
from toolkit.core.evolution.state import TableState
from toolkit.errors import StalePlanError
from toolkit.iceberg.commit import commit_plan
from toolkit.iceberg.schema import from_iceberg
from toolkit.pipeline import ingest as pipeline
from toolkit.pipeline.ingest import ingest
from toolkit.spark import batches as spark_batches
from toolkit.spark.router import JvmRouting

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

UTC = dt.UTC

#: drifting batches: the seed's examples, nested records, arrays, edge cases, odd names
CORPUS: list[list[dict[str, Any]]] = [
    [
        {"my_field": 1, "size": 4, "started": "2024-01-02T03:04:05Z",
         "coordinates": [[[1, 2], [3]]], "device": {"id": 1, "os": "ios"}, "tags": ["a", "b"],
         "odd key.x": 1, "Ünï": True, "flag": True, "items": [{"sku": 1, "qty": 2}]},
        {"my_field": 2, "size": 5, "device": [{"id": 2, "os": "android"}], "flag": False},
    ],
    [
        {"my_field": "abc", "size": 2.3, "started": 1704164645000, "coordinates": "n/a",
         "device": {"id": "X", "model": "m"}, "tags": "single", "name": "a", "Name": "b",
         "flag": "2024-01-02", "a": [1, 2], "items": [{"sku": "A", "price": 1.5}]},
        {"my_field": 5, "big": 2**60 + 1, "started": "2024-01-03T00:00:00.123456Z"},
    ],
    [
        {"a": "x", "big": 1.5, "device": {"id": 3, "extra": {"deep": [1, 2]}}, "empty": [],
         "ragged": [1, [2, None]], "n": None, "my_field": 7, "mixed": [{"k": 1}, 2]},
        {"a": [True], "coordinates": [[[4]]], "started": "2024-01-04"},
    ],
]


def test_ingest_batch_by_batch_equals_the_simulation(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    reports = [
        ingest(batch, "diff.events", lakehouse, spark, batch_id=f"b{i}")
        for i, batch in enumerate(CORPUS)
    ]
    sim = toolkit.simulate(CORPUS)
    table = lakehouse.load_table("diff.events")

    # same schema: names, types, docs and field IDs
    assert schema_summary(table.schema()) == schema_summary(sim.schema)
    # same plans, batch by batch
    assert [r.plan.changes for r in reports] == [p.changes for p in sim.plans]
    assert [r.rows_written for r in reports] == [len(b) for b in CORPUS]

    expected = canonical(sim.rows)
    assert read_spark(spark, f"{lakehouse.name}.diff.events") == expected
    assert read_duckdb(table) == expected
    # "mixed" (a list of records) came with the last batch: older data files lack it
    written = [p.after for p, batch in zip(sim.plans, CORPUS, strict=True) for _ in batch]
    assert read_pyiceberg(table) == canonical(
        as_pyiceberg_reads_it(sim.rows, sim.table_schema, written)
    )


def test_json_lines_are_routed_in_the_jvm_and_equal_the_simulation(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    reports = []
    for i, batch in enumerate(CORPUS):
        path = tmp_path / f"b{i}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in batch))
        reports.append(ingest(str(path), "diff.lines", lakehouse, spark, batch_id=f"b{i}"))
    # the third batch's records among primitives ("mixed") are split in the JVM too
    assert [r.routed_in for r in reports] == ["jvm", "jvm", "jvm"]
    sim = toolkit.simulate(CORPUS)
    table = lakehouse.load_table("diff.lines")
    assert schema_summary(table.schema()) == schema_summary(sim.schema)
    expected = canonical(sim.rows)
    assert read_spark(spark, f"{lakehouse.name}.diff.lines") == expected
    assert read_duckdb(table) == expected


def test_a_batch_the_jvm_router_refuses_is_routed_in_python(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A kind the JVM's table does not foresee fails its job before anything is committed;
    the Python router then writes the batch, once."""
    made = spark_batches.jvm_routing

    def without_texts(*args: Any) -> Any:
        table = copy.deepcopy(made(*args).table)  # the table made is shared (cached)
        for col in table["columns"]:  # kind code 4: a text
            col["rules"] = [r for r in col["rules"] if r[0] != 4]
        return JvmRouting.of(table)

    monkeypatch.setattr(spark_batches, "jvm_routing", without_texts)
    path = tmp_path / "day.jsonl"
    path.write_text('{"a": 1}\n{"a": "x", "b": [1]}\n')
    report = ingest(str(path), "diff.refused", lakehouse, spark, batch_id="day")
    assert report.routed_in == "python"
    assert "the JVM router refused it" in caplog.text
    table = lakehouse.load_table("diff.refused")
    assert len(table.snapshots()) == 1
    sim = toolkit.simulate([[{"a": 1}, {"a": "x", "b": [1]}]])
    assert read_spark(spark, f"{lakehouse.name}.diff.refused") == canonical(sim.rows)


def test_ingest_json_lines_files_and_typed_dataframes(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    path = tmp_path / "day1.jsonl"
    lines = [json.dumps(r) for r in CORPUS[0]] + ["", json.dumps({"size": 2**70})]
    path.write_text("\n".join(lines) + "\n")
    ingest(str(path), "diff.files", lakehouse, spark, batch_id="day1")
    typed = spark.createDataFrame(
        [(1, dt.datetime(2024, 1, 2, tzinfo=UTC), "x")], "size long, ts timestamp, s string"
    )
    ingest(typed, "diff.files", lakehouse, spark, batch_id="typed")
    sim = toolkit.simulate([[*CORPUS[0], {"size": 2**70}],
                            [{"size": 1, "ts": dt.datetime(2024, 1, 2, tzinfo=UTC), "s": "x"}]])
    table = lakehouse.load_table("diff.files")
    assert schema_summary(table.schema()) == schema_summary(sim.schema)
    assert read_spark(spark, f"{lakehouse.name}.diff.files") == canonical(sim.rows)


def test_same_batch_id_twice_writes_nothing_the_second_time(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    first = ingest([{"a": 1}], "diff.once", lakehouse, spark, batch_id="b-1")
    again = ingest([{"a": 1}], "diff.once", lakehouse, spark, batch_id="b-1")
    assert first.rows_written == 1 and not first.skipped
    assert again.skipped and again.rows_written == 0
    assert len(read_pyiceberg(lakehouse.load_table("diff.once"))) == 1
    snap = lakehouse.load_table("diff.once").current_snapshot()
    assert snap is not None and snap.summary is not None
    assert snap.summary.additional_properties["toolkit.batch-id"] == "b-1"


def test_a_stale_plan_is_refused_and_the_table_is_left_as_the_other_writer_made_it(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    ingest([{"a": 1}], "diff.stale", lakehouse, spark, batch_id="first")
    mine = lakehouse.load_table("diff.stale")
    state = TableState.of(mine)
    engine = Engine()
    my_plan = engine.plan(from_iceberg(mine.schema()), engine.observe([{"a": "text"}]), 1)
    assert [c.column.name for c in my_plan.changes] == ["a_string"]

    # another writer evolves the table first
    ingest([{"a": 2.5}], "diff.stale", lakehouse, spark, batch_id="other")

    with pytest.raises(StalePlanError, match=r"diff\.stale moved since the plan was made \(its "
                       r"schema went from id 0 to 1"):
        commit_plan(mine, my_plan, state)
    names = [f.name for f in lakehouse.load_table("diff.stale").schema().fields]
    assert names == ["a", "a_double"]


def test_ingest_re_plans_when_another_writer_commits_between_plan_and_commit(
    lakehouse: Catalog, spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest([{"a": 1}], "diff.race", lakehouse, spark, batch_id="first")
    calls: list[int] = []

    def racing_commit(table: Table, plan: Plan, planned: TableState, **kw: Any) -> Table:
        if not calls:  # the other writer gets in just before our first commit
            other = lakehouse.load_table("diff.race")
            with other.update_schema() as update:
                update.add_column("a_string", StringType(), doc="upsolver_evolved_from:a")
        calls.append(len(plan.changes))
        return commit_plan(table, plan, planned, **kw)

    monkeypatch.setattr(pipeline, "commit_plan", racing_commit)
    report = ingest([{"a": "text"}], "diff.race", lakehouse, spark, batch_id="mine")
    # the first plan (add a_string) was refused, not applied; the second found it there
    assert calls == [1, 0] and report.attempts == 2
    assert not report.plan.changes
    assert [f.name for f in lakehouse.load_table("diff.race").schema().fields] == ["a", "a_string"]
    assert read_spark(spark, f"{lakehouse.name}.diff.race") == canonical(
        [{"a": 1, "a_string": None}, {"a": None, "a_string": "text"}]
    )


def test_an_approved_preview_commits_exactly_its_plan_or_is_refused(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    from toolkit.errors import PlanChangedError
    from toolkit.pipeline.preview import plan_preview as preview

    first = preview([{"a": 1}], "diff.approve", lakehouse)
    assert [c.column.name for c in first.plan.changes] == ["a"]
    report = ingest([{"a": 1}], "diff.approve", lakehouse, spark, batch_id="1",
                    approved=first.plan, expected=first.state)
    assert report.plan.changes == first.plan.changes

    seen = preview([{"a": "x"}], "diff.approve", lakehouse)
    ingest([{"a": 2.5}], "diff.approve", lakehouse, spark, batch_id="other writer")
    with pytest.raises(StalePlanError, match="its schema went from id 0 to 1"):
        ingest([{"a": "x"}], "diff.approve", lakehouse, spark, batch_id="2",
               approved=seen.plan, expected=seen.state)

    again = preview([{"a": "x"}], "diff.approve", lakehouse)  # re-preview, then a bigger batch
    with pytest.raises(PlanChangedError, match=r"approved: add a_string string; needed: add "
                       r"a_string string; add b long"):
        ingest([{"a": "x", "b": 1}], "diff.approve", lakehouse, spark, batch_id="3",
               approved=again.plan, expected=again.state)
    names = [f.name for f in lakehouse.load_table("diff.approve").schema().fields]
    assert names == ["a", "a_double"]  # nothing of the refused batches was applied
