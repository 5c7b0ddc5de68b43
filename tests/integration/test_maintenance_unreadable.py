"""What expiring snapshots makes readable nowhere, said before it is approved: a column
dropped with ``drop_data=True`` ("older snapshots keep them until they expire"), a column a
``widen`` rewrote (the old snapshots hold its values as they were before the conversion),
rows a delete removed. The plan's expire step names each with its count, the CLI prints it
before ``--yes``, the run's report repeats it; a table where nothing becomes unreadable
gets no such sentence. The counts are checked against what Spark reads by time travel
before the expiry, and the claim against what it can read after (RULES 6: columns are
tracked by field ID, a rewrite gives a new one; docs/rules.md, "What asks for a yes")."""

from __future__ import annotations

import contextlib
import json
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from click.testing import CliRunner
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import NamespaceAlreadyExistsError

from toolkit import ops
from toolkit.cli import cli
from toolkit.core.evolution.operations import DropField, Widening
from toolkit.core.maintenance.steps import ExpireSnapshots, MaintenancePlan
from toolkit.iceberg.catalog import embedded_folder
from toolkit.iceberg.lineage import lineage
from toolkit.iceberg.operations import evolve
from toolkit.pipeline.ingest import ingest
from toolkit.pipeline.maintain import maintain, plan_maintenance

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

NS = "unreadable_test"
#: every snapshot is old enough; only the current one is kept
EXPIRE_ALL_BUT_ONE: dict[str, Any] = {
    "older_than": timedelta(0), "retain_last": 1, "steps": ("expire_snapshots",),
}
FIRST = [{"id": i, "secret": f"s{i}" if i != 2 else None} for i in range(6)]
LATER = [{"id": i} for i in range(6, 9)]


@pytest.fixture(scope="module", autouse=True)
def namespace(lakehouse: Catalog) -> None:
    with contextlib.suppress(NamespaceAlreadyExistsError):
        lakehouse.create_namespace(NS)


def expiry_of(plan: MaintenancePlan) -> ExpireSnapshots:
    step = plan.expiry
    assert step is not None and step.todo
    return step


def at_snapshot(spark: SparkSession, cat: Catalog, table: str, snapshot_id: int) -> Any:
    return (spark.read.format("iceberg").option("snapshot-id", str(snapshot_id))
            .load(f"{cat.name}.{table}"))


def non_null(spark: SparkSession, cat: Catalog, table: str, snapshot_id: int,
             column: str) -> int:
    from pyspark.sql import functions as F

    # count(), not a filter: Spark's Iceberg source binds a pushed filter to the table's
    # current schema, where a dropped column is not
    frame = at_snapshot(spark, cat, table, snapshot_id)
    row = frame.select(F.count(frame[column])).first()
    assert row is not None
    return int(row[0])


def entry_of(cat: Catalog, table: str, kind: type) -> int:
    """The lineage number of the plan holding an operation of ``kind``, as the log says."""
    found = [e.seq for e in lineage(cat.load_table(table))
             if any(isinstance(op, kind) for op in e.operations)]
    assert len(found) == 1
    return found[0]


