"""The preview's "Where values land": one grid (a row per value: record number, key, value,
arrived as, column, stored, what happened), filtered by field and by what happened, and
paged; its sample covers every field-and-type pair of the batch, so drift that starts deep
in a file shows, with the real record numbers (issue 14). Also the header's batch in
words and the summary of a table yet to be created."""

from __future__ import annotations

import re
from dataclasses import replace
from html import unescape
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pyiceberg.catalog import Catalog

from tests.notebook.panel_tables import write_batches
from toolkit.core.batch.options import make_options
from toolkit.iceberg import catalog
from toolkit.notebook import preview
from toolkit.notebook.landings import COVER_LIMIT, cover_sample
from toolkit.notebook.panels.preview.html import landing_rows_html, landings_html, plan_header_html
from toolkit.notebook.panels.preview.model import PlanModel
from toolkit.pipeline.preview import plan_preview

TABLE = "db.orders"


def order(n: int) -> dict[str, Any]:
    """Record number ``n`` (from 1): until record 99 ``amount`` is a long; from record 100
    on it is a text, and ``coupon`` a new field."""
    if n < 100:
        return {"id": n, "amount": n}
    return {"id": n, "amount": f"A-{n}", "coupon": f"C{n}"}


BATCH = [order(n) for n in range(1, 301)]


@pytest.fixture
def lake(tmp_path: Path) -> Catalog:
    cat = catalog(tmp_path / "lake")
    write_batches(cat, TABLE, [[{"id": 0, "amount": 0}]])  # amount: a long column
    return cat


def rows_of(html: str) -> list[list[str]]:
    """The grid's rows as cell texts (no header)."""
    body = re.findall(r"<tr><td>(.*?)</tr>", html, re.S)
    return [
        [unescape(" ".join(re.sub(r"<[^>]+>", " ", c).split()))
         for c in re.findall(r"<td[^>]*>(.*?)</td>", "<td>" + r)]
        for r in body
    ]


def test_drift_deep_in_the_batch_shows_with_its_record_numbers(lake: Catalog) -> None:
    model = PlanModel.from_preview(plan_preview(BATCH, TABLE, lake))
    # record 1 shows every pair of records 1-99, record 100 the text amount and the
    # coupon; then the first records, 20 in all
    assert [s.number for s in model.samples] == [*range(1, 20), 100]

    drift = model.landings.filter(show="drifting")
    found = {(r.record, r.key, r.kind, r.column, r.happened) for r in drift.rows}
    assert (100, "amount", "string", "amount_string", "new column") in found
    assert (100, "coupon", "string", "coupon", "new column") in found
    # RULES 3.1: a long amount is also written to the new text column, converted
    assert (1, "amount", "long", "amount_string", "converted") in found
    assert all(r.drifting for r in drift.rows)
    assert not any(r.drifting for r in model.landings.filter(show="as is").rows)
    (coupon,) = model.landings.filter("coupon").rows
    assert (coupon.record, coupon.value, coupon.stored, coupon.new_column) == (
        100, "C100", "C100", True,
    )


def test_the_panel_grid_filters_and_pages(lake: Catalog) -> None:
    panel = preview(BATCH, TABLE, lake, sample=40)
    titles = list(panel.tabs.titles)
    assert panel.tabs.children[titles.index("Where values land")] is panel.landings_box
    # the grid opens on each kind of drift once: the first long copied into the new text
    # column, then what record 100 brought
    assert panel.landing_show.value == "each drift"
    assert rows_of(panel.landing_table.value) == [
        ["1", "amount", "1", "long", "amount_string new", '"1"', "converted"],
        ["100", "amount", '"A-100"', "string", "amount_string new", '"A-100"', "new column"],
        ["100", "coupon", '"C100"', "string", "coupon new", '"C100"', "new column"],
    ]
    assert [label for label, _ in panel.landing_show.options] == [
        "every value", "only drifting values", "each kind of drift, once", "converted",
        "new column", "as is",
    ]

    # every drifting value: 39 longs copied (records 1-39) and record 100's two, paged
    panel.filter_landings(show="drifting")
    drifting = panel.landings.rows
    assert len(drifting) == panel.model.landings.drifting == 41
    assert panel.landing_position.value == "rows 1-25 of 41 (page 1 of 2)"
    assert panel.landing_previous.disabled and not panel.landing_next.disabled
    assert len(rows_of(panel.landing_table.value)) == 25
    panel.landing_next.click()
    assert panel.landing_position.value == "rows 26-41 of 41 (page 2 of 2)"
    assert [r[0] for r in rows_of(panel.landing_table.value)][-2:] == ["100", "100"]
    assert panel.landing_next.disabled and not panel.landing_previous.disabled

    # by field (words of a key or a column) and by what happened
    panel.filter_landings("coupon")
    assert {r.key for r in panel.landings.rows} == {"coupon"}
    assert panel.landing_position.value == "rows 1-1 of 1 (page 1 of 1)"
    panel.landing_field.value = "amount_string"  # typing in the box does the same
    assert {r.column for r in panel.landings.rows} == {"amount_string"}
    panel.filter_landings(show="as is")
    assert {r.happened for r in panel.landings.rows} == {"as is"}
    panel.filter_landings()
    assert len(panel.landings.rows) == len(panel.model.landings.all_rows)


