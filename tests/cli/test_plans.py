"""The commands of plan files (toolkit.cli.plans) in-process (click's runner): ``preview``,
``export``, ``apply``, ``ingest --require-approval``; their output as text and JSON, and the
exit codes of what they refuse. What a plan file binds: test_plan_binding.py; the installed
script itself: test_console_script.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pytest
from click.testing import CliRunner, Result
from pyiceberg.catalog import Catalog

import toolkit
from toolkit.cli import cli
from toolkit.core.batch.quarantine import Quarantined
from toolkit.core.evolution.planfile import PlanFile, dumps, loads
from toolkit.core.evolution.state import ABSENT
from toolkit.core.values.types import Column, Struct
from toolkit.iceberg.catalog import embedded_folder
from toolkit.iceberg.ledger import BATCH_ID_PROPERTY
from toolkit.iceberg.quarantine import append_quarantined
from toolkit.iceberg.schema import to_iceberg

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DATA = Path(toolkit.__file__).parent / "data"


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_preview_prints_the_plan_and_saves_a_plan_file(tmp_path: Path) -> None:
    source = shutil.copy(DATA / "sample_day1.jsonl", tmp_path / "day1.jsonl")
    lake, saved = tmp_path / "lake", tmp_path / "p.json"
    out = invoke("preview", source, "-t", "db.events", "--catalog", lake, "--policy", "widen",
                 "--batch-id", "b1", "--save", saved, "--json")
    assert out.exit_code == 0
    data = json.loads(out.output)
    assert (data["table"], data["batch_id"], data["changes_schema"]) == ("db.events", "b1", True)
    assert data["summary"][0].startswith("db.events, batch 1 (id b1): 8 columns added")
    planfile = loads(saved.read_text())
    assert planfile.options == {"policy": "widen", "on_incompatible": "quarantine",
                                "detect_dates": True}
    assert (planfile.state, planfile.catalog) == (ABSENT, str(lake))
    assert not toolkit.catalog(lake).list_namespaces()  # a preview changes nothing
    trino = invoke("export", saved, "--as", "trino", "--table", "ice.db.events")
    assert trino.output.startswith('CREATE SCHEMA IF NOT EXISTS "ice"."db";\n')
    code = invoke("export", saved, "--as", "pyiceberg", "--json")
    exec(json.loads(code.output)["code"], {"catalog": toolkit.catalog(lake)})
    assert [f.name for f in toolkit.catalog(lake).load_table("db.events").schema().fields][:2] == [
        "coordinates", "device"]


def test_the_rare_type_threshold_decides_which_types_are_set_aside(tmp_path: Path) -> None:
    # 3 of 100 amounts are text: a column of their own without a threshold, a rare type
    # set aside under a 5% threshold, not under 2% (3% is not under it)
    lines = [{"id": i, "amount": i} for i in range(97)] + [{"amount": "n/a"}] * 3
    source = tmp_path / "day1.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in lines))
    lake = tmp_path / "lake"

    def preview(*more: str) -> Result:
        return CliRunner().invoke(cli, ["preview", str(source), "-t", "db.t", "--catalog",
                                        str(lake), "--batch-id", "b1", *more])

    rare = ("- 3 of 100 values of `amount` arrived as strings (3%, under the 5% rare-type "
            "threshold); set aside instead of adding amount as string and amount_long")
    without = preview()
    assert without.exit_code == 0 and "+ amount_long: long" in without.output
    assert "rare" not in without.output
    assert preview("--rare-type-percent", "2").output == without.output
    under = preview("--rare-type-percent", "5", "--save", str(tmp_path / "p.json"))
    assert under.exit_code == 0, under.output
    assert under.output.splitlines()[0] == (
        "db.t, batch 1 (id b1): 2 columns added, 1 rare type set aside (against a table "
        "that does not exist yet)")
    assert rare in under.output.splitlines() and "amount_long" not in under.output.split("- 3")[0]
    # the plan file keeps the threshold, so `apply` ingests with it
    assert loads((tmp_path / "p.json").read_text()).options["rare_type_percent"] == 5
    for bad in ("0", "75", "nan"):
        out = preview("--rare-type-percent", bad)
        assert out.exit_code == 2
        assert "is out of range: give a share in percent above 0 and at most 50 (1 means " \
               "1%), or leave the option out for no threshold" in out.output
    widen = preview("--rare-type-percent", "1", "--policy", "widen")
    assert widen.exit_code == 2
    assert "the widen policy has no rare-type threshold; leave the option out with --policy " \
           "widen" in " ".join(widen.output.split())
    assert "a type that makes up less than this percent" in " ".join(
        preview("--help").output.split())


def test_a_plan_that_rewrites_data_is_not_exported(tmp_path: Path) -> None:
    sim = toolkit.simulate([[{"n": 1}], [{"n": "x"}]], policy="widen")
    plan = sim.plans[1]
    assert plan.rewrites
    (tmp_path / "p.json").write_text(dumps(PlanFile("db.t", plan, ABSENT, "b2")))
    out = CliRunner().invoke(cli, ["export", str(tmp_path / "p.json"), "--as", "spark-sql"])
    assert out.exit_code == 2
    assert "error: the plan rewrites data (n to string)" in out.output


@pytest.mark.spark
def test_require_approval_ingests_a_batch_that_changes_nothing(
    tmp_path: Path, lakehouse: Catalog, spark: SparkSession
) -> None:
    day1 = shutil.copy(DATA / "sample_day1.jsonl", tmp_path / "day1.jsonl")
    toolkit.ingest(day1, "cli.steady", lakehouse, spark, batch_id="day1")
    args = ["ingest", day1, "-t", "cli.steady", "--catalog", embedded_folder(lakehouse),
            "--require-approval", "--batch-id", "again", "--json"]
    out = invoke(*args)
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["rows_written"] == 20
    assert json.loads(invoke(*args).output)["already_applied"] is True
    assert not list(tmp_path.glob("*.plan.json"))


def test_a_plan_file_opens_in_the_notebook_preview_panel(tmp_path: Path) -> None:
    source = shutil.copy(DATA / "sample_day1.jsonl", tmp_path / "day1.jsonl")
    saved = tmp_path / "p.json"
    invoke("preview", source, "-t", "db.events", "--catalog", tmp_path / "lake",
           "--batch-id", "b1", "--save", saved)
    planfile = loads(saved.read_text())
    asked = []
    panel = toolkit.preview(plan=saved, commit=asked.append)
    assert (panel.preview.plan, panel.preview.state) == (planfile.plan, planfile.state)
    assert len(panel.preview.records) == 20
    panel.approve()  # what the button does: commits exactly the file's plan and batch
    assert [(r.table, r.batch_id, r.approved, r.expected) for r in asked] == [
        ("db.events", "b1", planfile.plan, planfile.state)]


def test_the_notebook_preview_of_a_plan_file_sets_aside_its_rare_types(tmp_path: Path) -> None:
    # the panel shows the file's plan: its rare types too, so the records holding one are
    # shown set aside and the threshold's line names them (not "no type ... is rare")
    lines = [{"id": i, "amount": i} for i in range(97)] + [{"amount": "n/a"}] * 3
    source = tmp_path / "day1.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in lines))
    saved = tmp_path / "p.json"
    out = invoke("preview", source, "-t", "db.t", "--catalog", tmp_path / "lake",
                 "--batch-id", "b1", "--rare-type-percent", "5", "--save", saved)
    assert out.exit_code == 0, out.output
    planfile = loads(saved.read_text())
    assert len(planfile.plan.rare) == 1
    panel = toolkit.preview(plan=saved, commit=lambda request: None)
    assert panel.preview.plan == planfile.plan
    model = panel.model
    assert model.rare_types == (str(planfile.plan.rare[0]),)
    assert model.rare_types_text == (
        "rare-type threshold 5%: 3 of 100 values of `amount` arrived as strings (3%, under the "
        "5% rare-type threshold); set aside instead of adding amount as string and amount_long")
    assert model.quarantine is not None and model.quarantine.by_reason == (("rare-type", 3),)


class _Stopped(Exception):
    """What the fake pipeline raises once it has seen its keywords (no Spark, no write)."""


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> dict[str, dict[str, object]]:
    """The keywords each command passed the pipeline: ingest, stream and replay are
    replaced by fakes that keep them and stop, and Spark never starts."""
    import toolkit.cli.plans
    import toolkit.cli.quarantined
    import toolkit.cli.streams
    import toolkit.pipeline.ingest
    import toolkit.pipeline.replay
    import toolkit.pipeline.stream

    calls: dict[str, dict[str, object]] = {}

    def fake(name: str) -> object:
        def run(*args: object, **kwargs: object) -> None:
            calls[name] = kwargs
            raise _Stopped(name)
        return run

    for module in (toolkit.cli.plans, toolkit.cli.streams, toolkit.cli.quarantined):
        monkeypatch.setattr(module, "start_spark", lambda catalog, conf: None)
    monkeypatch.setattr(toolkit.pipeline.ingest, "ingest", fake("ingest"))
    monkeypatch.setattr(toolkit.pipeline.stream, "stream", fake("stream"))
    monkeypatch.setattr(toolkit.pipeline.replay, "replay", fake("replay"))
    return calls


def test_every_command_that_ingests_passes_the_rare_type_threshold_on(
    tmp_path: Path, seen: dict[str, dict[str, object]]
) -> None:
    lines = [{"id": i, "amount": i} for i in range(97)] + [{"amount": "n/a"}] * 3
    source = tmp_path / "day1.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in lines))
    lake, saved = tmp_path / "lake", tmp_path / "p.json"
    where = ["--catalog", str(lake)]

    def run(*args: str | Path) -> None:
        out = CliRunner().invoke(cli, [str(a) for a in args])
        assert out.exit_code == 1 and "_Stopped" in out.output, out.output  # at the fake

    # 50, the most the threshold can be, is accepted
    made = invoke("preview", source, "-t", "db.t", *where, "--batch-id", "b1",
                  "--rare-type-percent", "50", "--save", saved)
    assert made.exit_code == 0, made.output
    run("apply", saved)
    assert seen["ingest"]["rare_type_percent"] == 50
    run("ingest", source, "-t", "db.t", *where, "--rare-type-percent", "5")
    assert seen["ingest"]["rare_type_percent"] == 5
    run("stream", tmp_path, "-t", "db.t", *where, "--once", "--rare-type-percent", "5")
    assert seen["stream"]["rare_type_percent"] == 5

    cat = toolkit.catalog(lake)
    cat.create_namespace("db")
    cat.create_table("db.t", schema=to_iceberg(Struct((Column(1, "amount", "long"),))))
    append_quarantined(cat, "db.t", [
        Quarantined(r, "incompatible", "amount", "double" if i < 97 else "string", "long",
                    "d2", "amount: not a long")
        for i, r in enumerate([{"amount": i + 0.5} for i in range(97)]
                              + [{"amount": "n/a"}] * 3)
    ], "d2")
    run("replay", "db.t", *where, "--rare-type-percent", "5")
    assert seen["replay"]["rare_type_percent"] == 5
    # a dry run plans without Spark: the rare strings are set aside, each saying why, and
    # the plan is made with the records that land (docs/rules.md, "Replay")
    dry = invoke("replay", "db.t", *where, "--rare-type-percent", "5", "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "3 records cannot land now" in dry.output
    assert "3 of 100 values of `amount` arrived as strings (3%, under the 5% rare-type " \
           "threshold); set aside" in dry.output


def test_a_plan_file_applied_again_names_its_batch_by_id(tmp_path: Path) -> None:
    source = shutil.copy(DATA / "sample_day1.jsonl", tmp_path / "day1.jsonl")
    lake, saved = tmp_path / "lake", tmp_path / "p.json"
    invoke("preview", source, "-t", "db.t", "--catalog", lake, "--batch-id", "b1",
           "--save", saved)
    cat = toolkit.catalog(lake)
    cat.create_namespace("db")
    table = cat.create_table("db.t", schema=to_iceberg(Struct((Column(1, "n", "long"),))))
    # the batch as an earlier run left it: a snapshot holding its id (no Spark needed)
    table.append(pa.table({"n": pa.array([1], pa.int64())}),
                 snapshot_properties={BATCH_ID_PROPERTY: "b1"})
    out = invoke("apply", saved)
    assert (out.exit_code, out.output) == (
        0, "db.t: the batch with id b1 was already applied; nothing written\n")
