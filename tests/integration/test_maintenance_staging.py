"""Maintenance drops the staging tables stopped ingests left: a batch of typed columns into
a new table is written under ``<table>__toolkit_new_<id>`` and renamed; a process that died
in between left that table. The plan lists the old ones with what they hold and changes
nothing; the run drops exactly those and deletes their files. A young one (an ingest may be
writing it) and a user's table that merely shares the name's start are kept; one that
changed or went since the plan is kept too, and the report says why."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

import pandas as pd
import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog

from tests.cli.lakes import left_staging_table
from toolkit.core.maintenance.steps import DropStagingTables, MaintenancePlan
from toolkit.iceberg.catalog import ensure_namespace
from toolkit.iceberg.new_tables import STAGING_MARK, table_files
from toolkit.pipeline import ingest as ingest_module
from toolkit.pipeline.ingest import ingest
from toolkit.pipeline.maintain import maintain, plan_maintenance

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

TABLE = "leftovers.events"
STEPS = ["drop_staging_tables"]


class Died(Exception):
    """The process stopped (killed, out of memory) between writing and renaming."""


def frame(n: int) -> pd.DataFrame:
    return pd.DataFrame({"id": pd.array(range(n), dtype="int64"),
                         "city": [f"c{i}" for i in range(n)]})


def staging_names(cat: Catalog, table: str) -> set[str]:
    namespace = table.rsplit(".", 1)[0]
    return {".".join(t) for t in cat.list_tables(namespace)
            if ".".join(t).startswith(table + STAGING_MARK)}


def ingest_and_die(cat: Catalog, spark: SparkSession, monkeypatch: pytest.MonkeyPatch,
                   rows: int, batch_id: str) -> str:
    """Ingest ``rows`` typed rows into the new TABLE, the process dying just before the
    rename (no clean-up runs either); the staging table it leaves."""
    before = staging_names(cat, TABLE)

    def die(*_: object) -> None:
        raise Died

    with monkeypatch.context() as m:
        m.setattr(ingest_module, "promote", die)
        m.setattr(ingest_module, "discard_table", lambda *_: None)
        with pytest.raises(Died):
            ingest(frame(rows), TABLE, cat, spark, batch_id=batch_id)
    (left,) = staging_names(cat, TABLE) - before
    return left


def local(uri: str) -> Path:
    return Path(urlparse(uri).path)


def data_files(cat: Catalog, name: str) -> list[Path]:
    return [local(p) for p in cat.load_table(name).inspect.files()["file_path"].to_pylist()]


def test_a_stopped_ingests_staging_table_is_planned_then_dropped_with_its_files(
    lakehouse: Catalog, spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    ensure_namespace(lakehouse, "leftovers")
    old = ingest_and_die(lakehouse, spark, monkeypatch, 3, "first try")
    # a user's own table whose name merely starts the same way: never taken for one
    mine = f"{TABLE}{STAGING_MARK}0123456789ab"
    lakehouse.create_table(mine, schema=pa.schema([pa.field("n", pa.int64())])).append(
        pa.table({"n": pa.array([1, 2], pa.int64())}))
    young = ingest_and_die(lakehouse, spark, monkeypatch, 2, "second try")
    assert ingest(frame(3), TABLE, lakehouse, spark, batch_id="rerun").rows_written == 3
    # an ingest under way may be writing whatever was updated since this moment
    since_ms = lakehouse.load_table(young).metadata.last_updated_ms
    assert lakehouse.load_table(old).metadata.last_updated_ms < since_ms
    cutoff = dt.datetime.fromtimestamp(since_ms / 1000, dt.UTC)
    files_before = {n: data_files(lakehouse, n) for n in (old, young, mine, TABLE)}
    all_of_old = [local(p) for p in table_files(lakehouse.load_table(old))]

    plan = plan_maintenance(TABLE, lakehouse, spark, steps=STEPS, staging_older_than=cutoff)
    step = plan.step("drop_staging_tables")
    assert isinstance(step, DropStagingTables) and plan.todo
    assert [t.identifier for t in step.drop] == [old]
    assert [t.identifier for t in step.young] == [young]
    n = len(files_before[old])
    assert step.sentence.startswith(
        f"Drop 1 staging table a stopped ingest left ({old}, {n} data "
        f"file{'s' if n > 1 else ''}, 3 rows never published) and delete its files")
    assert f"({young}) is kept: an ingest may be writing it." in step.sentence
    assert "drop_staging_tables: Drop 1 staging table" in str(plan)
    # planning changed nothing
    assert staging_names(lakehouse, TABLE) == {old, young, mine}
    assert all(p.exists() for p in all_of_old)

    report = maintain(TABLE, lakehouse, spark, plan)
    result = report.result("drop_staging_tables")
    assert result is not None and result.count("staging_tables_dropped") == 1
    assert result.sentence.startswith("dropped 1 staging table, deleting ")
    assert staging_names(lakehouse, TABLE) == {young, mine}
    assert not any(p.exists() for p in all_of_old)  # data, manifests, metadata
    for kept in (young, mine, TABLE):
        assert all(p.exists() for p in files_before[kept])
        assert data_files(lakehouse, kept) == files_before[kept]
    assert len(lakehouse.load_table(TABLE).scan().to_arrow()) == 3
    assert len(lakehouse.load_table(mine).scan().to_arrow()) == 2

    # by default (a day) the young one is kept, and the user's table is never listed
    again = plan_maintenance(TABLE, lakehouse, spark, steps=STEPS)
    step = again.step("drop_staging_tables")
    assert isinstance(step, DropStagingTables) and not again.todo
    assert [t.identifier for t in step.young] == [young]


def test_a_staging_table_that_changed_or_went_since_the_plan_is_kept(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    table = "leftovers.moved"
    lakehouse.create_table(table, schema=pa.schema([pa.field("n", pa.int64())]))
    written = left_staging_table(lakehouse, table, 2)
    gone = left_staging_table(lakehouse, table, 1)
    unmarked = left_staging_table(lakehouse, table, 1)
    untouched = left_staging_table(lakehouse, table, 4)
    time.sleep(0.01)  # the cutoff "now" comes after their last updates
    plan: MaintenancePlan = plan_maintenance(table, lakehouse, spark, steps=STEPS,
                                             staging_older_than=dt.timedelta(0))
    step = plan.step("drop_staging_tables")
    assert isinstance(step, DropStagingTables)
    assert {t.identifier for t in step.drop} == {written, gone, unmarked, untouched}

    # meanwhile: an ingest writes one, one is dropped by hand, one loses its mark (as if it
    # had been renamed to the real name and another table made under its old one)
    lakehouse.load_table(written).append(pa.table({"n": pa.array([9], pa.int64())}))
    lakehouse.drop_table(gone)
    with lakehouse.load_table(unmarked).transaction() as tx:
        tx.remove_properties("toolkit.staging-for")
    report = maintain(table, lakehouse, spark, plan)
    result = report.result("drop_staging_tables")
    assert result is not None and result.count("staging_tables_dropped") == 1
    assert f"kept {written}: it changed since the plan" in result.sentence
    assert f"kept {gone}: it no longer exists" in result.sentence
    assert f"kept {unmarked}: it is no longer marked as a staging table" in result.sentence
    assert staging_names(lakehouse, table) == {written, unmarked}
    assert len(lakehouse.load_table(written).scan().to_arrow()) == 3
