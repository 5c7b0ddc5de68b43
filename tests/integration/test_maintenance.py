"""Table maintenance on a real table through the run's one Spark session: a table fed by
many small ingests is planned (the expected counts, nothing changed), then maintained
(compacted into fewer files, old snapshots expired, manifests rewritten, an old orphan
file removed) and reads the same rows before and after through PyIceberg and Spark; an
expired batch id is still skipped (the ledger); a plan made before the table moved is
refused; a stream maintains the table every N micro-batches."""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.table import Table

from tests.integration.readers import canonical, read_pyiceberg, read_spark
from toolkit.core.maintenance.steps import (
    Compact,
    MaintenancePlan,
    MaintenanceReport,
    RemoveOrphanFiles,
    RewriteManifests,
)
from toolkit.errors import StalePlanError
from toolkit.iceberg.ledger import ingested_batches
from toolkit.pipeline.ingest import ingest
from toolkit.pipeline.maintain import maintain, plan_maintenance
from toolkit.pipeline.stream import reports, stream

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

TABLE = "maintenance_test.events"
BATCHES = 6
#: what the test plans with: every snapshot is old enough, two are kept
NOW_OLD = {"older_than": timedelta(0), "retain_last": 2}


def batch(i: int) -> list[dict[str, Any]]:
    return [{"id": i * 10 + j, "name": f"n{i}", "score": i + j / 4} for j in range(3)]


def local(uri: str) -> Path:
    """The local path of a ``file:`` URI (``file:/x`` and ``file:///x`` alike)."""
    return Path("/" + uri.removeprefix("file:").lstrip("/"))


def live_files(table: Table) -> list[str]:
    table.refresh()
    return [t.file.file_path for t in table.scan().plan_files()]


def manifest_count(table: Table) -> int:
    table.refresh()
    snap = table.current_snapshot()
    return 0 if snap is None else len(snap.manifests(table.io))


@dataclass
class Fed:
    rows_pyiceberg: list[dict[str, Any]]
    rows_spark: list[dict[str, Any]]
    orphan: Path
    snapshots: list[int]
    files: list[str]


@pytest.fixture(scope="module")
def fed(lakehouse: Catalog, spark: SparkSession) -> Fed:
    """Six small batches b1..b6, and a file nobody references, four days old."""
    for i in range(1, BATCHES + 1):
        ingest(batch(i), TABLE, lakehouse, spark, batch_id=f"b{i}")
    table = lakehouse.load_table(TABLE)
    folder = local(table.location()) / "data"
    orphan = folder / "left-by-a-crashed-write.parquet"
    orphan.write_bytes(b"not referenced by any snapshot")
    old = time.time() - 4 * 86400
    os.utime(orphan, (old, old))
    return Fed(
        read_pyiceberg(table), read_spark(spark, f"{lakehouse.name}.{TABLE}"), orphan,
        [s.snapshot_id for s in table.snapshots()], live_files(table),
    )


@pytest.fixture(scope="module")
def planned(fed: Fed, lakehouse: Catalog, spark: SparkSession) -> MaintenancePlan:
    return plan_maintenance(TABLE, lakehouse, spark, **NOW_OLD)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def maintained(
    planned: MaintenancePlan, lakehouse: Catalog, spark: SparkSession
) -> MaintenanceReport:
    return maintain(TABLE, lakehouse, spark, planned)


def test_the_plan_counts_what_each_step_will_do_and_changes_nothing(
    fed: Fed, planned: MaintenancePlan, lakehouse: Catalog
) -> None:
    table = lakehouse.load_table(TABLE)
    assert [s.snapshot_id for s in table.snapshots()] == fed.snapshots
    assert fed.orphan.exists()
    assert len(fed.snapshots) == BATCHES and len(fed.files) >= BATCHES

    compact = planned.step("compact")
    assert isinstance(compact, Compact)
    assert (compact.data_files, compact.files, compact.into) == (len(fed.files),) * 2 + (1,)
    manifests = planned.step("rewrite_manifests")
    assert isinstance(manifests, RewriteManifests)
    assert manifests.manifests == manifest_count(table) == BATCHES
    assert manifests.after_compaction

    expiry = planned.expiry
    assert expiry is not None
    assert expiry.expire == tuple(fed.snapshots[:4])
    assert expiry.batches == ("b1", "b2", "b3", "b4")
    assert [k.snapshot_id for k in expiry.kept] == fed.snapshots[4:]

    orphans = planned.step("remove_orphan_files")
    assert isinstance(orphans, RemoveOrphanFiles) and orphans.todo
    assert [local(f) for f in orphans.files] == [fed.orphan]
    assert planned.state.snapshot_id == fed.snapshots[-1]
    print(planned)


