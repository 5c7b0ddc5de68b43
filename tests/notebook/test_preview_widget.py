"""The preview panel, in-process (toolkit.notebook.panels.preview.widget): ``Button.click()`` fires
the handlers, and an injected commit function records what would be committed (no Spark
here)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.catalog import Catalog

from tests.notebook.panel_tables import DATA, sample_day, write_batches
from toolkit.core.batch.profile import Profile
from toolkit.core.evolution.state import TableState
from toolkit.errors import StalePlanError
from toolkit.iceberg import catalog
from toolkit.notebook import PreviewPanel, preview
from toolkit.notebook.panels.explore.html import field_table_html
from toolkit.notebook.panels.explore.model import FieldRow, Page, TypeCount
from toolkit.notebook.panels.preview.model import CommitRequest
from toolkit.pipeline.ingest import IngestReport
from toolkit.pipeline.preview import plan_preview

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


@pytest.fixture
def lake(tmp_path: Path) -> Catalog:
    return catalog(tmp_path / "lake")


class RecordingCommit:
    """Records each request; answers like ``ingest`` would (snapshot 777)."""

    def __init__(self) -> None:
        self.requests: list[CommitRequest] = []
        self.progress_shown: list[bool] = []
        self.panel: PreviewPanel | None = None

    def __call__(self, request: CommitRequest) -> IngestReport:
        self.requests.append(request)
        if self.panel is not None:
            self.progress_shown.append(self.panel.progress.layout.display != "none")
        return IngestReport(
            request.table, request.batch_id, request.approved, len(request.records), 777,
            Profile(),
        )


# --- PreviewPanel ----------------------------------------------------------------------------


def test_approve_commits_exactly_the_previewed_plan(lake: Catalog) -> None:
    table = write_batches(lake, "db.events", [sample_day(1)])
    commit = RecordingCommit()
    panel = preview(sample_day(2), "db.events", lake, commit=commit)
    commit.panel = panel
    assert panel.progress.layout.display == "none" and not panel.approve_button.disabled

    panel.approve_button.click()

    (request,) = commit.requests
    assert request.approved is panel.preview.plan
    assert request.expected == panel.preview.state == TableState.of(table)
    assert [".".join(c.path) for c in request.approved.changes] == [
        "device.os_version", "my_field_string", "size_double", "started_long",
    ]
    assert request.table == "db.events" and request.records == tuple(sample_day(2))
    assert request.batch_id == panel.model.batch_id
    # the progress indicator showed while the commit ran, and is gone
    assert commit.progress_shown == [True] and panel.progress.layout.display == "none"
    # what the panel shows afterwards
    assert panel.outcome is not None and panel.outcome.kind == "committed"
    assert "Committed snapshot 777 to db.events: 20 rows written" in panel.message.value
    assert panel.approve_button.disabled  # committed once; a second click is not offered
    assert panel.preview_again_button.layout.display == "none"
    # the updated written data statistics of the table (read from the catalog)
    assert panel.statistics is not None and panel.statistics_panel is not None
    assert panel.statistics_panel.base.committed
    assert panel.statistics_panel.widget in panel.result.children


def test_batch_id_is_stable_across_previews_of_the_same_data(lake: Catalog) -> None:
    write_batches(lake, "db.events", [sample_day(1)])
    commit = RecordingCommit()
    for _ in range(2):
        preview(sample_day(2), "db.events", lake, commit=commit).approve_button.click()
    preview(str(DATA / "sample_day2.jsonl"), "db.events", lake, commit=commit).approve()
    preview(sample_day(3), "db.events", lake, commit=commit).approve()
    first, again, from_file, other = (r.batch_id for r in commit.requests)
    assert first == again == from_file != other
    explicit = preview(sample_day(2), "db.events", lake, commit=commit, batch_id="day2")
    explicit.approve()
    assert commit.requests[-1].batch_id == "day2"


def test_preview_tabs(lake: Catalog) -> None:
    write_batches(lake, "db.events", [sample_day(1)])
    panel = preview(str(DATA / "sample_day2.jsonl"), "db.events", lake, sample=5)
    assert panel.tabs.titles == (
        "Schema", "New columns (4)", "Where values land", "SQL view", "Profile",
    )
    schema, new, landings, sql, prof = panel.tabs.children
    before, after = (w.value for w in schema.children)
    assert "16: my_field_string: string" not in before
    assert '<span class="tknb-new">16: my_field_string: string</span>' in after
    assert '<span class="tknb-new">15: os_version: string</span>' in after  # nested
    # each reason a sentence, its rule a footnote (issue 14, plain words)
    assert ("This batch had `my_field` as a string, which none of its columns holds: "
            "`my_field` holds longs (RULES 3.3)") in new.value
    assert landings is panel.landings_box
    assert "Values of 5 of the 20 records" in panel.landing_table.value
    assert {r.record for r in panel.landings.all_rows} == {1, 2, 3, 4, 5}
    assert sql.titles == ("spark", "trino", "duckdb", "athena")
    for page in sql.children:
        assert "<pre>SELECT" in page.value and "navigator.clipboard.writeText" in page.value
    assert prof is panel.profile_panel.widget and panel.profile_panel.base.records == 20
    header = panel.header.value  # the table named once, in the heading
    assert "Preview of db.events</b>: 20 records planned against the table as it is" in header
    assert header.count("db.events") == 1
    assert panel.model.records == 20 and len(panel.model.samples) == 5
    bundle = panel._repr_mimebundle_()
    assert bundle[WIDGET_MIME]["model_id"] == panel.widget.model_id


def test_stale_plan_shows_plain_words_and_preview_again(lake: Catalog) -> None:
    write_batches(lake, "db.events", [sample_day(1)])

    def commit_like_ingest(request: CommitRequest) -> IngestReport:
        """Refuses a table that moved since the preview, as ingest(expected=...) does."""
        now = TableState.of(lake.load_table(request.table))
        if now != request.expected:
            raise StalePlanError(request.table, request.expected, now)
        raise AssertionError("the table was expected to have moved")

    panel = preview(sample_day(2), "db.events", lake, commit=commit_like_ingest)
    old_state = panel.preview.state
    lake.drop_table("db.events")  # another writer got there first...
    write_batches(lake, "db.events", [sample_day(1), sample_day(2)])

    panel.approve_button.click()

    assert panel.outcome is not None and panel.outcome.kind == "stale"
    assert "The table changed since this preview:" in panel.message.value
    assert "Preview again" in panel.message.value
    assert panel.outcome.traceback and "StalePlanError" in panel.outcome.traceback
    assert panel.preview_again_button.layout.display == ""  # shown
    assert panel.approve_button.disabled  # a stale plan is never retried as is

    panel.preview_again_button.click()

    assert panel.outcome is None and panel.message.value == ""
    assert panel.preview.state != old_state
    assert panel.preview.state == TableState.of(lake.load_table("db.events"))
    assert not panel.model.changed  # day 2's columns are there already
    assert panel.tabs.titles[1] == "New columns (0)"
    assert not panel.approve_button.disabled
    assert panel.preview_again_button.layout.display == "none"


def test_other_errors_are_shown_and_approve_can_be_retried(lake: Catalog) -> None:
    calls: list[int] = []

    def flaky(request: CommitRequest) -> IngestReport:
        calls.append(1)
        raise ConnectionError("catalog unreachable")

    panel = PreviewPanel(plan_preview([{"a": 1}], "db.t", lake), flaky)
    outcome = panel.approve()
    assert outcome is panel.outcome and outcome.kind == "error"
    assert "ConnectionError: catalog unreachable" in panel.message.value
    assert "<details><summary>ConnectionError: details</summary>" in panel.message.value
    assert "in flaky" in panel.message.value  # the traceback is kept, folded
    assert not panel.approve_button.disabled
    assert panel.preview_again_button.layout.display == "none"
    panel.approve_button.click()
    assert len(calls) == 2


def test_statistics_that_cannot_be_read_do_not_hide_the_commit(lake: Catalog) -> None:
    def no_statistics() -> Any:
        raise KeyError("gone")

    panel = PreviewPanel(
        plan_preview([{"a": 1}], "db.t", lake), RecordingCommit(), statistics=no_statistics
    )
    panel.approve()
    assert panel.outcome is not None and panel.outcome.ok
    assert "Committed snapshot 777" in panel.message.value
    (note,) = panel.result.children
    assert "The statistics of the table could not be read" in note.value


def test_a_panel_without_commit_is_read_only(lake: Catalog) -> None:
    panel = PreviewPanel(plan_preview([{"a": 1}], "db.t", lake))
    assert panel.approve_button.disabled and "Read-only preview" in panel.message.value
    assert panel.approve().kind == "error"


def test_malformed_input_is_set_aside_or_fails_before_any_panel(
    tmp_path: Path, lake: Catalog
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": 1}\nnot json\n')
    with pytest.raises(ValueError, match="line 2: malformed JSON"):
        preview(str(bad), "db.t", lake, on_incompatible="fail")
    # as ingest does, the line is set aside (named, with its text) and the rest planned
    (place, q), = preview(str(bad), "db.t", lake).preview.aside
    assert (place, q.reason, q.raw) == (1, "malformed", "not json")
    assert q.detail.startswith("line 2: malformed JSON")


def test_lower_bounds_are_marked() -> None:
    """Spark's Iceberg writer keeps no counts for list elements: such counts are shown as
    lower bounds, never as a plain 0."""
    tags = FieldRow(
        ("tags",), (TypeCount("string[]", 0, 0.0, column="tags", measured=False),), None,
        None, None, ("tags",), False,
    )
    html = field_table_html(Page((tags,), 0, 25, 1, 1), committed=True)
    assert "tags (string[]): 0+ (0%)" in html and "n+ : a lower bound" in html
    assert "a lower bound" not in field_table_html(
        Page((replace(tags, types=(replace(tags.types[0], measured=True),)),), 0, 25, 1, 1)
    )
