"""The pure maintenance plan: which snapshots expire and which are kept (and why), which
small files compact into about how many, how many manifests are rewritten, which orphan
files go, which staging tables of stopped ingests are dropped; each step in plain words.
Also the quoting of the procedures' SQL."""

from __future__ import annotations

import doctest

import pytest

import toolkit.spark.maintenance as procedures
from toolkit.core.evolution.state import TableState
from toolkit.core.maintenance.rules import (
    make_plan,
    plan_compaction,
    plan_expiry,
    plan_manifests,
    plan_orphans,
    plan_staging_tables,
)
from toolkit.core.maintenance.steps import (
    DAY_MS,
    STEPS,
    Compact,
    DataFile,
    DropStagingTables,
    ExpireSnapshots,
    MaintenancePlan,
    MaintenanceReport,
    Manifest,
    OrphanSearch,
    Ref,
    RemoveOrphanFiles,
    RewriteManifests,
    Snapshot,
    StagingTable,
    TableFacts,
    check_steps,
)

MB = 1024 * 1024
NOW = 100 * DAY_MS


def history(n: int, *, every: int = DAY_MS, start: int = NOW - 50 * DAY_MS) -> tuple[Snapshot, ...]:
    """``n`` snapshots on one line, ids 1..n, one per ``every`` ms, batch ids b1..bn."""
    return tuple(
        Snapshot(i, i - 1 if i > 1 else None, start + i * every, f"b{i}") for i in range(1, n + 1)
    )


def facts(
    snapshots: tuple[Snapshot, ...] = (),
    refs: tuple[Ref, ...] | None = None,
    **kw: object,
) -> TableFacts:
    if refs is None:
        last = snapshots[-1].snapshot_id if snapshots else None
        refs = () if last is None else (Ref("main", last, "branch"),)
    current = next((r.snapshot_id for r in refs if r.name == "main"), None)
    return TableFacts(
        "db.t", TableState(0, current), NOW, snapshots, refs, **kw  # type: ignore[arg-type]
    )


# --- expiry -------------------------------------------------------------------------------


def test_old_snapshots_expire_and_the_last_ones_and_the_current_one_are_kept() -> None:
    f = facts(history(10))  # days -49 .. -40: all older than 5 days
    step = plan_expiry(f, older_than_ms=NOW - 5 * DAY_MS, retain_last=3)
    assert step.expire == (1, 2, 3, 4, 5, 6, 7)
    assert step.batches == tuple(f"b{i}" for i in range(1, 8))
    assert [(k.snapshot_id, k.why) for k in step.kept] == [
        (8, "one of the last 3 of branch main"),
        (9, "one of the last 3 of branch main"),
        (10, "the current one, one of the last 3 of branch main"),
    ]
    assert step.todo and step.total == 10
    text = step.sentence
    assert text.startswith("Expire 7 of 10 snapshots (10 older than ")
    assert "keep 3 of them: one of the last 3 of branch main, the current one." in text
    assert "(b1, b2, b3, b4, b5 and 2 more) are first kept in the ingest ledger" in text
    assert "Time travel and rollback to the expired snapshots will no longer work" in text
    assert "Written Data Statistics will no longer show what those 7 batches" in text


def test_snapshots_newer_than_the_cutoff_stay() -> None:
    f = facts(history(10, start=NOW - 10 * DAY_MS))  # days -9 .. 0
    step = plan_expiry(f, older_than_ms=NOW - 5 * DAY_MS, retain_last=1)
    assert step.expire == (1, 2, 3, 4)  # days -9 .. -6
    assert not step.kept


def test_nothing_old_enough_says_so() -> None:
    step = plan_expiry(facts(history(3, start=NOW - DAY_MS, every=1000)),
                       older_than_ms=NOW - 5 * DAY_MS, retain_last=1)
    assert not step.todo and step.expire == ()
    assert step.sentence.startswith("No snapshot to expire: none of the 3 snapshots is older")
    every = plan_expiry(facts(history(2)), older_than_ms=NOW, retain_last=5)
    assert not every.todo
    assert every.sentence.startswith("No snapshot to expire: of the 2 snapshots older than")


