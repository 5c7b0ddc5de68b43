"""What every panel shares: values as short texts, and the one stylesheet its HTML uses.

>>> clip("abcdef", 4)
'abc…'
>>> value_text("7"), value_text(7)
('"7"', '7')
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

__all__ = ["STYLE", "VALUE_WIDTH", "badge", "clip", "value_text", "wrap"]

#: how long a value's text may get in a table cell before it is clipped
VALUE_WIDTH = 60


def clip(text: str, width: int = VALUE_WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def value_text(value: Any, width: int = VALUE_WIDTH) -> str:
    """A value as JSON text (``"7"`` for a string, ``7`` for a number), clipped."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return clip(text, width)


#: one small stylesheet, every class prefixed so a notebook's own styles are untouched
STYLE = """<style>
.tknb table{border-collapse:collapse;font-size:12px;margin:4px 0}
.tknb th,.tknb td{border-bottom:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
.tknb th{background:#f3f3f3}
.tknb tr.tknb-evolved td{background:#fff3dc}
.tknb .tknb-badge{display:inline-block;border-radius:3px;padding:0 4px;margin-left:4px;
 font-size:10px;color:#fff}
.tknb .tknb-evolved-badge{background:#d9822b}
.tknb .tknb-drifted-badge{background:#8f5fbf}
.tknb .tknb-new-badge{background:#2e8b57}
.tknb .tknb-new{color:#1d6b3f;font-weight:600}
.tknb .tknb-muted{color:#777}
.tknb .tknb-doc{color:#777;font-style:italic}
.tknb ul.tknb-tree{list-style:none;padding-left:16px;margin:0;font-family:monospace;font-size:12px}
.tknb pre{background:#f7f7f7;padding:8px;overflow-x:auto;font-size:12px}
.tknb .tknb-ok{color:#1d6b3f}
.tknb .tknb-error{color:#b00020}
.tknb .tknb-rewrite{color:#b35900;font-weight:600}
</style>"""


def wrap(body: str) -> str:
    return f'{STYLE}<div class="tknb">{body}</div>'


def badge(text: str, kind: str) -> str:
    return f'<span class="tknb-badge tknb-{kind}-badge">{escape(text)}</span>'