def test_expiring_the_last_snapshots_of_a_dropped_column_says_its_values_and_count(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    table = f"{NS}.dropped"
    ingest(FIRST, table, lakehouse, spark, batch_id="first")
    first = lakehouse.load_table(table).current_snapshot()
    assert first is not None
    evolve(lakehouse, table, [ops.drop("secret")], drop_data=True)
    ingest(LATER, table, lakehouse, spark, batch_id="later")
    held = non_null(spark, lakehouse, table, first.snapshot_id, "secret")
    assert held == sum(1 for r in FIRST if r["secret"] is not None)
    seq = entry_of(lakehouse, table, DropField)

    plan = plan_maintenance(table, lakehouse, spark, **EXPIRE_ALL_BUT_ONE)
    step = expiry_of(plan)
    assert step.expire == (first.snapshot_id,)
    assert [(c.name, c.values, c.lineage, c.rewritten) for c in step.unreadable] == [
        ("secret", held, seq, False)]
    said = (f"The expired snapshots are the last that read column secret (dropped in "
            f"lineage #{seq}): its {held} values will no longer be readable.")
    assert said in step.sentence and said in str(plan)

    report = maintain(table, lakehouse, spark, plan)
    result = report.result("expire_snapshots")
    assert result is not None
    assert f"readable nowhere now: column secret ({held} values)" in result.sentence
    # true: no snapshot left reads the column, and the current rows are all there
    tbl = lakehouse.load_table(table)
    for snap in tbl.snapshots():
        assert "secret" not in at_snapshot(spark, lakehouse, table, snap.snapshot_id).columns
    assert tbl.scan().to_arrow().num_rows == len(FIRST) + len(LATER)


def dropped_after_first(cat: Catalog, spark: SparkSession, table: str) -> int:
    """``table`` with FIRST's secrets, then ``secret`` dropped with its data and LATER
    ingested: the first snapshot is the last that reads the secrets; its id."""
    ingest(FIRST, table, cat, spark, batch_id="first")
    first = cat.load_table(table).current_snapshot()
    assert first is not None
    evolve(cat, table, [ops.drop("secret")], drop_data=True)
    ingest(LATER, table, cat, spark, batch_id="later")
    return first.snapshot_id


def test_maintenance_nobody_reviewed_keeps_the_last_readers_of_values_until_a_yes(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    """``maintain`` without a plan (a scheduled call) expires no snapshot that is the last
    to read a dropped column's values: it keeps them and says so, with the count and how
    to approve; ``allow_losses=True`` approves."""
    table = f"{NS}.unreviewed"
    first = dropped_after_first(lakehouse, spark, table)
    held = sum(1 for r in FIRST if r["secret"] is not None)

    report = maintain(table, lakehouse, spark, **EXPIRE_ALL_BUT_ONE)
    result = report.result("expire_snapshots")
    assert result is not None and not result.ran and not report.changed
    assert result.sentence.startswith(
        f"kept 1 snapshot: expiring it would make readable nowhere column secret "
        f"({held} values);")
    assert "allow_losses=True" in result.sentence and "review the plan" in result.sentence
    assert first in {s.snapshot_id for s in lakehouse.load_table(table).snapshots()}
    assert non_null(spark, lakehouse, table, first, "secret") == held  # still readable

    approved = maintain(table, lakehouse, spark, allow_losses=True, **EXPIRE_ALL_BUT_ONE)
    done = approved.result("expire_snapshots")
    assert done is not None and done.ran and done.count("expired_snapshots") == 1
    assert first not in {s.snapshot_id for s in lakehouse.load_table(table).snapshots()}


def test_a_streams_maintenance_keeps_the_last_readers_of_values_and_says_so(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    from toolkit.pipeline.stream import reports, stream

    table = f"{NS}.streamed"
    first = dropped_after_first(lakehouse, spark, table)
    landing = tmp_path / "landing"
    landing.mkdir()
    (landing / "part-0.jsonl").write_text("".join(json.dumps({"id": i}) + "\n"
                                                  for i in range(9, 12)))
    query = stream(landing, table, lakehouse, spark, checkpoint=tmp_path / "checkpoint",
                   trigger={"availableNow": True}, maintain_every=1,
                   maintenance=EXPIRE_ALL_BUT_ONE)
    query.awaitTermination(180)
    assert not query.isActive and query.exception() is None
    (report,) = reports(query).maintenance
    kept = report.result("expire_snapshots")
    assert kept is not None and not kept.ran
    assert "would make readable nowhere column secret (5 values)" in kept.sentence
    assert first in {s.snapshot_id for s in lakehouse.load_table(table).snapshots()}
    assert kept.sentence in str(reports(query))


def test_expiring_snapshots_that_a_kept_one_still_reads_through_says_nothing_is_lost(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    """Dropped, but the current snapshot was written before the drop: time travel to it
    still reads every value of the column, so expiring the older one loses none."""
    table = f"{NS}.still_read"
    ingest(FIRST[:3], table, lakehouse, spark, batch_id="a")
    ingest(FIRST[3:], table, lakehouse, spark, batch_id="b")
    evolve(lakehouse, table, [ops.drop("secret")], drop_data=True)
    current = lakehouse.load_table(table).current_snapshot()
    assert current is not None

    step = expiry_of(plan_maintenance(table, lakehouse, spark, **EXPIRE_ALL_BUT_ONE))
    assert len(step.expire) == 1
    assert step.unreadable == () and step.removed_rows == 0
    assert "are the last that read" not in step.sentence
    assert "Time travel and rollback to the expired snapshots will no longer work" \
        in step.sentence
    assert non_null(spark, lakehouse, table, current.snapshot_id, "secret") == sum(
        1 for r in FIRST if r["secret"] is not None)


def test_a_table_only_appended_to_loses_no_value_when_old_snapshots_expire(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    table = f"{NS}.appended"
    ingest(LATER, table, lakehouse, spark, batch_id="a")
    ingest(LATER, table, lakehouse, spark, batch_id="b")
    step = expiry_of(plan_maintenance(table, lakehouse, spark, **EXPIRE_ALL_BUT_ONE))
    assert step.unreadable == () and step.removed_rows == 0 and step.destroys == ()
    assert "are the last that read" not in step.sentence


def test_expiring_the_snapshots_before_a_rewrite_names_the_values_as_stored_before(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    table = f"{NS}.rewritten"
    rows = [{"id": i, "n": i * 10 if i != 1 else None} for i in range(5)]
    ingest(rows, table, lakehouse, spark, batch_id="ints")
    first = lakehouse.load_table(table).current_snapshot()
    assert first is not None
    evolve(lakehouse, table, [ops.widen("n", "string", rewrite=True)])
    ingest([{"id": 9, "n": "nine"}], table, lakehouse, spark, batch_id="text")
    held = non_null(spark, lakehouse, table, first.snapshot_id, "n")
    assert held == sum(1 for r in rows if r["n"] is not None)
    seq = entry_of(lakehouse, table, Widening)

    step = expiry_of(plan_maintenance(table, lakehouse, spark, **EXPIRE_ALL_BUT_ONE))
    assert [(c.name, c.values, c.lineage, c.rewritten) for c in step.unreadable] == [
        ("n", held, seq, True)]
    assert (f"The expired snapshots are the last that read column n as stored before its "
            f"rewrite (lineage #{seq}): its {held} values as they were before the conversion "
            "will no longer be readable (the table keeps them converted).") in step.sentence


def test_expiring_the_snapshots_before_a_delete_counts_the_rows_it_removed(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    table = f"{NS}.deleted"
    ingest(LATER, table, lakehouse, spark, batch_id="a")
    before = spark.table(f"{lakehouse.name}.{table}").count()
    lakehouse.load_table(table).delete("id < 8")
    after = lakehouse.load_table(table).scan().to_arrow().num_rows
    ingest([{"id": 20}], table, lakehouse, spark, batch_id="b")

    step = expiry_of(plan_maintenance(table, lakehouse, spark, **EXPIRE_ALL_BUT_ONE))
    assert step.unreadable == ()
    # PyIceberg deletes part of a file as an overwrite (the rows kept written again), whose
    # summary cannot tell kept rows from new ones: the difference is a lower bound
    assert (step.removed_rows, step.removed_rows_at_least) == (before - after, True)
    assert (f"The expired snapshots are the last that read at least {before - after} rows "
            "that deletes or overwrites removed from the table: they will no longer be "
            "readable.") in step.sentence


def test_a_dropped_columns_values_in_rows_delete_files_removed_are_counted_as_a_bound(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    """Rows a position delete removed (Spark's merge-on-read, as Flink and Trino write)
    still hold values in the data files the manifests count: the sentence says "up to",
    where "its 5 values" was false (time travel to the snapshot reads 3)."""
    table = f"{NS}.deleted_then_dropped"
    full = f"{lakehouse.name}.{table}"
    ingest(FIRST, table, lakehouse, spark, batch_id="first")
    spark.sql(f"ALTER TABLE {full} SET TBLPROPERTIES ('write.delete.mode'='merge-on-read')")
    spark.sql(f"DELETE FROM {full} WHERE id IN (0, 1)")  # a position delete file
    last = lakehouse.load_table(table).current_snapshot()
    assert last is not None
    live = non_null(spark, lakehouse, table, last.snapshot_id, "secret")
    in_files = sum(1 for r in FIRST if r["secret"] is not None)
    assert (live, in_files) == (3, 5)
    evolve(lakehouse, table, [ops.drop("secret")], drop_data=True)
    ingest(LATER, table, lakehouse, spark, batch_id="later")

    step = expiry_of(plan_maintenance(table, lakehouse, spark, **EXPIRE_ALL_BUT_ONE))
    (column,) = step.unreadable
    assert (column.name, column.values, column.at_most) == ("secret", in_files, True)
    assert (f"column secret (dropped in lineage #{column.lineage}): up to {in_files} values "
            "of it (delete files removed some of its rows; the count takes them in) will no "
            "longer be readable.") in step.sentence
    assert step.gone[0] == f"column secret (up to {in_files} values)"


def test_the_command_prints_what_becomes_unreadable_before_it_is_approved(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    table = f"{NS}.by_command"
    ingest(FIRST, table, lakehouse, spark, batch_id="first")
    field_id = lakehouse.load_table(table).schema().find_field("secret").field_id
    evolve(lakehouse, table, [ops.drop("secret")], drop_data=True)
    ingest(LATER, table, lakehouse, spark, batch_id="later")
    seq = entry_of(lakehouse, table, DropField)
    held = sum(1 for r in FIRST if r["secret"] is not None)
    args = ["maintain", table, "--catalog", str(embedded_folder(lakehouse)), "--steps",
            "expire_snapshots", "--older-than", "0s", "--retain-last", "1"]

    asked = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert asked.exit_code == 3
    assert (f"the last that read column secret (dropped in lineage #{seq}): its {held} "
            "values will no longer be readable") in asked.output
    as_json = CliRunner().invoke(cli, [*args, "--json"], catch_exceptions=False)
    step = next(s for s in json.loads(as_json.output)["plan"]
                if s["name"] == "expire_snapshots")
    assert step["unreadable"] == [{"column": "secret", "field_id": field_id, "values": held,
                                   "values_at_most": False, "lineage": seq,
                                   "rewritten": False}]
    assert len(lakehouse.load_table(table).snapshots()) == 2  # nothing done without --yes
