"""A preview (no Spark) obeys the hints a table keeps, as ingest does, unless others are
given (docs/rules.md, *Type hints*)."""

from __future__ import annotations

from pathlib import Path

import toolkit
from toolkit.core.batch.hints import HINTS_PROPERTY
from toolkit.core.values.types import Column, Struct
from toolkit.iceberg.schema import to_iceberg
from toolkit.pipeline.preview import plan_preview


def test_a_preview_obeys_the_table_s_hints_unless_others_are_given(tmp_path: Path) -> None:
    cat = toolkit.catalog(tmp_path / "lake")
    cat.create_namespace("db")
    cat.create_table("db.orders", schema=to_iceberg(Struct((Column(1, "id", "long"),))),
                     properties={HINTS_PROPERTY: '{"price": "decimal(10, 2)"}'})
    records = [{"id": 1, "price": 3}, {"id": 2, "price": "12.50"}]
    kept = plan_preview(records, "db.orders", cat)
    assert [(c.column.name, c.column.type) for c in kept.plan.changes] == [
        ("price", "decimal(10, 2)")]
    given = plan_preview(records, "db.orders", cat, hints={"price": "string"})
    assert [(c.column.name, c.column.type) for c in given.plan.changes] == [
        ("price", "string")]
    plain = toolkit.simulate([records], to_iceberg(Struct((Column(1, "id", "long"),))))
    assert [c.column.name for c in plain.plans[0].changes] == ["price", "price_long"]
