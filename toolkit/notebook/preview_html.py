"""The preview panel's HTML: pure functions from :class:`~toolkit.notebook.preview_model.PlanModel`
and its parts to strings (the schema trees are :mod:`toolkit.notebook.schema_tree`'s).

Every text that came from data (field names, values, docs, SQL) is escaped, so a key such
as ``<script>`` shows as text. The widget puts these strings into ``HTML`` widgets; the
same strings serve a static report.
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape
from typing import Final

from toolkit.core.planner import MakeOptional, Retype
from toolkit.notebook.common import badge, wrap
from toolkit.notebook.landings import Happened, LandingGrid, LandingPage, LandingRow, Show
from toolkit.notebook.preview_model import NewColumn, PlanModel, QuarantinePreview

__all__ = [
    "SHOW_TEXT",
    "code_html",
    "landing_grid_html",
    "landing_rows_html",
    "landings_html",
    "new_columns_html",
    "plan_header_html",
    "quarantine_preview_html",
    "sql_html",
    "widenings_html",
]


def new_columns_html(columns: Iterable[NewColumn]) -> str:
    columns = tuple(columns)
    if not columns:
        return wrap('<p class="tknb-muted">No column is added: the table already fits.</p>')
    head = "<tr><th>column</th><th>id</th><th>type</th><th>family</th><th>doc</th><th>why</th></tr>"
    body = "".join(
        f"<tr><td><code>{escape(c.name)}</code></td><td>{c.field_id}</td>"
        f"<td>{escape(c.type)}</td><td>{escape(c.family)}</td>"
        f"<td class='tknb-doc'>{escape(c.doc or '')}</td><td>{escape(c.reason)}</td></tr>"
        for c in columns
    )
    return wrap(f"<table>{head}{body}</table>")


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
_BREAK = "overflow-wrap:anywhere;word-break:break-word"
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
    return f"<td style='{_BREAK}'><code>{escape(text)}</code>{extra}</td>"


def _grid_row(row: LandingRow) -> str:
    if row.column is None:
        column = stored = "<td class='tknb-muted'>-</td>"
    else:
        column = _code_cell(row.column, badge("new", "new") if row.new_column else "")
        stored = _code_cell(row.stored_text)
    color = _HAPPENED_COLOR[row.happened]
    return (
        f"<tr><td>{row.record}</td>{_code_cell(row.key or '(the whole item)')}"
        f"{_code_cell(row.value_text)}<td>{escape(row.kind)}</td>{column}{stored}"
        f"<td style='color:{color};{_BREAK}'>{escape(_happened_text(row))}</td></tr>"
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
        f'<p class="tknb-muted">{escape(grid.sample_text)}</p>{landing_rows_html(page)}'
    )


def landings_html(grid: LandingGrid, *, size: int = 25) -> str:
    """Where the sample values land, as a static copy shows it (it cannot page): the
    first page of the grid as the panel first shows it (each kind of drift once, when some
    value drifts), and which records the values come from (``PlanModel.landings``)."""
    if not grid.all_rows:
        return wrap('<p class="tknb-muted">No sample record.</p>')
    view = grid.first_view
    page = view.page(0, size)
    some = f"{len(page.rows)}" if page.total == len(page.rows) else (
        f"the first {len(page.rows)} of {page.total}"
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
        f'<p class="tknb-muted">{escape(grid.sample_text)} Shown here: {shown}.{more}</p>'
        f"{landing_rows_html(page)}"
    )


def widenings_html(
    widenings: Iterable[Retype],
    pending: Iterable[Retype] = (),
    optionals: Iterable[MakeOptional] = (),
) -> str:
    """The columns the widening policy retypes (in place, or REWRITE with the rows and bytes
    it touches), the rewrites awaiting approval, and the columns made optional."""
    widenings, pending, optionals = tuple(widenings), tuple(pending), tuple(optionals)
    if not (widenings or pending or optionals):
        return wrap('<p class="tknb-muted">No column is widened or made optional.</p>')
    head = "<tr><th>column</th><th>id</th><th>from</th><th>to</th><th>how</th><th>why</th></tr>"

    def row(w: Retype) -> str:
        css = "" if w.in_place else ' class="tknb-rewrite"'
        new_id = f" (new id {w.new_id})" if w.new_id is not None and not w.in_place else ""
        return (
            f"<tr><td><code>{escape(w.name)}</code></td><td>{w.column_id}{new_id}</td>"
            f"<td>{escape(w.before)}</td><td>{escape(w.after)}</td>"
            f"<td{css}>{escape(w.how)}</td><td>{escape(w.reason)}</td></tr>"
        )

    parts = []
    if widenings:
        rewrites = sum(1 for w in widenings if not w.in_place)
        note = (
            f" {rewrites} rewrite(s): approving this plan approves them; older snapshots keep "
            "reading the old values."
            if rewrites
            else ""
        )
        parts.append(
            f"<p><b>Widened</b>{escape(note)}</p><table>{head}"
            + "".join(row(w) for w in widenings) + "</table>"
        )
    if pending:
        parts.append(
            "<p><b>Rewrites awaiting approval</b> (not in this plan: the records needing them "
            "are set aside; preview with <code>allow_rewrites=True</code> to approve them)</p>"
            f"<table>{head}" + "".join(row(w) for w in pending) + "</table>"
        )
    if optionals:
        parts.append(
            "<p><b>Made optional</b></p><table><tr><th>column</th><th>id</th><th>why</th></tr>"
            + "".join(
                f"<tr><td><code>{escape(o.name)}</code></td><td>{o.column_id}</td>"
                f"<td>{escape(o.reason)}</td></tr>"
                for o in optionals
            )
            + "</table>"
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
    counts = "".join(f"<tr><td>{escape(r)}</td><td>{n}</td></tr>" for r, n in q.by_reason)
    samples = "".join(
        f"<tr><td>{s.index + 1}</td><td>{escape(s.reason)}</td>"
        f"<td><code>{escape(s.field or '-')}</code></td><td>{escape(s.observed or '-')}</td>"
        f"<td>{escape(s.table_type or '-')}</td><td><code>{escape(s.raw)}</code></td></tr>"
        for s in q.samples
    )
    return wrap(
        f"<p><b>{q.total} record(s)</b> {escape(fate)}.</p>"
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


def sql_html(sql: str, dialect: str) -> str:
    """The view's SQL for one dialect in a ``<pre>``, with a Copy button."""
    return wrap(
        f"<div><b>{escape(dialect)}</b> {_COPY}<pre>{escape(sql)}</pre></div>"
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
            f'<p><b>No {escape(language)} code to copy</b>: '
            f'<span class="tknb-error">{escape(refusal)}</span></p>'
        )
    if not code:
        return wrap('<p class="tknb-muted">The plan changes nothing: no code to copy.</p>')
    rows = min(code.count("\n") + 2, 20)  # a line more for the scroll bar (no wrapping)
    return wrap(
        f"<div>{_COPY_CODE} <span class='tknb-muted'>The plan as {escape(language)}; if "
        "copying is blocked, select the code and copy it.</span>"
        f'<textarea class="tknb-code" readonly rows="{rows}" wrap="off" spellcheck="false" '
        'style="display:none;width:60em;max-width:100%;font-family:monospace;font-size:12px">'
        f"{escape(code)}</textarea></div>"
    )


def plan_header_html(model: PlanModel) -> str:
    """The plan in one sentence, and its batch in words (its full id on hover)."""
    batch = model.batch_text
    return wrap(
        f"<b>Preview of {escape(model.table)}</b>: {escape(model.summary)}. "
        f'<span class="tknb-muted" title="batch id {escape(model.batch_id)}">'
        f"{escape(batch[:1].upper() + batch[1:])}.</span>"
    )
