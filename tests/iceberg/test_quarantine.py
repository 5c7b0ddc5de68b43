"""toolkit.iceberg.quarantine: the quarantine table next to a target, on a real SQLite catalog.

No Spark here: the rows are appended with PyIceberg (the non-Spark path) and read back;
replay through ingest is in tests/integration/test_replay.py.
"""

from __future__ import annotations

import datetime as dt
import doctest
import math
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.io.pyarrow import schema_to_pyarrow

import toolkit
import toolkit.iceberg.quarantine as quarantine_module
from toolkit.core.batch.quarantine import Quarantined
from toolkit.errors import NotReplayableError, UnknownIdsError
from toolkit.iceberg import catalog
from toolkit.iceberg.ledger import BATCH_ID_PROPERTY, batch_id_of
from toolkit.iceberg.quarantine import (
    ARROW_SCHEMA,
    QUARANTINE_SCHEMA,
    append_quarantined,
    discard,
    quarantine,
    quarantine_rows,
    quarantine_table_id,
    quarantine_tuples,
)
from toolkit.pipeline.replay import replay, replay_batch_id, replay_selection

TABLE = "db.events"
AT = dt.datetime(2024, 5, 1, 10, 0, tzinfo=dt.UTC)


@pytest.fixture
def lake(tmp_path: Path) -> Catalog:
    return catalog(tmp_path / "lake")


def incompatible(record: dict[str, object], field: str, observed: str, table_type: str,
                 batch: str = "day2") -> Quarantined:
    value = record[field]
    return Quarantined(
        record, "incompatible", field, observed, table_type, batch,
        f"{field}: a {observed} ({value!r}) cannot go into a {table_type} column",
    )


FLAG_1 = incompatible({"id": 1, "flag": "yes"}, "flag", "string", "boolean")
FLAG_2 = incompatible({"id": 2, "flag": "no"}, "flag", "string", "boolean")
SIZE = incompatible({"id": 3, "size": "b64:AAE="}, "size", "bytes", "long")
MALFORMED = Quarantined('{"id": 4, "flag": tru', "malformed", None, None, None, "day2",
                        "line 3: not JSON")
NOT_A_RECORD = Quarantined([1, 2], "not-a-record", None, None, None, "day2",
                           "a JSON array, not an object")
ITEMS = [FLAG_1, SIZE, MALFORMED, FLAG_2, NOT_A_RECORD]


def test_the_quarantine_table_sits_next_to_its_target() -> None:
    assert quarantine_table_id("db.events") == "db.events__quarantine"
    assert quarantine_table_id("lake.db.events") == "lake.db.events__quarantine"
    with pytest.raises(ValueError, match="'events': expected 'namespace.name'"):
        quarantine_table_id("events")


def test_first_append_creates_the_table_and_its_namespace(lake: Catalog) -> None:
    assert append_quarantined(lake, "fresh.events", [FLAG_1], "day2", at=AT) == 1
    assert ("fresh",) in lake.list_namespaces()
    table = lake.load_table("fresh.events__quarantine")
    assert [(f.name, str(f.field_type)) for f in table.schema().fields] == [
        ("id", "string"), ("raw", "string"), ("reason", "string"), ("field", "string"),
        ("observed", "string"), ("table_type", "string"), ("detail", "string"),
        ("batch_id", "string"), ("position", "long"), ("quarantined_at", "timestamptz"),
    ]
    snap = table.current_snapshot()
    assert snap is not None and batch_id_of(snap) == "day2"


def test_nothing_to_quarantine_creates_nothing(lake: Catalog) -> None:
    assert append_quarantined(lake, TABLE, [], "day2") == 0
    assert not lake.table_exists(quarantine_table_id(TABLE))


def test_the_arrow_rows_match_the_iceberg_schema() -> None:
    rows = quarantine_rows(ITEMS, "day2", at=AT)
    assert rows.schema == ARROW_SCHEMA
    # PyIceberg reads strings as large_string; Spark hands Arrow plain strings
    expected = schema_to_pyarrow(QUARANTINE_SCHEMA, include_field_ids=False)
    plain = {pa.large_string(): pa.string()}
    assert [(f.name, f.type) for f in ARROW_SCHEMA] == [
        (f.name, plain.get(f.type, f.type)) for f in expected
    ]
    assert rows.num_rows == 5
    assert quarantine_rows([], "day2").num_rows == 0


