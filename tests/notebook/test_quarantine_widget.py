"""The quarantine inspector's widget (toolkit.notebook.panels.quarantine.widget), over a real
quarantine table in a real SQLite catalog. ``Button.click()`` fires the handlers; the replay
function is injected and records what would be replayed (replay through ingest itself needs
Spark: tests/integration/test_replay.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyiceberg.catalog import Catalog

import toolkit
from toolkit.core.batch.quarantine import Quarantine, Quarantined
from toolkit.core.evolution.state import TableState
from toolkit.errors import StalePlanError
from toolkit.iceberg import catalog
from toolkit.iceberg.quarantine import append_quarantined, quarantine
from toolkit.notebook.build import inspect_quarantine
from toolkit.notebook.panels.quarantine.model import ReplayRequest
from toolkit.notebook.panels.quarantine.widget import QuarantinePanel
from toolkit.pipeline.replay import ReplayReport, replay_batch_id, replay_preview

TABLE = "db.events"


def flag(i: int, value: str) -> Quarantined:
    return Quarantined(
        {"id": i, "flag": value}, "incompatible", "flag", "string", "boolean", "day2",
        f"flag: a string ({value!r}) cannot go into a boolean column",
    )


ITEMS = [
    flag(1, "yes"),
    flag(2, "no"),
    flag(3, "<script>alert(1)</script>"),
    flag(4, "maybe"),
    Quarantined('{"id": 5, "flag": tru', "malformed", None, None, None, "day2", "not JSON"),
    Quarantined(
        {"id": 6, "size": "b64:AAE="}, "incompatible", "size", "bytes", "long", "day3",
        "size: bytes cannot go into a long column",
    ),
]


@pytest.fixture
def lake(tmp_path: Path) -> Catalog:
    cat = catalog(tmp_path / "lake")
    cat.create_namespace("db")
    # the target: flag is a boolean column, so string flags were set aside
    cat.create_table(TABLE, schema=toolkit.simulate([[{"id": 0, "flag": True}]]).schema)
    append_quarantined(cat, TABLE, ITEMS[:5], "day2")
    append_quarantined(cat, TABLE, ITEMS[5:], "day3")
    return cat


class RecordingReplay:
    """Records each request; answers as a replay that wrote every record would."""

    def __init__(self) -> None:
        self.requests: list[ReplayRequest] = []

    def __call__(self, request: ReplayRequest) -> ReplayReport:
        self.requests.append(request)
        return ReplayReport(TABLE, replay_batch_id(request.ids), request.ids, 0, ())


# --- the widget -------------------------------------------------------------------------------


def test_choosing_a_group_shows_its_records_and_the_plan_a_replay_needs(lake: Catalog) -> None:
    recorder = RecordingReplay()
    panel = QuarantinePanel(
        quarantine(lake, TABLE), recorder,
        plan=lambda ids: replay_preview(lake, TABLE, ids=ids),
    )
    assert "6 records in 3 groups" in panel.table.value
    assert [label for label, _ in panel.selector.options][0] == (
        "incompatible type: flag (string into boolean) — 4"
    )
    assert panel.replay_button.disabled  # nothing chosen yet
    panel.choose("g0")
    assert '{&quot;id&quot;:1,&quot;flag&quot;:&quot;yes&quot;}' in panel.details.value
    assert "… and 1 more" in panel.details.value
    assert panel.replay_plan is not None
    assert panel.replay_plan.changes == "add flag_string string"
    assert "Replaying 4 records will apply: <b>add flag_string string</b>" in (
        panel.plan_view.value
    )
    assert not panel.replay_button.disabled and panel.discard_button.disabled

    panel.replay_button.click()
    (request,) = recorder.requests
    assert set(request.ids) == set(quarantine(lake, TABLE).select(field="flag").ids)
    preview = replay_preview(lake, TABLE, ids=request.ids)
    assert request.approved == preview.plan and request.expected == preview.state
    assert panel.outcome is not None and panel.outcome.kind == "replayed"
    assert "replayed 4 records" in panel.message.value


def test_a_malformed_group_can_be_discarded_not_replayed(lake: Catalog) -> None:
    panel = inspect_quarantine(lake, TABLE)
    panel.choose("g2")
    assert panel.replay_button.disabled and not panel.discard_button.disabled
    assert "No replayable record is selected" in panel.plan_view.value
    outcome = panel.replay_selected()  # as if the button were clicked anyway
    assert outcome.kind == "nothing" and "can be replayed" in outcome.message
    panel.discard_button.click()
    assert panel.outcome is not None and panel.outcome.title == "Discarded"
    # read again: the malformed line is gone, the rest stays
    assert quarantine(lake, TABLE).counts() == {"incompatible": 5}
    assert [g.reason for g in panel.model.groups] == ["incompatible", "incompatible"]
    assert panel.selected == ()


def test_a_failed_replay_is_shown_in_plain_words(lake: Catalog) -> None:
    moved = TableState(1, 42)

    def stale(request: ReplayRequest) -> ReplayReport:
        raise StalePlanError(TABLE, TableState(0, None), moved)

    reloads: list[int] = []

    def reload() -> Quarantine:
        reloads.append(1)
        return quarantine(lake, TABLE)

    panel = QuarantinePanel(quarantine(lake, TABLE), stale, reload=reload)
    panel.choose("g0", "g1")
    assert panel.replay_plan is not None and len(panel.replay_plan.ids) == 5
    outcome = panel.replay_selected()
    assert outcome.kind == "stale" and not outcome.ok
    assert "The table changed" in panel.message.value
    assert reloads == []  # nothing changed: the quarantine is not read again
    assert panel.selected == ("g0", "g1")


def test_a_read_only_panel(lake: Catalog) -> None:
    panel = QuarantinePanel(quarantine(lake, TABLE))
    panel.choose("g0")
    assert panel.replay_button.disabled and panel.discard_button.disabled
    assert panel.replay_selected().kind == "error"
    assert "no replay function" in panel.message.value


def test_the_lazy_public_name_builds_the_panel_without_spark(lake: Catalog) -> None:
    panel = toolkit.inspect_quarantine(lake, TABLE)
    assert isinstance(panel, QuarantinePanel) and panel.model.total == 6
    panel.choose("g1")
    assert panel.replay_plan is not None and panel.replay_plan.changes == "add size string"


# --- what can land now (docs/rules.md, "Replay") ---------------------------------------------


def test_the_panel_offers_only_records_that_can_land_now_and_says_why_not(
    lake: Catalog,
) -> None:
    """Under the widening policy a text flag can never go into the boolean column: the
    panel shows why and offers no replay of it; the plan is made only with the records
    that land (here none, so nothing would be committed)."""
    recorder = RecordingReplay()
    panel = QuarantinePanel(
        quarantine(lake, TABLE), recorder,
        plan=lambda ids: replay_preview(lake, TABLE, ids=ids, policy="widen"),
    )
    panel.choose("g0")

    assert panel.replay_plan is not None
    assert panel.replay_plan.ids == () and len(panel.replay_plan.cannot) == 4
    assert "4 records cannot land now and stay in the quarantine: " in panel.plan_view.value
    assert "does not fit column type boolean" in panel.plan_view.value
    assert "will apply" not in panel.plan_view.value
    assert panel.replay_button.disabled

    outcome = panel.replay_selected()  # from code, as the button would
    assert outcome.kind == "nothing" and "None of the chosen records can land now" in (
        outcome.message)
    assert recorder.requests == []


def test_a_record_set_aside_before_a_rename_is_planned_into_the_renamed_column(
    tmp_path: Path,
) -> None:
    cat = catalog(tmp_path / "lake")
    cat.create_namespace("db")
    cat.create_table(TABLE, schema=toolkit.simulate([[{"id": 0, "name": "a", "flag": True}]])
                     .schema)
    before = cat.load_table(TABLE).metadata.current_schema_id
    append_quarantined(cat, TABLE, [Quarantined(
        {"id": 1, "name": "Cy", "flag": "yes"}, "incompatible", "flag", "string", "boolean",
        "day2", "flag: text into a boolean")], "day2", schema_id=before)
    toolkit.evolve(cat, TABLE, [toolkit.ops.rename("name", "full_name")])

    panel = QuarantinePanel(quarantine(cat, TABLE), RecordingReplay(),
                            plan=lambda ids: replay_preview(cat, TABLE, ids=ids))
    panel.choose("g0")

    assert panel.replay_plan is not None and panel.replay_plan.cannot == ()
    assert panel.replay_plan.changes == "add flag_string string"  # no name comes back
    assert "Replaying 1 record will apply: <b>add flag_string string</b>" in (
        panel.plan_view.value)
