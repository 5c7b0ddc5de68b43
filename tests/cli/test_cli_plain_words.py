"""The command line in plain words (issue 14): a policy is named by the word ``--policy``
takes, a reason is a sentence with its rule as a footnote, counts have their plural and
thousands separators, never ``column(s)``."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner, Result

import toolkit
from toolkit.cli import cli
from toolkit.core.engine import Engine
from toolkit.core.lineage import plan_lineage_properties
from toolkit.core.types import Struct
from toolkit.iceberg.schema import to_iceberg

DATA = Path(toolkit.__file__).parent / "data"


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_the_policy_option_names_each_policy_by_the_word_it_takes() -> None:
    text = " ".join(invoke("preview", "--help").output.split())
    assert "upsolver: a type-suffixed column for each new type (RULES 2-4); widen: one " \
           "column per key, widened by the matrix (RULES 5)." in text
    assert "automatic" not in text


def test_a_preview_gives_each_reason_as_a_sentence_and_its_rule_as_a_footnote(
    tmp_path: Path,
) -> None:
    source = shutil.copy(DATA / "sample_day1.jsonl", tmp_path / "day1.jsonl")
    out = invoke("preview", source, "-t", "db.events", "--catalog", tmp_path / "lake",
                 "--batch-id", "b1")
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[0].startswith("db.events, batch b1: batch 1: 8 columns added")
    assert "    The first batch had `coordinates` as a list of lists of lists of longs " \
           "(RULES 3.2)" in lines
    assert "    The first batch had `device` as a record (RULES 3.2)" in lines
    assert not any(line.strip().startswith("RULES") for line in lines)
    assert "(s)" not in out.output and "long[]" not in out.output


def test_the_lineage_names_the_policy_and_gives_each_reason(tmp_path: Path) -> None:
    engine = Engine()
    first = engine.plan(Struct(), engine.observe([{"size": 4}]))
    plan = engine.plan(first.after, engine.observe([{"size": 2.5}]), 1)
    lake = tmp_path / "lake"
    cat = toolkit.catalog(lake)
    cat.create_namespace("db")
    table = cat.create_table("db.t", schema=to_iceberg(first.after))
    with table.transaction() as txn:
        txn.set_properties(plan_lineage_properties(plan, table.properties, "day2"))
    assert invoke("lineage", "db.t", "--catalog", lake).output.splitlines() == [
        "#1 by the upsolver policy (RULES 3), batch day2",
        "  + add size_double: double  doc='upsolver_evolved_from:size'",
        "      This batch had `size` as a double, which none of its columns holds: `size` "
        "holds longs (RULES 3.3)",
        "  undo: - drop size_double",
    ]