def test_tags_branches_and_their_last_snapshots_are_never_expired() -> None:
    line = history(8)
    # a branch "audit" forked at 4 with two commits of its own (9, 10)
    fork = (Snapshot(9, 4, line[3].timestamp_ms + 1, "a1"), Snapshot(10, 9, line[4].timestamp_ms))
    refs = (Ref("main", 8, "branch"), Ref("audit", 10, "branch"), Ref("v1", 2, "tag"))
    step = plan_expiry(facts(line + fork, refs), older_than_ms=NOW, retain_last=2)
    why = {k.snapshot_id: k.why for k in step.kept}
    assert why[2] == "tag v1"
    assert why[10] == "the head of branch audit, one of the last 2 of branch audit"
    assert why[9] == "one of the last 2 of branch audit"
    assert why[8] == "the current one, one of the last 2 of branch main"
    assert why[7] == "one of the last 2 of branch main"
    assert step.expire == (1, 3, 4, 5, 6)
    assert step.batches == ("b1", "b3", "b4", "b5", "b6")


def test_a_staged_write_in_flight_and_a_replay_under_way_are_kept() -> None:
    line = history(4)
    staged = Snapshot(20, 4, NOW - 1000, "b5")  # on no branch, seconds old: being published
    leftover = Snapshot(21, 3, NOW - 3 * DAY_MS, "b6")  # on no branch, days old: dropped
    f = facts(line + (staged, leftover), refs=(Ref("main", 4, "branch"),), pending_batch="b2")
    step = plan_expiry(f, older_than_ms=NOW, retain_last=1)
    why = {k.snapshot_id: k.why for k in step.kept}
    assert why[20].startswith("on no branch and under a day old")
    assert why[2] == "needed by a replay under way (batch b2)"
    assert step.expire == (1, 3, 21)
    # only published batches go into the ledger: b6 never reached a reader
    assert step.batches == ("b1", "b3")


def test_replays_recorded_only_in_expired_snapshots_are_named() -> None:
    snaps = (Snapshot(1, None, 0, None, "replay-abc"), Snapshot(2, 1, 1, None))
    step = plan_expiry(facts(snaps), older_than_ms=NOW, retain_last=1)
    assert step.expire == (1,)
    assert "1 replay recorded only in these snapshots (replay-abc)" in step.sentence


def test_retention_set_on_the_refs_blocks_expiry_saying_why() -> None:
    f = facts(history(4), retention_rules=("branch main keeps snapshots for at most 1000 ms",))
    step = plan_expiry(f, older_than_ms=NOW, retain_last=1)
    assert step.expire == (1, 2, 3) and not step.todo  # listed, but not run
    assert step.sentence.startswith(
        "Not expiring any snapshot: branch main keeps snapshots for at most 1000 ms. Under "
        "that retention Iceberg's expire_snapshots would also expire snapshots"
    )


def test_retain_last_below_one_is_refused_naming_the_table() -> None:
    with pytest.raises(ValueError, match="db.t: retain_last must keep at least 1 snapshot, not 0"):
        plan_expiry(facts(history(2)), older_than_ms=NOW, retain_last=0)


# --- compaction ---------------------------------------------------------------------------


def files(sizes: list[int], partition: str = "") -> tuple[DataFile, ...]:
    return tuple(
        DataFile(f"f{i}-{partition}.parquet", s, 1, partition) for i, s in enumerate(sizes)
    )


def test_small_files_compact_into_about_one_file_per_target() -> None:
    f = facts(data_files=files([MB] * 12 + [500 * MB]))  # 500 MB is within 75%-180% of 512
    step = plan_compaction(f, target_file_size=None, min_input_files=5)
    assert (step.data_files, step.small_files, step.files, step.into) == (13, 12, 12, 1)
    assert step.bytes == 12 * MB and step.target_file_size == 512 * MB
    assert step.sentence == (
        "Compact 12 small data files (12 MB) of 13 into about 1 file of up to 512 MB; "
        "the rows stay the same."
    )
    big = plan_compaction(f, target_file_size=4 * MB, min_input_files=5)
    # 4 MB target: 500 MB is too large (over 180%) and is split; the 1 MB files are small
    assert big.files == 13 and big.into == 128


