"""``toolkit profile`` says where each type of a field arrived (issue #28)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from toolkit.cli import cli


def run(*args: str | Path) -> str:
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_profile_says_where_drift_starts(tmp_path: Path) -> None:
    lines = [{"id": i, "price": "n/a" if i == 1_201 else i} for i in range(1, 1_501)]
    lines += [{"id": i, "price": i, "shipping": {"zip": "1"}} for i in range(1_501, 2_001)]
    source = tmp_path / "orders.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in lines))
    text = run("profile", source)
    assert "Where drift starts:\n`price` became a string at record 1,201" in text
    data = json.loads(run("profile", source, "--json"))
    by_path = {tuple(f["path"]): f for f in data["fields"]}
    assert [(t["type"], t["first_record"], t["last_record"])
            for t in by_path[("price",)]["types"]] == [("long", 1, 2_000),
                                                       ("string", 1_201, 1_201)]
    assert by_path[("shipping",)]["types"][0]["first_record"] == 1_501
    assert by_path[("shipping", "zip")]["types"][0]["first_record"] == 1_501
