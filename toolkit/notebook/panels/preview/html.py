"""The preview panel's HTML: pure functions from
:class:`~toolkit.notebook.panels.preview.model.PlanModel` and its parts to strings (the
schema trees are :mod:`toolkit.notebook.schema_tree`'s).

Every text that came from data (field names, values, docs, SQL) is escaped, so a key such
as ``<script>`` shows as text. The widget puts these strings into ``HTML`` widgets; the
same strings serve a static report.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from html import escape
from typing import Final

from toolkit.core.batch.quarantine import reason_name, reason_words
from toolkit.core.evolution.batch_plan import Retype
from toolkit.core.evolution.operations import MakeOptional
from toolkit.core.values.wording import counted
from toolkit.notebook.common import (
    REPORT_ROWS,
    WRAP_STYLE,
    badge,
    fixed_table,
    scroll_box,
    showing_first,
    text_html,
    wrap,
)
from toolkit.notebook.landings import Happened, LandingGrid, LandingPage, LandingRow, Show
from toolkit.notebook.panels.preview.model import NewColumn, PlanModel, QuarantinePreview
from toolkit.notebook.schema_tree import SchemaNode, schema_tree_html

__all__ = [
    "REPORT_CHARS",
    "SHOW_TEXT",
    "code_html",
    "code_report_html",
    "landing_grid_html",
    "landing_rows_html",
    "landings_html",
    "new_columns_html",
    "plan_header_html",
    "quarantine_preview_html",
    "schema_tree_report_html",
    "sql_html",
    "sql_report_html",
    "view_folds_html",
    "widenings_html",
]

#: where a static copy sends a reader for the rows it leaves out
_IN_THE_PANEL = "the interactive panel lists all of them"

#: the new columns' table: widths fixed by its header, so a 200-character name wraps in
#: its cell instead of pushing the reasons off screen
_NEW_COLUMNS = (
    ("column", "22%"), ("id", "4em"), ("type", "12%"), ("family", "14%"), ("doc", "16%"),
    ("why", ""),
)


def new_columns_html(columns: Iterable[NewColumn], *, rows: int | None = REPORT_ROWS) -> str:
    """The columns the plan adds (name, field ID, type, family, doc, and the rule that
    added each) in a box that scrolls. ``rows``: how many are listed (None: all, as the
    panel's tab does); a static copy lists the first ones and says how many there are."""
    columns = tuple(columns)
    if not columns:
        return wrap('<p class="tknb-muted">No column is added: the table already fits.</p>')
    shown = columns if rows is None else columns[:rows]
    body = (
        f"<tr><td><code>{text_html(c.name)}</code></td><td>{c.field_id}</td>"
        f"<td>{text_html(c.type)}</td><td>{text_html(c.family)}</td>"
        f"<td class='tknb-doc'>{text_html(c.doc or '')}</td><td>{text_html(c.reason)}</td></tr>"
        for c in shown
    )
    return wrap(
        showing_first(len(shown), len(columns), "new columns", _IN_THE_PANEL)
        + scroll_box(fixed_table(_NEW_COLUMNS, body))
    )


def _first_fields(
    nodes: Sequence[SchemaNode], room: int
) -> tuple[tuple[SchemaNode, ...], int]:
    """The first ``room`` fields of a tree, in the order it is shown (a struct before its
    fields), and how many that is."""
    kept: list[SchemaNode] = []
    used = 0
    for node in nodes:
        if used >= room:
            break
        children, inner = _first_fields(node.children, room - used - 1)
        kept.append(node if children == node.children else replace(node, children=children))
        used += 1 + inner
    return tuple(kept), used


def schema_tree_report_html(
    nodes: Iterable[SchemaNode], *, title: str = "", rows: int = REPORT_ROWS
) -> str:
    """A schema tree as a static copy shows it: its first ``rows`` fields (nested ones
    count), and how many there are in all when some are left out."""
    nodes = tuple(nodes)
    shown, count = _first_fields(nodes, rows)
    total = sum(1 for root in nodes for _ in root.walk())
    note = showing_first(count, total, "fields", _IN_THE_PANEL)
    if not note:
        return schema_tree_html(nodes, title=title)
    head = f"<b>{text_html(title)}</b>" if title else ""
    tree = schema_tree_html(shown)
    return wrap(head + note) + tree


#: how many characters of a long text a static copy shows, whatever its lines: a new
#: table's CREATE TABLE is one line naming every column
REPORT_CHARS = 100 * REPORT_ROWS


def _text_report_html(text: str, what: str, rest: str, rows: int, chars: int) -> str:
    """``text`` in a ``<pre>``, cut to its first ``rows`` lines and ``chars`` characters,
    with the sentence saying how much there is in all (``what``) and where the ``rest``
    is."""
    lines = text.splitlines()
    head, note = text, ""
    if len(lines) > rows:
        head = "\n".join(lines[:rows])
        note = showing_first(rows, len(lines), f"lines of {what}", rest)
    if len(head) > chars:
        head = head[:chars] + "…"
        note = showing_first(chars, len(text), f"characters of {what}", rest)
    return f"{note}<pre>{text_html(head)}</pre>"


def sql_report_html(
    sql: Iterable[tuple[str, str]], *, rows: int = REPORT_ROWS, chars: int = REPORT_CHARS
) -> str:
    """The view's SQL per dialect as a static copy shows it: the first ``rows`` lines
    (and ``chars`` characters) of each, as a view over 5,000 columns has over 5,000, and
    how many there are."""
    rest = "the SQL tab of the interactive panel has all of it, with a Copy button"
    parts = [
        f"<p><b>{text_html(dialect)}</b></p>"
        + _text_report_html(text, f"the {dialect} view", rest, rows, chars)
        for dialect, text in sql
    ]
    return wrap("".join(parts) or "<p>(no columns: no view)</p>")


def code_report_html(code: str, *, rows: int = REPORT_ROWS, chars: int = REPORT_CHARS) -> str:
    """The plan as code, as a static copy shows it: its first ``rows`` lines and ``chars``
    characters, and how many there are."""
    rest = '"Copy as code" in the interactive panel copies all of it'
    return wrap(_text_report_html(code, "the code", rest, rows, chars))


#: the grid's filter choices, in words
SHOW_TEXT: Final[dict[Show, str]] = {
    "every value": "every value",
    "drifting": "only drifting values",
    "each drift": "each kind of drift, once",
    "quarantined": "quarantined",
    "converted": "converted",
    "new column": "new column",
    "widened": "widened column",
    "as is": "as is",
    "nowhere": "lands nowhere",
}

#: the colour of each happening, inline: a front end that drops the stylesheet keeps it
_HAPPENED_COLOR: Final[dict[Happened, str]] = {
    "quarantined": "#b00020",
    "converted": "#b35900",
    "new column": "#1d6b3f",
    "widened": "#8f5fbf",
    "as is": "#222",
    "nowhere": "#777",
}

#: widths fixed by the header row, and long names and values broken anywhere: a
#: 200-character field name wraps inside its cell instead of pushing the grid off screen
_GRID_STYLE = "table-layout:fixed;width:100%;max-width:1200px"
_BREAK = WRAP_STYLE
_GRID_HEAD = "<tr>" + "".join(
    f"<th style='width:{width}'>{name}</th>" if width else f"<th>{name}</th>"
    for name, width in (
        ("record", "4.5em"), ("key", "19%"), ("value", "15%"), ("arrived as", "7em"),
        ("column", "19%"), ("stored", "15%"), ("what happened", ""),
    )
) + "</tr>"


def _happened_text(row: LandingRow) -> str:
    if row.happened == "quarantined":
        return f"quarantined: {row.detail}" if row.detail else "quarantined with its record"
    if row.happened == "nowhere":
        return "null: lands nowhere" if row.value is None else "lands nowhere"
    return SHOW_TEXT[row.happened]


def _code_cell(text: str, extra: str = "") -> str:
    return f"<td style='{_BREAK}'><code>{text_html(text)}</code>{extra}</td>"


def _grid_row(row: LandingRow) -> str:
    if row.column is None:
        column = stored = "<td class='tknb-muted'>-</td>"
    else:
        column = _code_cell(row.column, badge("new", "new") if row.new_column else "")
        stored = _code_cell(row.stored_text)
    color = _HAPPENED_COLOR[row.happened]
    return (
        f"<tr><td>{row.record}</td>{_code_cell(row.key or '(the whole item)')}"
        f"{_code_cell(row.value_text)}<td>{text_html(row.kind)}</td>{column}{stored}"
        f"<td style='color:{color};{_BREAK}'>{text_html(_happened_text(row))}</td></tr>"
    )


def landing_rows_html(page: LandingPage) -> str:
    """One page of the grid as a table: a row per value."""
    if not page.rows:
        return '<p class="tknb-muted">No value matches.</p>'
    body = "".join(_grid_row(r) for r in page.rows)
    return f"<table class='tknb-grid' style='{_GRID_STYLE}'>{_GRID_HEAD}{body}</table>"


def landing_grid_html(grid: LandingGrid, page: LandingPage) -> str:
    """The grid as the panel shows it: which records its values come from, then ``page``."""
    return wrap(
        f'<p class="tknb-muted">{text_html(grid.sample_text)}</p>{landing_rows_html(page)}'
    )


def landings_html(grid: LandingGrid, *, size: int = 25) -> str:
    """Where the sample values land, as a static copy shows it (it cannot page): the
    first page of the grid as the panel first shows it (each kind of drift once, when some
    value drifts), and which records the values come from (``PlanModel.landings``)."""
    if not grid.all_rows:
        return wrap('<p class="tknb-muted">No sample record.</p>')
    view = grid.first_view
    page = view.page(0, size)
    some = f"{len(page.rows):,}" if page.total == len(page.rows) else (
        f"the first {len(page.rows):,} of {page.total:,}"
    )
    shown = (
        f"each kind of drift once, with the first value that drifts so ({some} rows)"
        if view.show == "each drift"
        else f"{some} of the values"
    )
    more = (
        " The panel in the running notebook pages through every value and filters them by "
        "field and by what happened."
        if len(page.rows) < len(grid.all_rows)
        else ""
    )
    return wrap(
        f'<p class="tknb-muted">{text_html(grid.sample_text)} Shown here: {shown}.{more}</p>'
        f"{landing_rows_html(page)}"
    )


#: the widenings' tables: widths fixed by their header rows
_RETYPES = (
    ("column", "22%"), ("id", "9em"), ("from", "10%"), ("to", "10%"), ("how", "12%"), ("why", ""),
)
_OPTIONALS = (("column", "30%"), ("id", "5em"), ("why", ""))


def widenings_html(
    widenings: Iterable[Retype],
    pending: Iterable[Retype] = (),
    optionals: Iterable[MakeOptional] = (),
    *,
    rows: int | None = REPORT_ROWS,
) -> str:
    """The columns the ``widen`` policy retypes (in place, or REWRITE with the rows and bytes
    it touches), the rewrites awaiting approval, and the columns made optional. ``rows``:
    how many of each list are shown (None: all, as the panel's tab does); a static copy
    shows the first ones and says how many there are."""
    widenings, pending, optionals = tuple(widenings), tuple(pending), tuple(optionals)
    if not (widenings or pending or optionals):
        return wrap('<p class="tknb-muted">No column is widened or made optional.</p>')

    def row(w: Retype) -> str:
        css = "" if w.in_place else ' class="tknb-rewrite"'
        new_id = f" (new id {w.new_id})" if w.new_id is not None and not w.in_place else ""
        return (
            f"<tr><td><code>{text_html(w.name)}</code></td><td>{w.column_id}{new_id}</td>"
            f"<td>{text_html(w.before)}</td><td>{text_html(w.after)}</td>"
            f"<td{css}>{text_html(w.how)}</td><td>{text_html(w.reason)}</td></tr>"
        )

    def table(retypes: tuple[Retype, ...], what: str) -> str:
        shown = retypes if rows is None else retypes[:rows]
        return showing_first(len(shown), len(retypes), what, _IN_THE_PANEL) + scroll_box(
            fixed_table(_RETYPES, (row(w) for w in shown))
        )

    parts = []
    if widenings:
        rewrites = sum(1 for w in widenings if not w.in_place)
        note = (
            f" {counted(rewrites, 'rewrite')}: approving this plan approves them; older "
            "snapshots keep reading the old values."
            if rewrites
            else ""
        )
        parts.append(f"<p><b>Widened</b>{text_html(note)}</p>{table(widenings, 'widened columns')}")
    if pending:
        parts.append(
            "<p><b>Rewrites awaiting approval</b> (not in this plan: the records needing them "
            "are set aside; preview with <code>allow_rewrites=True</code> to approve them)</p>"
            + table(pending, "rewrites awaiting approval")
        )
    if optionals:
        shown = optionals if rows is None else optionals[:rows]
        parts.append(
            "<p><b>Made optional</b></p>"
            + showing_first(len(shown), len(optionals), "columns made optional", _IN_THE_PANEL)
            + scroll_box(fixed_table(_OPTIONALS, (
                f"<tr><td><code>{text_html(o.name)}</code></td><td>{o.column_id}</td>"
                f"<td>{text_html(o.reason)}</td></tr>"
                for o in shown
            )))
        )
    return wrap("".join(parts))


def quarantine_preview_html(q: QuarantinePreview | None) -> str:
    """Records that would be set aside: counts by reason, then samples with the field, the
    type observed and the column's type."""
    if q is None or not q.total:
        return wrap('<p class="tknb-muted">No record would be set aside.</p>')
    fate = (
        "would fail the batch (on_incompatible='fail'): nothing is written until they are fixed"
        if q.fails
        else "would go to the quarantine table, whole, with the reason (nothing is dropped)"
    )
    # each reason in words, its key (what reason= filters by) on hover
    counts = "".join(
        f'<tr><td title="{text_html(r)}">{text_html(reason_words(r))}</td><td>{n:,}</td></tr>'
        for r, n in q.by_reason
    )
    samples = "".join(
        f'<tr><td>{s.index + 1}</td><td title="{text_html(s.reason)}">'
        f"{text_html(reason_name(s.reason))}</td>"
        f"<td><code>{text_html(s.field or '-')}</code></td><td>{text_html(s.observed or '-')}</td>"
        f"<td>{text_html(s.table_type or '-')}</td><td><code>{text_html(s.raw)}</code></td></tr>"
        for s in q.samples
    )
    return wrap(
        f"<p><b>{counted(q.total, 'record')}</b> {text_html(fate)}.</p>"
        f"<table><tr><th>reason</th><th>records</th></tr>{counts}</table>"
        "<table><tr><th>record</th><th>reason</th><th>field</th><th>arrived as</th>"
        f"<th>table type</th><th>raw record</th></tr>{samples}</table>"
    )


#: copies the <pre> next to the button; the SQL is never put into JavaScript source
_COPY = (
    "<button title=\"Copy to the clipboard\" onclick=\"navigator.clipboard.writeText("
    "this.parentElement.querySelector('pre').innerText).then(() => {this.textContent = "
    "'Copied'; setTimeout(() => {this.textContent = 'Copy'}, 1500)})\">Copy</button>"
)


def view_folds_html(folds: Sequence[str]) -> str:
    """What each field of the view folds to and what that costs (issue 28), above the
    view's SQL: a list, or a line saying every field is one column as stored."""
    if not folds:
        return wrap("<p>Every field of the view is its one column, as stored.</p>")
    items = "".join(f"<li>{text_html(f)}</li>" for f in folds)
    return wrap(f"<p><b>What the view folds</b> (one column per field)</p><ul>{items}</ul>")


def sql_html(sql: str, dialect: str) -> str:
    """The view's SQL for one dialect in a ``<pre>``, with a Copy button."""
    return wrap(
        f"<div><b>{text_html(dialect)}</b> {_COPY}<pre>{escape(sql)}</pre></div>"
    )


#: shows the text area next to the button and copies it: the Clipboard API where the page
#: may use it (JupyterLab on localhost or https), else the selection and the browser's copy
#: command; either way the code stays selected for a manual copy. The code is never put
#: into JavaScript source: the handler reads the text area.
_COPY_CODE = (
    '<button class="tknb-copy-code" title="Show the code and copy it to the clipboard" '
    "onclick=\"const box = this.parentElement.querySelector('textarea'); "
    "box.style.display = 'block'; "
    "box.select(); const done = (how) => {this.textContent = how; "
    "setTimeout(() => {this.textContent = 'Copy as code'}, 2000)}; "
    "const fallback = () => done(document.execCommand('copy') ? 'Copied' : "
    "'Select all and copy'); navigator.clipboard ? navigator.clipboard.writeText(box.value)"
    ".then(() => done('Copied'), fallback) : fallback()\">Copy as code</button>"
)


def code_html(code: str | None, language: str, refusal: str | None = None) -> str:
    """The plan as code in ``language``, in a read-only (selectable) text area that the
    "Copy as code" button shows and copies; or, when the plan cannot be exported, the
    sentence saying why, instead of the button."""
    if refusal is not None:
        return wrap(
            f'<p><b>No {text_html(language)} code to copy</b>: '
            f'<span class="tknb-error">{text_html(refusal)}</span></p>'
        )
    if not code:
        return wrap('<p class="tknb-muted">The plan changes nothing: no code to copy.</p>')
    rows = min(code.count("\n") + 2, 20)  # a line more for the scroll bar (no wrapping)
    return wrap(
        f"<div>{_COPY_CODE} <span class='tknb-muted'>The plan as {text_html(language)}; if "
        "copying is blocked, select the code and copy it.</span>"
        f'<textarea class="tknb-code" readonly rows="{rows}" wrap="off" spellcheck="false" '
        'style="display:none;width:60em;max-width:100%;font-family:monospace;font-size:12px">'
        f"{escape(code)}</textarea></div>"
    )


def plan_header_html(model: PlanModel) -> str:
    """The plan in one sentence, naming the table once, and its batch in words (its full
    id on hover); a warning for each group of new names that look alike."""
    batch = model.batch_text
    warnings = "".join(
        f'<p class="tknb-error">Warning: {text_html(w)}.</p>' for w in model.lookalikes) + "".join(
        f'<p class="tknb-error">Warning: {text_html(w)}</p>' for w in model.conversions)
    return wrap(
        f"<b>Preview of {text_html(model.table)}</b>: {text_html(model.headline)}. "
        f'<span class="tknb-muted" title="batch id {text_html(model.batch_id)}">'
        f"{text_html(batch[:1].upper() + batch[1:])}.</span>{warnings}"
    )