def test_row_ids_are_unique_and_the_same_when_a_batch_is_written_again() -> None:
    later = AT + dt.timedelta(hours=1)
    first = quarantine_tuples([FLAG_1, FLAG_1, SIZE], "day2", at=AT)
    again = quarantine_tuples([FLAG_1, FLAG_1, SIZE], "day2", at=later)
    assert [r[0] for r in first] == [r[0] for r in again]
    assert len({r[0] for r in first}) == 3  # the same record twice is two rows
    other_batch = quarantine_tuples([FLAG_1], "day3", at=AT)
    assert other_batch[0][0] != first[0][0]
    # a Spark partition passes its offset: positions (and ids) continue
    tail = quarantine_tuples([SIZE], "day2", start=2, at=AT)
    assert tail[0][0] == first[2][0] and tail[0][8] == 2


def test_rows_keep_the_record_exactly(lake: Catalog) -> None:
    exact = {"n": 2**70 + 1, "x": 0.1, "nan": math.nan, "ü": "çé\n", "deep": {"a": [1, None]}}
    items = [incompatible(exact, "n", "string", "long"), MALFORMED]
    append_quarantined(lake, TABLE, items, "day2", at=AT)
    rows = quarantine(lake, TABLE).rows
    record = rows[0].record
    assert record["n"] == 2**70 + 1 and record["x"] == 0.1 and math.isnan(record["nan"])
    assert {k: v for k, v in record.items() if k != "nan"} == {
        k: v for k, v in exact.items() if k != "nan"
    }
    # a line that never parsed is kept as it arrived
    assert rows[1].raw == '{"id": 4, "flag": tru' and rows[1].record == rows[1].raw
    assert rows[0].quarantined_at == AT
    back = rows[0].as_quarantined()
    assert (back.reason, back.field, back.observed, back.table_type, back.batch) == (
        "incompatible", "n", "string", "long", "day2",
    )
    assert back.detail == items[0].detail and back.raw == rows[0].raw


def test_a_batch_id_is_appended_once(lake: Catalog) -> None:
    assert append_quarantined(lake, TABLE, [FLAG_1, SIZE], "day2") == 2
    assert append_quarantined(lake, TABLE, [FLAG_1, SIZE], "day2") == 0  # a rerun
    assert len(quarantine(lake, TABLE)) == 2
    assert append_quarantined(lake, TABLE, [FLAG_2], "day3") == 1
    q = quarantine(lake, TABLE)
    assert len(q) == 3
    assert [r.batch_id for r in q.rows] == ["day2", "day2", "day3"]
    table = lake.load_table(quarantine_table_id(TABLE))
    assert [s.summary.additional_properties[BATCH_ID_PROPERTY] for s in table.snapshots()
            if s.summary is not None] == ["day2", "day3"]


def test_rows_grouped_by_reason_field_and_types(lake: Catalog) -> None:
    append_quarantined(lake, TABLE, ITEMS, "day2", at=AT)
    q = quarantine(lake, TABLE)
    assert q.exists and len(q) == 5
    assert q.counts() == {"incompatible": 3, "malformed": 1, "not-a-record": 1}
    assert {k: [r.raw for r in v] for k, v in q.by_reason().items()} == {
        "incompatible": ['{"id":1,"flag":"yes"}', '{"id":3,"size":"b64:AAE="}',
                         '{"id":2,"flag":"no"}'],
        "malformed": ['{"id": 4, "flag": tru'],
        "not-a-record": ["[1,2]"],
    }
    groups = q.groups()
    assert [(g.label, g.count, g.replayable) for g in groups] == [
        ("incompatible type: flag (string into boolean)", 2, True),
        ("incompatible type: size (bytes into long)", 1, True),
        ("not valid JSON", 1, False),
        ("not a JSON object", 1, False),
    ]
    assert set(groups[0].ids) == {r.id for r in q.rows if r.field == "flag"}
    assert [r.record["id"] for r in q.select(reason="incompatible", field="flag").rows] == [1, 2]
    assert len(q.select(observed="bytes")) == 1
    text = str(q)
    assert "db.events__quarantine: 5 records" in text
    assert "     2  incompatible type: flag (string into boolean)" in text
    assert "not valid JSON  (cannot be replayed; discard(ids) removes them)" in text


