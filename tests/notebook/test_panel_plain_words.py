"""The panels in plain words (issue 14): every count said once, with its plural and its
thousands separators; a policy named by the word ``policy=`` takes; a reason a sentence with
its rule as a footnote, in the lineage rows too; records counted from 1."""

from __future__ import annotations

import json

import toolkit
from toolkit.core.batch.quarantine import Quarantine, QuarantinedRow
from toolkit.core.engine import Engine
from toolkit.core.evolution.lineage import LINEAGE_PREFIX, plan_lineage_properties, read_lineage
from toolkit.core.values.types import Struct
from toolkit.notebook.paging import page_of
from toolkit.notebook.panels.editor.html import lineage_entry_html
from toolkit.notebook.panels.editor.model import LineageRow
from toolkit.notebook.panels.explore.html import statistics_header_html
from toolkit.notebook.panels.explore.model import StatisticsModel
from toolkit.notebook.panels.policies.model import POLICY_SETUPS, policy_comparison
from toolkit.notebook.panels.quarantine.model import QuarantineModel


def size_plan() -> tuple[Struct, object]:
    engine = Engine()
    first = engine.plan(Struct(), engine.observe([{"size": 4}]))
    return first.after, engine.plan(first.after, engine.observe([{"size": 2.5}]), 1)


# --- the explorer's header: each count once --------------------------------------------------


def test_the_explorer_header_says_each_count_once_with_its_plural() -> None:
    two = StatisticsModel.from_profile(
        toolkit.profile([{"a": 1}, {"a": 2}, {"a": "x"}])
        + toolkit.profile([{"a": 3}, {"b": 1}, {"b": 2}], batch=1)
    )
    header = statistics_header_html(two)
    assert header == "6 records in 2 batches, 2 fields; 1 drifted, 0 evolved"
    assert "(es)" not in header and header.count("records") == 1
    one = StatisticsModel.from_profile(toolkit.profile([{"a": 1}]))
    assert statistics_header_html(one) == "1 record in 1 batch, 1 field; 0 drifted, 0 evolved"
    assert one.what == "1 record in 1 batch"  # what a page's title names


def test_a_named_source_is_said_before_the_counts_not_instead_of_them() -> None:
    model = StatisticsModel.from_profile(toolkit.profile([{"a": 1}]), source="events.jsonl")
    assert statistics_header_html(model) == (
        "<b>events.jsonl</b>: 1 record in 1 batch, 1 field; 0 drifted, 0 evolved"
    )


def test_counts_of_thousands_have_separators() -> None:
    wide = StatisticsModel.from_profile(toolkit.profile([{f"f{i}": i for i in range(5000)}]))
    assert "1 record in 1 batch, 5,000 fields;" in statistics_header_html(wide)
    assert "25 of 5,000 fields" in statistics_header_html(wide, matching=25)
    assert str(wide.page(0)) == "rows 1-25 of 5,000 (page 1 of 200)"
    assert str(page_of(range(12_345), 400)) == "rows 10,001-10,025 of 12,345 (page 401 of 494)"


# --- one name per policy -------------------------------------------------------------------


def test_the_comparison_names_each_policy_by_the_word_policy_takes() -> None:
    labels = [s.label for s in POLICY_SETUPS]
    assert labels == ["upsolver (suffixed columns)", "widen, rewrites approved",
                      "widen, no rewrites"]
    assert all(s.label.split()[0].strip(",") == s.options["policy"] for s in POLICY_SETUPS)
    text = str(policy_comparison([[{"n": 1}], [{"n": "x"}]]))
    assert text.splitlines()[0] == "2 records in 2 batches"
    assert "automatic" not in text and "(es)" not in text


# --- reasons: a sentence, then the rule ------------------------------------------------------


def test_a_lineage_row_names_the_policy_and_gives_each_reason_with_its_rule() -> None:
    _, plan = size_plan()
    (entry,) = read_lineage(plan_lineage_properties(plan, {}, "day2"))  # type: ignore[arg-type]
    row = LineageRow.of(entry)
    assert row.title == "#1 by the upsolver policy (RULES 3), batch day2"
    html = lineage_entry_html(row)
    assert "#1 by the upsolver policy (RULES 3), batch day2" in html
    assert ("This batch had `size` as a double, which none of its columns holds: `size` "
            "holds longs (RULES 3.3)") in html


def test_a_reason_an_older_version_logged_reads_as_a_sentence_then_its_rule() -> None:
    _, plan = size_plan()
    props = plan_lineage_properties(plan, {}, "day2")  # type: ignore[arg-type]
    key = f"{LINEAGE_PREFIX}1"
    data = json.loads(props[key])
    data["why"] = ["RULES 3.3: size arrived as double, which fits none of size::long"]
    (entry,) = read_lineage({key: json.dumps(data)})
    assert entry.reasons == ("size arrived as double, which fits none of size::long (RULES 3.3)",)
    assert "RULES 3.3:" not in lineage_entry_html(LineageRow.of(entry))


# --- records counted from 1 ----------------------------------------------------------------


def test_a_reason_never_numbers_a_record_from_0() -> None:
    sim = toolkit.simulate([[{"a": 1}, [1, 2]]])
    (q,) = sim.quarantined
    assert q.detail == "expected a JSON object, got list [1, 2]"
    # a row an older version wrote said "record 0: ..." (its place within a chunk of the
    # batch, from 0): the inspector shows the reason without it
    old = QuarantinedRow("id1", "[1,2]", "not-a-record", None, "list", None,
                         "record 0: expected a JSON object, got list [1, 2]", "day1", 0, None)
    model = QuarantineModel.from_quarantine(Quarantine("db.t", "db.t__quarantine", True, (old,)))
    assert model.groups[0].detail == "expected a JSON object, got list [1, 2]"
    assert model.summary.startswith("1 record in 1 group; 1 cannot be replayed")
    assert model.groups[0].label == "not a JSON object (list) — 1"
