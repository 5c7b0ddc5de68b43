"""Run notebooks/quickstart.ipynb headless in a real Jupyter kernel (in a temp folder, so its
`lakehouse` lands there) and check what it printed and displayed, widgets included."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from typing import Any

import pytest

import toolkit
from tests.notebooks.nbrun import WIDGET_VIEW, Executed, execute
from toolkit.iceberg.ledger import batch_id_of

pytestmark = [pytest.mark.notebook, pytest.mark.spark]

APPROVE = 'panel.approve()  # or click "Approve and commit" above'
#: run after day 1's approve cell: approving again (the button after the cell, say) is a no-op
AGAIN = 'print("again:", panel.approve().kind)'


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Executed]:
    """The quickstart, executed once for this module's tests."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield execute(
            "quickstart.ipynb", tmp_path_factory.mktemp("quickstart"), monkeypatch,
            after={APPROVE: AGAIN},
        )


def test_quickstart_runs_and_shows_the_drift(run: Executed) -> None:
    assert "20 20 20 records" in run.text(run.cell("def load("))
    assert "60 records" in run.text(run.cell("toolkit.profile("))

    # explore: a widget panel (its view's model is in the saved widget state) with plots, its
    # fields' columns those of a table fed day by day
    (explore,) = run.views(run.cell("toolkit.explore("))
    state = run.widget_state
    assert state[explore]["model_name"] == "VBoxModel"
    header, _, _, fields, *_ = (
        state[c.removeprefix("IPY_MODEL_")]["state"] for c in state[explore]["state"]["children"]
    )
    assert "60 records in 3 batches, 11 fields" in header["value"]
    assert "my_field_string" in fields["value"]
    figures = [
        o
        for m in run.widgets("OutputModel")
        for o in m["outputs"]
        if "application/vnd.plotly.v1+json" in o.get("data", {})
    ]
    assert figures, "the explore panel shows plotly figures"

    # simulate: the drifting fields got typed sibling columns
    simulated = run.text(run.cell("toolkit.simulate("))
    for column in ("my_field_string", "size_double", "started_long", "device_array_record"):
        assert f"{column}: optional" in simulated

    # day 1 and day 2: previewed in a panel, approved by the cell after it; day 4 only
    # previewed (a contract and a hint), never approved
    previews = [c for c in run.code if "toolkit.preview(" in c.source]
    assert len(previews) == 3
    for cell in previews:
        assert len(run.views(cell)) == 1
    buttons = [b for b in run.widgets("ButtonModel") if b["description"] == "Approve and commit"]
    assert len(buttons) == 3
    # a committed panel cannot commit again; day 4's still can
    assert sorted(b["disabled"] for b in buttons) == [False, True, True]
    approved = [run.text(c) for c in run.code if c.source.startswith(APPROVE)]
    assert len(approved) == 2
    assert re.search(r"Committed snapshot \d+ to db\.events: 20 rows written", approved[0])
    assert (
        "4 columns added: device.os_version, my_field_string, size_double, started_long"
        in approved[1]
    )
    assert "again: skipped" in run.text(run.cell(AGAIN))
    assert "my_field_string" in run.widget_text()  # the day 2 panel's new columns

    # day 3 by ingest, then the table: three batches, one snapshot each
    assert "batch sample-day3 wrote 20 rows" in run.text(run.cell("toolkit.ingest("))
    table = toolkit.catalog(run.workdir / "lakehouse").load_table("db.events")
    snapshots = table.snapshots()
    assert len(snapshots) == 3
    assert batch_id_of(snapshots[0]).startswith("preview-")
    assert batch_id_of(snapshots[2]) == "sample-day3"
    shown = run.widget_text()  # what the panels say now
    assert f"Batch {batch_id_of(snapshots[0])} was already ingested" in shown  # day 1, again
    assert f"Committed snapshot {snapshots[1].snapshot_id} to db.events" in shown  # day 2

    stats = run.text(run.cell("toolkit.statistics("))
    assert "Written data statistics of db.events: 60 records" in stats
    assert re.search(r"^my_field_string\s+\d+\s+string\s+my_field\s+yes\s+40\s+20\s", stats, re.M)

    # the view folds the typed columns back into one column per field
    view = run.text(run.cell("create_coalesce_view("))
    assert "CREATE OR REPLACE VIEW lakehouse.db.events_unified" in view
    assert "COALESCE(`my_field_string`, CAST(`my_field` AS STRING)) AS `my_field`" in view
    head = next(line for line in view.splitlines() if line.startswith("|") and "event" in line)
    columns = [c.strip() for c in head.strip("|").split("|")]
    assert "my_field" in columns
    assert "my_field_string" not in columns
    rows = [line for line in view.splitlines() if line.startswith("|") and line != head]
    folded = [[c.strip() for c in r.strip("|").split("|")][columns.index("my_field")] for r in rows]
    assert any(v.startswith("MF-") for v in folded)  # was my_field_string
    assert any(v.isdigit() for v in folded)  # was my_field (a long)


# --- without the widget: what GitHub, nbviewer or a notebook reopened without its widget
# state shows is the text/html each panel's output carries next to its widget view


def widget_outputs(run: Executed, contains: str) -> list[dict[str, Any]]:
    """The data of each widget-view output of the cells whose source has ``contains``."""
    return [
        out["data"]
        for c in run.code
        if contains in c.source
        for out in c.outputs
        if WIDGET_VIEW in out.get("data", {})
    ]


def reader_text(html: str) -> str:
    html = re.sub(r"<(style|svg)\b.*?</\1>", " ", html, flags=re.S)
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_the_explore_output_carries_its_statistics_as_html(run: Executed) -> None:
    (data,) = widget_outputs(run, "toolkit.explore(")
    html = data["text/html"]
    assert "VBox(" not in html and not data["text/plain"].startswith("VBox(")
    shown = reader_text(html)
    assert "60 records in 3 batches, 11 fields; 5 drifted, 4 evolved" in shown
    for field in ("my_field", "device.os_version", "started", "tags"):
        assert f" {field} " in shown
    assert "my_field my_field_string" in shown  # a field and the columns of its family
    # the type mix and one field's drift, drawn as SVG images
    charts = [
        base64.b64decode(data).decode()
        for data in re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', html)
    ]
    assert len(charts) == 2
    assert "<title>my_field: 30 values as string</title>" in charts[0]


def test_every_widget_output_carries_the_panel_as_html(run: Executed) -> None:
    outputs = widget_outputs(run, "")
    assert len(outputs) == 4  # explore, the previews of day 1, day 2 and day 4
    for data in outputs:
        assert "text/html" in data, f"a widget output without text/html: {data['text/plain']}"
        assert "VBox(" not in data["text/html"] and "VBox(" not in data["text/plain"]
    (day2,) = widget_outputs(run, "toolkit.preview(day2")
    shown = reader_text(day2["text/html"])
    for column in ("my_field_string", "size_double", "started_long", "device.os_version"):
        assert column in shown  # the columns the plan adds


def test_day_4_previews_a_contract_and_a_hint(run: Executed) -> None:
    """Day 4's preview (never approved) shows the hinted column with its type and the
    record the contract sets aside, and the table stays as day 3 left it."""
    (day4,) = widget_outputs(run, "toolkit.preview(day4")
    shown = reader_text(day4["text/html"])
    assert "amount" in shown and "decimal(10, 2)" in shown  # the hint's type, first batch
    assert "1 record to quarantine" in shown  # the record the contract sets aside
    assert "its contract discard_row sets its record aside" in shown  # what, and why
    assert 'value "large" arrived as a string' in shown.replace("&quot;", '"')  # the value
