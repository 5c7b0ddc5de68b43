"""The preview panel's HTML: pure functions from :class:`~toolkit.notebook.preview_model.PlanModel`
and its parts to strings (the schema trees are :mod:`toolkit.notebook.schema_tree`'s).

Every text that came from data (field names, values, docs, SQL) is escaped, so a key such
as ``<script>`` shows as text. The widget puts these strings into ``HTML`` widgets; the
same strings serve a static report.
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

from toolkit.core.planner import MakeOptional, Retype
from toolkit.notebook.common import wrap
from toolkit.notebook.preview_model import NewColumn, PlanModel, QuarantinePreview, RecordLandings

__all__ = [
    "code_html",
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


def landings_html(samples: Iterable[RecordLandings], records: int | None = None) -> str:
    """Per sample record: each value, its observed kind, and every column it lands in."""
    samples = tuple(samples)
    if not samples:
        return wrap('<p class="tknb-muted">No sample record.</p>')
    parts = []
    if records is not None and records > len(samples):
        parts.append(
            f'<p class="tknb-muted">The first {len(samples)} of {records} records.</p>'
        )
    head = (
        "<tr><th>key</th><th>value</th><th>arrived as</th><th>column</th>"
        "<th>stored</th><th></th></tr>"
    )
    for s in samples:
        if s.quarantined is not None:
            parts.append(
                f"<p><b>record {s.index}</b> <code class='tknb-muted'>{escape(s.record)}</code>"
                f"</p><p class='tknb-error'>set aside whole: {escape(s.quarantined)}</p>"
            )
            continue
        rows = "".join(
            f"<tr><td><code>{escape(x.key)}</code></td><td><code>{escape(x.value_text)}</code>"
            f"</td><td>{escape(x.kind)}</td><td><code>{escape(x.column)}</code></td>"
            f"<td><code>{escape(x.stored_text)}</code></td>"
            f"<td>{'converted' if x.converted else ''}</td></tr>"
            for x in s.landings
        )
        nowhere = (
            f'<p class="tknb-muted">null, written nowhere: {escape(", ".join(s.unwritten))}</p>'
            if s.unwritten
            else ""
        )
        parts.append(
            f"<p><b>record {s.index}</b> <code class='tknb-muted'>{escape(s.record)}</code></p>"
            f"<table>{head}{rows}</table>{nowhere}"
        )
    return wrap("".join(parts))


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
        f"<tr><td>{s.index}</td><td>{escape(s.reason)}</td>"
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
        f"<div>{_COPY_CODE} <span class='tknb-muted'>{escape(language)} code of the plan; "
        "if the browser blocks the clipboard: select all in the box and copy</span>"
        f'<textarea class="tknb-code" readonly rows="{rows}" wrap="off" spellcheck="false" '
        'style="display:none;width:60em;max-width:100%;font-family:monospace;font-size:12px">'
        f"{escape(code)}</textarea></div>"
    )


def plan_header_html(model: PlanModel) -> str:
    return wrap(
        f"<b>Preview of {escape(model.table)}</b>: {escape(model.summary)}. "
        f'<span class="tknb-muted">batch id {escape(model.batch_id)}</span>'
    )
