"""Replay of quarantined records into real tables through ``toolkit.ingest`` (Spark).

The story of each test: day 1 is ingested; day 2 was checked against the table under the
widening policy (``toolkit.simulate(..., policy="widen")``), which set aside the records
whose ``flag`` arrived as text (RULES 5: a boolean does not widen); those records sit in the
quarantine table. Then a plan that accepts them (the automatic policy's ``flag_string``) is
previewed, approved, and the quarantine is replayed under it. Nothing is lost, nothing is
written twice, even when a replay is interrupted.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from pyiceberg.catalog import Catalog

import toolkit
from tests.integration.readers import read_pyiceberg
from toolkit.core.batch.quarantine import Quarantined
from toolkit.errors import StalePlanError
from toolkit.iceberg.ledger import BATCH_ID_PROPERTY, batch_id_of
from toolkit.iceberg.quarantine import (
    ARROW_SCHEMA,
    PENDING_REPLAY_PROPERTY,
    append_quarantined,
    quarantine,
    quarantine_table_id,
    quarantine_tuples,
)
from toolkit.pipeline.ingest import ingest
from toolkit.pipeline.replay import replay, replay_batch_id, replay_preview

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

DAY1 = [{"id": 1, "flag": True, "n": 1}, {"id": 2, "flag": False, "n": 2}]
DAY2 = [
    {"id": 3, "flag": "yes", "n": 3, "big": 2**60 + 1, "x": 0.1, "name": "çé"},
    {"id": 4, "flag": True, "n": 4},
    {"id": 5, "flag": "no", "n": 5},
]
MALFORMED = Quarantined('{"id": 6, "flag": tru', "malformed", None, None, None, "day2",
                        "line 3 is not JSON")


def quarantined_day2(
    catalog: Catalog, spark: SparkSession, table: str
) -> tuple[list[Quarantined], list[dict[str, Any]]]:
    """Ingest day 1; quarantine day 2's records the widening policy refuses (and a line
    that never parsed). Returns those items and the records that fitted."""
    ingest(DAY1, table, catalog, spark, batch_id="day1")
    checked = toolkit.simulate([DAY1, DAY2], policy="widen", on_incompatible="quarantine")
    items = list(checked.quarantined)
    assert [(q.reason, q.field, q.observed, q.table_type) for q in items] == [
        ("incompatible", "flag", "string", "boolean"),
    ] * 2
    assert append_quarantined(catalog, table, [*items, MALFORMED], "day2") == 3
    return items, [DAY2[1]]


def target_rows(catalog: Catalog, table: str) -> list[dict[str, Any]]:
    return read_pyiceberg(catalog.load_table(table))


def ids_of(catalog: Catalog, table: str) -> list[int]:
    return sorted(r["id"] for r in target_rows(catalog, table))


def test_a_replay_writes_the_records_once_a_plan_that_accepts_them_is_approved(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    table = "replay.approved"
    quarantined_day2(lakehouse, spark, table)
    q = quarantine(lakehouse, table)
    assert q.counts() == {"incompatible": 2, "malformed": 1}

    preview = replay_preview(lakehouse, table)
    added = sorted(c.column.name for c in preview.plan.changes)
    assert added == ["big", "flag_string", "name", "x"]
    report = replay(lakehouse, table, spark, approved=preview.plan, expected=preview.state)

    replayed = q.select(reason="incompatible").ids
    assert sorted(report.replayed) == sorted(replayed)
    assert report.batch_id == replay_batch_id(replayed)
    assert report.written == 2 and report.requarantined == 0
    assert report.not_replayable == q.select(reason="malformed").ids
    assert "cannot be replayed" in str(report)

    rows = {r["id"]: r for r in target_rows(lakehouse, table)}
    assert sorted(rows) == [1, 2, 3, 5]
    assert rows[3]["flag_string"] == "yes" and rows[3]["flag"] is None
    assert rows[3]["big"] == 2**60 + 1 and rows[3]["x"] == 0.1 and rows[3]["name"] == "çé"
    assert rows[5]["flag_string"] == "no"
    snap = lakehouse.load_table(table).current_snapshot()
    assert snap is not None and batch_id_of(snap) == report.batch_id

    # the same replay again: said so, nothing written twice
    done = replay(lakehouse, table, spark, ids=replayed)
    assert done.already and done.batch_id == report.batch_id and done.replayed == ()
    assert "already replayed" in str(done)

    # the malformed line stays, and says why; replaying again writes nothing
    left = quarantine(lakehouse, table)
    assert left.counts() == {"malformed": 1}
    again = replay(lakehouse, table, spark)
    assert again.replayed == () and again.not_replayable == left.ids
    assert ids_of(lakehouse, table) == [1, 2, 3, 5]


def test_a_replay_under_a_stale_plan_changes_nothing(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    table = "replay.stale"
    quarantined_day2(lakehouse, spark, table)
    preview = replay_preview(lakehouse, table)
    ingest([{"id": 9, "flag": True}], table, lakehouse, spark, batch_id="meanwhile")
    before = quarantine(lakehouse, table)

    with pytest.raises(StalePlanError, match="moved since the plan was made"):
        replay(lakehouse, table, spark, approved=preview.plan, expected=preview.state)

    assert quarantine(lakehouse, table).rows == before.rows
    qtable = lakehouse.load_table(quarantine_table_id(table))
    assert PENDING_REPLAY_PROPERTY not in qtable.properties
    assert ids_of(lakehouse, table) == [1, 2, 9]


def _mark_pending(catalog: Catalog, table: str, ids: tuple[str, ...]) -> str:
    """What replay records before it ingests (the state a crash right after leaves)."""
    batch_id = replay_batch_id(ids)
    qtable = catalog.load_table(quarantine_table_id(table))
    with qtable.transaction() as tx:
        tx.set_properties({PENDING_REPLAY_PROPERTY: json.dumps(
            {"batch_id": batch_id, "ids": list(ids)}
        )})
    return batch_id


def test_a_replay_interrupted_after_the_write_is_finished_not_written_twice(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    table = "replay.crash_after"
    items, _ = quarantined_day2(lakehouse, spark, table)
    chosen = quarantine(lakehouse, table).select(reason="incompatible")
    batch_id = _mark_pending(lakehouse, table, chosen.ids)
    # the replay's ingest got through; the process died before the quarantine was cleared
    ingest([r.record for r in chosen.rows], table, lakehouse, spark, batch_id=batch_id)
    assert ids_of(lakehouse, table) == [1, 2, 3, 5]

    report = replay(lakehouse, table, spark, ids=chosen.ids)  # the same call, rerun

    assert sorted(report.resumed) == sorted(chosen.ids) and report.replayed == ()
    assert report.already
    assert ids_of(lakehouse, table) == [1, 2, 3, 5]  # not twice
    assert quarantine(lakehouse, table).counts() == {"malformed": 1}
    qtable = lakehouse.load_table(quarantine_table_id(table))
    assert PENDING_REPLAY_PROPERTY not in qtable.properties


def test_a_replay_interrupted_before_the_write_is_replayed_once(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    table = "replay.crash_before"
    items, _ = quarantined_day2(lakehouse, spark, table)
    chosen = quarantine(lakehouse, table).select(reason="incompatible")
    batch_id = _mark_pending(lakehouse, table, chosen.ids)
    # the replay had quarantined copies under its batch id, then died before the target
    append_quarantined(lakehouse, table, items, batch_id)
    assert len(quarantine(lakehouse, table)) == 5

    report = replay(lakehouse, table, spark)

    assert report.resumed == ()  # nothing of it had reached the table
    assert sorted(report.replayed) == sorted(chosen.ids)  # the originals, once
    assert ids_of(lakehouse, table) == [1, 2, 3, 5]
    assert quarantine(lakehouse, table).counts() == {"malformed": 1}


def test_records_that_still_do_not_fit_stay_in_the_quarantine_with_why(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    """A replay offers only the records that can land now (docs/rules.md, "Replay"): those
    the table still cannot take are not sent through ingest (once they were, and quarantined
    again); they stay where they are, each listed with the reason it cannot land."""
    table = "replay.still_unfit"
    quarantined_day2(lakehouse, spark, table)
    chosen = quarantine(lakehouse, table).select(reason="incompatible")
    schema = lakehouse.load_table(table).schema()

    report = replay(lakehouse, table, spark, policy="widen", on_incompatible="quarantine")

    assert report.replayed == () and report.written == 0 and report.batch_id is None
    assert sorted(c.id for c in report.cannot_land) == sorted(chosen.ids)
    assert all(c.reason == "incompatible" for c in report.cannot_land)
    assert "2 records cannot land now and stay in the quarantine: " in str(report)
    left = quarantine(lakehouse, table)
    assert sorted(left.select(reason="incompatible").ids) == sorted(chosen.ids)
    assert lakehouse.load_table(table).schema() == schema  # no schema change
    assert ids_of(lakehouse, table) == [1, 2]


def test_spark_appends_quarantine_rows_with_the_arrow_schema(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    """The Spark path of ingest: rows built by quarantine_tuples, the Spark schema derived
    from ARROW_SCHEMA, appended with the batch id in the snapshot summary."""
    from pyspark.sql.pandas.types import from_arrow_schema

    table = "replay.from_spark"
    items = toolkit.simulate(
        [DAY1, DAY2], policy="widen", on_incompatible="quarantine"
    ).quarantined
    from toolkit.iceberg.quarantine import ensure_quarantine_table

    ensure_quarantine_table(lakehouse, table)
    rows = quarantine_tuples(items, "day2")
    df = spark.createDataFrame(rows, schema=from_arrow_schema(ARROW_SCHEMA))
    name = f"{lakehouse.name}.{quarantine_table_id(table)}"
    df.writeTo(name).option(f"snapshot-property.{BATCH_ID_PROPERTY}", "day2").append()

    q = quarantine(lakehouse, table)
    assert [r.id for r in q.rows] == [r[0] for r in rows]
    assert [r.record for r in q.rows] == [DAY2[0], DAY2[2]]
    assert {r.quarantined_at for r in q.rows} == {rows[0][-1]}
    # the same batch id is not appended again by the PyIceberg path
    assert append_quarantined(lakehouse, table, list(items), "day2") == 0


def test_the_inspector_replays_the_chosen_group_under_the_plan_it_shows(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    table = "replay.from_panel"
    quarantined_day2(lakehouse, spark, table)
    panel = toolkit.inspect_quarantine(lakehouse, table, spark=spark)
    assert [g.label for g in panel.model.groups] == [
        "incompatible type: flag (string into boolean) — 2", "not valid JSON — 1",
    ]
    panel.choose("g0")
    assert panel.replay_plan is not None
    assert "add flag_string string" in panel.replay_plan.changes

    panel.replay_button.click()

    assert panel.outcome is not None and panel.outcome.kind == "replayed", panel.message.value
    assert panel.outcome.written == 2
    assert ids_of(lakehouse, table) == [1, 2, 3, 5]
    assert [g.reason for g in panel.model.groups] == ["malformed"]  # read again