def test_the_static_copy_shows_the_first_page_of_drift(lake: Catalog) -> None:
    html = preview(BATCH, TABLE, lake).to_html()
    section = html[html.index("Where values land") : html.index("SQL view")]
    assert [(r[0], r[1], r[-1]) for r in rows_of(section)] == [
        ("1", "amount", "converted"), ("100", "amount", "new column"),
        ("100", "coupon", "new column"),
    ]
    assert "Values of 20 of the 300 records" in section
    assert "each kind of drift once, with the first value that drifts so (3 rows)" in section
    assert "pages through every value" in section


def test_the_static_copy_stops_at_a_page(tmp_path: Path) -> None:
    wide = [{"id": 1}] + [{"id": 2, **{f"f{i}": i for i in range(40)}}]
    cat = catalog(tmp_path / "lake")
    write_batches(cat, "db.wide", [[{"id": 0}]])
    model = PlanModel.from_preview(plan_preview(wide, "db.wide", cat))
    html = landings_html(model.landings)
    assert len(rows_of(html)) == 25
    assert "(the first 25 of 40 rows)" in html


def test_long_names_wrap_inside_the_grid(tmp_path: Path) -> None:
    name = "x" * 200
    model = PlanModel.from_preview(
        plan_preview([{name: 1, "<b>": "<script>"}], "db.wide", catalog(tmp_path / "lake"))
    )
    html = landings_html(model.landings)
    assert "table-layout:fixed" in html
    cell = next(c for c in re.findall(r"<td[^>]*>.*?</td>", html) if name in c)
    assert "overflow-wrap:anywhere" in cell
    assert "&lt;script&gt;" in html and "<script>" not in html  # data is text


def test_the_header_names_the_batch_in_words(tmp_path: Path) -> None:
    cat = catalog(tmp_path / "lake")
    unnamed = PlanModel.from_preview(plan_preview(BATCH, "db.new", cat))
    assert unnamed.summary.startswith(
        "300 records planned; db.new does not exist yet: it will be created; "
    )
    header = plan_header_html(unnamed)
    short = unnamed.batch_id.removeprefix("preview-")[:4]
    assert f"Unnamed batch of 300 records ({short})." in header
    assert f'title="batch id {unnamed.batch_id}"' in header  # the whole id on hover
    named = PlanModel.from_preview(plan_preview(BATCH, "db.new", cat), batch_id="day-2")
    assert "Batch day-2." in plan_header_html(named)


def test_records_set_aside_before_planning_keep_their_numbers(tmp_path: Path) -> None:
    records: list[Any] = [{"a": 1}, 5, {"a": None, "b": "x"}]
    model = PlanModel.from_preview(plan_preview(records, "db.t", catalog(tmp_path / "lake")))
    rows = [(r.record, r.key, r.column, r.happened) for r in model.landings.all_rows]
    assert rows == [
        (1, "a", "a", "as is"),
        (2, "", None, "quarantined"),  # not a record: set aside, counted where it was
        (3, "a", None, "nowhere"),
        (3, "b", "b", "as is"),
    ]
    static = landings_html(model.landings)  # the drifting value first
    assert "(the whole item)" in static and "expected a JSON object, got int 5" in static
    assert "null: lands nowhere" in landing_rows_html(model.landings.page(0))


def test_nested_values_show_by_their_dotted_path(tmp_path: Path) -> None:
    cat = catalog(tmp_path / "lake")
    write_batches(cat, "db.d", [[{"device": {"os": "ios"}}]])
    model = PlanModel.from_preview(
        plan_preview([{"device": {"os": "ios", "version": 17}}], "db.d", cat)
    )
    assert [(r.key, r.column, r.happened) for r in model.landings.all_rows] == [
        ("device.os", "device.os", "as is"),
        ("device.version", "device.version", "new column"),
    ]


def test_the_cover_is_bounded_and_says_what_it_leaves_out() -> None:
    lone = {i: frozenset({(f"f{i}", "long")}) for i in range(COVER_LIMIT + 3)}
    picked, missing = cover_sample(lone, COVER_LIMIT + 3, fill=5)
    assert len(picked) == COVER_LIMIT and missing == 3
    # the record holding most new pairs first, then the first records fill the sample
    both = frozenset({("a", "long"), ("b", "long")})
    candidates = {0: frozenset({("a", "long")}), 1: both}
    assert cover_sample(candidates, 3, fill=0) == ((1,), 0)
    assert cover_sample(candidates, 3, fill=3) == ((0, 1, 2), 0)
    assert cover_sample({}, 0, fill=3) == ((), 0)


def test_the_sample_reads_the_types_the_plan_saw(lake: Catalog) -> None:
    """Observed once by the preview, or again when a preview comes without it."""
    planned = plan_preview(BATCH, TABLE, lake)
    assert planned.observation is not None
    again = replace(planned, observation=None)
    assert PlanModel.from_preview(again).samples == PlanModel.from_preview(planned).samples


def test_typed_values_keep_their_own_type_under_the_widening_policy(tmp_path: Path) -> None:
    records = [{"n": np.int32(1), "d": 1.5}]
    preview = plan_preview(records, "db.t", catalog(tmp_path / "lake"), policy="widen")
    model = PlanModel.from_preview(preview, make_options(policy="widen"))
    assert [(r.key, r.kind, r.column, r.happened) for r in model.landings.all_rows] == [
        ("n", "int", "n", "as is"), ("d", "double", "d", "as is"),
    ]