def test_maintain_applies_the_plan_and_reports_the_procedures_counts(
    fed: Fed, maintained: MaintenanceReport, lakehouse: Catalog
) -> None:
    report = maintained
    print(report)
    compacted = report.result("compact")
    assert compacted is not None
    assert compacted.count("rewritten_data_files_count") == len(fed.files)
    assert compacted.count("added_data_files_count") == 1
    rewritten = report.result("rewrite_manifests")
    assert rewritten is not None and rewritten.count("added_manifests_count") == 1
    expired = report.result("expire_snapshots")
    assert expired is not None and expired.count("expired_snapshots") == 4
    removed = report.result("remove_orphan_files")
    assert removed is not None and removed.count("orphan_files_removed") == 1

    table = lakehouse.load_table(TABLE)
    left = [s.snapshot_id for s in table.snapshots()]
    assert not set(fed.snapshots[:4]) & set(left)  # expired
    assert fed.snapshots[4:] == left[:2]  # the last two kept, then compaction and manifests
    assert len(left) == 4 and report.state.snapshot_id == left[-1]
    assert len(live_files(table)) == 1
    assert manifest_count(table) == 1
    assert not fed.orphan.exists()
    # the compacted small files stay while the kept snapshots reference them
    assert all(local(f).exists() for f in fed.files)


def test_the_table_reads_the_same_rows_before_and_after(
    fed: Fed, maintained: MaintenanceReport, lakehouse: Catalog, spark: SparkSession
) -> None:
    table = lakehouse.load_table(TABLE)
    assert read_pyiceberg(table) == fed.rows_pyiceberg
    assert read_spark(spark, f"{lakehouse.name}.{TABLE}") == fed.rows_spark
    expected = canonical([r for i in range(1, BATCHES + 1) for r in batch(i)])
    assert fed.rows_pyiceberg == expected


def test_an_expired_batch_id_is_still_written_once(
    maintained: MaintenanceReport, lakehouse: Catalog, spark: SparkSession
) -> None:
    table = lakehouse.load_table(TABLE)
    assert {f"b{i}" for i in range(1, BATCHES + 1)} <= ingested_batches(table)
    again = ingest(batch(1), TABLE, lakehouse, spark, batch_id="b1")
    assert again.skipped and again.rows_written == 0
    table.refresh()
    assert len(read_pyiceberg(table)) == 3 * BATCHES


