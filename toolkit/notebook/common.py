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
import re
from collections.abc import Iterable, Sequence
from html import escape, unescape
from typing import Any

# values as texts are core's (toolkit.core.batch.arrivals stores samples as a panel shows them);
# a panel imports them from here with the rest
from toolkit.core.values.wording import VALUE_WIDTH, clip, value_text, visible

__all__ = [
    "PANEL_CLASS",
    "REPORT_ROWS",
    "STYLE",
    "VALUE_WIDTH",
    "StaticHtmlPanel",
    "badge",
    "cell_box",
    "text_html",
    "clip",
    "clip_middle",
    "fixed_table",
    "html_document",
    "one_style",
    "panel_bundle",
    "scroll_box",
    "showing_first",
    "svg_as_images",
    "value_text",
    "wrap",
]


def text_html(text: str) -> str:
    r"""A text from data as HTML: its control, invisible and bidi characters written out
    (:func:`toolkit.core.values.wording.visible`, line breaks kept), so ``user\u202egnp.exe`` never
    reads as ``userexe.png`` nor ``ad\u200bmin`` as ``admin``; then HTML-escaped. Every
    panel writes names, values and messages through it (code and SQL blocks, which are
    copied as they are, are HTML-escaped only).

    >>> text_html("user\u202egnp.exe <b>"), text_html("ad\u200bmin")
    ('user\\u202egnp.exe &lt;b&gt;', 'ad\\u200bmin')
    """
    return escape(visible(text, keep_lines=True))


def clip_middle(text: str, width: int = VALUE_WIDTH) -> str:
    """``text`` cut in the middle to ``width`` characters: two long names that share their
    start (``events_2024_…_clicks``, ``events_2024_…_views``) stay told apart.

    >>> clip_middle("abcdefghij", 7)
    'abc…hij'
    """
    if len(text) <= width:
        return text
    head = (width - 1) // 2 + (width - 1) % 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head):]


#: one small stylesheet, every class prefixed so a notebook's own styles are untouched.
#: It holds a panel to the width it is given, whatever the data: a 200-character field
#: name breaks anywhere instead of pushing the next column off screen (``anywhere`` also
#: lets an automatic table shrink, which ``break-word`` does not; a short word such as
#: ``string`` keeps a cell's minimum width), a ``tknb-fixed`` table keeps the column widths
#: it was given, and long lists scroll inside a bounded box. The ``tknb-panel`` rules hold
#: the live widget (:data:`PANEL_CLASS`): rows of controls wrap, two HTML views in a row
#: share it (the schema trees), tabs are as wide as their titles; a widget's HTML has a
#: line height of 28 px, which a wrapped name would double.
STYLE = """<style>
.tknb{max-width:100%;overflow-wrap:anywhere;word-break:break-word;line-height:1.4}
.tknb table{border-collapse:collapse;font-size:12px;margin:4px 0;max-width:100%}
.tknb table.tknb-fixed{table-layout:fixed;width:100%}
.tknb table:not(.tknb-fixed) td{min-width:4em}
.tknb th,.tknb td{border-bottom:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top;
 overflow-wrap:anywhere}
.tknb th{background:#f3f3f3}
.tknb td>div+div{margin-top:3px}
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
.tknb pre{background:#f7f7f7;padding:8px;font-size:12px;white-space:pre-wrap;
 overflow-wrap:anywhere;max-height:480px;overflow:auto}
.tknb .tknb-scroll{max-height:480px;overflow:auto;margin:4px 0}
.tknb .tknb-scroll th{position:sticky;top:0;z-index:1}
.tknb .tknb-cell{max-height:160px;overflow:auto}
.tknb svg,.tknb img{max-width:100%;height:auto}
.tknb-side{display:flex;flex-wrap:wrap;gap:8px 40px}
.tknb-side>div{flex:1 1 360px;min-width:0}
.tknb .tknb-ok{color:#1d6b3f}
.tknb .tknb-error{color:#b00020}
.tknb .tknb-rewrite{color:#b35900;font-weight:600}
.tknb .tknb-line{white-space:nowrap}
.tknb-panel .widget-hbox{flex-wrap:wrap}
.tknb-panel .widget-html,.tknb-panel .widget-html-content{min-width:0}
.tknb-panel .widget-html-content{line-height:1.45}
.tknb-panel .widget-html-content p{margin:4px 0}
.tknb-panel .widget-hbox>.widget-html{flex:1 1 0}
.tknb-panel .jupyter-widgets.jupyter-widget-tab>.lm-TabBar>.lm-TabBar-content{flex-wrap:wrap}
.tknb-panel .jupyter-widgets.jupyter-widget-tab>.lm-TabBar .lm-TabBar-tab{flex:0 0 auto;
 max-width:none}
</style>"""


