"""HTML renderings of the view-models: pure functions from a model to a string.

Every text that came from data (field names, values, docs, SQL) is escaped, so a key such
as ``<script>`` shows as text. The widgets put these strings into ``HTML`` widgets; the
same strings serve a static report.
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape
from typing import Protocol

from toolkit.core.planner import MakeOptional, Retype
from toolkit.notebook.models import (
    FieldRow,
    NewColumn,
    Page,
    PlanModel,
    QuarantinePreview,
    RecordLandings,
    SchemaNode,
)

__all__ = [
    "STYLE",
    "field_table_html",
    "landings_html",
    "new_columns_html",
    "outcome_html",
    "plan_header_html",
    "quarantine_preview_html",
    "schema_tree_html",
    "sql_html",
    "widenings_html",
]

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


def _wrap(body: str) -> str:
    return f'{STYLE}<div class="tknb">{body}</div>'


def _badge(text: str, kind: str) -> str:
    return f'<span class="tknb-badge tknb-{kind}-badge">{escape(text)}</span>'


# --- fields ---------------------------------------------------------------------------------


def field_table_html(page: Page, *, committed: bool = False) -> str:
    """One page of fields; evolved fields are highlighted."""
    if not page.rows:
        return _wrap('<p class="tknb-muted">No field matches.</p>')
    counts = "values written per column" if committed else "types seen (count, share)"
    head = (
        f"<tr><th>field</th><th>{counts}</th><th>nulls</th><th>first / last batch</th>"
        f"<th>{'' if committed else 'samples'}</th><th>columns of its family</th></tr>"
    )
    body = "".join(_field_row(r) for r in page.rows)
    note = ""
    if any(not t.measured for r in page.rows for t in r.types):
        note = (
            '<p class="tknb-muted">n+ : a lower bound; Iceberg kept no counts for some '
            "data files (fields inside lists are not counted by Spark's writer).</p>"
        )
    return _wrap(f"<table>{head}{body}</table>{note}")


def _field_row(r: FieldRow) -> str:
    badges = (_badge("evolved", "evolved") if r.evolved else "") + (
        _badge("drifted", "drifted") if r.drifted else ""
    )
    types = "<br>".join(
        f"{escape(t.label)}: {t.count_text} ({t.share:.0%})" for t in r.types
    ) or '<span class="tknb-muted">only nulls</span>'
    samples = "<br>".join(
        escape(", ".join(t.sample_texts)) for t in r.types if t.samples
    )
    nulls = "-" if r.nulls is None else str(r.nulls)
    batches = (
        "-" if r.first_batch is None else f"{escape(r.first_batch)} / {escape(str(r.last_batch))}"
    )
    columns = "<br>".join(escape(c) for c in r.columns) or '<span class="tknb-muted">-</span>'
    css = ' class="tknb-evolved"' if r.evolved else ""
    return (
        f"<tr{css}><td><code>{escape(r.name)}</code>{badges}</td><td>{types}</td>"
        f"<td>{nulls}</td><td>{batches}</td><td>{samples}</td><td>{columns}</td></tr>"
    )


# --- a preview ------------------------------------------------------------------------------


def schema_tree_html(nodes: Iterable[SchemaNode], *, title: str = "") -> str:
    """A schema as nested lists: ``id: name: type``, new fields marked, docs shown."""
    nodes = tuple(nodes)
    head = f"<b>{escape(title)}</b>" if title else ""
    if not nodes:
        return _wrap(f'{head}<p class="tknb-muted">(no columns)</p>')
    return _wrap(head + _tree(nodes))


def _tree(nodes: Iterable[SchemaNode]) -> str:
    items = []
    for n in nodes:
        css = ' class="tknb-new"' if n.new else ""
        doc = f' <span class="tknb-doc">{escape(n.doc)}</span>' if n.doc else ""
        new = _badge("new", "new") if n.new else ""
        required = " required" if n.required else ""
        children = _tree(n.children) if n.children else ""
        items.append(
            f"<li><span{css}>{n.field_id}: {escape(n.name)}: {escape(_short_type(n))}"
            f"{required}</span>{new}{doc}{children}</li>"
        )
    return f'<ul class="tknb-tree">{"".join(items)}</ul>'


def _short_type(n: SchemaNode) -> str:
    """Structs and lists of structs show their fields as children, not inline."""
    if n.children and "struct<" in n.type:
        return n.type.split("struct<", 1)[0] + "struct<…>" + ">" * n.type.count("list<")
    return n.type


def new_columns_html(columns: Iterable[NewColumn]) -> str:
    columns = tuple(columns)
    if not columns:
        return _wrap('<p class="tknb-muted">No column is added: the table already fits.</p>')
    head = "<tr><th>column</th><th>id</th><th>type</th><th>family</th><th>doc</th><th>why</th></tr>"
    body = "".join(
        f"<tr><td><code>{escape(c.name)}</code></td><td>{c.field_id}</td>"
        f"<td>{escape(c.type)}</td><td>{escape(c.family)}</td>"
        f"<td class='tknb-doc'>{escape(c.doc or '')}</td><td>{escape(c.reason)}</td></tr>"
        for c in columns
    )
    return _wrap(f"<table>{head}{body}</table>")


def landings_html(samples: Iterable[RecordLandings], records: int | None = None) -> str:
    """Per sample record: each value, its observed kind, and every column it lands in."""
    samples = tuple(samples)
    if not samples:
        return _wrap('<p class="tknb-muted">No sample record.</p>')
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
    return _wrap("".join(parts))


def widenings_html(
    widenings: Iterable[Retype],
    pending: Iterable[Retype] = (),
    optionals: Iterable[MakeOptional] = (),
) -> str:
    """The columns the widening policy retypes (in place, or REWRITE with the rows and bytes
    it touches), the rewrites awaiting approval, and the columns made optional."""
    widenings, pending, optionals = tuple(widenings), tuple(pending), tuple(optionals)
    if not (widenings or pending or optionals):
        return _wrap('<p class="tknb-muted">No column is widened or made optional.</p>')
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
    return _wrap("".join(parts))


def quarantine_preview_html(q: QuarantinePreview | None) -> str:
    """Records that would be set aside: counts by reason, then samples with the field, the
    type observed and the column's type."""
    if q is None or not q.total:
        return _wrap('<p class="tknb-muted">No record would be set aside.</p>')
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
    return _wrap(
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
    return _wrap(
        f"<div><b>{escape(dialect)}</b> {_COPY}<pre>{escape(sql)}</pre></div>"
    )


def plan_header_html(model: PlanModel) -> str:
    return _wrap(
        f"<b>Preview of {escape(model.table)}</b>: {escape(model.summary)}. "
        f'<span class="tknb-muted">batch id {escape(model.batch_id)}</span>'
    )


# --- an outcome -----------------------------------------------------------------------------


class Outcome(Protocol):
    """What any action of a panel did: committing a preview, an evolution, a replay."""

    @property
    def ok(self) -> bool: ...
    @property
    def title(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def error_type(self) -> str | None: ...
    @property
    def traceback(self) -> str | None: ...


def outcome_html(outcome: Outcome) -> str:
    """The outcome in plain words; an error keeps its traceback, folded."""
    css = "tknb-ok" if outcome.ok else "tknb-error"
    text = f'<p class="{css}"><b>{escape(outcome.title)}.</b> {escape(outcome.message)}</p>'
    if outcome.traceback:
        text += (
            f"<details><summary>{escape(outcome.error_type or 'error')}: details</summary>"
            f"<pre>{escape(outcome.traceback)}</pre></details>"
        )
    return _wrap(text)
