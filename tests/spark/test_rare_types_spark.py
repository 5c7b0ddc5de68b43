"""The rare-type threshold on Spark gives what ``toolkit.simulate`` gives (the Python
engine is the reference): JSON lines are tallied by the JVM, the plan's rare types come
from that tally, and a batch with rare types is routed by the core in Spark's Python
workers (the JVM router keeps the batches with none). Records set aside land in the
quarantine table with the same reason sentence, and a replay with the threshold off
writes them, evolving the schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from pyiceberg.catalog import Catalog

import toolkit
from tests.integration.readers import canonical, read_pyiceberg
from toolkit.errors import IncompatibleRecordError
from toolkit.iceberg.quarantine import quarantine
from toolkit.pipeline.ingest import ingest
from toolkit.pipeline.replay import replay

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

DAY1 = [{"id": i, "price": i + 0.5} for i in range(200)]
#: 400 records, 3 prices as text: 0.75%, under a 1% threshold
DAY2 = [{"id": 1000 + i, "price": "n/a" if i in (7, 150, 399) else 2.25} for i in range(400)]
SENTENCE = (
    "3 of 400 values of `price` arrived as strings (0.75%, under the 1% rare-type threshold); "
    "set aside instead of adding price_string"
)


def lines(path: Path, records: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


def test_ingest_sets_rare_types_aside_as_simulate_does_and_replay_restores_them(
    jvm: SparkSession, lakehouse: Catalog, tmp_path: Path
) -> None:
    table = "rare.prices"
    day1, day2 = lines(tmp_path / "day1.jsonl", DAY1), lines(tmp_path / "day2.jsonl", DAY2)
    first = ingest(day1, table, lakehouse, jvm, batch_id="day1", rare_type_percent=1)
    # the threshold is on but nothing is rare: the JVM router keeps the batch
    assert (first.routed_in, first.quarantined, first.plan.rare) == ("jvm", 0, ())

    with pytest.raises(IncompatibleRecordError, match="batch day2: " + SENTENCE.split(" (")[0]):
        ingest(day2, table, lakehouse, jvm, batch_id="day2", rare_type_percent=1,
               on_incompatible="fail")
    assert len(read_pyiceberg(lakehouse.load_table(table))) == 200  # nothing was written

    second = ingest(day2, table, lakehouse, jvm, batch_id="day2", rare_type_percent=1)
    reference = toolkit.simulate([DAY1, DAY2], rare_type_percent=1)
    assert [str(r) for r in second.plan.rare] == [str(r) for r in reference.plans[1].rare] == [
        SENTENCE
    ]
    assert (second.routed_in, second.quarantined, second.rows_written) == ("python", 3, 397)
    assert not second.plan.changed
    assert read_pyiceberg(lakehouse.load_table(table)) == canonical(reference.rows)

    held = quarantine(lakehouse, table)
    assert [(json.loads(r.raw), r.reason, r.field, r.observed, r.table_type, r.detail,
             r.batch_id) for r in held.rows] == [
        (DAY2[i], "rare-type", "price", "string", "double", SENTENCE, "day2")
        for i in (7, 150, 399)
    ]
    assert [(q.record, q.detail) for q in reference.quarantined] == [
        (DAY2[i], SENTENCE) for i in (7, 150, 399)
    ]

    # replayed with the threshold off (the default), the texts evolve the schema
    report = replay(lakehouse, table, jvm)
    assert report.ingest is not None
    assert [c.column.name for c in report.ingest.plan.changes] == ["price_string"]
    assert quarantine(lakehouse, table).empty
    replayed = toolkit.simulate([[DAY2[i] for i in (7, 150, 399)]],
                                schema=reference.table_schema)
    assert read_pyiceberg(lakehouse.load_table(table)) == canonical(
        [{**r, "price_string": None} for r in reference.rows] + replayed.rows
    )
