"""``toolkit undo`` (toolkit.cli.history) commits the inverse of a logged change once, and
refuses what it cannot undo. It asks for a yes before it destroys stored values
(docs/rules.md, "What asks for a yes"): an undo whose inverse drops columns holding values
prints the columns and their value counts and exits 3, changing nothing; ``--dry-run``
shows the same and exits 0; ``--yes`` runs it. In-process (click's runner) and as the
installed script."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
from click.testing import CliRunner, Result
from pyiceberg.catalog import Catalog

import toolkit
from tests.cli.lakes import names, renamed_table
from tests.reliability.children import short_lived_env
from toolkit.cli import ExitCode, cli

TOOLKIT = Path(sys.executable).with_name("toolkit")


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


def invoke_raising(*args: str | Path) -> Result:
    """As :func:`invoke`, letting an unexpected exception through with its traceback."""
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def orders(folder: Path) -> Catalog:
    """db.t: entry 1 adds quantity_string and gift; then rows give them 2 and 1 values."""
    cat = toolkit.catalog(folder)
    cat.create_namespace("db")
    cat.create_table("db.t", schema=pa.schema([pa.field("id", pa.int64())]))
    toolkit.evolve(cat, "db.t", [toolkit.ops.add("quantity_string", "string"),
                                 toolkit.ops.add("gift", "boolean")])
    cat.load_table("db.t").append(pa.table({
        "id": pa.array([1, 2, 3], pa.int64()),
        "quantity_string": pa.array(["two", "3 kg", None]),
        "gift": pa.array([None, True, None]),
    }))
    return cat


def state(cat: Catalog) -> tuple[list[str], int]:
    table = cat.load_table("db.t")
    return [f.name for f in table.schema().fields], len(toolkit.lineage(table))


def test_undo_reverses_a_rename_once_and_refuses_what_it_cannot(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    cat = renamed_table(lake)
    done = invoke_raising("undo", "db.t", "1", "--catalog", lake)
    assert done.exit_code == 0, done.output
    assert done.output == "db.t: undid lineage entry 1 as entry 3: ~ rename full_name -> name\n"
    assert names(cat, "db.t") == ["name"]
    assert "#3 by user: undo of lineage entry 1" in invoke_raising("lineage", "db.t", "--catalog",
                                                            lake).output

    again = CliRunner().invoke(cli, ["undo", "db.t", "1", "--catalog", str(lake)])
    assert again.exit_code == 1
    assert ("lineage entry 1 was already undone by entry 3; nothing was changed (to redo it, "
            "run: toolkit undo db.t 3)") in again.output
    drop = CliRunner().invoke(cli, ["undo", "db.t", "2", "--catalog", str(lake), "--json"])
    assert drop.exit_code == 2
    error = json.loads(drop.stdout)["error"]
    assert error.startswith("lineage entry 2 cannot be undone: a drop cannot be undone")
    assert error.endswith("nothing was changed")
    missing = CliRunner().invoke(cli, ["undo", "db.t", "9", "--catalog", str(lake)])
    assert missing.exit_code == 2
    assert "db.t has no lineage entry 9: its entries are 1 to 3" in missing.output
    assert names(cat, "db.t") == ["name"]  # none of the refusals changed anything

    redo = json.loads(invoke_raising("undo", "db.t", "3", "--catalog", lake, "--json").output)
    assert (redo["undone"]["seq"], redo["entry"]["seq"]) == (3, 4)
    assert names(cat, "db.t") == ["full_name"]
    # entry 1's undo was itself undone: entry 1 can be undone again
    assert invoke_raising("undo", "db.t", "1", "--catalog", lake).exit_code == 0
    assert names(cat, "db.t") == ["name"]


def test_undo_that_drops_values_exits_3_with_the_counts_and_changes_nothing(
    tmp_path: Path,
) -> None:
    lake = tmp_path / "lake"
    cat = orders(lake)
    before = state(cat)

    asked = invoke("undo", "db.t", "1", "--catalog", lake)

    assert asked.exit_code == ExitCode.NEEDS_APPROVAL == 3, asked.output
    assert "quantity_string (2 values)" in asked.output
    assert "gift (1 value)" in asked.output
    assert "drops 2 columns holding 3 values of 3 rows" in asked.output
    assert "toolkit undo db.t 1 --yes" in asked.output
    assert state(cat) == before

    dry = invoke("undo", "db.t", "1", "--catalog", lake, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "quantity_string (2 values)" in dry.output and "(--dry-run)" in dry.output
    assert state(cat) == before

    as_json = invoke("undo", "db.t", "1", "--catalog", lake, "--json")
    assert as_json.exit_code == 3
    doc = json.loads(as_json.stdout)
    assert doc["needs_approval"] is True and doc["applied"] is False
    assert [(c["name"], c["values"]) for c in doc["destroys"]["columns"]] == [
        ("gift", 1), ("quantity_string", 2)]
    assert state(cat) == before

    done = invoke("undo", "db.t", "1", "--catalog", lake, "--yes")
    assert done.exit_code == 0, done.output
    assert done.output.startswith("db.t: undid lineage entry 1 as entry 2: - drop gift; "
                                  "- drop quantity_string")
    assert state(cat) == (["id"], 2)


def test_undo_of_columns_without_values_needs_no_yes_and_says_so(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    cat = toolkit.catalog(lake)
    cat.create_namespace("db")
    cat.create_table("db.t", schema=pa.schema([pa.field("id", pa.int64())]))
    cat.load_table("db.t").append(pa.table({"id": pa.array([1], pa.int64())}))
    toolkit.evolve(cat, "db.t", [toolkit.ops.add("note", "string")])

    done = invoke("undo", "db.t", "1", "--catalog", lake)

    assert done.exit_code == 0, done.output
    assert "It drops 1 column holding no values (note): nothing stored is destroyed." in (
        done.output)
    assert state(cat) == (["id"], 2)


def test_the_installed_script_exits_3_and_applies_with_yes(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    cat = orders(lake)
    before = state(cat)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(TOOLKIT), "undo", "db.t", "1", "--catalog", str(lake), *args],
                              capture_output=True, text=True, timeout=300, env=short_lived_env())

    asked = run()
    assert asked.returncode == 3, asked.stderr
    assert "quantity_string (2 values)" in asked.stdout and "gift (1 value)" in asked.stdout
    assert state(cat) == before
    assert run("--yes").returncode == 0
    assert state(cat) == (["id"], 2)
