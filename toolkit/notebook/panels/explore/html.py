"""The explore panel's HTML: one page of fields as a table, evolved fields highlighted.

Every text that came from data (field names, types, samples) is escaped, so a key such
as ``<script>`` shows as text.
"""

from __future__ import annotations

import re

from toolkit.core.batch.profile import share_text
from toolkit.core.values.wording import counted
from toolkit.notebook.common import badge, fixed_table, text_html, wrap
from toolkit.notebook.panels.explore.model import FieldRow, Page, StatisticsModel

__all__ = ["field_table_html", "statistics_header_html"]


def field_table_html(page: Page[FieldRow], *, committed: bool = False) -> str:
    """One page of fields; evolved fields are highlighted."""
    if not page.rows:
        return wrap('<p class="tknb-muted">No field matches.</p>')
    counts = "values written per column" if committed else "types seen (count, share)"
    # no samples column when no row has one (a table whose batches recorded none)
    samples = any(t.samples for r in page.rows for t in r.types)
    # the widths hold whatever the names: the family column keeps a third of the table
    # (a batch's time and short id, "2026-11-28 02:44 (d87f)", fits 13% on one line)
    columns = [
        ("field", "19%"), (counts, "15%"), ("nulls", "5%"), ("first / last batch", "13%"),
        ("samples", "14%"), ("columns of its family", ""),
    ] if samples else [
        ("field", "24%"), (counts, "19%"), ("nulls", "6%"), ("first / last batch", "15%"),
        ("columns of its family", ""),
    ]
    table = fixed_table(columns, (_field_row(r, samples) for r in page.rows))
    note = ""
    if any(not t.measured for r in page.rows for t in r.types):
        note = (
            '<p class="tknb-muted">n+ : a lower bound; Iceberg kept no counts for some '
            "data files (fields inside lists are not counted by Spark's writer).</p>"
        )
    return wrap(f"{table}{note}")


def _at(record: int | None) -> str:
    """Where in its batch a field's first or last value arrived: `` (record 1,501)``."""
    return "" if record is None else f" (record {record:,})"


#: a batch label made of its commit time (``toolkit.notebook.panels.explore.model.batch_label``)
_DATED = re.compile(r"(\d{4}-\d{2}-\d{2}) \d{2}:\d{2} \(")


def _batches(r: FieldRow) -> str:
    """The first and last batch of a field, each on a line of its own that does not break,
    the last one's date left out when it is the first one's, one batch said once:

    >>> from toolkit.notebook.panels.explore.model import FieldRow
    >>> row = FieldRow(("a",), (), None, "2026-11-28 02:44 (d87f)", "2026-11-28 09:15 (c0da)",
    ...                (), False)
    >>> print(*_batches(row).split("<br>"), sep="\\n")
    <span class="tknb-line">2026-11-28 02:44 (d87f)</span>
    <span class="tknb-line">to 09:15 (c0da)</span>
    >>> one = FieldRow(("a",), (), None, "day-1", "day-1", (), False, first_record=3,
    ...                last_record=40)
    >>> print(*_batches(one).split("<br>"), sep="\\n")
    <span class="tknb-line">day-1 (record 3)</span>
    <span class="tknb-line">to record 40</span>
    """
    if r.first_batch is None:
        return "-"
    first, last = r.first_batch, str(r.last_batch)
    if last == first:
        if r.last_record is None or r.last_record == r.first_record:
            return _line(f"{first}{_at(r.first_record)}")
        return _line(f"{first}{_at(r.first_record)}") + "<br>" + _line(
            f"to record {r.last_record:,}")
    day = _DATED.match(first)
    if day is not None and last.startswith(day.group(1) + " ") and _DATED.match(last):
        last = last.removeprefix(day.group(1) + " ")
    return _line(f"{first}{_at(r.first_record)}") + "<br>" + _line(
        f"to {last}{_at(r.last_record)}")


def _line(text: str) -> str:
    return f'<span class="tknb-line">{text_html(text)}</span>'


def _field_row(r: FieldRow, with_samples: bool = True) -> str:
    badges = (badge("evolved", "evolved") if r.evolved else "") + (
        badge("drifted", "drifted") if r.drifted else ""
    )
    types = "<br>".join(
        # (nothing counted: 0% of nothing, as the model's share says)
        f"{text_html(t.label)}: {t.count_text} "
        f"({share_text(t.count, r.present) if r.present else f'{t.share:.0%}'})"
        for t in r.types
    ) or '<span class="tknb-muted">only nulls</span>'
    samples = "" if not with_samples else "<td>" + "<br>".join(
        text_html(", ".join(t.sample_texts)) for t in r.types if t.samples
    ) + "</td>"
    nulls = "-" if r.nulls is None else str(r.nulls)
    batches = _batches(r) + "".join(  # where the field changed type (issue #28)
        f'<br><span class="tknb-rewrite">{text_html(d)}</span>' for d in r.drift_starts
    )
    # one block per column: two long names that wrap stay told apart
    columns = "".join(f"<div>{text_html(c)}</div>" for c in r.columns) or (
        '<span class="tknb-muted">-</span>'
    )
    css = ' class="tknb-evolved"' if r.evolved else ""
    times = (
        "" if r.timestamps is None
        else f'<br><span class="tknb-rewrite">{text_html(r.timestamps)}</span>'
    )
    return (
        f"<tr{css}><td><code>{text_html(r.name)}</code>{badges}{times}</td><td>{types}</td>"
        f"<td>{nulls}</td><td>{batches}</td>{samples}<td>{columns}</td></tr>"
    )


def statistics_header_html(base: StatisticsModel, matching: int | None = None) -> str:
    """The line above the table, each count said once: the source (when it has a name),
    records, batches, fields (``matching`` of them when filtered), how many drifted and
    evolved: ``6 records in 2 batches, 11 fields; 5 drifted, 4 evolved``."""
    fields = counted(base.total, "field") if matching is None or matching == base.total else (
        f"{matching:,} of {counted(base.total, 'field')}"
    )
    source = f"<b>{text_html(base.source)}</b>: " if base.source else ""
    return (
        f"{source}{text_html(base.counts)}, {fields}; {base.drifted:,} drifted, "
        f"{base.evolved:,} evolved"
    )
