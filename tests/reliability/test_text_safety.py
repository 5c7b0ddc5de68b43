"""No text from data is interpreted (issue #25): names and values reach a terminal, a page
and a chart as text. The CLI writes out control, invisible and bidi characters (a key
``"\\x1b[2J\\x1b]0;title\\x07"`` neither clears the screen nor sets the window title);
plotly shows ``<a href=...>`` as text, not a link; the panels show ``user\\u202egnp.exe``
and ``ad\\u200bmin`` with the escapes written out; and a preview warns when two new names
look alike (``café`` composed and decomposed).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from toolkit.cli import cli
from toolkit.core.batch.profile import profile
from toolkit.core.engine import Engine
from toolkit.core.evolution.state import ABSENT
from toolkit.core.values.types import Struct
from toolkit.core.values.wording import lookalike_key, visible
from toolkit.notebook.figures import type_drift_figure, type_mix_figure
from toolkit.notebook.panels.editor.model import field_choices
from toolkit.notebook.panels.explore.model import StatisticsModel
from toolkit.notebook.panels.preview.html import new_columns_html, plan_header_html
from toolkit.notebook.panels.preview.model import PlanModel
from toolkit.notebook.report_html import explore_report_html, preview_report_html
from toolkit.pipeline.preview import Preview

TERMINAL = "\x1b[2J\x1b]0;title\x07"
RLO = "user\u202egnp.exe"
ZWSP = "ad\u200bmin"
LINK = '<a href="https://evil.example">LOGIN</a>'
MARKUP = "[bold red]x"
#: characters a terminal obeys or a reader cannot see, none of which may be printed raw
RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\u200b", "\u2066", "\ufeff")

HOSTILE = (TERMINAL, RLO, ZWSP, LINK, MARKUP, "tab\there", "c1\x9bx", "\u2066iso\u2069")


def records() -> list[dict[str, Any]]:
    """Two batches' worth: every hostile key a long, then a string (so each drifts), with
    a hostile value too."""
    return [
        {"id": 1, **{k: i for i, k in enumerate(HOSTILE)}},
        {"id": 2, **{k: f"v{i}{TERMINAL}{RLO}" for i, k in enumerate(HOSTILE)}},
    ]


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    return path


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def no_raw(text: str) -> None:
    found = sorted({repr(c) for c in RAW if c in text})
    assert not found, f"raw characters printed: {found}"


# --- the one function -----------------------------------------------------------------------


@pytest.mark.parametrize(("name", "shown"), [
    (RLO, "user\\u202egnp.exe"),
    (ZWSP, "ad\\u200bmin"),
    (TERMINAL, "\\x1b[2J\\x1b]0;title\\x07"),
    ("nb\u00a0sp", "nb\\xa0sp"),
    ("tag\U000e0041", "tag\\U000e0041"),
    ("line\u2028sep", "line\\u2028sep"),
    ("café 名前 🚀 Ωmega", "café 名前 🚀 Ωmega"),
    (LINK, LINK),  # markup is for HTML escaping, which still applies after it
], ids=["bidi", "zero-width", "terminal", "nbsp", "tag", "line-separator", "plain", "markup"])
def test_visible_writes_out_what_cannot_be_seen(name: str, shown: str) -> None:
    assert visible(name) == shown


def test_lookalike_key() -> None:
    assert lookalike_key("caf\u00e9") == lookalike_key("cafe\u0301")
    assert lookalike_key(ZWSP) == lookalike_key("admin") == lookalike_key("ADMIN")
    assert lookalike_key("\ufb01le") == lookalike_key("file")
    assert lookalike_key("admin") != lookalike_key("admins")


# --- the command line -----------------------------------------------------------------------


def test_the_cli_prints_no_control_or_bidi_character(tmp_path: Path) -> None:
    source = write(tmp_path / "hostile.jsonl", records())
    lake = tmp_path / "lake"
    for args in (("profile", source), ("preview", source, "-t", "db.t", "--catalog", lake)):
        out = invoke(*args)
        assert out.exit_code == 0, out.output
        no_raw(out.output)
        assert "user\\u202egnp.exe" in out.output and "ad\\u200bmin" in out.output
        assert "\\x1b[2J\\x1b]0;title\\x07" in out.output
        assert MARKUP in out.output  # printed as text: no markup is read
        # JSON: the same names read back, written with JSON escapes only
        data = invoke(*args, "--json")
        assert data.exit_code == 0
        no_raw(data.output)
        assert "\\u202e" in data.output and "\\u001b" in data.output
        assert RLO in json.dumps(json.loads(data.output), ensure_ascii=False)


def test_cli_errors_are_escaped_too(tmp_path: Path) -> None:
    """An error message goes through the same escaping, text and JSON (here it names a
    table that is not there)."""
    lake = tmp_path / "lake"
    assert invoke("preview", write(tmp_path / "a.jsonl", records()), "-t", "db.t",
                  "--catalog", lake).exit_code == 0
    for json_flag in ((), ("--json",)):
        out = invoke("view", f"db.{TERMINAL}{RLO}", "--catalog", lake, *json_flag)
        assert out.exit_code != 0
        no_raw(out.output)
        assert "\\u202e" in out.output


def test_the_cli_preview_warns_of_lookalike_names(tmp_path: Path) -> None:
    source = write(tmp_path / "alike.jsonl", [
        {"caf\u00e9": 1, "cafe\u0301": 2, "admin": 3, ZWSP: 4, "ok": 5}])
    out = invoke("preview", source, "-t", "db.t", "--catalog", tmp_path / "lake")
    assert out.exit_code == 0
    no_raw(out.output)
    warnings = [line for line in out.output.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 2, out.output
    said = warnings[0] + warnings[1]  # in the order of the columns (by name)
    assert '"cafe\\u0301" and "caf\\xe9"' in said and '"admin" and "ad\\u200bmin"' in said
    assert not any('"ok"' in w for w in warnings)
    data = json.loads(invoke("preview", source, "-t", "db.t", "--catalog", tmp_path / "lake",
                             "--json").output)
    assert sum(line.startswith("warning: names that look alike") for line in data["summary"]) == 2


# --- the notebook: plotly figures and panels' HTML ------------------------------------------


@pytest.fixture(scope="module")
def stats() -> StatisticsModel:
    run = Engine().run([records()[:1], records()[1:]])
    return StatisticsModel.from_profile(run.profile, run.schema)


def figure_texts(fig: Any) -> list[str]:
    """Every text plotly renders from a figure: title, tick texts and categories, trace
    names and hover templates."""
    layout = fig.layout
    texts = [layout.title.text or ""]
    texts += [str(t) for t in (layout.yaxis.ticktext or ())]
    texts += [str(t) for t in (layout.yaxis.tickvals or ())]
    for trace in fig.data:
        texts += [trace.name or "", trace.hovertemplate or ""]
        texts += [str(v) for v in (*(trace.x or ()), *(trace.y or ()))]
    return texts


def test_plotly_shows_names_as_text(stats: StatisticsModel) -> None:
    mix = type_mix_figure(stats, top=20, title=f"mix of {LINK}")
    drift = type_drift_figure(stats, LINK)
    for fig in (mix, drift):
        texts = figure_texts(fig)
        assert not [t for t in texts if "<a" in t or "</a>" in t], texts
        for t in texts:
            no_raw(t)
    assert "&lt;a href=" in mix.layout.title.text and "&lt;a href=" in drift.layout.title.text
    assert any("&lt;a href" in str(t) for t in mix.layout.yaxis.ticktext)
    assert any("user\\u202egnp.exe" in str(t) for t in mix.layout.yaxis.ticktext)


def plan_model() -> PlanModel:
    rows = [{**records()[0], "caf\u00e9": 1, "cafe\u0301": 2}]
    engine = Engine()
    plan = engine.plan(Struct(), engine.observe(rows))
    return PlanModel.from_preview(Preview("db.t", plan, ABSENT, profile(rows), tuple(rows)))


def test_the_preview_model_and_panels_show_names_visibly(stats: StatisticsModel) -> None:
    model = plan_model()
    assert len(model.lookalikes) == 1 and "cafe\\u0301" in model.lookalikes[0]
    header = plan_header_html(model)
    assert "Warning: names that look alike" in header
    html = preview_report_html(model, profile=stats)
    for page in (html, new_columns_html(model.new_columns), header,
                 explore_report_html(stats)):
        no_raw(page)
        assert "<a href" not in page
    assert "user\\u202egnp.exe" in html and "ad\\u200bmin" in html
    assert "&lt;a href=&quot;https://evil.example&quot;&gt;LOGIN&lt;/a&gt;" in html


def test_drop_downs_label_fields_visibly() -> None:
    """The evolution editor's field choices show a name as text, and pick the name itself."""
    schema = Engine().plan(Struct(), Engine().observe([{RLO: 1, ZWSP: 2}])).after
    choices = dict(field_choices(schema))
    assert choices == {"user\\u202egnp.exe": (RLO,), "ad\\u200bmin": (ZWSP,)}