def test_too_few_small_files_in_a_partition_are_left_alone() -> None:
    f = facts(data_files=files([MB] * 3, "p=1") + files([MB] * 4, "p=2"))
    step = plan_compaction(f, target_file_size=None, min_input_files=5)
    assert not step.todo and step.small_files == 7
    assert step.sentence == (
        "Nothing to compact: 7 of 7 data files are small, fewer than 5 in any partition."
    )
    assert plan_compaction(f, target_file_size=None, min_input_files=4).files == 4
    assert plan_compaction(f, target_file_size=2 * MB, min_input_files=9).files == 7  # > target
    none = plan_compaction(facts(data_files=files([500 * MB])), target_file_size=None,
                           min_input_files=2)
    assert none.sentence == "Nothing to compact: none of the 1 data file is far from 512 MB."


def test_compaction_options_are_checked() -> None:
    with pytest.raises(ValueError, match="min_input_files at least 1 \\(not 0\\)"):
        plan_compaction(facts(), target_file_size=None, min_input_files=0)


# --- manifests ----------------------------------------------------------------------------


def manifests(n: int, length: int = 5000, spec_id: int = 0) -> tuple[Manifest, ...]:
    return tuple(Manifest(f"m{i}.avro", length, "data", spec_id) for i in range(n))


def test_many_small_manifests_are_rewritten_into_one() -> None:
    step = plan_manifests(facts(manifests=manifests(12)))
    assert (step.manifests, step.files, step.into) == (12, 12, 1)
    assert step.sentence == "Rewrite 12 manifests into 1."
    one = plan_manifests(facts(manifests=manifests(1)))
    assert not one.todo and one.sentence == "Nothing to rewrite: 1 manifest, already compact."
    old_spec = plan_manifests(facts(manifests=manifests(3, spec_id=1)))
    assert not old_spec.todo  # only the current spec's manifests are rewritten
    after = plan_manifests(facts(manifests=manifests(1)), after_compaction=True)
    assert after.todo and "the compaction leaves" in after.sentence


# --- orphans ------------------------------------------------------------------------------


def test_orphans_are_listed_and_another_tables_files_left_alone() -> None:
    found = [
        "file:/w/db/t/data/x.parquet",
        "file:/w/db/t/metadata/y.avro",
        "file:/w/db/t/q/data/z.parquet",
    ]
    f = facts(foreign_folders=(("db.t__quarantine", "file:///w/db/t/q"),))
    step = plan_orphans(f, older_than_ms=NOW - 3 * DAY_MS, found=found)
    assert step.files == tuple(found[:2])
    assert step.sentence.startswith("Remove 2 orphan files older than ")
    assert "(x.parquet, y.avro)" in step.sentence
    assert step.sentence.endswith("1 file of db.t__quarantine under its folder is left alone.")
    with pytest.raises(ValueError, match="only when older than a day"):
        plan_orphans(f, older_than_ms=NOW - 3_600_000, found=found)


# --- the plan -----------------------------------------------------------------------------


