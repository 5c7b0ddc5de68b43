"""Two writers: two OS processes ingest drifting batches into the same table at once.

Each child (``writer_child.py``) has its own Spark session (``local[1]``) on the same
embedded catalog folder, so the two meet only where real writers meet: the SQLite
catalog (PyIceberg through SQLAlchemy, Spark through Iceberg's JDBC catalog) and the
table's metadata. Every batch adds a column of its own and both writers drift the same
families, so their schema commits really conflict.

What must hold (issue #6): no lost commit, no duplicated batch, and a final schema and
row set equal to ingesting the same batches one after the other. The serial order is
the order of the plans: each batch's rows are routed against the schema its own plan
made, so the table equals ``toolkit.simulate`` of the batches taken in that order, which
the reports' plans give (each changing plan was made against the schema the one before
made). A conflict is retried by re-planning (``IngestReport.attempts``): no two applied
plans were made against the same schema.

Sizes: 3 batches per writer in ``make test`` (how many conflicts that sees varies from
run to run); ``TOOLKIT_RELIABILITY=long`` runs 50 per writer, which must also see at
least one re-plan.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.types import StringType

import toolkit
from tests.integration.readers import canonical, read_duckdb, schema_summary
from tests.reliability import children
from toolkit.core.values.types import Struct
from toolkit.iceberg.ledger import batch_id_of
from toolkit.iceberg.schema import from_iceberg
from toolkit.pipeline import ingest as pipeline
from toolkit.pipeline.ingest import IngestReport

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

BATCHES_PER_WRITER = 50 if children.LONG_RUN else 3
TABLE = "db.shared"

#: values the shared families drift through (RULES 1: each is a different observed type)
DRIFT: list[Any] = [1, "text", 2.5, True, {"n": 1}, [1, 2], "2024-01-01", 2**40, [["x"]]]


def drifting_batch(writer: str, i: int) -> dict[str, Any]:
    """Batch ``i`` of a writer: 2-4 records (sizes differ, so a report that counted
    another batch's rows shows); a column only this batch has, so every batch changes
    the schema; families both writers drift at the same pace, so both plan the same new
    columns at about the same time; a nested record that grows."""
    records = [
        {
            "src": f"{writer}-{i}-{j}",
            f"{writer}_{i}": j,
            "shared": DRIFT[(i + j) % len(DRIFT)],
            "dev": {"id": DRIFT[(2 * i + j) % len(DRIFT)], f"k{i % 4}": writer},
        }
        for j in range(2 + (i + (writer == "b")) % 3)
    ]
    return {"id": f"{writer}-{i}", "records": records}


def serial_order(reports: list[IngestReport]) -> tuple[list[IngestReport], Struct]:
    """The batches in the order of their plans, and the schema the last plan made.

    Plans that changed the schema form one chain: the first was made against no table,
    each next one against exactly the schema the previous one made. Two changing plans
    made against the same schema, or one made against a schema no plan made, would mean
    a plan applied to a table that had moved on: a stale plan. A batch that changed
    nothing comes right after the plan that made the schema it was planned against."""
    order: list[IngestReport] = []
    pending, schema = list(reports), Struct()
    while pending:
        found = [r for r in pending if r.plan.before == schema and not r.plan.changes]
        made = [r for r in pending if r.plan.before == schema and r.plan.changes]
        assert len(made) <= 1, f"{[r.batch_id for r in made]} all changed the same schema"
        order += found + made
        pending = [r for r in pending if all(r is not o for o in found + made)]
        if not made:
            break
        schema = made[0].plan.after
    assert not pending, f"planned against a schema no plan made: {[r.batch_id for r in pending]}"
    return order, schema


def test_two_writers_lose_nothing_and_equal_a_serial_run(tmp_path: Path) -> None:
    folder = tmp_path / "lake"
    toolkit.catalog(folder)  # create the catalog's SQLite tables before the race
    batches = {
        w: [drifting_batch(w, i) for i in range(BATCHES_PER_WRITER)] for w in ("a", "b")
    }
    procs = []
    for w, other in (("a", "b"), ("b", "a")):
        spec = tmp_path / f"{w}.json"
        spec.write_text(json.dumps(batches[w]))
        args = [str(folder), TABLE, str(spec), str(tmp_path / f"{w}.pickle"), w, other]
        procs.append(children.start("writer_child.py", args, tmp_path, f"writer-{w}"))
    codes = children.wait(procs, timeout=120 + 30 * BATCHES_PER_WRITER)
    for child, code in zip(procs, codes, strict=True):
        assert code == 0, f"{child.name} failed ({code}):\n{child.output()[-6000:]}"

    reports: list[IngestReport] = [
        r for w in ("a", "b") for r in pickle.loads((tmp_path / f"{w}.pickle").read_bytes())
    ]
    by_id = {b["id"]: b["records"] for w in batches for b in batches[w]}
    assert sorted(r.batch_id for r in reports) == sorted(by_id)
    assert not any(r.skipped for r in reports)
    assert all(r.rows_written == len(by_id[r.batch_id]) for r in reports)

    table = toolkit.catalog(folder).load_table(TABLE)
    # no lost commit, no duplicated batch: each batch id in exactly one snapshot
    committed = {s.snapshot_id: str(batch_id_of(s)) for s in table.snapshots()}
    assert sorted(committed.values()) == sorted(by_id)
    assert all(committed[r.snapshot_id] == r.batch_id for r in reports)  # type: ignore[index]

    # every applied plan was made against the schema it was applied to (never a stale
    # one), and the last one made the table's schema
    serial, last = serial_order(reports)
    assert from_iceberg(table.schema()) == last
    sim = toolkit.simulate([by_id[r.batch_id] for r in serial])
    assert schema_summary(table.schema()) == schema_summary(sim.schema)
    assert read_duckdb(table) == canonical(sim.rows)

    replans = sum(r.attempts - 1 for r in reports)
    print(f"{len(reports)} batches, {replans} re-plan(s) after a conflict")
    if children.LONG_RUN:
        assert replans > 0, "the writers never conflicted: the test proved nothing"


def test_a_schema_commit_between_plan_and_append_loses_nothing(
    lakehouse: Catalog, spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race the two processes hit, made certain: right after this batch's schema
    commit, another writer adds a top-level and a nested column; the batch is still
    written as its own plan routed it, and those columns read null in its rows."""
    name = "writers.raced"
    first = [{"id": 1, "dev": {"os": "ios"}}]
    second = [{"id": "x", "dev": {"os": 2}}, {"id": 3}]
    toolkit.ingest(first, name, lakehouse, spark, batch_id="first")
    plan_and_commit = pipeline._plan_and_commit

    def then_another_writer(*args: Any, **kwargs: Any) -> Any:
        out = plan_and_commit(*args, **kwargs)
        with lakehouse.load_table(name).update_schema() as update:
            update.add_column("other", StringType())
            update.add_column(("dev", "other"), StringType())
        return out

    monkeypatch.setattr(pipeline, "_plan_and_commit", then_another_writer)
    report = toolkit.ingest(second, name, lakehouse, spark, batch_id="second")
    assert report.plan.changes and report.rows_written == 2

    sim = toolkit.simulate([first, second])
    expected = [
        {**r, "dev": None if r["dev"] is None else {**r["dev"], "other": None}, "other": None}
        for r in sim.rows
    ]
    assert read_duckdb(lakehouse.load_table(name)) == canonical(expected)


def test_a_schema_commit_just_before_the_append_is_met_by_writing_again(
    lakehouse: Catalog, spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The narrowest window: another writer adds a column after ingest read the table's
    schema but before Spark's append reads it. Spark refuses that append before writing
    anything; ingest pads the rows to the schema as it is now and appends once more."""
    from toolkit.spark import plans

    name = "writers.raced_late"
    first, second = [{"id": 1}], [{"id": "x"}]
    toolkit.ingest(first, name, lakehouse, spark, batch_id="first")
    # every staged append goes through plans.appended (one call into the JVM)
    appended, appends = plans.appended, []

    def another_writer_first(*args: Any) -> None:
        if not appends:
            with lakehouse.load_table(name).update_schema() as update:
                update.add_column("late", StringType())
        appends.append(args)
        appended(*args)

    monkeypatch.setattr(plans, "appended", another_writer_first)
    report = toolkit.ingest(second, name, lakehouse, spark, batch_id="second")
    assert len(appends) == 2 and report.rows_written == 1

    table = lakehouse.load_table(name)
    assert [batch_id_of(s) for s in table.snapshots()] == ["first", "second"]
    expected = [{**r, "late": None} for r in toolkit.simulate([first, second]).rows]
    assert read_duckdb(table) == canonical(expected)
