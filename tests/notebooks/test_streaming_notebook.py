"""Run notebooks/streaming.ipynb headless: three waves of files, one micro-batch each, and
the table's statistics shown after each wave."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import toolkit
from tests.notebooks.nbrun import execute
from toolkit.iceberg.ledger import batch_id_of

pytestmark = [pytest.mark.notebook, pytest.mark.spark]

TABLE = "db.stream_events"


def test_streaming_notebook_ingests_each_wave_as_one_micro_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = execute("streaming.ipynb", tmp_path, monkeypatch)

    waves = [run.text(run.cell(f"wave({n})")) for n in (1, 2, 3)]
    for epoch, text in enumerate(waves):
        # one micro-batch per wave, committed under <query name>:<epoch>
        assert re.findall(r"batch (\S+) wrote (\d+) rows", text) == [
            (f"ingest_db_stream_events:{epoch}", "20")
        ]
        assert f"after wave {epoch + 1}: {20 * (epoch + 1)} records in {epoch + 1} batches" in text
    assert "+ my_field: long" in waves[0]
    for column in ("my_field_string", "size_double", "started_long"):
        assert f"+ {column}:" in waves[1]
        assert column not in waves[0]
    assert "+ device_array_record:" in waves[2]

    # each wave shows the table's statistics as one explore panel, whose header counts the
    # batches committed so far
    state = run.widget_state
    for n in (1, 2, 3):
        (panel,) = run.views(run.cell(f"wave({n})"))
        header, *_ = (c.removeprefix("IPY_MODEL_") for c in state[panel]["state"]["children"])
        assert (
            f"table db.stream_events (what arrived)</b>: {20 * n} records in {n} "
            + ("batch" if n == 1 else "batches")
            in state[header]["state"]["value"]
        )
    assert "my_field_string" in run.widget_text()

    # what the notebook wrote is in its own folder, and the table is what it printed
    table = toolkit.catalog(run.workdir / "lakehouse").load_table(TABLE)
    assert [batch_id_of(s) for s in table.snapshots()] == [
        f"ingest_db_stream_events:{e}" for e in range(3)
    ]
    assert table.scan().to_arrow().num_rows == 60
    assert sorted(
        p.name for p in (run.workdir / "lakehouse" / "landing" / "stream_events").iterdir()
    ) == [f"sample_day{n}.jsonl" for n in (1, 2, 3)]