#: the stylesheet's first rule, also inline: a front end that drops ``<style>`` (GitHub, a
#: sanitizer) keeps ``style`` attributes, so a long name still breaks instead of widening.
#: JupyterLab's sanitizer keeps only some values inline (``overflow-wrap`` and
#: ``word-wrap``: normal or break-word), so ``word-wrap:break-word`` comes first, for it;
#: a browser reads the rest, the later ``overflow-wrap`` winning over its alias
WRAP_STYLE = "word-wrap:break-word;overflow-wrap:anywhere;word-break:break-word"


def wrap(body: str) -> str:
    return f'{STYLE}<div class="tknb" style="{WRAP_STYLE}">{body}</div>'


def fixed_table(columns: Sequence[tuple[str, str]], rows: Iterable[str]) -> str:
    """A table whose columns keep the widths given, whatever their cells hold: ``columns``
    are (header HTML, CSS width such as ``"30%"`` or ``"3em"``; ``""`` takes what is left),
    ``rows`` the ``<tr>`` elements. A fixed layout takes its widths from the header row;
    they are inline, so a front end that drops the stylesheet lays the table out the same.

    >>> fixed_table([("a", "3em"), ("b", "")], ["<tr><td>1</td><td>2</td></tr>"]).split("<tr>")[1]
    '<th style="width:3em">a</th><th>b</th></tr>'
    """
    head = "".join(
        f'<th style="width:{width}">{header}</th>' if width else f"<th>{header}</th>"
        for header, width in columns
    )
    return (
        '<table class="tknb-fixed" style="table-layout:fixed;width:100%">'
        f"<tr>{head}</tr>{''.join(rows)}</table>"
    )


def scroll_box(body: str, *, height: int = 480) -> str:
    """``body`` in a box at most ``height`` pixels high that scrolls: a list of 5,000
    fields stays reachable without pushing the rest of the panel a page down."""
    return (
        f'<div class="tknb-scroll" style="max-height:{height}px;overflow:auto">{body}</div>'
    )


def cell_box(body: str) -> str:
    """A table cell's content, scrolling past a few lines (a cell listing 5,000 columns)."""
    return f'<div class="tknb-cell" style="max-height:160px;overflow:auto">{body}</div>'


#: how many rows of a long list a static copy shows (it cannot page): the rest is counted,
#: so a plan adding 5,000 columns saves as a page of kilobytes, not megabytes
REPORT_ROWS = 200


def showing_first(shown: int, total: int, what: str, rest: str) -> str:
    """The sentence over a list a static copy cuts to its first ``shown`` of ``total``
    ``what``, and where the ``rest`` is; "" when nothing is cut.

    >>> showing_first(200, 5000, "new columns", "the interactive panel lists all of them")
    '<p class="tknb-muted">Showing the first 200 of 5,000 new columns; the interactive \
panel lists all of them.</p>'
    >>> showing_first(3, 3, "new columns", "")
    ''
    """
    if shown >= total:
        return ""
    return (
        f'<p class="tknb-muted">Showing the first {shown:,} of {total:,} {text_html(what)}; '
        f"{text_html(rest)}.</p>"
    )


#: a badge's colours, also inline: a front end that drops the stylesheet (a sanitizer)
#: keeps ``style`` attributes, so badges stay apart and coloured
BADGE_COLORS = {"evolved": "#d9822b", "drifted": "#8f5fbf", "new": "#2e8b57"}


def badge(text: str, kind: str) -> str:
    color = BADGE_COLORS.get(kind, "#777")
    return (
        f'<span class="tknb-badge tknb-{kind}-badge" style="background-color:{color};'
        f'color:#fff;border-radius:3px;padding:0 4px;margin-left:4px;font-size:10px">'
        f"{text_html(text)}</span>"
    )