def test_the_plan_holds_the_chosen_steps_in_run_order_with_the_state() -> None:
    f = facts(history(6), data_files=files([MB] * 6), manifests=manifests(6))
    plan = make_plan(
        f, ["drop_staging_tables", "remove_orphan_files", "expire_snapshots", "compact",
            "rewrite_manifests"],
        older_than_ms=NOW, retain_last=2, target_file_size=None, min_input_files=5,
        orphans=OrphanSearch(NOW - 3 * DAY_MS, ("file:/w/o.parquet",)),
    )
    assert isinstance(plan, MaintenancePlan) and plan.state == TableState(0, 6)
    assert [s.name for s in plan.steps] == list(STEPS)
    assert isinstance(plan.steps[0], Compact) and isinstance(plan.steps[1], RewriteManifests)
    assert isinstance(plan.steps[2], ExpireSnapshots)
    assert isinstance(plan.steps[3], RemoveOrphanFiles)
    assert isinstance(plan.steps[4], DropStagingTables) and not plan.steps[4].todo
    assert plan.steps[1].after_compaction
    assert plan.expiry is not None and plan.expiry.expire == (1, 2, 3, 4)
    assert plan.refs == (("main", 6),) and plan.todo
    text = str(plan)
    assert text.splitlines()[1].startswith("  compact: Compact 6 small data files")
    assert "  remove_orphan_files: Remove 1 orphan file " in text


def test_unknown_steps_are_refused_naming_them() -> None:
    with pytest.raises(ValueError, match="unknown maintenance step 'vacuum'; the steps"):
        check_steps(["compact", "vacuum"])


def test_the_report_says_what_each_procedure_did() -> None:
    plan = make_plan(facts(), [], older_than_ms=0, retain_last=1, target_file_size=None,
                     min_input_files=5, orphans=None)
    results = (
        MaintenanceReport.compacted({"rewritten_data_files_count": 12,
                                     "added_data_files_count": 1,
                                     "rewritten_bytes_count": 12 * MB}),
        MaintenanceReport.manifests_rewritten({"rewritten_manifests_count": 13,
                                               "added_manifests_count": 1}),
        MaintenanceReport.expired(7, {"deleted_data_files_count": 0,
                                      "deleted_manifest_files_count": 3,
                                      "deleted_manifest_lists_count": 7}),
        MaintenanceReport.orphans_removed(["file:/w/o.parquet"]),
    )
    report = MaintenanceReport("db.t", plan, results, TableState(0, 9))
    assert [r.sentence for r in report.results] == [
        "compacted 12 data files (12 MB) into 1",
        "rewrote 13 manifests into 1",
        "expired 7 snapshots, deleting 3 manifests, 7 manifest lists no snapshot left needs",
        "removed 1 orphan file",
    ]
    assert report.result("expire_snapshots").count("expired_snapshots") == 7  # type: ignore[union-attr]
    assert report.changed and str(report).startswith("maintenance of db.t:\n  compact: ")


# --- the procedures' SQL ------------------------------------------------------------------


def test_names_and_values_in_the_procedure_sql_are_quoted() -> None:
    hostile = ("db", "x`; DROP TABLE y; --", "it's")
    arg = procedures.table_arg("lake", hostile)
    assert arg == "'`lake`.`db`.`x``; DROP TABLE y; --`.`it\\'s`'"
    sql = procedures.procedure_sql("lake", "rewrite_manifests", [("table", arg)])
    assert sql == f"CALL `lake`.`system`.`rewrite_manifests`(table => {arg})"
    assert procedures.sql_string("a\\'b") == "'a\\\\\\'b'"
    with pytest.raises(ValueError, match="holds a quote or a backslash"):
        procedures.sql_string("it's", escapes=False)
    assert procedures.timestamp_literal(0) == "TIMESTAMP '1970-01-01 00:00:00.000000Z'"
    result = doctest.testmod(procedures)
    assert result.failed == 0 and result.attempted > 0


def test_fold_files_the_properties_point_to_are_never_orphans() -> None:
    """The toolkit's fold files (older lineage, arrivals and ledger entries) are referenced
    by the table's properties, not by a snapshot: Iceberg's dry run lists them, the plan
    keeps them; an unreferenced one (a fold whose commit failed) goes."""
    kept = "file:///w/db/t/metadata/toolkit-lineage-fold-00001-a.json.gz"
    crashed = "file:/w/db/t/metadata/toolkit-lineage-fold-00002-b.json.gz"
    found = ["file:/w/db/t/metadata/toolkit-lineage-fold-00001-a.json.gz", crashed]
    step = plan_orphans(facts(fold_files=(kept,)), older_than_ms=NOW - 3 * DAY_MS,
                        found=found)
    assert step.files == (crashed,)
    assert step.sentence.endswith(
        "1 file of the toolkit's logs (lineage, arrivals, the ingest ledger) is kept.")


