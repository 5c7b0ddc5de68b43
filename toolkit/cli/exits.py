"""Exit codes a scheduler can act on, and the errors that map to them.

Every command exits 0 when it did its work (an already applied plan, or a batch id already
ingested, counts as done: nothing is written twice) and one of these codes otherwise:

>>> [(c.value, c.name) for c in ExitCode]
[(0, 'OK'), (1, 'FAILED'), (2, 'BAD_INPUT'), (3, 'NEEDS_APPROVAL'), (4, 'STALE')]
>>> code_of(FileNotFoundError("day1.jsonl")).name
'BAD_INPUT'
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from enum import IntEnum
from typing import IO, Any, ParamSpec, TypeVar

import click

from toolkit.cli.terminal import echo
from toolkit.core.values.secrets import masked
from toolkit.errors import (
    DataLossError,
    ExportError,
    IrreversibleError,
    MalformedLineError,
    NotARecordError,
    NotReplayableError,
    PlanChangedError,
    PlanFileError,
    SourceFormatError,
    StalePlanError,
    ToolkitError,
    UnknownIdsError,
    UnreviewedPlanError,
)

__all__ = ["CommandFailed", "ExitCode", "code_of", "guarded"]


class ExitCode(IntEnum):
    """What a command's exit status means (``docs/plan-files.md`` lists them too)."""

    #: done: the batch was written, the plan applied (or it already was), the output printed
    OK = 0
    #: something went wrong while working (Spark could not start, a record was refused
    #: under ``--on-incompatible fail``...): the message says what
    FAILED = 1
    #: the command cannot run as given: an unknown option or a typo in one, a missing
    #: file, a source or plan file that cannot be read, a plan that cannot be exported
    BAD_INPUT = 2
    #: ``ingest --require-approval``: the batch needs a schema change; a plan file was
    #: written for review, nothing else happened (approve it with ``toolkit apply``); or
    #: the command would destroy stored values (``undo``, ``maintain``): run it with --yes
    NEEDS_APPROVAL = 3
    #: the plan no longer fits: the table moved since the preview, the data needs other
    #: changes than the plan, or the source, catalog, table or options are not those the
    #: plan was made with (reviewed); nothing was written (preview again)
    STALE = 4


#: errors by the code they exit with (the first base that matches decides)
_CODES: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], ExitCode], ...] = (
    ((StalePlanError, PlanChangedError, UnreviewedPlanError), ExitCode.STALE),
    (DataLossError, ExitCode.NEEDS_APPROVAL),  # it would destroy values: ask for a yes
    (
        (PlanFileError, ExportError, SourceFormatError, MalformedLineError, NotARecordError,
         FileNotFoundError, IsADirectoryError, click.BadParameter, IrreversibleError,
         NotReplayableError, UnknownIdsError),
        ExitCode.BAD_INPUT,
    ),
)


def code_of(exc: BaseException) -> ExitCode:
    """The exit code an error ends a command with."""
    for kinds, code in _CODES:
        if isinstance(exc, kinds):
            return code
    return ExitCode.FAILED


class CommandFailed(click.ClickException):
    """A command that ends with a message and an :class:`ExitCode`; with ``--json`` the
    message also goes to standard output as ``{"error": ..., "exit_code": ...}``."""

    def __init__(self, message: str, code: ExitCode, as_json: bool = False) -> None:
        # whatever failed, a password given on the command line is not printed back (a
        # driver's or a parser's message may quote the URL it was given)
        super().__init__(masked(message))
        # click declares exit_code per class; each instance here carries its own
        setattr(self, "exit_code", int(code))  # noqa: B010
        self.code = code
        self.as_json = as_json

    def show(self, file: IO[Any] | None = None) -> None:
        if self.as_json:
            doc = {"error": self.message, "exit_code": self.exit_code, "status": self.code.name}
            echo(json.dumps(doc, indent=2, sort_keys=True), as_json=True)
        echo(f"error: {self.message}", err=True)


P = ParamSpec("P")
R = TypeVar("R")


def guarded(command: Callable[P, R]) -> Callable[P, R]:
    """Run a command body, turning the errors it raises into their exit codes with a
    message in plain words (no traceback unless ``toolkit --debug``)."""

    @functools.wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        as_json = bool(kwargs.get("as_json", False))
        try:
            return command(*args, **kwargs)
        except (click.exceptions.Exit, click.Abort, CommandFailed):
            raise
        except click.UsageError as exc:
            raise CommandFailed(exc.format_message(), ExitCode.BAD_INPUT, as_json) from exc
        except Exception as exc:
            context = click.get_current_context(silent=True)
            if context is not None and (context.find_root().obj or {}).get("debug"):
                raise
            code = code_of(exc)
            known = isinstance(exc, ToolkitError | OSError | click.ClickException)
            text = exc.format_message() if isinstance(exc, click.ClickException) else str(exc)
            if not known:
                text = f"{type(exc).__name__}: {text} (run `toolkit --debug ...` for details)"
            raise CommandFailed(text, code, as_json) from exc

    return run
