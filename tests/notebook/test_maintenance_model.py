"""The maintenance panel's view-model and HTML (toolkit.notebook.panels.maintenance.model,
maintenance_html), from a plan of a real table (written by PyIceberg alone, planned without
Spark). Applying through Iceberg's procedures needs Spark: tests/integration/test_maintenance.py."""

from __future__ import annotations

import doctest
from datetime import timedelta
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog

import toolkit.notebook.panels.maintenance.model as model_module
from toolkit.core.maintenance.steps import ExpireSnapshots, MaintenancePlan, UnreadableColumn
from toolkit.iceberg import catalog
from toolkit.iceberg.ledger import BATCH_ID_PROPERTY
from toolkit.notebook.panels.maintenance.html import maintenance_outcome_html, plan_html
from toolkit.notebook.panels.maintenance.model import MaintenanceModel, MaintenanceOutcome
from toolkit.pipeline.maintain import plan_maintenance

TABLE = "db.events"
STEPS = ["compact", "rewrite_manifests", "expire_snapshots"]  # no orphan dry run: no Spark
OPTIONS = {"older_than": timedelta(0), "retain_last": 2, "min_input_files": 3, "steps": STEPS}


@pytest.fixture
def lake(tmp_path: Path) -> Catalog:
    """A table of five small appends, batch ids b1..b5 (one file, one manifest each)."""
    cat = catalog(tmp_path / "lake")
    cat.create_namespace("db")
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])
    table = cat.create_table(TABLE, schema=schema)
    for i in range(1, 6):
        rows = pa.table({"id": [i], "name": [f"<b>n{i}</b>"]}, schema=schema)
        table.append(rows, snapshot_properties={BATCH_ID_PROPERTY: f"b{i}"})
    return cat


def plan_of(lake: Catalog) -> MaintenancePlan:
    return plan_maintenance(TABLE, lake, None, **OPTIONS)  # type: ignore[arg-type]


# --- the view-model and its HTML --------------------------------------------------------------


def test_the_model_is_the_plan_as_rows_of_steps(lake: Catalog) -> None:
    m = MaintenanceModel.from_plan(plan_of(lake))
    assert [(r.title, r.todo, r.numbers) for r in m.rows] == [
        ("Compact small files", True, "5 of 5 files -> about 1"),
        ("Rewrite manifests", True, "5 of 5 manifests -> 1"),
        ("Expire snapshots", True, "3 of 5 snapshots; 2 old ones kept"),
    ]
    assert m.todo and m.summary.startswith(f"{TABLE}, planned ")
    assert m.summary.endswith(": compact small files, rewrite manifests, expire snapshots")
    expire = m.rows[2]
    assert expire.sentence.startswith("Expire 3 of 5 snapshots")
    assert "(b1, b2, b3) are first kept in the ingest ledger" in expire.sentence
    assert expire.details[0].endswith("(batch b4): one of the last 2 of branch main")
    assert expire.details[1].endswith("(batch b5): the current one, one of the last 2 of "
                                      "branch main")
    assert len(expire.details) == 5 and expire.details[2].startswith("expire ")


def test_a_plan_with_nothing_to_do_says_so(lake: Catalog) -> None:
    plan = plan_maintenance(TABLE, lake, None, steps=["expire_snapshots"])  # 5 days: none
    m = MaintenanceModel.from_plan(plan)
    assert not m.todo and m.summary == f"nothing to do for {TABLE}: every step found its work done"
    html = plan_html(m)
    assert 'class="tknb-muted"' in html and "nothing to do" in html
    assert "No snapshot to expire" in html


def test_retention_on_a_ref_blocks_expiry_and_the_panel_says_why(lake: Catalog) -> None:
    table = lake.load_table(TABLE)
    first = table.snapshots()[0].snapshot_id
    table.manage_snapshots().create_tag(first, "audit", max_ref_age_ms=86_400_000).commit()
    m = MaintenanceModel.from_plan(plan_of(lake))
    expire = m.rows[2]
    assert not expire.todo
    assert expire.sentence.startswith(
        "Not expiring any snapshot: tag audit is dropped after 86400000 ms."
    )
    assert "tag audit" in expire.details[0]  # what the plan would keep, still listed


def test_the_html_shows_every_step_and_escapes(lake: Catalog) -> None:
    html = plan_html(MaintenanceModel.from_plan(plan_of(lake)))
    for text in ("Compact small files", "Rewrite manifests", "Expire snapshots",
                 "<details><summary>details</summary>", "the current one"):
        assert text in html
    outcome = MaintenanceOutcome("error", "Maintenance failed", "<script>x</script>",
                                 traceback="Traceback <b>", error_type="RuntimeError")
    shown = maintenance_outcome_html(outcome)
    assert "<script>" not in shown and "&lt;script&gt;" in shown and "Traceback &lt;b&gt;" in shown


def test_docstring_examples() -> None:
    result = doctest.testmod(model_module)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize(("columns", "said"), [
    ((UnreadableColumn("a", 2, 3), UnreadableColumn("b", 3, 2)),
     "5 values of 2 columns become unreadable"),
    ((UnreadableColumn("a", 2, 3), UnreadableColumn("b", 3, 2, at_most=True)),
     "up to 5 values of 2 columns become unreadable"),
    ((UnreadableColumn("a", 2, 3), UnreadableColumn("b", 3, None, uncounted="Avro")),
     "at least 3 values of 2 columns become unreadable"),
], ids=["counted", "delete files: a bound", "one not counted"])
def test_the_expiry_row_counts_what_becomes_unreadable_as_the_plan_bounds_it(
    columns: tuple[UnreadableColumn, ...], said: str
) -> None:
    step = ExpireSnapshots(0, 1, 3, (7, 8), (), (),
                           unreadable=(*columns, UnreadableColumn("empty", 4, 0)))
    assert model_module._numbers(step) == f"2 of 3 snapshots; 0 old ones kept; {said}"
