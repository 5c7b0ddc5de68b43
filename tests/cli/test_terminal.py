"""How the commands print (toolkit.cli.terminal): every character a terminal would obey or
a reader could not see is written out, in text as a Python escape (line breaks and tabs
kept), in JSON as a JSON escape of the same value. What every command prints through it:
tests/reliability/test_text_safety.py."""

from __future__ import annotations

import json

import pytest

from toolkit.cli.terminal import echo


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        ("user\u202egnp.exe", "user\\u202egnp.exe"),  # bidi: would read as userexe.png
        ("ad\u200bmin", "ad\\u200bmin"),  # invisible: would read as admin
        ("\x1b[2J", "\\x1b[2J"),  # would clear the screen
        ("one\ntwo\tthree", "one\ntwo\tthree"),  # line breaks and tabs stay
        ("[bold]plain[/bold]", "[bold]plain[/bold]"),  # no markup is read
    ],
    ids=["bidi", "invisible", "escape-sequence", "lines-and-tabs", "no-markup"],
)
def test_text_is_printed_with_what_a_terminal_obeys_written_out(
    text: str, printed: str, capsys: pytest.CaptureFixture[str]
) -> None:
    echo(text)
    assert capsys.readouterr().out == printed + "\n"


def test_json_keeps_its_value_and_escapes_what_a_terminal_obeys(
    capsys: pytest.CaptureFixture[str],
) -> None:
    value = {"key": "ad\u200bmin\x1b[2J", "name": "user\u202egnp.exe"}
    echo(json.dumps(value), as_json=True)
    out = capsys.readouterr().out
    assert json.loads(out) == value
    assert "\u200b" not in out and "\x1b" not in out and "\u202e" not in out


def test_err_prints_to_standard_error(capsys: pytest.CaptureFixture[str]) -> None:
    echo("a\x07bell", err=True)
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", "a\\x07bell\n")
