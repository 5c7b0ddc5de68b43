"""A plan file binds what was reviewed (docs/plan-files.md, "What a plan file binds"):
``toolkit apply`` refuses, with exit 4 and nothing written, a plan file whose source file
changed, whose source, catalog, table or options were edited after the review, or that
is pointed at another catalog; plan files the CLI names itself stay in their folder; and
no command prints back the password of a catalog URL, whatever form it takes.

In-process (click's runner), without Spark: every refusal answers before Spark starts, and
the plan that passes reaches a fake ingest (the real one is tests/cli/test_console_script.py).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from click.testing import CliRunner, Result

import toolkit
from toolkit.cli import cli
from toolkit.cli.exits import ExitCode
from toolkit.core.values.types import Column, Struct
from toolkit.iceberg.ledger import BATCH_ID_PROPERTY
from toolkit.iceberg.schema import to_iceberg

DATA = Path(toolkit.__file__).parent / "data"


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


class _Stopped(Exception):
    pass


@pytest.fixture
def ingested(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, object]]:
    """The ingests ``apply`` would run (a fake that keeps its keywords); Spark never starts."""
    import toolkit.cli.plans
    import toolkit.pipeline.ingest

    calls: list[dict[str, object]] = []

    def fake(*args: object, **kwargs: object) -> None:
        calls.append({"source": args[0], **kwargs})
        raise _Stopped

    monkeypatch.setattr(toolkit.cli.plans, "start_spark", lambda catalog, conf: None)
    monkeypatch.setattr(toolkit.pipeline.ingest, "ingest", fake)
    return calls


def table_with_a_batch(lake: Path) -> tuple[int, list[dict[str, object]]]:
    """``db.events`` in the catalog at ``lake``, holding one batch (no Spark needed); its
    snapshot count and rows."""
    cat = toolkit.catalog(lake)
    cat.create_namespace("db")
    table = cat.create_table("db.events", schema=to_iceberg(Struct((Column(1, "id", "long"),))))
    table.append(pa.table({"id": pa.array([7], pa.int64())}),
                 snapshot_properties={BATCH_ID_PROPERTY: "day0"})
    return written(lake)


def written(lake: Path) -> tuple[int, list[dict[str, object]]]:
    table = toolkit.catalog(lake).load_table("db.events")
    return len(table.snapshots()), table.scan().to_arrow().to_pylist()


@pytest.fixture
def reviewed(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A plan file made for day1.jsonl against a table holding a batch: (source, lake,
    plan file)."""
    source = Path(shutil.copy(DATA / "sample_day1.jsonl", tmp_path / "day1.jsonl"))
    lake, saved = tmp_path / "lake", tmp_path / "day1.plan.json"
    table_with_a_batch(lake)
    made = invoke("preview", source, "-t", "db.events", "--catalog", lake, "--batch-id", "day1",
                  "--save", saved)
    assert made.exit_code == 0, made.output
    return source, lake, saved


def refused(saved: Path, lake: Path, *args: str | Path) -> str:
    """``apply`` of ``saved``: exit 4 and nothing written; its message."""
    before = written(lake)
    out = invoke("apply", saved, *args, "--json")
    assert out.exit_code == ExitCode.STALE, out.output
    assert written(lake) == before  # the table's snapshot count and rows are unchanged
    error: str = json.loads(out.stdout)["error"]
    assert error.startswith(f"{saved}: ") and error.endswith(
        "Nothing was applied: preview the source again and review the new plan")
    return error


def test_a_plan_file_binds_its_source_files_table_catalog_and_options(
    reviewed: tuple[Path, Path, Path], ingested: list[dict[str, object]]
) -> None:
    source, lake, saved = reviewed
    doc = json.loads(saved.read_text())
    assert set(doc["bound"]) == {"catalog", "options", "source", "table"}
    assert list(doc["bound"]["source"]) == ["day1.jsonl"]
    assert doc["bound"]["source"]["day1.jsonl"].startswith("sha256:")
    # the file as it was reviewed passes every check and reaches the ingest
    out = invoke("apply", saved)
    assert out.exit_code == ExitCode.FAILED and "_Stopped" in out.output  # at the fake
    assert ingested[0]["source"] == str(source) and ingested[0]["policy"] == "upsolver"


def test_apply_refuses_a_plan_whose_source_file_changed_since(
    reviewed: tuple[Path, Path, Path], ingested: list[dict[str, object]]
) -> None:
    source, lake, saved = reviewed
    with source.open("a") as f:
        f.write('{"id": 99, "unreviewed": true}\n')
    assert refused(saved, lake) == (
        f"{saved}: the source file day1.jsonl changed since the plan was made. Nothing was "
        "applied: preview the source again and review the new plan")
    source.unlink()
    assert "the source file day1.jsonl is no longer in" in refused(saved, lake)
    assert not ingested


def test_the_notebook_preview_of_a_plan_file_refuses_it_too(
    reviewed: tuple[Path, Path, Path]
) -> None:
    source, _, saved = reviewed
    source.write_text('{"id": 1}\n')
    with pytest.raises(toolkit.UnreviewedPlanError, match="the source file day1.jsonl changed"):
        toolkit.preview(plan=saved, commit=lambda request: None)


