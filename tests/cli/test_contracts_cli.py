"""``--contract FIELD=MODE`` (repeatable): checked as ``contracts=`` is, shown in the
preview's plan, recorded in plan files (so ``apply`` ingests with them), and passed on by
every command that ingests. A table's kept contracts hold in a preview that gives none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import toolkit
from tests.cli.test_plans import _Stopped, seen  # noqa: F401 (a fixture)
from toolkit.cli import cli
from toolkit.core.batch.contracts import CONTRACTS_PROPERTY
from toolkit.core.batch.quarantine import Quarantined
from toolkit.core.evolution.planfile import loads
from toolkit.core.values.types import Column, Struct
from toolkit.iceberg.quarantine import append_quarantined
from toolkit.iceberg.schema import to_iceberg

LINES = [{"id": i, "quantity": i} for i in range(9)] + [{"id": 9, "quantity": "two"}]


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


def _table(lake: Path, properties: dict[str, str] | None = None) -> None:
    cat = toolkit.catalog(lake)
    cat.create_namespace("db")
    cat.create_table("db.t", schema=to_iceberg(Struct((
        Column(1, "id", "long"), Column(2, "quantity", "long")))), properties=properties or {})


def test_preview_shows_what_a_contract_refuses_and_the_plan_file_keeps_it(
    tmp_path: Path
) -> None:
    source = tmp_path / "day2.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in LINES))
    lake, saved = tmp_path / "lake", tmp_path / "p.json"
    _table(lake)
    where = ["-t", "db.t", "--catalog", lake, "--batch-id", "b2"]

    evolving = invoke("preview", source, *where)
    assert evolving.exit_code == 0 and "+ quantity_string: string" in evolving.output

    out = invoke("preview", source, *where, "--contract", "quantity=discard_row",
                 "--contract", "*=freeze", "--save", saved)
    assert out.exit_code == 0, out.output
    assert out.output.splitlines()[0].startswith(
        "db.t, batch 1 (id b2): no schema change, 1 value refused by contracts")
    assert ("- 1 of 10 values of `quantity` arrived as a string; no column of `quantity` "
            "holds it (quantity long): its contract discard_row sets its record aside "
            "(reason contract)") in out.output.splitlines()
    planfile = loads(saved.read_text())
    assert planfile.options["contracts"] == {"quantity": "discard_row", "*": "freeze"}
    assert [b.key for b in planfile.plan.held] == ["quantity"]


def test_a_bad_contract_is_refused_in_words(tmp_path: Path) -> None:
    source = tmp_path / "day.jsonl"
    source.write_text('{"a": 1}\n')
    for given, said in (("quantity", "give FIELD=MODE"),
                        ("quantity=frozen", "unknown mode 'frozen'; choose one of evolve, "
                                            "freeze, discard_row, discard_value")):
        out = invoke("preview", source, "-t", "db.t", "--catalog", tmp_path / "lake",
                     "--contract", given)
        assert out.exit_code == 2
        assert said in " ".join(out.output.split())


def test_a_preview_without_contracts_obeys_those_the_table_keeps(tmp_path: Path) -> None:
    source = tmp_path / "day2.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in LINES))
    lake = tmp_path / "lake"
    _table(lake, {CONTRACTS_PROPERTY: '{"quantity":"freeze"}'})
    out = invoke("preview", source, "-t", "db.t", "--catalog", lake)
    assert out.exit_code == 0, out.output
    assert "its contract freeze fails the batch" in out.output
    assert "quantity_string" not in out.output
    # given again, contracts replace the kept ones
    again = invoke("preview", source, "-t", "db.t", "--catalog", lake,
                   "--contract", "quantity=evolve")
    assert "+ quantity_string: string" in again.output and "contract" not in again.output


def test_every_command_that_ingests_passes_the_contracts_on(
    tmp_path: Path, seen: dict[str, dict[str, object]]  # noqa: F811 (the fixture)
) -> None:
    source = tmp_path / "day1.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in LINES))
    lake, saved = tmp_path / "lake", tmp_path / "p.json"
    where = ["--catalog", str(lake)]
    contract = ["--contract", "quantity=freeze", "--contract", "*=discard_value"]
    wanted = {"quantity": "freeze", "*": "discard_value"}

    def run(*args: str | Path) -> None:
        out = CliRunner().invoke(cli, [str(a) for a in args])
        assert out.exit_code == 1 and "_Stopped" in out.output, out.output  # at the fake

    made = invoke("preview", source, "-t", "db.t", *where, "--batch-id", "b1", *contract,
                  "--save", saved)
    assert made.exit_code == 0, made.output
    run("apply", saved)
    assert seen["ingest"]["contracts"] == wanted
    run("ingest", source, "-t", "db.t", *where, *contract)
    assert seen["ingest"]["contracts"] == wanted
    run("stream", tmp_path, "-t", "db.t", *where, "--once", *contract)
    assert seen["stream"]["contracts"] == wanted
    _table(lake)
    append_quarantined(toolkit.catalog(lake), "db.t", [Quarantined(
        {"id": 9, "quantity": "two"}, "contract", "quantity", "string", "quantity long", "b1",
        "field 'quantity': ...")], "b1")
    run("replay", "db.t", *where, *contract)
    assert seen["replay"]["contracts"] == wanted
    # not given: nothing is passed, and the table's contracts hold
    run("ingest", source, "-t", "db.t", *where)
    assert "contracts" not in seen["ingest"]


@pytest.mark.parametrize("mode", ["discard_row", "discard_value"])
def test_the_cli_help_names_the_modes(mode: str) -> None:
    assert mode in " ".join(invoke("ingest", "--help").output.split())
