"""The preview panel's view-model (toolkit.notebook.panels.preview.model), checked in memory: the
plan's trees, where values land, the SQL per dialect, the batch id."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyiceberg.catalog import Catalog

from tests.notebook.panel_tables import sample_day, seed_preview, write_batches
from toolkit.core.batch.profile import profile
from toolkit.core.engine import Engine
from toolkit.core.evolution.state import ABSENT, TableState
from toolkit.core.values.types import Struct
from toolkit.iceberg import catalog
from toolkit.notebook.panels.preview.model import PlanModel, preview_batch_id
from toolkit.pipeline.preview import Preview, plan_preview


@pytest.fixture
def lake(tmp_path: Path) -> Catalog:
    return catalog(tmp_path / "lake")


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