def test_apply_refuses_a_plan_file_edited_after_the_review(
    reviewed: tuple[Path, Path, Path], ingested: list[dict[str, object]], tmp_path: Path
) -> None:
    source, lake, saved = reviewed
    original = json.loads(saved.read_text())
    other = tmp_path / "other.jsonl"
    other.write_text('{"id": 1, "secret_column": "rows nobody reviewed"}\n')

    def edited(key: str, value: object) -> Path:
        doc = json.loads(json.dumps(original))
        doc[key] = value
        path = tmp_path / f"edited-{key}.json"
        path.write_text(json.dumps(doc, indent=2, sort_keys=True))
        return path

    pointed = refused(edited("source", str(other)), lake)
    assert "the source file day1.jsonl is no longer in" in pointed
    assert "holds a file the plan was not made with: other.jsonl" in pointed

    elsewhere = tmp_path / "another-lake"
    assert "the plan file's catalog (or warehouse) changed since the plan was made" in refused(
        edited("catalog", str(elsewhere)), lake)
    assert not elsewhere.exists()  # refused before the catalog was opened: none was created

    policy = {**original["options"], "policy": "widen"}
    assert "the plan file's options (or source format) changed since the plan was made" in (
        refused(edited("options", policy), lake))
    assert "the plan file's table changed since the plan was made" in refused(
        edited("table", "db.other"), lake)
    assert not ingested


def test_apply_refuses_another_catalog_than_the_plan_was_made_on(
    reviewed: tuple[Path, Path, Path], ingested: list[dict[str, object]], tmp_path: Path
) -> None:
    _, lake, saved = reviewed
    elsewhere = tmp_path / "another-lake"
    error = refused(saved, lake, "--catalog", elsewhere)
    assert f"--catalog names {elsewhere}, not the catalog the plan was made on ({lake})" in error
    assert "--warehouse names file:///elsewhere, not the warehouse the plan was made with " \
           "(none)" in refused(saved, lake, "--warehouse", "file:///elsewhere")
    assert not elsewhere.exists() and not ingested


def test_a_plan_file_written_before_plan_files_bound_their_parts_is_refused(
    reviewed: tuple[Path, Path, Path], ingested: list[dict[str, object]], tmp_path: Path
) -> None:
    _, lake, saved = reviewed
    doc = json.loads(saved.read_text())
    del doc["bound"]
    old = tmp_path / "old.plan.json"
    old.write_text(json.dumps(doc, indent=2, sort_keys=True))
    assert "holds no digests of its table, catalog and options (it was written before plan " \
           "files bound them, or by hand)" in refused(old, lake)
    assert invoke("export", old, "--as", "spark-sql").exit_code == 0  # still readable
    assert not ingested


def test_the_plan_file_ingest_names_itself_stays_in_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = shutil.copy(DATA / "sample_day1.jsonl", tmp_path / "day1.jsonl")
    work = tmp_path / "work" / "here"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    lake = tmp_path / "lake"
    hostile = "sub/../../../x\x1b[2J"
    out = invoke("ingest", source, "-t", "db.events", "--catalog", lake, "--batch-id", hostile,
                 "--require-approval", "--json")
    assert out.exit_code == ExitCode.NEEDS_APPROVAL, out.output
    path = json.loads(out.stdout)["plan_file"]
    assert [p.name for p in work.iterdir()] == [path]  # in the working folder, and only there
    assert "/" not in path and ".." not in path and "\x1b" not in path
    assert path.startswith("db.events.sub_") and path.endswith(".plan.json")
    assert not (tmp_path / "x\x1b[2J").exists() and not list(tmp_path.glob("x*"))
    assert json.loads((work / path).read_text())["batch_id"] == hostile  # the id as given

    plans = tmp_path / "plans"
    again = invoke("ingest", source, "-t", "db.events", "--catalog", lake, "--batch-id", "../up",
                   "--require-approval", "--plan-dir", plans, "--json")
    assert again.exit_code == ExitCode.NEEDS_APPROVAL, again.output
    named = Path(json.loads(again.stdout)["plan_file"])
    assert named.parent == plans and [p.name for p in plans.iterdir()] == [named.name]


#: catalog URLs whose password must never be printed: the libpq query form, and URLs that
#: do not parse (a port that is no number, a scheme no driver knows, raw '@' in a password)
UNPARSABLE = [
    "postgresql://u@127.0.0.1:notaport/db?password=Hunter2Secret",
    "postgresql://u:Hunter2Secret@127.0.0.1:notaport/db",
    "nosuchdb://u:Hunter2Secret@127.0.0.1/db",
    "nosuchdb://u@127.0.0.1/db?sslmode=x&password=Hunter2Secret",
    "postgresql://u:Hunter2@Secret@127.0.0.1:99999999/db",
    "s3://u:Hunter2Secret@bucket/x",
]


@pytest.mark.parametrize("url", UNPARSABLE)
def test_no_command_prints_the_password_of_a_url_that_does_not_parse(
    url: str, tmp_path: Path
) -> None:
    source = shutil.copy(DATA / "sample_day1.jsonl", tmp_path / "day1.jsonl")
    saved = tmp_path / "p.json"
    where = ["--catalog", url, "--warehouse", f"file://{tmp_path}/wh"]
    runs = [
        invoke("preview", source, "-t", "db.t", *where, "--save", saved),
        invoke("preview", source, "-t", "db.t", *where, "--json"),
        invoke("ingest", source, "-t", "db.t", *where, "--require-approval"),
        invoke("lineage", "db.t", *where),
        invoke("preview", source, "-t", "db.t", "--catalog", url),  # no warehouse
    ]
    for out in runs:
        # refused as given (2), or by the database driver (1: "invalid port number")
        assert out.exit_code in (ExitCode.BAD_INPUT, ExitCode.FAILED), out.output
        assert "Hunter2" not in out.stdout + out.stderr and "Secret" not in out.stderr
    assert "***" in runs[0].stderr  # where the URL is named, its password is masked
    assert not saved.exists()