# --- a panel as static HTML -------------------------------------------------------------

#: the page around a panel saved as a document (the panel's own classes are in STYLE)
DOCUMENT_STYLE = """<style>
body{font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:24px;
 color:#222;font-size:13px;overflow-wrap:anywhere}
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


_CELL = re.compile(r"<(td|th)\b([^>]*)>")
#: what a table cell needs when the stylesheet is gone: JupyterLab's own rules for
#: untrusted output align cells right and would let a long name run out of its column
CELL_STYLE = f"text-align:left;vertical-align:top;{WRAP_STYLE}"


def inline_cell_style(html: str) -> str:
    """Every table cell of ``html`` with :data:`CELL_STYLE` inline (before any style of
    its own), which a sanitizing front end keeps when it drops the stylesheet.

    >>> print(inline_cell_style('<td>a</td><th style="width:3em">b</th>')
    ...       .replace(WRAP_STYLE, "WRAP"))
    <td style="text-align:left;vertical-align:top;WRAP">a</td><th \
style="text-align:left;vertical-align:top;WRAP;width:3em">b</th>
    """

    def cell(match: re.Match[str]) -> str:
        tag, attrs = match.groups()
        mine = 'style="'
        if mine in attrs:
            return f"<{tag}{attrs.replace(mine, f'{mine}{CELL_STYLE};', 1)}>"
        return f'<{tag} style="{CELL_STYLE}"{attrs}>'

    return _CELL.sub(cell, html)


#: the class of a displayed panel's outer widget: the stylesheet's ``tknb-panel`` rules
#: let its rows of controls wrap and its tabs take the width of their titles
PANEL_CLASS = "tknb-panel"


def panel_bundle(widget: Any, html: str, text: str, **kwargs: Any) -> dict[str, Any]:
    """A panel's display bundle: its ``widget``'s (the live view), plus ``html`` as
    ``text/html`` and ``text`` as ``text/plain`` in place of the widget's ``VBox(...)``
    repr. A front end without the widget's model (a notebook reopened without its widget
    state, GitHub, nbviewer, an HTML export) shows the HTML instead; its charts are SVG
    images (:func:`svg_as_images`) and its table cells carry their style inline
    (:func:`inline_cell_style`), which sanitizing front ends keep."""
    # before the view exists, so the front end draws it with the class from the start
    if hasattr(widget, "add_class"):  # adds it once
        widget.add_class(PANEL_CLASS)
    data = dict(widget._repr_mimebundle_(**kwargs) or {})
    static = inline_cell_style(svg_as_images(html))
    data["text/html"] = f'{one_style(static)}<div class="tknb">{STATIC_NOTE}</div>'
    data["text/plain"] = text
    return data


def html_document(title: str, body: str) -> str:
    """A self-contained HTML page: ``title`` as heading, ``body`` (a panel's HTML) under it;
    its styles inline, no script, nothing fetched. A body that opens with the title itself
    (a panel's header: "Preview of db.x: ...") gets no heading, which would only repeat it.

    >>> "<h1>" in html_document("Preview of db.x", "<p><b>Preview of db.x</b>: 2 records</p>")
    False
    """
    heading = "" if _opening_text(body).startswith(title) else f"<h1>{escape(title)}</h1>\n"
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n{DOCUMENT_STYLE}\n{STYLE}\n</head>\n<body>\n"
        f"{heading}{body.replace(STYLE, '')}\n"
        '<p class="tknb-footer">Saved from a toolkit notebook panel.</p>\n</body>\n</html>\n'
    )


def _opening_text(html: str, chars: int = 400) -> str:
    """The text an HTML fragment opens with, tags and styles left out, spaces collapsed."""
    head = re.sub(r"<style.*?</style>", "", html[: chars * 20], flags=re.S)
    return " ".join(unescape(re.sub(r"<[^>]*>", " ", head)).split())[:chars]


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

    def report_text(self) -> str:
        """What a front end that shows only text prints for the panel: its title, unless
        the panel has a text rendering of its own."""
        return self.report_title()

    def to_html(self) -> str:
        """The panel as it is now, as a self-contained HTML document (no script)."""
        return html_document(self.report_title(), self.report_html())

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        return panel_bundle(self.widget, self.report_html(), self.report_text(), **kwargs)
