"""The ``toolkit`` command line: headless schema evolution for schedulers and reviews.

A batch is previewed into a plan file, reviewed (or exported as code), and applied later
exactly as planned; or ingested directly, stopping for approval when it would change the
schema. A folder is streamed into a table (``stream``); a logged change is undone
(``undo``); quarantined records are listed and replayed (``quarantine``, ``replay``); a
table is maintained once its plan is approved (``maintain``). Exit codes
(:class:`~toolkit.cli.exits.ExitCode`): 0 done, 1 failed, 2 bad input, 3 needs approval,
4 stale plan. Every command takes ``--help``, and ``--json`` for output a program reads.

>>> from click.testing import CliRunner
>>> result = CliRunner().invoke(cli, ["--help"])
>>> result.exit_code, "preview" in result.output
(0, True)
"""

from __future__ import annotations

from collections.abc import Sequence

import click

from toolkit.cli.exits import ExitCode
from toolkit.cli.history import undo
from toolkit.cli.plans import apply, export, ingest, preview
from toolkit.cli.progress import showing_progress
from toolkit.cli.quarantined import quarantine, replay
from toolkit.cli.streams import stream
from toolkit.cli.tables import lineage, profile, stats, view
from toolkit.cli.upkeep import maintain

__all__ = ["ExitCode", "cli", "main"]


@click.group(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog="Exit codes: 0 done; 1 failed; 2 bad input (an unknown option, a missing or "
    "unreadable file); 3 a plan needs approval (ingest --require-approval wrote a plan "
    "file; maintain without --yes printed its plan; undo without --yes would drop values); "
    "4 stale plan (the table moved since the preview; nothing was written).",
)
@click.version_option(package_name="toolkit", prog_name="toolkit")
@click.option("--debug", is_flag=True, help="Show the traceback of an unexpected error.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Schema evolution for Apache Iceberg tables fed with drifting data.

    \b
    Typical use:
      toolkit profile data/day2.jsonl
      toolkit preview data/day2.jsonl --table db.events --save day2.plan.json
      toolkit export day2.plan.json --as spark-sql
      toolkit apply day2.plan.json
      toolkit ingest data/day3.jsonl --table db.events --batch-id day3 --require-approval
      toolkit stream landing/ --table db.events --once
      toolkit lineage db.events; toolkit undo db.events 3
      toolkit quarantine db.events; toolkit replay db.events --batch-id day3
      toolkit maintain db.events --older-than 5d --yes
    """
    ctx.obj = {"debug": debug}
    # Spark's progress as one line on standard error when it is a terminal (nothing in a
    # log or under a test); the command's end erases it and puts back any other reporter
    ctx.with_resource(showing_progress())


for _command in (profile, preview, apply, ingest, export, stream, view, lineage, stats, undo,
                 quarantine, replay, maintain):
    cli.add_command(_command)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the command line (the ``toolkit`` console script; ``python -m toolkit``)."""
    cli.main(args=list(argv) if argv is not None else None, prog_name="toolkit")
