"""The command line in plain words (issue 14): a policy is named by the word ``--policy``
takes, a reason is a sentence with its rule as a footnote, counts have their plural and
thousands separators, never ``column(s)``."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from click.testing import CliRunner, Result

import toolkit
from toolkit.cli import cli
from toolkit.core.batch.quarantine import Quarantined
from toolkit.core.engine import Engine
from toolkit.core.evolution.lineage import plan_lineage_properties
from toolkit.core.values.types import Struct
from toolkit.iceberg.quarantine import append_quarantined
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
    assert lines[0].startswith("db.events, batch 1 (id b1): 8 columns added")
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


def test_the_quarantine_listing_gives_each_reason_in_words_and_help_gives_its_key(
    tmp_path: Path,
) -> None:
    lake = tmp_path / "lake"
    cat = toolkit.catalog(lake)
    cat.create_namespace("db")
    cat.create_table("db.t", schema=toolkit.simulate([[{"size": 4}]]).schema)
    append_quarantined(cat, "db.t", [
        Quarantined({"size": "big"}, "rewrite-not-approved", "size", "string", "long", "day2",
                    "field 'size': ..."),
        Quarantined("{oops", "malformed", None, None, None, "day2", "not JSON"),
    ], "day2")
    out = invoke("quarantine", "db.t", "--catalog", lake)
    assert out.exit_code == 0, out.output
    rows = [re.split(r"\s{2,}", line) for line in out.output.splitlines()[1:4]]
    assert rows == [
        ["batch", "field", "reason", "types", "value", "count"],
        ["day2", "size", "a value needs a column rewrite nobody approved", "string into long",
         '"big"', "1"],
        ["day2", "-", "a line that is not valid JSON (cannot be replayed)", "-", "{oops", "1"],
    ]
    data = json.loads(invoke("quarantine", "db.t", "--catalog", lake, "--json").output)
    assert [g["reason"] for g in data["groups"]] == ["rewrite-not-approved", "malformed"]
    # the key --reason takes, beside the words the listing shows
    helped = invoke("quarantine", "--help").output
    assert "  rewrite-not-approved  a value needs a column rewrite nobody approved" in helped
    only = invoke("quarantine", "db.t", "--catalog", lake, "--reason", "malformed")
    assert "a line that is not valid JSON" in only.output and "big" not in only.output
    # replay refuses a chosen record that is not a JSON object, saying why in words
    (oops,) = data["groups"][1]["ids"]
    refused = CliRunner().invoke(cli, ["replay", "db.t", "--catalog", str(lake), "--id", oops])
    assert refused.exit_code == 2, refused.output
    assert ("1 chosen record cannot be replayed, as only JSON objects can ('{oops' is not "
            "valid JSON); leave out its --id") in refused.output
