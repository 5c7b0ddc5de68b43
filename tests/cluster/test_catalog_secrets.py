"""A catalog kept in a real PostgreSQL server (tests/servers.py), named by the libpq form
of its URL, ``postgresql://USER@127.0.0.1:PORT/DB?password=PW``: no command's output, no
plan file and no error holds the password, while the commands work with it; a plan file
made on that catalog applies only there, with the options it was reviewed with.

The refusals and the plans run in-process (click's runner, no Spark); the one apply that
writes runs as a scheduler runs it (the installed script, its own Spark), which also proves
Spark's JDBC catalog gets the password from the query.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import toolkit
from tests import servers
from tests.reliability.children import short_lived_env
from toolkit.cli import cli
from toolkit.cli.exits import ExitCode

DATA = Path(toolkit.__file__).parent / "data"
TOOLKIT = Path(sys.executable).with_name("toolkit")


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def query_url(pg: servers.PostgresServer, password: str | None = None,
              database: str | None = None) -> str:
    """The libpq form: the password as a query parameter, not after the user."""
    return (f"postgresql://{pg.user}@{pg.host}:{pg.port}/{database or pg.database}"
            f"?password={password or pg.password}")


def shown(out: Result | subprocess.CompletedProcess[str]) -> str:
    return out.stdout + out.stderr


def test_no_output_plan_file_or_error_holds_the_password(
    postgres_server: servers.PostgresServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pg = postgres_server
    monkeypatch.chdir(tmp_path)
    url, secret = query_url(pg), pg.password
    where = ["--catalog", url, "--warehouse", f"file://{tmp_path}/wh"]
    source = shutil.copy(DATA / "sample_day1.jsonl", tmp_path / "day1.jsonl")
    everything: list[str] = []

    made = invoke("preview", source, "-t", "sec.events", *where, "--batch-id", "d1",
                  "--save", "p.json")
    assert made.exit_code == 0, made.output
    doc = json.loads(Path("p.json").read_text())
    masked_url = f"postgresql://{pg.user}@{pg.host}:{pg.port}/{pg.database}?password=***"
    assert doc["catalog"] == masked_url

    stopped = invoke("ingest", source, "-t", "sec.events", *where, "--batch-id", "d1",
                     "--require-approval", "--json")
    assert stopped.exit_code == ExitCode.NEEDS_APPROVAL, stopped.output
    approval = Path(json.loads(stopped.stdout)["plan_file"])
    assert json.loads(approval.read_text())["catalog"] == masked_url

    # the plan file's URL has no password: apply asks for the full one, quoting neither
    bare = invoke("apply", "p.json")
    assert bare.exit_code == ExitCode.BAD_INPUT
    assert "the password was left out of the plan file" in bare.stderr

    # the table does not exist: the error names the catalog, masked
    missing = invoke("undo", "sec.nothing", "1", *where)
    assert missing.exit_code == ExitCode.BAD_INPUT and masked_url in missing.stderr

    # a wrong password: refused by the server, neither password printed
    wrong = invoke("lineage", "sec.nothing", "--catalog", query_url(pg, "WrongPassword99"),
                   "--warehouse", f"file://{tmp_path}/wh")
    assert wrong.exit_code == ExitCode.FAILED
    assert "password authentication failed" in wrong.stderr
    assert "WrongPassword99" not in shown(wrong)

    # a URL that does not parse, with the real password in it
    broken = invoke("preview", source, "-t", "sec.events", "--catalog",
                    url.replace(str(pg.port), "notaport"), "--warehouse", f"file://{tmp_path}/wh")
    assert broken.exit_code == ExitCode.BAD_INPUT and "password=***" in broken.stderr

    everything += [shown(o) for o in (made, stopped, bare, missing, broken)]
    everything += [p.read_text() for p in tmp_path.glob("*.json")]
    assert all(secret not in text for text in everything)


def test_spark_gets_the_user_and_password_of_the_query_form(
    postgres_server: servers.PostgresServer, tmp_path: Path
) -> None:
    from toolkit.spark.session import spark_conf

    pg = postgres_server
    conf = spark_conf(toolkit.catalog(query_url(pg), warehouse=f"file://{tmp_path}/wh"))
    prefix = "spark.sql.catalog.lakehouse"
    assert conf[f"{prefix}.uri"] == pg.jdbc_url  # no password in the JDBC URL itself
    assert (conf[f"{prefix}.jdbc.user"], conf[f"{prefix}.jdbc.password"]) == (
        pg.user, pg.password)


@pytest.mark.spark
def test_a_plan_made_on_the_database_catalog_applies_there_and_only_as_reviewed(
    postgres_server: servers.PostgresServer, tmp_path: Path
) -> None:
    pg = postgres_server
    url, warehouse = query_url(pg), f"file://{tmp_path}/wh"
    source = shutil.copy(DATA / "sample_day1.jsonl", tmp_path / "day1.jsonl")
    saved = tmp_path / "p.json"
    made = invoke("preview", source, "-t", "sec.applied", "--catalog", url, "--warehouse",
                  warehouse, "--batch-id", "d1", "--save", saved)
    assert made.exit_code == 0, made.output
    cat = toolkit.catalog(url, warehouse=warehouse)
    outputs: list[str] = []

    # another database on the same server: not the catalog the plan was made on
    other = invoke("apply", saved, "--catalog", query_url(pg, database="postgres"))
    assert other.exit_code == ExitCode.STALE, other.output
    assert "--catalog names postgresql://" in other.stderr and "password=***" in other.stderr

    doc = json.loads(saved.read_text())
    doc["options"]["on_incompatible"] = "fail"
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(doc))
    changed = invoke("apply", edited, "--catalog", url)
    assert changed.exit_code == ExitCode.STALE
    assert "the plan file's options (or source format) changed" in changed.stderr
    outputs += [shown(other), shown(changed)]
    assert not cat.table_exists("sec.applied")  # nothing written

    # as reviewed: applied by the installed script, its Spark reaching the same database
    applied = subprocess.run(
        [str(TOOLKIT), "apply", str(saved), "--catalog", url, "--json",
         "--conf", "spark.master=local[1]"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600, env=short_lived_env())
    assert applied.returncode == 0, applied.stderr
    assert json.loads(applied.stdout)["rows_written"] == 20
    outputs.append(shown(applied))
    assert len(cat.load_table("sec.applied").scan().to_arrow()) == 20
    assert all(pg.password not in text for text in outputs)