def test_a_table_without_quarantine_reads_as_a_clear_empty_result(lake: Catalog) -> None:
    q = toolkit.quarantine(lake, "db.clean")
    assert not q.exists and len(q) == 0 and not q and q.groups() == ()
    assert str(q) == "db.clean: no quarantine table; no record was ever quarantined"


def test_discard_removes_only_the_named_rows(lake: Catalog) -> None:
    append_quarantined(lake, TABLE, ITEMS, "day2")
    q = quarantine(lake, TABLE)
    stuck = [r.id for r in q.rows if not r.replayable]
    assert discard(lake, TABLE, stuck) == 2
    left = quarantine(lake, TABLE)
    assert sorted(left.counts().items()) == [("incompatible", 3)]
    with pytest.raises(UnknownIdsError, match=f"1 id not in the quarantine: {stuck[0]}"):
        discard(lake, TABLE, [stuck[0], left.rows[0].id])
    assert len(quarantine(lake, TABLE)) == 3  # nothing discarded when one id is unknown
    assert discard(lake, TABLE, []) == 0
    assert discard(lake, TABLE, left.ids) == 3
    emptied = quarantine(lake, TABLE)
    assert emptied.exists and emptied.empty
    assert str(emptied) == "db.events__quarantine: empty; nothing is quarantined"


def test_discard_needs_a_quarantine(lake: Catalog) -> None:
    with pytest.raises(UnknownIdsError, match="db.none__quarantine"):
        discard(lake, "db.none", ["abc"])


def test_malformed_lines_cannot_be_replayed(lake: Catalog) -> None:
    append_quarantined(lake, TABLE, ITEMS, "day2")
    q = quarantine(lake, TABLE)
    bad = q.select(reason="malformed").ids
    with pytest.raises(NotReplayableError, match="cannot be replayed \\(malformed.*discard"):
        replay_selection(q, ids=[*bad, q.select(field="flag").ids[0]])
    rows, unfit = replay_selection(q)
    assert [r.reason for r in rows] == ["incompatible"] * 3
    assert sorted(r.reason for r in unfit) == ["malformed", "not-a-record"]
    assert replay_selection(q, reason="malformed") == ((), q.select(reason="malformed").rows)
    with pytest.raises(UnknownIdsError):
        replay_selection(q, ids=["no-such-id"])


def test_replay_without_a_quarantine_does_nothing(lake: Catalog) -> None:
    report = replay(lake, "db.clean", None)  # type: ignore[arg-type]  # no Spark is needed
    assert report.replayed == () and report.batch_id is None
    assert str(report) == "db.clean: nothing to replay"


def test_a_replay_batch_id_depends_only_on_the_ids() -> None:
    assert replay_batch_id(["b", "a"]) == replay_batch_id(["a", "b", "a"])
    assert replay_batch_id(["a"]) != replay_batch_id(["a", "b"])
    assert replay_batch_id(["a"]).startswith("replay-")


def test_the_lazy_public_names() -> None:
    assert toolkit.quarantine is quarantine and toolkit.replay is replay


def test_docstring_examples() -> None:
    result = doctest.testmod(quarantine_module)
    assert result.attempted > 0 and result.failed == 0


def test_pyarrow_table_appends_as_is(lake: Catalog) -> None:
    """What the rows function returns appends to the created table without casts."""
    append_quarantined(lake, TABLE, [FLAG_1], "day2")
    table = lake.load_table(quarantine_table_id(TABLE))
    table.append(quarantine_rows([SIZE], "day9"))
    assert [r.raw for r in quarantine(lake, TABLE).rows] == [
        '{"id":1,"flag":"yes"}', '{"id":3,"size":"b64:AAE="}'
    ]
