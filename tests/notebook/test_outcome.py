"""A commit's outcome in plain words (toolkit.notebook.outcome), checked in memory."""

from __future__ import annotations

from pathlib import Path

import pytest

import toolkit
from tests.notebook.panel_tables import seed_preview
from toolkit.core.engine import Engine
from toolkit.core.evolution.state import ABSENT, TableState
from toolkit.core.values.jsonlines import read_jsonl
from toolkit.errors import (
    MalformedLineError,
    NotARecordError,
    NotARecordLineError,
    PlanChangedError,
    StalePlanError,
)
from toolkit.notebook.outcome import CommitOutcome
from toolkit.pipeline.ingest import IngestReport

# --- outcomes ----------------------------------------------------------------------------


def test_outcome_of_a_report() -> None:
    preview = seed_preview()
    report = IngestReport("db.seed", "b1", preview.plan, 3, 42, preview.profile)
    outcome = CommitOutcome.from_report(report)
    assert outcome.ok and outcome.kind == "committed" and not outcome.preview_again
    assert (outcome.snapshot_id, outcome.rows_written) == (42, 3)
    assert outcome.columns_added == ("my_field_string", "n")
    assert outcome.message == (
        "Committed snapshot 42 to db.seed: 3 rows written (batch b1). "
        "2 columns added: my_field_string, n."
    )
    skipped = CommitOutcome.from_report(
        IngestReport("db.seed", "b1", preview.plan, 0, None, preview.profile, skipped=True)
    )
    assert skipped.kind == "skipped" and skipped.ok
    assert "already ingested" in skipped.message


def test_stale_plan_in_plain_words() -> None:
    exc = StalePlanError("db.events", TableState(0, 11), TableState(1, 12))
    outcome = CommitOutcome.from_exception(exc)
    assert outcome.kind == "stale" and outcome.preview_again and not outcome.ok
    assert outcome.message == (
        "The table changed since this preview: its schema changed (schema id 0 -> 1) and "
        "new data was committed (snapshot 11 -> 12). Nothing was applied. Preview again to "
        "plan against the table as it is now."
    )
    created = CommitOutcome.from_exception(StalePlanError("db.t", ABSENT, TableState(0, None)))
    assert "another writer created it" in created.message
    assert outcome.error == str(exc) and outcome.error_type == "StalePlanError"


def test_plan_changed_in_plain_words() -> None:
    preview = seed_preview()
    nothing = type(preview.plan)(1, preview.plan.after, preview.plan.after, ())
    outcome = CommitOutcome.from_exception(PlanChangedError("db.seed", nothing, preview.plan))
    assert outcome.kind == "plan_changed" and outcome.preview_again
    assert outcome.message.startswith(
        "The data needs other schema changes than the plan you approved (approved: no change;"
        " needed now: add my_field_string string; add n long)"
    )


def test_input_errors_in_plain_words(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": 1}\n{"a": \n')
    with pytest.raises(MalformedLineError) as malformed:
        read_jsonl(bad)
    outcome = CommitOutcome.from_exception(malformed.value)
    assert outcome.kind == "malformed"
    assert outcome.message.startswith("Line 2 of the input is not valid JSON: '{\"a\":'.")

    with pytest.raises(NotARecordError) as not_a_record:
        Engine().observe([{"a": 1}, [1, 2]])
    outcome = CommitOutcome.from_exception(not_a_record.value)
    assert outcome.kind == "not_a_record"
    assert outcome.message.startswith("Record 2 of the input is not a JSON object but a list")

    lines = tmp_path / "lines.jsonl"
    lines.write_text('{"a": 1}\n[1, 2]\n')
    with pytest.raises(NotARecordLineError) as no_record_line:
        toolkit.simulate([lines], on_incompatible="fail")
    outcome = CommitOutcome.from_exception(no_record_line.value)
    assert outcome.kind == "not_a_record"  # JSON, but no object: not "not valid JSON"
    assert outcome.message.startswith("Line 2 of the input is not a JSON object but a list")


def test_any_other_error_keeps_its_traceback() -> None:
    def deep() -> None:
        raise OSError("disk full")

    try:
        deep()
    except OSError as exc:
        outcome = CommitOutcome.from_exception(exc)
    assert outcome.kind == "error" and outcome.message == "OSError: disk full"
    assert outcome.traceback is not None
    assert "in deep" in outcome.traceback and "OSError: disk full" in outcome.traceback
