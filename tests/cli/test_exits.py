"""The exit codes a scheduler acts on (toolkit.cli.exits): which error ends a command with
which code, and what ``guarded`` makes of an error a command body raises."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from toolkit.cli.exits import CommandFailed, ExitCode, code_of, guarded
from toolkit.core.evolution.state import TableState
from toolkit.errors import (
    DataLossError,
    PlanFileError,
    StalePlanError,
    UnreviewedPlanError,
)


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (StalePlanError("db.t", TableState(0, 1), TableState(1, 2)), ExitCode.STALE),
        (UnreviewedPlanError("plan.json", ["its table was edited"]), ExitCode.STALE),
        (DataLossError("db.t", "the undo drops", "gift (1 value)"), ExitCode.NEEDS_APPROVAL),
        (PlanFileError("plan.json is not a plan file"), ExitCode.BAD_INPUT),
        (FileNotFoundError("day1.jsonl"), ExitCode.BAD_INPUT),
        (click.BadParameter("5x"), ExitCode.BAD_INPUT),
        (RuntimeError("Spark could not start"), ExitCode.FAILED),
    ],
    ids=["stale", "unreviewed", "data-loss", "plan-file", "missing-file", "bad-option", "other"],
)
def test_each_error_exits_with_its_code(error: BaseException, code: ExitCode) -> None:
    assert code_of(error) is code


def test_a_failed_command_never_prints_the_password_it_was_given() -> None:
    failed = CommandFailed("cannot open postgresql://u:secret@h/db", ExitCode.FAILED)
    assert failed.message == "cannot open postgresql://u:***@h/db"
    assert failed.exit_code == 1


def raising(error: Exception) -> click.Command:
    @click.command()
    @click.option("--json", "as_json", is_flag=True)
    @guarded
    def command(as_json: bool) -> None:
        raise error

    return command


def test_guarded_turns_a_known_error_into_its_code_and_plain_words() -> None:
    out = CliRunner().invoke(raising(FileNotFoundError("day1.jsonl")), [])
    assert out.exit_code == ExitCode.BAD_INPUT
    assert "error: day1.jsonl" in out.output and "Traceback" not in out.output


def test_guarded_names_an_unexpected_error_and_how_to_see_more() -> None:
    out = CliRunner().invoke(raising(KeyError("x")), ["--json"])
    assert out.exit_code == ExitCode.FAILED
    assert "KeyError: 'x' (run `toolkit --debug ...` for details)" in out.output
    assert '"status": "FAILED"' in out.output
