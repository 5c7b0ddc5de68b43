"""What the docs show runs: the README and every page of ``docs/``, found by glob.

- The README's ten-line example prints exactly what the README says it prints.
- Every Python block compiles, and every ``toolkit.…`` name it uses exists, called with
  keywords its function takes.
- Every shell line names a real ``make`` target, or a real ``toolkit`` command with
  options that command has.
- Every JSON block parses; every file of the repository a page names exists, and so does
  every test it names.
- The README stays a README (at most 200 lines) and links every page of ``docs/``.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import inspect
import io
import json
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
MAX_README_LINES = 200

#: a fenced block: its language and its text
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def blocks(language: str) -> Iterator[tuple[str, int, str]]:
    """(page, line, text) of every block of ``language`` on every page."""
    for page in PAGES:
        text = page.read_text()
        for m in FENCE.finditer(text):
            if m.group(1) == language:
                line = text[: m.start()].count("\n") + 1
                yield page.relative_to(ROOT).as_posix(), line, m.group(2)


def ids(found: list[tuple[str, int, str]]) -> list[str]:
    return [f"{page}:{line}" for page, line, _ in found]


PYTHON = list(blocks("python"))
SHELL = [*blocks("bash"), *blocks("sh"), *blocks("console")]
JSON = list(blocks("json"))


# --- the README -------------------------------------------------------------------------


def test_readme_example_output_is_real() -> None:
    text = README.read_text()
    section = text.split("## In ten lines", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    shown = re.search(r"```text\n(.*?)```", section, re.S)
    assert code and shown
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code.group(1), "README.md", "exec"), {})
    assert out.getvalue().rstrip() == shown.group(1).rstrip()


def test_readme_shows_the_two_commands() -> None:
    text = README.read_text()
    assert "make lab" in text and "make test" in text


def test_readme_is_a_readme() -> None:
    lines = README.read_text().count("\n")
    assert lines <= MAX_README_LINES, f"README.md has {lines} lines: move the manual to docs/"


def test_every_page_of_the_docs_is_linked_from_the_readme() -> None:
    text = README.read_text()
    unlinked = [p.name for p in PAGES[1:] if f"](docs/{p.name})" not in text]
    assert not unlinked, f"pages the README does not link: {unlinked}"


def test_the_pages_are_found() -> None:
    """The glob finds the pages (a test of the test: an empty glob would check nothing)."""
    names = {p.name for p in PAGES}
    assert {"README.md", "python-api.md", "command-line.md", "rules.md"} <= names
    assert PYTHON and SHELL


# --- Python blocks ----------------------------------------------------------------------


def toolkit_names(tree: ast.AST) -> Iterator[tuple[ast.expr, list[str]]]:
    """Every outermost ``toolkit.a.b`` attribute chain in ``tree``, with its parts."""
    inner: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and id(node) not in inner:
            parts: list[str] = []
            cur: ast.expr = node
            while isinstance(cur, ast.Attribute):
                inner.add(id(cur.value))
                parts.append(cur.attr)
                cur = cur.value
            if isinstance(cur, ast.Name) and cur.id == "toolkit":
                yield node, parts[::-1]


def resolve(parts: list[str]) -> Any:
    """``toolkit.a.b`` as Python finds it (a submodule is imported, as ``import`` would)."""
    obj: Any = importlib.import_module("toolkit")
    path = "toolkit"
    for part in parts:
        path = f"{path}.{part}"
        try:
            obj = getattr(obj, part)
        except AttributeError:
            obj = importlib.import_module(path)
    return obj


def check_python(code: str) -> list[str]:
    """What is wrong with one block: names that do not exist, keywords not taken."""
    tree = ast.parse(code)
    wrong: list[str] = []
    for node, parts in toolkit_names(tree):
        name = "toolkit." + ".".join(parts)
        try:
            resolve(parts)
        except (AttributeError, ModuleNotFoundError):
            wrong.append(f"line {node.lineno}: {name} does not exist")
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        found = [parts for node, parts in toolkit_names(call.func) if node is call.func]
        if not found:
            continue
        try:
            target = resolve(found[0])
            signature = inspect.signature(target)
        except (AttributeError, ModuleNotFoundError, TypeError, ValueError):
            continue
        params = signature.parameters.values()
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
            continue
        takes = {p.name for p in params if p.kind is not inspect.Parameter.POSITIONAL_ONLY}
        for keyword in call.keywords:
            if keyword.arg is not None and keyword.arg not in takes:
                wrong.append(
                    f"line {call.lineno}: toolkit.{'.'.join(found[0])}() takes no "
                    f"{keyword.arg}="
                )
    return wrong


@pytest.mark.parametrize(("page", "line", "code"), PYTHON, ids=ids(PYTHON))
def test_python_block_calls_the_toolkit_as_it_is(page: str, line: int, code: str) -> None:
    compile(code, f"{page}:{line}", "exec")
    wrong = check_python(code)
    assert not wrong, f"{page}:{line}: " + "; ".join(wrong)


def test_a_wrong_name_or_keyword_is_found() -> None:
    """The check finds what it looks for (a test of the test)."""
    assert check_python("toolkit.simulate([], policy='widen')") == []
    assert check_python("toolkit.ops.rename('a', 'b')") == []
    assert check_python("toolkit.no_such_thing()") == [
        "line 1: toolkit.no_such_thing does not exist"
    ]
    assert check_python("toolkit.simulate([], polcy='widen')") == [
        "line 1: toolkit.simulate() takes no polcy="
    ]


# --- shell blocks -----------------------------------------------------------------------


def make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text()
    return set(re.findall(r"^([A-Za-z][\w-]*):", text, re.M))


def commands(block: str) -> Iterator[list[str]]:
    """Each command of a shell block, as words: comments dropped, ``;``, ``&&``, ``|``
    and redirections split off, a cron schedule skipped."""
    for raw in block.splitlines():
        words = shlex.split(raw, comments=True)
        command: list[str] = []
        for word in [*words, ";"]:
            if word in {";", "&&", "||", "|"} or word.startswith((">", "2>")):
                if command:
                    yield command
                command = []
            elif word.endswith(";"):
                command.append(word[:-1])
                yield command
                command = []
            else:
                command.append(word)


def check_shell(block: str) -> list[str]:
    from toolkit.cli import cli

    wrong: list[str] = []
    targets = make_targets()
    for words in commands(block):
        if words[:3] == ["python", "-m", "toolkit"]:
            words = ["toolkit", *words[3:]]
        if words[0] == "make":
            wrong += [f"make {t}: no such target" for t in words[1:]
                      if "=" not in t and t not in targets]
        elif words[0] == "toolkit" and len(words) > 1:
            command = cli.commands.get(words[1]) if isinstance(cli, click.Group) else None
            if command is None:
                wrong.append(f"toolkit {words[1]}: no such command")
                continue
            options = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
            options |= {"--help", "-h"}
            wrong += [f"toolkit {words[1]} {w}: no such option" for w in words[2:]
                      if w.startswith("-") and w.split("=", 1)[0] not in options]
    return wrong


@pytest.mark.parametrize(("page", "line", "block"), SHELL, ids=ids(SHELL))
def test_shell_lines_name_real_commands_and_options(page: str, line: int, block: str) -> None:
    wrong = check_shell(block)
    assert not wrong, f"{page}:{line}: " + "; ".join(wrong)


def test_a_wrong_command_or_option_is_found() -> None:
    """The check finds what it looks for (a test of the test)."""
    assert check_shell("*/5 * * * * cd /x && toolkit stream a -t db.t --once >> log") == []
    assert check_shell("make lab; make tset") == ["make tset: no such target"]
    assert check_shell("toolkit lineage db.t; toolkit undo db.t 3 --yse # c") == [
        "toolkit undo --yse: no such option"
    ]
    assert check_shell("toolkit ingets x") == ["toolkit ingets: no such command"]


# --- JSON, and the files and tests a page names -----------------------------------------


@pytest.mark.parametrize(("page", "line", "block"), JSON, ids=ids(JSON))
def test_json_blocks_parse(page: str, line: int, block: str) -> None:
    json.loads(block)


#: a path of the repository in backticks, with an optional ``::test``; or a lone ``::test``
#: continuing the last path named
NAMED = re.compile(
    r"`((?:toolkit|tests|benchmarks|scripts|notebooks|binder)/[\w./-]*\w)(::\w+)?`|`::(\w+)`"
)


def named_files(page: Path) -> Iterator[tuple[str, str | None]]:
    last: str | None = None
    for m in NAMED.finditer(page.read_text()):
        if m.group(3):
            if last is not None:
                yield last, m.group(3)
            continue
        last = m.group(1)
        yield last, (m.group(2) or "")[2:] or None


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_file_and_test_a_page_names_exists(page: Path) -> None:
    missing = []
    for path, test in named_files(page):
        if any(c in path for c in "*<"):
            continue
        found = ROOT / path
        if not found.exists():
            missing.append(path)
        elif test is not None and not re.search(rf"^\s*def {test}\(", found.read_text(), re.M):
            missing.append(f"{path}::{test}")
    assert not missing, f"{page.name} names what does not exist: {missing}"
