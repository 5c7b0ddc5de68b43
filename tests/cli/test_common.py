"""What the commands share (toolkit.cli.common): options that cannot be read, a table or a
folder that does not exist, are refused with exit 2 before anything runs."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from tests.cli.lakes import renamed_table
from toolkit.cli import cli


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_bad_durations_steps_and_folders_are_refused_before_anything_runs(
    tmp_path: Path,
) -> None:
    lake = tmp_path / "lake"
    renamed_table(lake)
    for args, says in [
        (["maintain", "db.t", "--older-than", "5x"], "'5x' is not a duration: write it as 5d"),
        (["maintain", "db.t", "--steps", "compact,vacuum"],
         "unknown maintenance step 'vacuum'; the steps are compact, rewrite_manifests"),
        (["maintain", "db.t", "--orphans-older-than", "12h"], "12h is too recent"),
        (["maintain", "db.nope"], "no table db.nope in catalog"),
        (["stream", tmp_path / "nowhere", "-t", "db.t"], "nowhere: no such folder"),
        (["stream", tmp_path, "-t", "db.t", "--once", "--for", "1m"],
         "--once processes what is there and exits"),
        (["replay", "db.t"], None),  # nothing was ever quarantined: done, exit 0
    ]:
        out = CliRunner().invoke(cli, [*map(str, args), "--catalog", str(lake)])
        if says is None:
            assert (out.exit_code, out.output) == (0, "db.t: nothing to replay\n")
        else:
            assert out.exit_code == 2, (args, out.output)
            assert says in out.output, (args, out.output)
