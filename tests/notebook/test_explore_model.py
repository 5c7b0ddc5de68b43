"""The explore panel's view-model (toolkit.notebook.panels.explore.model), checked in memory:
statistics of fields, filtered and paged, from a profile or a committed table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyiceberg.catalog import Catalog

import toolkit
import toolkit.notebook.panels.explore.model
import toolkit.notebook.panels.preview.model
from tests.notebook.panel_tables import sample_day, write_batches
from toolkit.core.batch.profile import profile
from toolkit.core.engine import Engine
from toolkit.iceberg import catalog
from toolkit.iceberg.statistics import statistics
from toolkit.notebook.panels.explore.model import StatisticsModel


@pytest.fixture
def lake(tmp_path: Path) -> Catalog:
    return catalog(tmp_path / "lake")


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
