"""Replay routes by field ID and commits nothing it does not write (docs/rules.md,
"Replay"), on Spark and the embedded catalog.

The story: day 1 makes ``db.people`` (``id``, ``name``, ``active``); day 2, ingested under
the widening policy, sets aside the record whose ``active`` arrived as text. Then ``name``
is renamed to ``full_name``. A replay must put the record's ``name`` into ``full_name``
(the same field ID), never bring ``name`` back as a new column; and a replay that cannot
land a record must leave it, and the schema, as they are.
"""

from __future__ import annotations

import itertools
import json
from typing import TYPE_CHECKING, Any

import pytest
from click.testing import CliRunner
from pyiceberg.catalog import Catalog

import toolkit
from tests.integration.readers import read_pyiceberg
from toolkit.cli import cli
from toolkit.iceberg.catalog import embedded_folder
from toolkit.iceberg.quarantine import (
    append_quarantined,
    quarantine,
    quarantine_table_id,
    set_aside_against,
)
from toolkit.pipeline.ingest import ingest
from toolkit.pipeline.replay import replay_preview

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

_names = itertools.count()
DAY1 = [{"id": 1, "name": "Ann", "active": True}]
DAY2 = [{"id": 2, "name": "Cy", "active": "maybe", "score": 5}, {"id": 3, "name": "Bo",
                                                                 "active": False}]


def new_name() -> str:
    return f"byid.people{next(_names)}"


def quarantined_then_renamed(lake: Catalog, spark: SparkSession) -> str:
    table = new_name()
    ingest(DAY1, table, lake, spark, batch_id="day1", policy="widen")
    report = ingest(DAY2, table, lake, spark, batch_id="day2", policy="widen")
    assert report.quarantined == 1
    toolkit.evolve(lake, table, [toolkit.ops.rename("name", "full_name")])
    return table


def fields(lake: Catalog, table: str) -> list[str]:
    return [f.name for f in lake.load_table(table).schema().fields]


def row(lake: Catalog, table: str, id: int) -> dict[str, Any]:
    return next(r for r in read_pyiceberg(lake.load_table(table)) if r["id"] == id)


def test_a_record_quarantined_before_a_rename_lands_in_the_renamed_column(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    table = quarantined_then_renamed(lakehouse, spark)
    qtable = lakehouse.load_table(quarantine_table_id(table))
    # the quarantine knows the schema the record met: the one with `name`
    then = set_aside_against(qtable)["day2"]
    target = lakehouse.load_table(table)
    assert target.schemas()[then].find_field("name").field_id == (
        target.schema().find_field("full_name").field_id)

    report = toolkit.replay(lakehouse, table, spark)

    assert report.written == 1 and report.requarantined == 0, str(report)
    assert "name" not in fields(lakehouse, table)
    assert row(lakehouse, table, 2)["full_name"] == "Cy"
    assert row(lakehouse, table, 2)["active_string"] == "maybe"
    assert quarantine(lakehouse, table).empty
    # the values a drop would destroy, counted from the metrics of Spark's data files
    drop = toolkit.preview_evolution(lakehouse, table, [toolkit.ops.drop("full_name"),
                                                        toolkit.ops.drop("active_string")])
    assert [(c.name, c.values) for c in drop.destruction.columns] == [
        ("full_name", 3), ("active_string", 1)]
    assert drop.destruction.rows == 3


def test_records_quarantined_before_the_schema_was_recorded_follow_the_lineage(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    """Rows an older version quarantined carry no schema ID: the lineage and snapshots
    say which schema the table had when they were set aside."""
    table = new_name()
    ingest(DAY1, table, lakehouse, spark, batch_id="day1", policy="widen")
    aside = toolkit.simulate([DAY1, DAY2], policy="widen").quarantined
    assert append_quarantined(lakehouse, table, aside, "day2") == 1  # no schema ID
    toolkit.evolve(lakehouse, table, [toolkit.ops.rename("name", "full_name")])

    toolkit.replay(lakehouse, table, spark)

    assert "name" not in fields(lakehouse, table)
    assert row(lakehouse, table, 2)["full_name"] == "Cy"


def test_a_record_that_cannot_land_is_not_offered_and_changes_no_schema(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    table = quarantined_then_renamed(lakehouse, spark)
    schema = lakehouse.load_table(table).schema()

    preview = replay_preview(lakehouse, table, policy="widen")
    assert preview.ids == () and not preview.plan.changed
    [why] = preview.cannot
    assert (why.reason, why.field) == ("incompatible", "active")
    assert "'maybe'" in str(why)

    report = toolkit.replay(lakehouse, table, spark, policy="widen")

    assert report.replayed == () and report.written == 0
    assert "1 record cannot land now and stays in the quarantine" in str(report)
    assert lakehouse.load_table(table).schema() == schema  # neither name nor score came
    assert len(quarantine(lakehouse, table)) == 1


def test_the_commands_list_what_cannot_land_and_why(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    table = quarantined_then_renamed(lakehouse, spark)
    folder = str(embedded_folder(lakehouse))
    args = ["--catalog", folder, "--policy", "widen"]

    listed = CliRunner().invoke(cli, ["quarantine", table, *args])
    assert listed.exit_code == 0, listed.output
    assert "1 record cannot land now (a replay leaves them in the quarantine):" in listed.output
    assert "value 'maybe' observed as string does not fit column type boolean" in listed.output

    dry = CliRunner().invoke(cli, ["replay", table, *args, "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "none of the 1 record can land now" in dry.output
    assert "1 record cannot land now" in dry.output

    # the upsolver policy takes it, into full_name: the plan adds active_string only
    fits = CliRunner().invoke(cli, ["replay", table, "--catalog", folder, "--dry-run",
                                    "--json"])
    assert fits.exit_code == 0, fits.output
    doc = json.loads(fits.stdout)
    assert doc["records"] == 1 and doc["cannot_land"] == []
    assert [op["path"] for op in doc["operations"]] == [["active_string"]]