def test_a_plan_made_before_the_table_moved_is_refused_and_nothing_is_done(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    name = "maintenance_test.moved"
    for i in (1, 2):
        ingest(batch(i), name, lakehouse, spark, batch_id=f"m{i}")
    plan = plan_maintenance(name, lakehouse, spark, steps=["expire_snapshots"], retain_last=1,
                            older_than=timedelta(0))
    assert plan.expiry is not None and len(plan.expiry.expire) == 1
    ingest(batch(3), name, lakehouse, spark, batch_id="m3")
    before = [s.snapshot_id for s in lakehouse.load_table(name).snapshots()]
    with pytest.raises(StalePlanError, match=f"table {name} moved since the plan was made"):
        maintain(name, lakehouse, spark, plan)
    table = lakehouse.load_table(name)
    assert [s.snapshot_id for s in table.snapshots()] == before

    # a tag added since the plan protects a snapshot the plan would expire: refused too
    plan = plan_maintenance(name, lakehouse, spark, steps=["expire_snapshots"], retain_last=1,
                            older_than=timedelta(0))
    assert plan.expiry is not None and before[0] in plan.expiry.expire
    table.manage_snapshots().create_tag(before[0], "audit").commit()
    with pytest.raises(StalePlanError, match="its branches or tags changed \\(audit\\)"):
        maintain(name, lakehouse, spark, plan)
    fresh = maintain(name, lakehouse, spark, steps=["expire_snapshots"], retain_last=1,
                     older_than=timedelta(0))
    table.refresh()
    assert before[0] in {s.snapshot_id for s in table.snapshots()}  # tagged: kept
    assert fresh.plan.expiry is not None
    assert [k.why for k in fresh.plan.expiry.kept if k.snapshot_id == before[0]] == ["tag audit"]


def test_a_stream_maintains_its_table_every_n_micro_batches(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    name = "maintenance_test.streamed"
    landing = tmp_path / "landing"
    landing.mkdir()
    for i in range(4):
        tmp = tmp_path / f".{i}.tmp"
        tmp.write_text("\n".join(json.dumps(r) for r in batch(i)) + "\n")
        shutil.move(tmp, landing / f"part-{i}.jsonl")
    query = stream(
        landing, name, lakehouse, spark,
        checkpoint=tmp_path / "checkpoint",
        trigger={"availableNow": True},
        source_options={"maxFilesPerTrigger": "1"},
        maintain_every=2,
        maintenance={"older_than": timedelta(0), "retain_last": 1, "min_input_files": 2,
                     "steps": ["compact", "expire_snapshots"]},
    )
    query.awaitTermination(180)
    assert not query.isActive and query.exception() is None
    log = reports(query)
    assert len(log) == 4
    assert sorted(log.maintenance_by_epoch) == [1, 3] and not log.maintenance_skipped
    for report in log.maintenance:
        assert report.result("compact") is not None
        expired = report.result("expire_snapshots")
        assert expired is not None and expired.count("expired_snapshots") >= 1
    assert "maintenance: compacted" in str(log)
    table = lakehouse.load_table(name)
    assert len(read_pyiceberg(table)) == 12
    assert {f"{log.query_name}:{e}" for e in range(4)} <= ingested_batches(table)
    assert len(table.snapshots()) < 4


def test_a_stream_refuses_wrong_maintenance_options_before_it_starts(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    name = "maintenance_test.refused"
    with pytest.raises(ValueError, match="maintain_every must be a whole number .* not 0"):
        stream(tmp_path / "in", name, lakehouse, spark, maintain_every=0)
    with pytest.raises(TypeError, match="older"):
        stream(tmp_path / "in", name, lakehouse, spark, maintain_every=2,
               maintenance={"older": timedelta(days=1)})
    with pytest.raises(TypeError, match="allow_losses is True or False, not 'yes'"):
        stream(tmp_path / "in", name, lakehouse, spark, maintain_every=2,
               maintenance={"allow_losses": "yes"})
    with pytest.raises(ValueError, match="unknown maintenance step 'vacuum'"):
        stream(tmp_path / "in", name, lakehouse, spark, maintain_every=2,
               maintenance={"steps": ["vacuum"]})
    assert not [q for q in spark.streams.active if q.name == "ingest_maintenance_test_refused"]


def test_orphan_removal_keeps_the_fold_files_the_properties_point_to(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    """A fold file (older log entries, or one too big for the table's properties) is
    referenced by the properties, not by a snapshot: Iceberg's orphan search lists it, the
    plan keeps it; a fold file no property points to (its commit failed) is removed."""
    import toolkit
    from toolkit.iceberg.folds import fold_files

    name = "maintenance_test.folded"
    ingest([{"id": 1}], name, lakehouse, spark, batch_id="f1")
    # one change whose lineage entry is too big for the properties: it goes to a file
    toolkit.evolve(lakehouse, name, [toolkit.ops.add(f"extra_{i:03d}", "string")
                                     for i in range(80)])
    (kept,) = fold_files(lakehouse.load_table(name))
    crashed = local(kept).with_name("toolkit-lineage-fold-00002-left-by-a-crash.json.gz")
    crashed.write_bytes(b"a fold whose commit failed")
    old = time.time() - 4 * 86400
    for f in (local(kept), crashed):
        os.utime(f, (old, old))

    plan = plan_maintenance(name, lakehouse, spark, steps=["remove_orphan_files"])
    step = plan.step("remove_orphan_files")
    assert isinstance(step, RemoveOrphanFiles)
    assert [local(f) for f in step.files] == [crashed]
    assert "1 file of the toolkit's logs" in step.sentence
    maintain(name, lakehouse, spark, plan)
    assert local(kept).exists() and not crashed.exists()
    assert len(toolkit.lineage(lakehouse.load_table(name))[-1].operations) == 80
