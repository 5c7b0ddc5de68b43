"""The README's ten-line example prints exactly what the README says it prints."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


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
