"""``--hint FIELD=TYPE`` on every command that plans or ingests (docs/rules.md, *Type
hints*): the preview plans with it, the plan file keeps it, ingest, apply, stream and
replay pass it on, and a bad hint is refused in plain words naming the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import toolkit
from tests.cli.test_plans import invoke, seen  # noqa: F401  (seen: a fixture)
from toolkit.cli import cli
from toolkit.core.batch.quarantine import Quarantined
from toolkit.core.evolution.planfile import loads
from toolkit.core.values.types import Column, Struct
from toolkit.iceberg.quarantine import append_quarantined
from toolkit.iceberg.schema import to_iceberg

HINT = ["--hint", "price=decimal(10,2)", "--hint", "ts=timestamp[ms]"]
HINTS = {"price": "decimal(10,2)", "ts": "timestamp[ms]"}


def _source(tmp_path: Path) -> Path:
    lines = [{"id": 1, "price": 12.5, "ts": 1704164645000}, {"id": 2, "price": "12.50"},
             {"id": 3, "price": 3}]
    source = tmp_path / "orders.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return source


def test_preview_plans_with_the_hints_and_the_plan_file_keeps_them(tmp_path: Path) -> None:
    saved = tmp_path / "p.json"
    out = invoke("preview", _source(tmp_path), "-t", "db.orders", "--catalog", tmp_path / "lake",
                 *HINT, "--save", saved)
    assert out.exit_code == 0, out.output
    assert "+ price: decimal(10, 2)" in out.output
    assert "The hints give `price` the type decimal(10, 2)" in out.output
    assert "+ ts: timestamp" in out.output
    assert loads(saved.read_text()).options["hints"] == HINTS
    plain = invoke("preview", _source(tmp_path), "-t", "db.orders", "--catalog",
                   tmp_path / "lake")
    assert "+ price: decimal" not in plain.output  # without the hint: the rules alone


@pytest.mark.parametrize(
    ("hint", "says"),
    [
        ("price=decmial(10,2)", "hint for `price`: decmial(10,2) is no Iceberg type (did you "
                                "mean decimal?)"),
        ("price", "'price': give a field and an Iceberg type, e.g. price=decimal(10,2)"),
        ("ts=long[ms]", "hint for `ts`: only a timestamp takes an epoch unit"),
    ],
)
def test_a_bad_hint_is_refused_in_plain_words(tmp_path: Path, hint: str, says: str) -> None:
    out = CliRunner().invoke(cli, ["preview", str(_source(tmp_path)), "-t", "db.t",
                                   "--catalog", str(tmp_path / "lake"), "--hint", hint])
    assert out.exit_code == 2
    assert says in " ".join(out.output.split())
    assert "Traceback" not in out.output


def test_every_command_that_ingests_passes_the_hints_on(
    tmp_path: Path, seen: dict[str, dict[str, object]]  # noqa: F811
) -> None:
    source, lake, saved = _source(tmp_path), tmp_path / "lake", tmp_path / "p.json"
    where = ["--catalog", str(lake)]

    def run(*args: str | Path) -> None:
        out = CliRunner().invoke(cli, [str(a) for a in args])
        assert out.exit_code == 1 and "_Stopped" in out.output, out.output  # at the fake

    run("ingest", source, "-t", "db.t", *where, *HINT)
    assert seen["ingest"]["hints"] == HINTS
    run("ingest", source, "-t", "db.t", *where)
    assert "hints" not in seen["ingest"]  # none given: the table's own hints hold
    made = invoke("preview", source, "-t", "db.t", *where, "--batch-id", "b1", *HINT,
                  "--save", saved)
    assert made.exit_code == 0, made.output
    run("apply", saved)
    assert seen["ingest"]["hints"] == HINTS
    run("stream", tmp_path, "-t", "db.t", *where, "--once", *HINT)
    assert seen["stream"]["hints"] == HINTS

    cat = toolkit.catalog(lake)
    cat.create_namespace("db")
    cat.create_table("db.t", schema=to_iceberg(Struct((Column(1, "id", "long"),))))
    append_quarantined(cat, "db.t", [Quarantined({"id": 1, "price": "n/a"}, "incompatible",
                                                 "price", "string", "long", "d2", "not a long")],
                       "d2")
    run("replay", "db.t", *where, *HINT)
    assert seen["replay"]["hints"] == HINTS
