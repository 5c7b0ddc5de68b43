"""Conversion warnings: a value written only as another kind of value is counted per field
and batch and told in words, on both policies (issue #28)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from pyiceberg.catalog import Catalog

import toolkit
from tests.notebook.panel_tables import write_batches
from toolkit.cli import cli
from toolkit.iceberg import catalog
from toolkit.notebook.panels.preview.html import plan_header_html
from toolkit.notebook.panels.preview.model import PlanModel
from toolkit.pipeline.preview import plan_preview

ORDERS = [{"quantity": 2}, {"quantity": 5}]
WITH_BOOLEANS = [{"quantity": True}, {"quantity": 4}, {"quantity": False}, {"quantity": True}]


@pytest.mark.parametrize(
    ("batches", "policy", "expected"),
    [
        ([ORDERS, WITH_BOOLEANS], "upsolver", [
            (1, "quantity", 3, "quantity: 3 booleans were written as numbers (true -> 1); "
                               "a contract `quantity=freeze` refuses them")]),
        # the example is the batch's first such value, as it came and as it was written
        ([[{"q": "a"}], [{"q": 3}, {"q": 4}, {"q": 2.5}]], "upsolver", [
            (1, "q", 1, 'q: 1 double was written as text (2.5 -> "2.5"); a contract '
                        "`q=freeze` refuses it"),
            (1, "q", 2, 'q: 2 longs were written as text (3 -> "3"); a contract '
                        "`q=freeze` refuses them")]),
        # RULES 5: a long arriving in a string column is written as its text
        ([[{"q": "a"}], [{"q": 3}]], "widen", [
            (1, "q", 1, 'q: 1 long was written as text (3 -> "3"); a contract '
                        "`q=freeze` refuses it")]),
        ([[{"d": 1.5}], [{"d": False}, {"d": True}]], "upsolver", [
            (1, "d", 2, "d: 2 booleans were written as numbers (false -> 0.0); a contract "
                        "`d=freeze` refuses them")]),
        ([[{"t": 7}], [{"t": "2024-06-02T08:00:54.178Z"}]], "upsolver", [
            (1, "t", 1, 't: 1 timestamp was written as a number ("2024-06-02T08:00:54.178Z" '
                        "-> 1717315254178); a contract `t=freeze` refuses it")]),
        # nested fields, inside their record column
        ([[{"r": {"n": 1}}], [{"r": {"n": True}}]], "upsolver", [
            (1, "r.n", 1, "r.n: 1 boolean was written as a number (true -> 1); a contract "
                          "`r.n=freeze` refuses it")]),
    ],
    ids=["boolean-into-long", "numbers-into-text", "widen-long-into-string",
         "booleans-into-double", "timestamp-into-long", "nested"],
)
def test_values_written_only_as_another_kind_are_warned(
    batches: list[list[dict[str, object]]], policy: str,
    expected: list[tuple[int, str, int, str]],
) -> None:
    run = toolkit.simulate(batches, policy=policy)
    assert [(w.batch, w.field, w.count, str(w)) for w in run.warnings] == expected


@pytest.mark.parametrize(
    ("batches", "policy", "expected"),
    [
        # RULES 1: an array is typed by its widest leaf, each leaf written as that type
        ([[{"a": [1, 1.1, True]}, {"a": [2.5]}, {"a": [False, 3, True]}]], "upsolver",
         ["a: 3 booleans inside lists were written as numbers"]),
        ([[{"a": [33, "x"]}, {"a": [[True, "y"]]}]], "upsolver",
         ["a: 1 boolean inside lists was written as text",
          "a: 1 long inside lists was written as text"]),
        # nested, and beside the array's own warning ([2, true] into a list of strings)
        ([[{"r": {"t": ["x"]}}], [{"r": {"t": [2, True]}}]], "upsolver",
         ["r.t: 1 list of longs was written as a list of texts; a contract `r.t=freeze` "
          "refuses it", "r.t: 1 boolean inside lists was written as text"]),
        ([[{"q": [2]}], [{"q": [True, 1]}]], "widen",
         ["q: 1 boolean inside lists was written as a number"]),
        # the whole list converted: a list of numbers, not "a number" (the wording)
        ([[{"q": [2]}], [{"q": [True]}]], "upsolver",
         ["q: 1 list of booleans was written as a list of numbers; a contract `q=freeze` "
          "refuses it"]),
    ],
    ids=["boolean-among-numbers", "numbers-among-texts", "nested", "widen", "whole-list"],
)
def test_leaves_of_lists_written_as_another_kind_are_warned(
    batches: list[list[dict[str, object]]], policy: str, expected: list[str]
) -> None:
    run = toolkit.simulate(batches, policy=policy)
    assert [str(w) for w in run.warnings] == expected


def test_lists_whose_leaves_keep_their_kind_are_not_warned() -> None:
    run = toolkit.simulate([[{"a": [1, 2.5, None]}, {"a": [[1], 2]}, {"a": ["x", "2024-01-01"]}]])
    assert run.warnings == ()


@pytest.mark.parametrize("policy", ["upsolver", "widen"])
def test_values_a_hint_converts_across_kinds_are_warned(policy: str) -> None:
    # docs/rules.md, Type hints: a hint converts before the batch is observed, so the
    # profile sees 0.0 as a double; the hint's own tally tells what the values were
    run = toolkit.simulate(
        [[{"d": 1.5, "s": "x"}], [{"d": False, "s": 7}, {"d": True, "s": "7"}, {"d": 2}]],
        policy=policy, hints={"d": "double", "s": "string"})
    assert [r["d"] for r in run.rows] == [1.5, 0.0, 1.0, 2.0]
    assert [(w.batch, w.count, str(w)) for w in run.warnings] == [
        (1, 2, "d: 2 booleans were written as numbers (false -> 0.0) by the hint `d=double`"),
        (1, 1, 's: 1 long was written as text (7 -> "7") by the hint `s=string`'),
    ]


@pytest.mark.parametrize(
    "hints",
    [{"d": "double"}, {"d": "decimal(10,2)"}, {"d": "long"}],
    ids=["long-into-double", "numbers-into-decimal", "texts-spelling-numbers"],
)
def test_a_hint_keeping_the_kind_of_its_values_is_not_warned(hints: dict[str, str]) -> None:
    # within numbers, and texts that spell the hint's type (what a hint is for)
    run = toolkit.simulate([[{"d": 1}, {"d": "12"}, {"d": 2.0}]], hints=hints)
    assert run.warnings == ()


def test_decimals_in_their_hinted_column_are_not_warned_beside_a_text_column() -> None:
    # the hinted decimal(10, 2) column holds them as themselves; price_string holds them as
    # text too (RULES 3.1), which is no conversion a reader is left with
    run = toolkit.simulate([[{"price": 12.5}, {"price": "n/a"}]],
                           hints={"price": "decimal(10,2)"})
    assert [c.name for c in run.schema.fields] == ["price", "price_string"]
    assert run.warnings == ()


@pytest.mark.parametrize(
    ("batches", "policy"),
    [
        ([[{"n": 1}], [{"n": 2.5}]], "upsolver"),  # long -> double: a number still
        ([[{"n": 1}, {"n": True}]], "upsolver"),  # a first batch: booleans get a column
        ([[{"n": True}], [{"n": 1}]], "upsolver"),  # n_long is created (RULES 3.3)
        ([[{"t": "2024-01-01T00:00:00Z"}], [{"t": 1717315254178}]], "upsolver"),  # t_long
        ([[{"s": "x"}], [{"s": "2024-01-01"}]], "upsolver"),  # a date arrived as text
        ([[{"n": 1}], [{"n": True}]], "widen"),  # booleans do not widen: set aside
    ],
    ids=["within-numbers", "first-batch", "own-column", "long-beside-timestamp",
         "date-text-as-text", "widen-refuses"],
)
def test_no_warning_when_every_value_keeps_its_kind_somewhere(
    batches: list[list[dict[str, object]]], policy: str,
) -> None:
    assert toolkit.simulate(batches, policy=policy).warnings == ()


def test_the_preview_warns_before_anything_is_written(tmp_path: Path) -> None:
    lake: Catalog = catalog(tmp_path / "lake")
    write_batches(lake, "db.orders", [ORDERS])
    model = PlanModel.from_preview(plan_preview(WITH_BOOLEANS, "db.orders", lake))
    assert model.conversions == (
        "quantity: 3 booleans were written as numbers (true -> 1); a contract "
        "`quantity=freeze` refuses them",)
    assert "Warning: quantity: 3 booleans were written as numbers" in plan_header_html(model)


def test_toolkit_profile_and_preview_print_the_warning_line(tmp_path: Path) -> None:
    source = tmp_path / "mixed.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in [{"q": "a"}, {"q": 3}]))
    runner = CliRunner()
    out = runner.invoke(cli, ["profile", str(source), "--policy", "widen"],
                        catch_exceptions=False).output
    assert ("Conversion warnings (as a new table):\nq: 1 long was written as text "
            '(3 -> "3"); a contract `q=freeze` refuses it') in out
    # the upsolver policy gives the long a column of its own in a new table: no warning
    assert "Conversion warnings" not in runner.invoke(
        cli, ["profile", str(source)], catch_exceptions=False).output

    lake = tmp_path / "lake"
    day1 = tmp_path / "day1.jsonl"
    day1.write_text("".join(json.dumps(r) + "\n" for r in ORDERS))
    write_batches(catalog(lake), "db.orders", [ORDERS])
    day2 = tmp_path / "day2.jsonl"
    day2.write_text("".join(json.dumps(r) + "\n" for r in WITH_BOOLEANS))
    shown = runner.invoke(cli, ["preview", str(day2), "-t", "db.orders", "--catalog", str(lake)],
                          catch_exceptions=False)
    assert shown.exit_code == 0, shown.output
    assert "Warning: quantity: 3 booleans were written as numbers (true -> 1)" in shown.output
    data = json.loads(runner.invoke(
        cli, ["preview", str(day2), "-t", "db.orders", "--catalog", str(lake), "--json"],
        catch_exceptions=False).output)
    assert data["warnings"] == ["quantity: 3 booleans were written as numbers (true -> 1); "
                                "a contract `quantity=freeze` refuses them"]


@pytest.mark.spark
def test_ingest_reports_the_warning_and_where_the_batch_drifted(
    lakehouse: Catalog, spark: object, tmp_path: Path
) -> None:
    from toolkit.pipeline.ingest import ingest

    toolkit_table = "warn.orders"
    ingest(ORDERS, toolkit_table, lakehouse, spark, batch_id="w0")
    path = tmp_path / "day2.jsonl"  # JSON lines: profiled by the JVM tally
    path.write_text("".join(json.dumps(r) + "\n" for r in WITH_BOOLEANS))
    report = ingest(str(path), toolkit_table, lakehouse, spark, batch_id="w1")
    assert report.warnings == (
        "quantity: 3 booleans were written as numbers (true -> 1); a contract "
        "`quantity=freeze` refuses them",)
    assert "Warning: quantity: 3 booleans" in str(report)
    assert report.profile.first_seen("quantity") == {"boolean": 1, "long": 2}
    assert report.profile.last_seen("quantity") == {"boolean": 4, "long": 2}


def test_the_notebook_commit_outcome_carries_the_warning() -> None:
    from toolkit.notebook.outcome import CommitOutcome
    from toolkit.pipeline.ingest import IngestReport

    run = toolkit.simulate([ORDERS, WITH_BOOLEANS])
    report = IngestReport("db.orders", "b2", run.plans[1], 4, 7, run.profile,
                          warnings=tuple(str(w) for w in run.warnings))
    assert ("Warning: quantity: 3 booleans were written as numbers (true -> 1); a contract "
            "`quantity=freeze` refuses them." in CommitOutcome.from_report(report).message)
