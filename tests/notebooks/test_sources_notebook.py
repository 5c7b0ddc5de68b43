"""Run notebooks/sources.ipynb headless (in a temp folder, where its Parquet, CSV, ORC and
JSON-lines files and its `lakehouse` land) and check what a user reads in it: a pandas
frame's typed columns profiled, two days of Parquet files simulated, previewed, ingested
with Spark and read back, and a CSV file's values seen as text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import toolkit
from tests.notebooks.nbrun import execute
from toolkit.iceberg.ledger import batch_id_of

pytestmark = [pytest.mark.notebook, pytest.mark.spark]

INGEST_DAY2 = "report = toolkit.ingest("
#: run after day 2's ingest: the panel's button after the ingest cell writes nothing again
APPROVE_AFTER = 'print("approved after:", panel.approve().kind)'


def test_sources_notebook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = execute("sources.ipynb", tmp_path, monkeypatch, after={INGEST_DAY2: APPROVE_AFTER})

    # the frame's own dtypes, then its profile: int32 counted as long, float32 as double,
    # the NaT, the missing float and the missing Decimal as nulls, code drifting
    frame = run.text(run.cell("readings = pd.DataFrame("))
    assert re.search(r"^sensor\s+int32$", frame, re.M)
    assert re.search(r"^temp\s+float32$", frame, re.M)
    profile = run.text(run.cell("print(toolkit.profile(readings))"))
    assert "4 records" in profile
    assert re.search(r"^sensor\s+long\s+4\s+100%\s+0\s", profile, re.M)
    assert re.search(r"^temp\s+double\s+3\s+75%\s+1\s", profile, re.M)
    assert re.search(r"^at\s+timestamp\s+3\s+75%\s+1\s", profile, re.M)
    assert re.search(r"^amount\s+decimal\s+3\s+75%\s+1\s.*Decimal\('12\.50'\)", profile, re.M)
    assert re.search(r"^code\s+long\s+2\s+50%", profile, re.M)
    assert re.search(r"^code\s+string\s+2\s+50%", profile, re.M)

    # the explore panel: a widget whose header counts the frame's records and whose field
    # table shows the decimal and the two columns of the drifting field
    (explore,) = run.views(run.cell("toolkit.explore(readings)"))
    state = run.widget_state
    assert state[explore]["model_name"] == "VBoxModel"
    header, _, _, fields, *_ = (
        state[c.removeprefix("IPY_MODEL_")]["state"] for c in state[explore]["state"]["children"]
    )
    assert "4 records in 1 batch," in header["value"]
    assert "decimal: 3 (100%)" in fields["value"]
    assert "code_long" in fields["value"]

    # day 2's Parquet file, profiled from its path: its own types
    day2 = run.text(run.cell('day2.to_parquet("day2.parquet"'))
    assert re.search(r"^at\s+long\s+2\s+100%", day2, re.M)
    assert re.search(r"^code\s+string\s+2\s+100%", day2, re.M)

    # simulate of the two files: the decimal column, the documented siblings, the summary
    simulated = run.text(run.cell("sim = toolkit.simulate("))
    assert "amount: optional decimal(38, 18)" in simulated
    assert "at: optional timestamptz" in simulated
    assert "sensor: optional long" in simulated
    for column, field in (
        ("at_long: optional long", "at"),
        ("amount_double: optional double", "amount"),
        ("amount_string: optional string", "amount"),
        ("code_string: optional string", "code"),
    ):
        assert f"{column} (upsolver_evolved_from:{field})" in simulated
    assert "6 records in 2 batches, 6 written; 9 columns" in simulated
    assert "batch 2: 4 columns added" in simulated

    # Spark: day 1 ingested from its path, day 2 previewed in a panel, then ingested held to
    # the previewed plan; the button pressed afterwards writes nothing again
    assert "db.readings: batch day1 wrote 4 rows" in run.text(run.cell("toolkit.spark_session("))
    assert len(run.views(run.cell("toolkit.preview("))) == 1
    tabs = [t for t in run.widgets("TabModel") if "New columns (4)" in t["titles"]]
    assert tabs, "the preview panel lists day 2's four new columns"
    shown = run.widget_text()
    for column in ("at_long", "amount_double", "amount_string", "code_string"):
        assert column in shown
    ingested = run.text(run.cell(INGEST_DAY2))
    assert "db.readings: batch day2 wrote 2 rows" in ingested
    assert "batch 2: 4 columns added" in ingested
    assert "approved after: skipped" in run.text(run.cell(APPROVE_AFTER))

    # read back with Spark SQL: day 1's decimals and timestamps, day 2's values in the new
    # columns (and its epoch milliseconds also as timestamps in `at`)
    back = run.text(run.cell("FROM db.readings ORDER BY sensor"))
    rows = [
        [c.strip() for c in line.strip("|").split("|")]
        for line in back.splitlines()
        if line.startswith("|")
    ]
    head, *body = rows
    assert head == ["sensor", "at", "at_long", "amount", "amount_double", "code", "code_string"]
    assert [r[0] for r in body] == ["1", "2", "3", "4", "5", "6"]
    assert body[0] == ["1", "2024-06-01 10:00:00", "NULL", "12.500000000000000000", "NULL",
                       "7", "NULL"]
    assert body[2][1] == "NULL"  # the NaT
    assert body[4] == ["5", "2024-06-01 10:00:00", "1717236000000", "NULL", "4.25", "NULL",
                       "A-12"]
    assert "Written data statistics of db.readings: 6 records" in back
    assert re.search(r"^at_long\s+8\s+long\s+at\s+yes\s+2\s+4\s+day2$", back, re.M)

    table = toolkit.catalog(run.workdir / "lakehouse").load_table("db.readings")
    assert [batch_id_of(s) for s in table.snapshots()] == ["day1", "day2"]
    assert str(table.schema().find_field("amount").field_type) == "decimal(38, 18)"
    assert table.scan().to_arrow().num_rows == 6

    # the CSV file: every value is text but the ISO timestamps; as text it would add two
    # columns, read through pandas none
    csv = run.text(run.cell('day3.to_csv("day3.csv"'))
    assert re.search(r"^sensor\s+string\s+2\s+100%", csv, re.M)
    assert re.search(r"^temp\s+string\s+2\s+100%", csv, re.M)
    assert re.search(r"^at\s+timestamp\s+2\s+100%", csv, re.M)
    assert "as text:   batch 1: 2 columns added" in csv
    assert "+ sensor_string: string (id 10)  doc='upsolver_evolved_from:sensor'" in csv
    assert "via pandas: batch 1: no schema change" in csv

    # ORC and JSON lines of day 2 plan the same table as its Parquet file
    others = run.text(run.cell('day2.to_orc("day2.orc"'))
    assert "day2.orc True" in others
    assert "day2.jsonl True" in others
