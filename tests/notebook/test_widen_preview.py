"""The preview panel under the widening policy (RULES 5): widenings in place and by rewrite,
rewrites awaiting approval, columns made optional, records that would be quarantined; and
"Approve and commit" sending exactly that plan (a real commit through Spark at the end)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.types import BooleanType, IntegerType, LongType, NestedField

import toolkit
from toolkit.core.batch.profile import Profile
from toolkit.core.evolution.state import TableState
from toolkit.iceberg import catalog
from toolkit.iceberg.operations import rewrite_cost
from toolkit.notebook import preview
from toolkit.notebook.outcome import CommitOutcome
from toolkit.notebook.panels.preview.model import CommitRequest
from toolkit.pipeline.ingest import IngestReport

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: the table: ``n`` int, ``score`` long with data, ``flag`` a required boolean
DECLARED = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "n", IntegerType(), required=False),
    NestedField(3, "score", LongType(), required=False),
    NestedField(4, "flag", BooleanType(), required=True),
)
#: the batch: n beyond int (in place), score as a double and a text (a rewrite to string),
#: flag as a text (an X cell: quarantined), flag missing (made optional), a new key
BATCH = [
    {"id": 3, "n": 5_000_000_000, "score": 2.5, "flag": True, "note": "x"},
    {"id": 4, "n": 1, "score": 3, "flag": "maybe"},
    {"id": 5, "n": 2, "score": "high"},
]


def declared_table(cat: Catalog, identifier: str) -> Table:
    namespace = identifier.rsplit(".", 1)[0]
    cat.create_namespace_if_not_exists(namespace)
    table = cat.create_table(identifier, schema=DECLARED)
    rows = [
        {"id": 1, "n": 1, "score": 10, "flag": True},
        {"id": 2, "n": 2, "score": 20, "flag": False},
    ]
    table.append(pa.Table.from_pylist(rows, schema=table.schema().as_arrow()))
    return table


@pytest.fixture
def lake(tmp_path: Path) -> Catalog:
    return catalog(tmp_path / "lake")


class RecordingCommit:
    def __init__(self) -> None:
        self.requests: list[CommitRequest] = []

    def __call__(self, request: CommitRequest) -> IngestReport:
        self.requests.append(request)
        return IngestReport(
            request.table, request.batch_id, request.approved, 2, 777, Profile(), quarantined=1
        )


def test_the_widening_preview_shows_widenings_rewrites_optionals_and_quarantine(
    lake: Catalog,
) -> None:
    table = declared_table(lake, "db.t")
    commit = RecordingCommit()
    panel = preview(BATCH, "db.t", lake, policy="widen", commit=commit)
    m = panel.model

    assert panel.tabs.titles == (
        "Schema", "New columns (1)", "Widenings (2, 1 rewrite)", "Quarantine (1)",
        "Where values land", "SQL view", "Profile",
    )
    assert [c.name for c in m.new_columns] == ["note"]
    # int -> long is in place; long -> string rewrites the column, whose cost is the table's
    n, score = m.widenings
    assert (n.name, n.before, n.after, n.in_place) == ("n", "int", "long", True)
    assert (score.name, score.before, score.after, score.in_place) == (
        "score", "long", "string", False,
    )
    rows, size = rewrite_cost(table)
    assert rows == 2 and size > 0
    assert (score.rows, score.bytes) == (rows, size)
    assert m.rewrites == (score,) and m.pending == ()
    assert [o.name for o in m.optionals] == ["flag"]
    widenings_tab = panel.tabs.children[2].value
    assert f"REWRITE: 2 rows, {size:,} bytes" in widenings_tab
    assert "approving this plan approves them" in widenings_tab
    assert "<code>flag</code>" in widenings_tab  # made optional

    # the record whose flag is a text goes to quarantine, whole, with field and types
    q = m.quarantine
    assert q is not None and q.total == 1 and not q.fails
    assert q.by_reason == (("incompatible", 1),)
    (sample,) = q.samples
    assert (sample.index, sample.field, sample.observed, sample.table_type) == (
        1, "flag", "string", "boolean",
    )
    assert '"flag":"maybe"' in sample.raw
    quarantine_tab = panel.tabs.children[3].value
    assert "would go to the quarantine table" in quarantine_tab
    # each reason in words, its key (what reason= filters by) on hover
    assert ('<td title="incompatible">a value its column cannot take, even widened</td>'
            "<td>1</td>") in quarantine_tab
    assert '<td title="incompatible">incompatible type</td>' in quarantine_tab  # the sample
    # the heading names the table; the sentence after it does not say it again
    assert "Preview of db.t</b>: 3 records planned against the table as it is now (" in (
        panel.header.value
    )
    assert panel.header.value.count("db.t") == 1
    assert (
        "1 column to add, 2 to widen (1 by rewrite), 1 to make optional; "
        "1 record to quarantine" in panel.header.value
    )

    # where values land: one column per key, converted to its type, or set aside whole
    first, second, third = m.samples
    assert [(x.key, x.column, x.stored, x.converted) for x in first.landings] == [
        ("id", "id", 3, False), ("n", "n", 5_000_000_000, False), ("score", "score", "2.5", True),
        ("flag", "flag", True, False), ("note", "note", "x", False),
    ]
    assert second.quarantined is not None and "'flag'" in second.quarantined
    assert panel.tabs.children[4] is panel.landings_box
    assert "quarantined: " in panel.landing_table.value  # the record set aside whole
    assert third.quarantined is None

    # approving sends exactly the previewed plan (its rewrite included) and table state,
    # once the question the rewrite raises is answered
    panel.approve_button.click()
    assert commit.requests == [] and panel.question is not None
    panel.rewrite_button.click()
    (request,) = commit.requests
    assert request.approved is panel.preview.plan
    assert [r.path for r in request.approved.rewrites] == [("score",)]
    assert request.expected == TableState.of(lake.load_table("db.t"))
    assert request.records == tuple(BATCH)
    assert panel.outcome is not None and panel.outcome.kind == "committed"
    assert "2 columns widened: n (in place), score (rewritten)." in panel.message.value
    assert "1 record set aside in db.t__quarantine" in panel.message.value


def test_without_rewrites_the_rewrite_awaits_approval_and_its_records_are_set_aside(
    lake: Catalog,
) -> None:
    declared_table(lake, "db.t")
    panel = preview(BATCH, "db.t", lake, policy="widen", allow_rewrites=False)
    m = panel.model
    assert [w.name for w in m.widenings] == ["n"] and m.rewrites == ()
    assert [(w.name, w.after, w.in_place) for w in m.pending] == [("score", "string", False)]
    assert "1 rewrite awaiting approval" in m.summary
    assert "Rewrites awaiting approval" in panel.tabs.children[2].value
    q = m.quarantine
    assert q is not None and q.total == 3
    assert dict(q.by_reason) == {"rewrite-not-approved": 2, "incompatible": 1}
    assert panel.tabs.titles[3] == "Quarantine (3)"


def test_with_on_incompatible_fail_the_preview_says_the_batch_would_fail(lake: Catalog) -> None:
    declared_table(lake, "db.t")
    panel = preview(BATCH, "db.t", lake, policy="widen", on_incompatible="fail")
    q = panel.model.quarantine
    assert q is not None and q.fails and q.total == 1
    assert "1 record would fail the batch" in panel.header.value
    assert "would fail the batch (on_incompatible=&#x27;fail&#x27;)" in panel.tabs.children[3].value


def test_a_widening_preview_with_nothing_to_set_aside(lake: Catalog) -> None:
    declared_table(lake, "db.t")
    panel = preview([{"id": 9, "n": 7, "score": 1, "flag": False}], "db.t", lake, policy="widen")
    # JSON integers are longs: the int column widens in place, nothing is rewritten
    assert [(w.name, w.in_place) for w in panel.model.widenings] == [("n", True)]
    assert panel.tabs.titles[2:4] == ("Widenings (1, 0 rewrites)", "Quarantine (0)")
    assert "No record would be set aside." in panel.tabs.children[3].value
    assert "REWRITE" not in panel.tabs.children[2].value
    assert "1 to widen (0 by rewrite)" in panel.header.value


def test_the_outcome_of_a_skipped_batch_mentions_no_quarantine() -> None:
    from toolkit.core.evolution.batch_plan import Plan
    from toolkit.core.values.types import Struct

    nothing = Plan(0, Struct(), Struct(), ())
    report = IngestReport("db.t", "b1", nothing, 0, None, Profile(), skipped=True)
    outcome = CommitOutcome.from_report(report)
    assert outcome.kind == "skipped" and "set aside" not in outcome.message


@pytest.mark.spark
def test_approve_commits_the_rewrite_and_quarantines_the_record_for_real(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    identifier = "widen_preview.t"
    declared_table(lakehouse, identifier)
    before = lakehouse.load_table(identifier)
    old_snapshot = before.current_snapshot()
    assert old_snapshot is not None

    panel = preview(BATCH, identifier, lakehouse, spark=spark, policy="widen")
    outcome = panel.approve()

    assert outcome.kind == "committed", panel.message.value
    assert outcome.rows_written == 2
    table = lakehouse.load_table(identifier)
    schema = table.schema()
    # the previewed plan, exactly: score rewritten as string under its new field ID, n
    # widened in place, flag optional, note added
    (score,) = panel.model.rewrites
    assert schema.find_field("score").field_id == score.new_id
    assert str(schema.find_field("score").field_type) == "string"
    assert str(schema.find_field("n").field_type) == "long"
    assert not schema.find_field("flag").required
    rows = sorted(table.scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    assert [(r["id"], r["score"]) for r in rows] == [
        (1, "10"), (2, "20"), (3, "2.5"), (5, "high"),
    ]
    # time travel: the snapshot before still reads the old longs
    old = table.scan(snapshot_id=old_snapshot.snapshot_id).to_arrow().to_pylist()
    assert sorted(r["score"] for r in old) == [10, 20]
    # the record with flag "maybe" is in the quarantine, whole, with the reason
    aside = toolkit.quarantine(lakehouse, identifier)
    groups: dict[str, Any] = aside.by_reason()
    assert list(groups) == ["incompatible"]
    (row,) = groups["incompatible"]
    assert (row.field, row.observed, row.table_type) == ("flag", "string", "boolean")
    assert row.record == BATCH[1]
    assert "1 record set aside in widen_preview.t__quarantine" in panel.message.value


def test_the_preview_warns_no_value_of_a_record_it_sets_aside_as_written(lake: Catalog) -> None:
    """The record the widen policy sets aside (a double for a boolean column) writes none
    of its values: its long `id` is not warned as written as text; a written one is, as
    ingest warns it (tests/integration/test_simulate_agrees.py)."""
    from pyiceberg.types import StringType

    lake.create_namespace_if_not_exists("db")
    lake.create_table("db.s", schema=Schema(
        NestedField(1, "id", StringType(), required=False),
        NestedField(2, "d", BooleanType(), required=False)))
    aside_only = preview([{"id": 3, "d": 1.5}, {"id": "b", "d": False}], "db.s", lake,
                         policy="widen")
    assert aside_only.model.quarantine is not None and aside_only.model.quarantine.total == 1
    assert aside_only.model.conversions == ()
    both = preview([{"id": 3, "d": 1.5}, {"id": 4, "d": True}], "db.s", lake, policy="widen")
    assert both.model.conversions == (
        "id: 1 long was written as text; a contract `id=freeze` refuses it",)
