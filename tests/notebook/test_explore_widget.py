"""The explore panel, in-process (toolkit.notebook.panels.explore.widget): ``Button.click()`` fires
the handlers (no Spark here); and the notebook's lazy public names."""

from __future__ import annotations

from pathlib import Path

import ipywidgets as widgets
import pytest

import toolkit
import toolkit.notebook
from tests.notebook.panel_tables import DATA, sample_day, write_batches
from toolkit.core.batch.profile import profile
from toolkit.iceberg import catalog
from toolkit.notebook import ExplorePanel, explore, preview
from toolkit.notebook.figures import PLOTLY_MIME

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def test_the_lazy_public_names() -> None:
    assert toolkit.explore is explore and toolkit.preview is preview
    assert toolkit.notebook.ExplorePanel is ExplorePanel


# --- ExplorePanel ----------------------------------------------------------------------------


def test_explore_filters_pages_and_highlights_evolved_fields() -> None:
    panel = explore([sample_day(n) for n in (1, 2, 3)], page_size=4)
    assert panel.base.total == 11 and panel.base.batches == ("0", "1", "2")
    assert "60 records in 3 batches, 11 fields; 5 drifted, 4 evolved" in panel.header.value
    assert panel.header.value == "60 records in 3 batches, 11 fields; 5 drifted, 4 evolved"
    assert panel.position.value == "rows 1-4 of 11 (page 1 of 3)"
    assert panel.previous_button.disabled and not panel.next_button.disabled

    panel.next_button.click()
    panel.next_button.click()
    assert panel.page_number == 2 and panel.next_button.disabled
    assert [r.name for r in panel.page.rows] == ["started", "tags", "ts"]
    # evolved fields stand out: a highlighted row and a badge
    assert panel.table.value.count('<tr class="tknb-evolved">') == 1  # started
    assert "<code>tags</code><span" in panel.table.value  # drifted, not evolved
    panel.previous_button.click()
    assert panel.page_number == 1

    panel.search.value = "device"  # typing in the box filters at once, back to page 1
    assert panel.page_number == 0
    assert [r.name for r in panel.model.rows] == [
        "device", "device.id", "device.os", "device.os_version",
    ]
    assert "4 of 11 fields" in panel.header.value
    assert "my_field" not in panel.table.value
    assert "device_array_record.element.os" in panel.table.value  # columns of the family

    panel.filter("", evolved_only=True)
    assert [r.name for r in panel.model.rows] == ["device", "my_field", "size", "started"]
    panel.drifted_only.value = True
    panel.evolved_only.value = False
    assert [r.name for r in panel.model.rows] == ["device", "my_field", "size", "started", "tags"]


def test_explore_renders_both_charts_as_plotly_figures() -> None:
    panel = explore([sample_day(n) for n in (1, 2, 3)], top=3)
    assert panel.mix_figure is not None and panel.drift_figure is not None
    mix, drift = panel.charts.outputs
    assert mix["data"][PLOTLY_MIME]["data"] == panel.mix_figure.to_plotly_json()["data"]
    assert [t["name"] for t in drift["data"][PLOTLY_MIME]["data"]] == ["long", "string"]
    assert panel.field_picker.value == "my_field"  # the most drifted first

    panel.field_picker.value = "size"
    assert panel.drift_figure.layout.title.text == "size: types per batch"
    assert [t.name for t in panel.drift_figure.data] == ["double", "long"]
    panel.select("started_long")  # a column finds its field
    assert panel.field_picker.value == "started"

    panel.search.value = "tags"
    assert panel.field_picker.value == "tags"
    assert [t.name for t in panel.mix_figure.data] == ["string[]", "string"]


def test_explore_displays_itself_as_its_root_widget() -> None:
    panel = explore([{"a": 1}])
    bundle = panel._repr_mimebundle_()
    assert bundle[WIDGET_MIME]["model_id"] == panel.widget.model_id
    assert isinstance(panel.widget, widgets.VBox)


def test_explore_sources(tmp_path: Path) -> None:
    one = explore([{"a": 1}, {"a": "x"}], batch=5)
    assert one.base.batches == ("5",) and one.base.field("a").drifted
    files = explore(str(DATA / "sample_day*.jsonl"))  # each file a batch, in name order
    assert files.base.batches == ("0", "1", "2") and files.base.records == 60
    assert files.base.source.endswith("(3 files)")
    assert explore(DATA / "sample_day2.jsonl").base.records == 20
    assert explore(profile([{"b": True}])).base.field("b").types[0].type == "boolean"
    table = write_batches(catalog(tmp_path), "db.events", [sample_day(1), sample_day(2)])
    committed = explore(table)
    assert committed.base.committed and committed.base.batches == ("b0", "b1")
    assert "values written per column" in committed.table.value
    with pytest.raises(FileNotFoundError, match="no file matches"):
        explore(str(tmp_path / "*.jsonl"))


def test_data_is_escaped_in_html() -> None:
    panel = explore([{"<b>key</b>": "<script>alert(1)</script>"}])
    assert "<b>key</b>" not in panel.table.value and "&lt;b&gt;key&lt;/b&gt;" in panel.table.value
    assert "<script>" not in panel.table.value
