"""What every panel shares: values as short texts, the one stylesheet its HTML uses, and
the static HTML a panel carries besides its widget (see :class:`StaticHtmlPanel`).

>>> clip("abcdef", 4)
'abc…'
>>> value_text("7"), value_text(7)
('"7"', '7')
>>> page = html_document("Plan <1>", wrap("<p>x</p>") + wrap("<p>y</p>"))
>>> page.startswith("<!DOCTYPE html>"), page.count("<style>"), "Plan &lt;1&gt;" in page
(True, 2, True)
"""

from __future__ import annotations

import base64
import json
import re
from html import escape
from typing import Any

__all__ = [
    "STYLE",
    "VALUE_WIDTH",
    "StaticHtmlPanel",
    "badge",
    "clip",
    "html_document",
    "one_style",
    "panel_bundle",
    "svg_as_images",
    "value_text",
    "wrap",
]

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


#: a badge's colours, also inline: a front end that drops the stylesheet (a sanitizer)
#: keeps ``style`` attributes, so badges stay apart and coloured
BADGE_COLORS = {"evolved": "#d9822b", "drifted": "#8f5fbf", "new": "#2e8b57"}


def badge(text: str, kind: str) -> str:
    color = BADGE_COLORS.get(kind, "#777")
    return (
        f'<span class="tknb-badge tknb-{kind}-badge" style="background-color:{color};'
        f'color:#fff;border-radius:3px;padding:0 4px;margin-left:4px;font-size:10px">'
        f"{escape(text)}</span>"
    )


# --- a panel as static HTML -------------------------------------------------------------

#: the page around a panel saved as a document (the panel's own classes are in STYLE)
DOCUMENT_STYLE = """<style>
body{font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:24px;
 color:#222;font-size:13px}
h1{font-size:18px;margin:0 0 12px}
h3.tknb-section{font-size:14px;margin:18px 0 4px;border-bottom:1px solid #ddd}
.tknb-footer{color:#777;font-size:11px;margin-top:24px}
</style>"""

#: under a panel's HTML in a notebook: what a reader without the widget sees
STATIC_NOTE = (
    '<p class="tknb-footer" style="color:#777;font-size:11px">A static copy of this '
    "toolkit panel, as it was displayed; run the notebook for the interactive panel.</p>"
)


def one_style(html: str) -> str:
    """``html`` (pieces that each :func:`wrap` added the stylesheet to) with the stylesheet
    once, first."""
    return STYLE + html.replace(STYLE, "")


_SVG = re.compile(r"<svg\b[^>]*>.*?</svg>", re.S)
_SIZE = re.compile(r'<svg\b[^>]*?\bwidth="(\d+)"[^>]*?\bheight="(\d+)"')
_TITLE = re.compile(r"<title>(.*?)</title>", re.S)


def svg_as_images(html: str) -> str:
    """Each inline ``<svg>`` of ``html`` as an ``<img>`` of the same SVG (a ``data:`` URI,
    nothing fetched): a front end that sanitizes HTML (JupyterLab showing an untrusted
    notebook) drops inline SVG, leaving its texts run together, but keeps images.

    >>> svg_as_images('<p><svg width="4" height="2"><title>a &amp; b</title></svg></p>')[:60]
    '<p><img alt="a &amp; b" width="4" height="2" src="data:image'
    """

    def image(match: re.Match[str]) -> str:
        svg = match.group(0)
        title = _TITLE.search(svg)
        size = _SIZE.match(svg)
        dims = "" if size is None else f' width="{size.group(1)}" height="{size.group(2)}"'
        data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
        return (
            f'<img alt="{title.group(1) if title else "chart"}"{dims} '
            f'src="data:image/svg+xml;base64,{data}" style="display:block;margin:8px 0">'
        )

    return _SVG.sub(image, html)


def panel_bundle(widget: Any, html: str, text: str, **kwargs: Any) -> dict[str, Any]:
    """A panel's display bundle: its ``widget``'s (the live view), plus ``html`` as
    ``text/html`` and ``text`` as ``text/plain`` in place of the widget's ``VBox(...)``
    repr. A front end without the widget's model (a notebook reopened without its widget
    state, GitHub, nbviewer, an HTML export) shows the HTML instead; its charts are SVG
    images (:func:`svg_as_images`), which sanitizing front ends keep."""
    data = dict(widget._repr_mimebundle_(**kwargs) or {})
    data["text/html"] = f'{one_style(svg_as_images(html))}<div class="tknb">{STATIC_NOTE}</div>'
    data["text/plain"] = text
    return data


def html_document(title: str, body: str) -> str:
    """A self-contained HTML page: ``title`` as heading, ``body`` (a panel's HTML) under it;
    its styles inline, no script, nothing fetched."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n{DOCUMENT_STYLE}\n{STYLE}\n</head>\n<body>\n"
        f"<h1>{escape(title)}</h1>\n{body.replace(STYLE, '')}\n"
        '<p class="tknb-footer">Saved from a toolkit notebook panel.</p>\n</body>\n</html>\n'
    )


class StaticHtmlPanel:
    """A panel (``self.widget``: its ipywidgets box) that also renders as static HTML.

    A subclass gives :meth:`report_title` and :meth:`report_html` (its current state, from
    its model, as the ``*_html`` modules render it); it then displays as its widget plus
    that HTML (:func:`panel_bundle`), and :meth:`to_html` is a page to save and send::

        open("plan.html", "w", encoding="utf-8").write(panel.to_html())
    """

    widget: Any

    def report_title(self) -> str:
        raise NotImplementedError

    def report_html(self) -> str:
        raise NotImplementedError

    def to_html(self) -> str:
        """The panel as it is now, as a self-contained HTML document (no script)."""
        return html_document(self.report_title(), self.report_html())

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        return panel_bundle(self.widget, self.report_html(), self.report_title(), **kwargs)
