"""The maintenance panel's widget, headless (toolkit.notebook.panels.maintenance.widget): "Apply
this plan" hands exactly the plan shown to the injected apply function and shows what was
done; a refused (stale) plan is said in plain words and "Plan again" re-plans."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog

import toolkit.notebook
from toolkit.core.evolution.state import TableState
from toolkit.core.maintenance.steps import MaintenancePlan, MaintenanceReport, StepResult
from toolkit.errors import StalePlanError
from toolkit.iceberg import catalog
from toolkit.iceberg.ledger import BATCH_ID_PROPERTY
from toolkit.notebook.panels.maintenance.widget import MaintenancePanel
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


class RecordingApply:
    """Records each plan it is given; answers as a run that did the plan would."""

    def __init__(self) -> None:
        self.plans: list[MaintenancePlan] = []

    def __call__(self, plan: MaintenancePlan) -> MaintenanceReport:
        self.plans.append(plan)
        results = (
            MaintenanceReport.compacted({"rewritten_data_files_count": 5,
                                         "added_data_files_count": 1,
                                         "rewritten_bytes_count": 4000}),
            StepResult("expire_snapshots", True, (("expired_snapshots", 3),),
                       "expired 3 snapshot(s), deleting 3 manifest list(s) no snapshot left "
                       "needs"),
        )
        return MaintenanceReport(plan.table, plan, results, TableState(0, 99))


# --- the widget -------------------------------------------------------------------------------


def test_apply_runs_exactly_the_plan_shown_and_says_what_was_done(lake: Catalog) -> None:
    recorder = RecordingApply()
    plan = plan_of(lake)
    panel = MaintenancePanel(plan, recorder, replan=lambda: plan_of(lake))
    assert "Expire snapshots" in panel.plan_view.value and not panel.apply_button.disabled
    panel.apply_button.click()
    assert recorder.plans == [plan]  # the very plan shown
    assert panel.outcome is not None and panel.outcome.kind == "done"
    assert panel.outcome.results == (
        ("Compact small files", "compacted 5 data files (3.9 kB) into 1"),
        ("Expire snapshots",
         "expired 3 snapshot(s), deleting 3 manifest list(s) no snapshot left needs"),
    )
    assert "Maintained." in panel.message.value and "snapshot 99" in panel.message.value
    assert panel.apply_button.disabled  # applied: plan again for more
    assert panel.apply().title == "Already applied" and len(recorder.plans) == 1
    panel.plan_again_button.click()
    assert panel.outcome is None and not panel.apply_button.disabled


def test_a_stale_plan_is_said_in_plain_words_and_can_be_planned_again(lake: Catalog) -> None:
    plan = plan_of(lake)

    def stale(p: MaintenancePlan) -> MaintenanceReport:
        raise StalePlanError(TABLE, p.state, TableState(0, 42))

    replans: list[int] = []

    def replan() -> MaintenancePlan:
        replans.append(1)
        return plan_of(lake)

    panel = MaintenancePanel(plan, stale, replan=replan)
    outcome = panel.apply()
    assert outcome.kind == "stale" and outcome.plan_again and not outcome.ok
    assert f"{TABLE} moved since the plan was made" in outcome.message
    assert "Nothing was done: plan again" in outcome.message
    assert "The table changed" in panel.message.value and panel.apply_button.disabled
    panel.plan_again()
    assert replans == [1] and not panel.apply_button.disabled


def test_a_failed_run_keeps_its_traceback(lake: Catalog) -> None:
    def broken(p: MaintenancePlan) -> MaintenanceReport:
        raise RuntimeError("the procedure failed")

    panel = MaintenancePanel(plan_of(lake), broken)
    outcome = panel.apply()
    assert outcome.kind == "error" and outcome.message == "RuntimeError: the procedure failed"
    assert outcome.traceback is not None and "<details>" in panel.message.value
    assert not panel.apply_button.disabled  # not applied: may be tried again


def test_a_read_only_panel(lake: Catalog) -> None:
    panel = MaintenancePanel(plan_of(lake))
    assert panel.apply_button.disabled and panel.plan_again_button.disabled
    assert panel.apply().kind == "error" and "no apply function" in panel.message.value


def test_the_public_name_builds_the_panel_without_spark(lake: Catalog) -> None:
    panel = toolkit.notebook.preview_maintenance(TABLE, lake, **OPTIONS)  # type: ignore[arg-type]
    assert isinstance(panel, MaintenancePanel)
    assert [r.name for r in panel.model.rows] == STEPS
    with pytest.raises(ValueError, match="finding orphan files needs a Spark session"):
        plan_maintenance(TABLE, lake, None, steps=["remove_orphan_files"])