# --- staging tables left by stopped ingests -----------------------------------------------

LEFT = StagingTable("db.t__toolkit_new_ab12cd34ef56", NOW - 2 * DAY_MS, 3, 1200,
                    ("file:/w/db/t/data/left.parquet", "file:/w/db/t/metadata/left.json"))
EMPTY = StagingTable("db.t__toolkit_new_0123456789ab", NOW - 3 * DAY_MS, 0, 0)
FRESH = StagingTable("db.t__toolkit_new_ffffffffffff", NOW - 3_600_000, 1, 10)


def test_staging_tables_older_than_a_day_are_dropped_with_what_they_hold() -> None:
    plan = make_plan(facts(staging_tables=(LEFT, FRESH)), ["drop_staging_tables"],
                     older_than_ms=NOW, retain_last=1, target_file_size=None,
                     min_input_files=5, orphans=None)
    step = plan.step("drop_staging_tables")
    assert isinstance(step, DropStagingTables) and plan.todo
    assert step.drop == (LEFT,) and step.young == (FRESH,)  # the default: a day
    assert step.sentence == (
        "Drop 1 staging table a stopped ingest left (db.t__toolkit_new_ab12cd34ef56, 3 data "
        "files, 1,200 rows never published) and delete its files; rerunning that batch "
        "writes it. 1 staging table updated since 1970-04-10 00:00 UTC "
        "(db.t__toolkit_new_ffffffffffff) is kept: an ingest may be writing it.")


def test_young_staging_tables_are_kept_and_the_step_has_nothing_to_do() -> None:
    step = plan_staging_tables(facts(staging_tables=(FRESH,)), older_than_ms=NOW - DAY_MS)
    assert not step.todo and step.drop == ()
    assert step.sentence.startswith("No staging table left by a stopped ingest older than ")
    assert step.sentence.endswith("is kept: an ingest may be writing it.")
    assert plan_staging_tables(facts(), older_than_ms=NOW - DAY_MS).sentence == (
        "No staging table left by a stopped ingest.")
    two = plan_staging_tables(facts(staging_tables=(LEFT, EMPTY)), older_than_ms=NOW)
    assert two.sentence.startswith(
        "Drop 2 staging tables stopped ingests left (db.t__toolkit_new_ab12cd34ef56, 3 data "
        "files, 1,200 rows never published; db.t__toolkit_new_0123456789ab, no data file) "
        "and delete their files")


def test_the_files_of_staging_tables_are_never_orphans_of_the_table() -> None:
    """A staging table is made in the table's folder: its files are listed by the orphan
    search, yet belong to another table (its own step drops them)."""
    found = ["file:///w/db/t/data/left.parquet", "file:/w/db/t/data/crashed.parquet"]
    step = plan_orphans(facts(staging_tables=(LEFT,)), older_than_ms=NOW - 3 * DAY_MS,
                        found=found)
    assert step.files == ("file:/w/db/t/data/crashed.parquet",)
    assert step.sentence.endswith("1 file of staging tables is left to drop_staging_tables.")


def test_the_report_says_how_many_staging_tables_were_dropped_and_which_were_kept() -> None:
    result = MaintenanceReport.staging_dropped(
        1, 7, ["db.t__toolkit_new_ab12cd34ef56: it no longer exists"])
    assert (result.count("staging_tables_dropped"), result.count("staging_files_deleted")) \
        == (1, 7)
    assert result.sentence == ("dropped 1 staging table, deleting 7 files; kept "
                               "db.t__toolkit_new_ab12cd34ef56: it no longer exists")
    assert MaintenanceReport.staging_dropped(0, 0).sentence == "no staging table dropped"
