"""toolkit.notebook's view-models of the explore and preview panels and of a commit's
outcome, checked in memory."""

from __future__ import annotations

import doctest
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pyiceberg.catalog import Catalog

import toolkit
import toolkit.notebook.explore_model
import toolkit.notebook.preview_model
from tests.notebook_ui.panel_tables import sample_day, write_batches
from toolkit.core.batch.profile import profile
from toolkit.core.engine import Engine
from toolkit.core.evolution.state import ABSENT, TableState
from toolkit.core.values.jsonlines import read_jsonl
from toolkit.core.values.types import Struct
from toolkit.errors import MalformedLineError, NotARecordError, PlanChangedError, StalePlanError
from toolkit.iceberg import catalog
from toolkit.iceberg.statistics import statistics
from toolkit.notebook.explore_model import StatisticsModel
from toolkit.notebook.outcome import CommitOutcome
from toolkit.notebook.preview_model import PlanModel, preview_batch_id
from toolkit.pipeline.ingest import IngestReport
from toolkit.pipeline.preview import Preview, plan_preview


@pytest.fixture
def lake(tmp_path: Path) -> Catalog:
    return catalog(tmp_path / "lake")


@pytest.mark.parametrize(
    "models", [toolkit.notebook.explore_model, toolkit.notebook.preview_model]
)
def test_docstring_examples(models: ModuleType) -> None:
    result = doctest.testmod(models, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


# --- statistics of fields ---------------------------------------------------------------

N_FIELDS = 5_000


def wide_records() -> list[dict[str, Any]]:
    """5,000 keys; every third one drifts from long to string in the odd records."""
    return [
        {f"f{i:04d}": (str(i) if j % 2 and i % 3 == 0 else i) for i in range(N_FIELDS)}
        for j in range(4)
    ]


@pytest.fixture(scope="module")
def wide() -> StatisticsModel:
    records = wide_records()
    # Measured on 2 cores: profile 0.1 s; from_profile (with the family index) 0.1-0.25 s;
    # each filter() over the 5,000 rows 2-8 ms. Correctness only is asserted here.
    return StatisticsModel.from_profile(profile(records), toolkit.simulate([records]).table_schema)


def test_five_thousand_fields_are_all_rows(wide: StatisticsModel) -> None:
    assert wide.total == len(wide.rows) == N_FIELDS
    assert [r.name for r in wide.rows[:3]] == ["f0000", "f0001", "f0002"]
    assert wide.drifted == wide.evolved == len(range(0, N_FIELDS, 3))


def test_filtering_five_thousand_fields(wide: StatisticsModel) -> None:
    by_name = wide.filter("F012")  # case does not matter
    assert [r.name for r in by_name.rows] == [f"f{i:04d}" for i in range(120, 130)]
    assert by_name.total == N_FIELDS and by_name.query == "F012"

    # a type, and a column name, are searched too (RULES 3.2: the first batch saw long and
    # string, so string took the original name and long got f0003_long); words must all match
    strings = wide.filter("string")
    assert len(strings.rows) == len(range(0, N_FIELDS, 3))
    assert all(any(t.type == "string" for t in r.types) for r in strings.rows)
    assert [r.name for r in wide.filter("f0003_long").rows] == ["f0003"]
    assert [r.name for r in wide.filter("f01 string").rows] == [
        f"f{i:04d}" for i in range(100, 200) if i % 3 == 0
    ]
    # filters do not stack: each one starts from all rows
    assert len(by_name.filter("").rows) == N_FIELDS
    assert wide.filter("no such field").rows == ()
    assert len(wide.filter(evolved_only=True).rows) == wide.evolved
    assert [r.name for r in wide.filter("f000", drifted_only=True).rows] == [
        "f0000", "f0003", "f0006", "f0009",
    ]


def test_paging(wide: StatisticsModel) -> None:
    page = wide.page(0, 25)
    assert (page.number, page.pages, page.total, page.first, page.last) == (0, 200, 5000, 1, 25)
    last = wide.page(199, 25)
    assert [r.name for r in last.rows][-1] == "f4999" and last.first == 4976
    assert wide.page(10_000, 25).number == 199  # clamped
    assert wide.page(-3, 25).number == 0
    assert str(wide.filter("f012").page(0, 4)) == "rows 1-4 of 10 (page 1 of 3)"
    empty = wide.filter("nothing").page(0, 25)
    assert (empty.rows, empty.pages, empty.first) == ((), 1, 0)
    with pytest.raises(ValueError):
        wide.page(0, 0)


def test_drifted_field_row_from_a_profile() -> None:
    days = [sample_day(n) for n in (1, 2, 3)]
    run = Engine().run(days)
    model = StatisticsModel.from_profile(run.profile, run.schema)
    row = model.field("my_field")
    assert [(t.type, t.count) for t in row.types] == [("long", 30), ("string", 30)]
    assert [t.share for t in row.types] == [0.5, 0.5]
    assert row.types[1].sample_texts == ('"MF-646"', '"MF-274"', '"MF-427"')
    assert (row.first_batch, row.last_batch, row.nulls) == ("1", "3", 0)  # counted from 1
    assert row.columns == ("my_field", "my_field_string")
    assert row.evolved and row.drifted
    assert [(b.batch, b.count("long"), b.count("string")) for b in row.by_batch] == [
        ("1", 20, 0), ("2", 10, 10), ("3", 0, 20),
    ]
    # nested fields: dotted names, and the columns of every record column of the family
    os = model.field("device.os")
    assert os.columns == ("device.os", "device_array_record.element.os")
    assert not os.evolved and not os.drifted
    assert model.field("device_array_record").name == "device"  # a column finds its field
    # the most drifted first (share of values outside the main type), then by values
    assert [r.name for r in model.top_drifted(3)] == ["my_field", "size", "started"]
    assert model.batches == ("0", "1", "2")


def test_field_rows_without_a_schema_name_no_columns() -> None:
    model = StatisticsModel.from_profile(profile([{"a": 1}, {"a": "x", "b": None}]))
    a, b = model.rows
    assert a.drifted and not a.evolved and a.columns == ()
    assert b.types == () and b.nulls == 2 and b.first_batch is None


def test_field_rows_from_a_committed_table(lake: Catalog) -> None:
    table = write_batches(lake, "db.events", [sample_day(1), sample_day(2), sample_day(3)])
    model = StatisticsModel.from_statistics(statistics(table))
    assert model.committed and model.source == "table db.events"
    assert (model.records, model.batches) == (60, ("b0", "b1", "b2"))
    row = model.field("my_field")
    assert [(t.label, t.count) for t in row.types] == [
        ("my_field_string (string)", 40), ("my_field (long)", 30),
    ]
    assert row.evolved and row.columns == ("my_field", "my_field_string")
    assert [b.counts for b in row.by_batch] == [
        (("my_field_string (string)", 0), ("my_field (long)", 20)),
        (("my_field_string (string)", 20), ("my_field (long)", 10)),
        (("my_field_string (string)", 20), ("my_field (long)", 0)),
    ]
    assert (row.first_batch, row.last_batch, row.nulls) == ("b0", "b2", None)
    # a column of an evolved record column belongs to its source field
    assert model.field("device.os").columns == ("device.os", "device_array_record.element.os")
    assert model.field("event").nulls == 0
    assert model.field("started_long").name == "started"


# --- a preview ---------------------------------------------------------------------------


def test_plan_tree_marks_new_fields_with_their_ids(lake: Catalog) -> None:
    write_batches(lake, "db.events", [sample_day(1)])
    preview = plan_preview(sample_day(2), "db.events", lake)
    model = PlanModel.from_preview(preview)

    before = {n.full_name: n for root in model.before for n in root.walk()}
    after = {n.full_name: n for root in model.after for n in root.walk()}
    assert not any(n.new for n in before.values())
    new = {name: n.field_id for name, n in after.items() if n.new}
    planned = {".".join(c.path): c.column.id for c in preview.plan.changes}
    assert new == planned == {
        "device.os_version": 15, "my_field_string": 16, "size_double": 17, "started_long": 18,
    }
    # existing fields keep their IDs; nested and list element nodes carry theirs
    assert all(after[k].field_id == n.field_id for k, n in before.items())
    assert after["tags.element"].field_id == 14 and after["tags.element"].type == "string"
    assert after["device"].children[-1].name == "os_version"
    assert after["my_field_string"].doc == "upsolver_evolved_from:my_field"
    assert [(c.name, c.field_id, c.type, c.family) for c in model.new_columns] == [
        ("device.os_version", 15, "string", "os_version"),
        ("my_field_string", 16, "string", "my_field"),
        ("size_double", 17, "double", "size"),
        ("started_long", 18, "long", "started"),
    ]
    # a sentence, its rule a footnote (issue 14, plain words)
    assert model.new_columns[1].reason == (
        "This batch had `my_field` as a string, which none of its columns holds: `my_field` "
        "holds longs (RULES 3.3)"
    )
    assert (model.records, model.batch, model.new_table) == (20, 1, False)
    # landings read per key, in the record's order, each with every column it lands in
    first = model.samples[0].landings
    assert [(x.key, x.column) for x in first][:6] == [
        ("event", "event"), ("ts", "ts"), ("my_field", "my_field"),
        ("my_field", "my_field_string"), ("size", "size_double"), ("started", "started"),
    ]
    assert "4 columns to add" in model.summary


def seed_preview() -> Preview:
    """The seed example: my_field was 1 (a long column); now "abc" and 7 arrive."""
    first = toolkit.simulate([[{"my_field": 1}]]).table_schema
    engine = Engine()
    records = ({"my_field": "abc"}, {"my_field": 7}, {"my_field": None, "n": 2})
    plan = engine.plan(first, engine.observe(records, 1), 1)
    return Preview("db.seed", plan, TableState(0, 1), profile(records), records)


def test_landings_of_the_seed_example() -> None:
    model = PlanModel.from_preview(seed_preview())
    abc, seven, nulls = model.samples
    assert [(x.column, x.stored, x.converted) for x in abc.landings] == [
        ("my_field_string", "abc", False)
    ]
    # RULES 3.1: 7 lands in every column that receives it
    assert [(x.key, x.value, x.kind, x.column, x.stored, x.converted) for x in seven.landings] == [
        ("my_field", 7, "long", "my_field", 7, False),
        ("my_field", 7, "long", "my_field_string", "7", True),
    ]
    assert [(x.value_text, x.stored_text) for x in seven.landings] == [("7", "7"), ("7", '"7"')]
    assert nulls.unwritten == ("my_field",) and [x.column for x in nulls.landings] == ["n"]
    assert seven.record == '{"my_field": 7}'


def test_the_sample_covers_every_field_and_type_then_the_first_records() -> None:
    preview = seed_preview()
    # each record holds a field-and-type pair the others lack: all show, whatever the size
    model = PlanModel.from_preview(preview, sample=1)
    assert [s.number for s in model.samples] == [1, 2, 3] and model.records == 3
    assert PlanModel.from_preview(preview, sample=0).samples == model.samples
    # records alike: the sample size limits only the records shown, not those planned
    alike = ({"n": 1}, {"n": 2}, {"n": 3})
    engine = Engine()
    plan = engine.plan(Struct(), engine.observe(alike, 0), 0)
    same = Preview("db.alike", plan, TableState(0, 1), profile(alike), alike)
    assert [s.number for s in PlanModel.from_preview(same, sample=2).samples] == [1, 2]
    assert PlanModel.from_preview(same, sample=2).records == 3


def test_sql_per_dialect() -> None:
    model = PlanModel.from_preview(seed_preview())
    assert [d for d, _ in model.sql] == ["spark", "trino", "duckdb", "athena"]
    for dialect, sql in model.sql:
        assert "COALESCE(" in sql and "db.seed" in sql, dialect
    assert "CAST(`my_field` AS STRING)" in model.sql_for("spark")
    assert 'CAST("my_field" AS VARCHAR)' in model.sql_for("trino")
    assert 'CAST("my_field" AS TEXT)' in model.sql_for("duckdb")


def test_preview_of_a_new_table(lake: Catalog) -> None:
    model = PlanModel.from_preview(plan_preview([{"a": 1}], "db.fresh", lake))
    assert model.new_table and model.state == ABSENT and model.before == ()
    assert [(n.name, n.new) for n in model.after] == [("a", True)]
    assert "does not exist yet" in model.summary
    empty = PlanModel.from_preview(plan_preview([], "db.fresh", lake))
    assert empty.sql == () and not empty.changed


def test_batch_id_is_stable_for_the_same_data() -> None:
    records = sample_day(1)
    same = [dict(reversed(list(r.items()))) for r in records]  # key order aside
    assert preview_batch_id("db.events", records) == preview_batch_id("db.events", same)
    assert preview_batch_id("db.events", records) != preview_batch_id("db.other", records)
    assert preview_batch_id("db.events", records) != preview_batch_id("db.events", records[1:])
    assert preview_batch_id("db.t", [{"n": 2**70}]).startswith("preview-")
    assert PlanModel.from_preview(seed_preview()).batch_id == PlanModel.from_preview(
        seed_preview()
    ).batch_id


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
