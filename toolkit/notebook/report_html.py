"""Each panel as static HTML: what a reader sees without the live widget (GitHub, nbviewer,
a notebook reopened without its widget state) and what ``panel.to_html()`` saves.

Pure functions from a panel's model to an HTML string, built from the pieces the widgets
already show (the ``*_html`` modules); a chart is an inline SVG drawn from the numbers the
plotly figure of :mod:`toolkit.notebook.figures` plots (no plotly, no script, nothing
fetched). A panel passes its current state (filter, picked field, outcome) in.

>>> from toolkit.core.batch.profile import profile
>>> from toolkit.notebook.panels.explore.model import StatisticsModel
>>> model = StatisticsModel.from_profile(profile([{"a": 1}, {"a": "x"}]))
>>> html = explore_report_html(model, field="a")
>>> "<svg" in html, "<script" in html, "a</code>" in html
(True, False, True)
"""

from __future__ import annotations

from collections.abc import Sequence

from toolkit.core.values.wording import counted
from toolkit.notebook.common import (
    REPORT_ROWS,
    clip,
    clip_middle,
    fixed_table,
    scroll_box,
    text_html,
    wrap,
)
from toolkit.notebook.outcome import Outcome, outcome_html
from toolkit.notebook.panels.editor.html import (
    lineage_entry_html,
    lineage_status_html,
    no_lineage_html,
    plan_html,
    trees_html,
)
from toolkit.notebook.panels.editor.model import EvolutionEditorModel, LineageRow
from toolkit.notebook.panels.explore.html import field_table_html, statistics_header_html
from toolkit.notebook.panels.explore.model import FieldRow, StatisticsModel, TypeCount
from toolkit.notebook.panels.maintenance.html import maintenance_outcome_html
from toolkit.notebook.panels.maintenance.html import plan_html as maintenance_plan_html
from toolkit.notebook.panels.maintenance.model import MaintenanceModel, MaintenanceOutcome
from toolkit.notebook.panels.policies.html import comparison_html
from toolkit.notebook.panels.policies.html import outcome_html as policy_html
from toolkit.notebook.panels.policies.model import PolicyComparison
from toolkit.notebook.panels.preview.html import (
    code_report_html,
    landings_html,
    new_columns_html,
    plan_header_html,
    quarantine_preview_html,
    schema_tree_report_html,
    sql_report_html,
    view_folds_html,
    widenings_html,
)
from toolkit.notebook.panels.preview.model import PlanModel
from toolkit.notebook.panels.quarantine.html import (
    groups_html,
    replay_outcome_html,
    replay_plan_html,
    samples_html,
)
from toolkit.notebook.panels.quarantine.model import QuarantineModel, ReplayOutcome, ReplayPlan

__all__ = [
    "TYPE_COLORS",
    "drift_title",
    "editor_report_html",
    "explore_report_html",
    "maintenance_report_html",
    "policies_report_html",
    "preview_report_html",
    "quarantine_report_html",
    "stacked_bars_svg",
    "type_color",
    "type_drift_svg",
    "type_legend",
    "type_mix_svg",
]

#: one colour per lattice type, whichever field or chart shows it (plotly's and the SVG's)
TYPE_COLORS = {
    "boolean": "#8c564b",
    "long": "#1f77b4",
    "double": "#17becf",
    "date": "#bcbd22",
    "timestamp": "#9467bd",
    "string": "#ff7f0e",
    "record": "#2ca02c",
    "empty": "#7f7f7f",
}


def type_color(type_text: str) -> str:
    return TYPE_COLORS.get(type_text.split("[", 1)[0], "#c7c7c7")


def type_legend(rows: Sequence[FieldRow]) -> list[TypeCount]:
    """One entry per label, the most frequent first (their type decides the colour)."""
    totals: dict[str, int] = {}
    first: dict[str, TypeCount] = {}
    for r in rows:
        for t in r.types:
            totals[t.label] = totals.get(t.label, 0) + t.count
            first.setdefault(t.label, t)
    return [first[k] for k in sorted(totals, key=lambda k: (-totals[k], k))]


def section(title: str, body: str) -> str:
    return f'<h3 class="tknb-section">{text_html(title)}</h3>{body}'


def side_by_side(*parts: str) -> str:
    """``parts`` next to each other when there is room, one under the other when not
    (each in its own box, which a long name cannot widen past the page)."""
    boxes = "".join(f'<div style="flex:1 1 360px;min-width:0">{p}</div>' for p in parts)
    return (
        '<div class="tknb-side" style="display:flex;flex-wrap:wrap;gap:8px 40px">'
        f"{boxes}</div>"
    )


# --- charts as SVG -----------------------------------------------------------------------

#: (name, colour, value per category; an array type is drawn lighter)
Series = tuple[str, str, Sequence[int]]


def stacked_bars_svg(
    title: str, categories: Sequence[str], series: Sequence[Series], unit: str,
    *, width: int = 680,
) -> str:
    """A horizontal stacked bar per category, a tooltip (``<title>``) per segment, the
    total at the end of each bar and a legend under them; every style inline."""
    bar, gap, top, font = 16, 6, 26, 11
    labels = [clip_middle(c, 34) for c in categories]
    left = 12 + 7 * max((len(s) for s in labels), default=4)
    totals = [sum(s[2][i] for s in series) for i in range(len(categories))]
    most = max(totals, default=0) or 1
    room = width - left - 70
    # about 7 px a character: a title longer than the chart is cut (its <title> keeps it whole)
    parts = [
        f'<text x="0" y="16" font-size="13" font-weight="bold">'
        f"{text_html(clip(title, width // 7))}</text>"
    ]
    for i, (category, label, total) in enumerate(zip(categories, labels, totals, strict=True)):
        y = top + i * (bar + gap)
        parts.append(
            f'<text x="{left - 6}" y="{y + bar - 4}" font-size="{font}" '
            f'text-anchor="end">{text_html(label)}</text>'
        )
        x = float(left)
        for name, color, values in series:
            if not values[i]:
                continue
            w = values[i] / most * room
            light = ' fill-opacity="0.55"' if "[]" in name else ""
            parts.append(
                f'<rect x="{x:.1f}" y="{y}" width="{max(w, 1):.1f}" height="{bar}" '
                f'fill="{color}"{light}><title>{text_html(category)}: {values[i]} '
                f"{text_html(unit)} "
                f"as {text_html(name)}</title></rect>"
            )
            x += w
        parts.append(
            f'<text x="{x + 4:.1f}" y="{y + bar - 4}" font-size="{font}" fill="#555">'
            f"{total}</text>"
        )
    y = top + len(categories) * (bar + gap) + 8
    if not categories:
        parts.append(f'<text x="0" y="{y}" font-size="{font}" fill="#777">no fields match</text>')
        y += 14
    parts.append(
        f'<text x="0" y="{y + 4}" font-size="{font}" fill="#555">{text_html(unit)}:</text>')
    x = 16.0 + 7 * len(unit)
    for name, color, _ in series:
        step = 22 + 7 * len(name)
        if x + step > width:
            x, y = 8.0, y + 16
        light = ' fill-opacity="0.55"' if "[]" in name else ""
        parts.append(
            f'<rect x="{x}" y="{y - 6}" width="10" height="10" fill="{color}"{light}/>'
            f'<text x="{x + 14}" y="{y + 4}" font-size="{font}">{text_html(name)}</text>'
        )
        x += step
    height = y + 14
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" '
        'font-family="Helvetica,Arial,sans-serif" style="display:block;margin:8px 0">'
        f"<title>{text_html(title)}</title>{''.join(parts)}</svg>"
    )


def type_mix_svg(model: StatisticsModel, top: int = 20) -> str:
    """What :func:`~toolkit.notebook.figures.type_mix_figure` plots: per field (the ``top``
    most drifted), its values per observed type."""
    rows = model.top_drifted(top)
    unit = "values written" if model.committed else "values"
    series = [
        (t.label, type_color(t.type),
         [r.types[r.labels.index(t.label)].count if t.label in r.labels else 0 for r in rows])
        for t in type_legend(rows)
    ]
    title = model.type_mix_title(top)
    return stacked_bars_svg(title, [r.name for r in rows], series, unit)


def type_drift_svg(model: StatisticsModel, field: str) -> str:
    """What :func:`~toolkit.notebook.figures.type_drift_figure` plots: per batch (for a
    table, per snapshot), the values ``field`` brought per type."""
    row = model.field(field)
    unit = "values written" if model.committed else "values"
    series = [
        (t.label, type_color(t.type), [b.count(t.label) for b in row.by_batch])
        for t in type_legend((row,))
    ]
    kind = "snapshot (batch)" if model.committed else "batch"
    categories = [f"{kind} {b.batch}" for b in row.by_batch]
    return stacked_bars_svg(drift_title(row.name), categories, series, unit)


def drift_title(field: str) -> str:
    """The title of a field's types-per-batch chart (plotly's and the SVG's): the name cut
    in the middle, so a 200-character name leaves room for the words after it."""
    return f"{clip_middle(field, 60)}: types per batch"


# --- one function per panel ---------------------------------------------------------------


def explore_report_html(
    model: StatisticsModel,
    *,
    base: StatisticsModel | None = None,
    top: int = 20,
    field: str | None = None,
    rows: int = REPORT_ROWS,
) -> str:
    """The explore panel: its header, every field matching its filter (up to ``rows``),
    the type mix of the ``top`` most drifted and, if ``field`` is given, that field's
    types per batch. ``base`` is the unfiltered model (default: ``model``)."""
    page = model.page(0, rows)
    more = (
        f"Showing the first {len(page.rows):,} of {page.total:,} fields; the interactive "
        "panel pages through all of them."
        if page.pages > 1 else ""
    )
    charts = type_mix_svg(model, top) if model.rows else ""
    if field is not None:
        charts += type_drift_svg(model, field)
    header = statistics_header_html(base or model, len(model.rows))
    shown = f'<p class="tknb-muted">{more}</p>' if more else ""
    # the table scrolls in its own box, so the charts stay a glance away
    table = scroll_box(field_table_html(page, committed=model.committed), height=560)
    return wrap(f"<p>{header}</p>{shown}{table}{charts}")


def preview_report_html(
    model: PlanModel,
    *,
    profile: StatisticsModel | None = None,
    code: str | None = None,
    code_language: str = "Spark SQL",
    outcome: Outcome | None = None,
    statistics: StatisticsModel | None = None,
) -> str:
    """The preview panel: the plan's header, the schema before and after, the new columns,
    under the ``widen`` policy the widenings and the records set aside, where the sample
    values land, the view's SQL per dialect, the plan as ``code`` (in ``code_language``),
    the ``profile`` of the previewed records; then, once approved, the ``outcome`` and the
    table's written data ``statistics``."""
    m = model
    # a static copy lists the first fields, new columns, lines of SQL... and counts the rest
    trees = side_by_side(
        schema_tree_report_html(m.before, title="Before"),
        schema_tree_report_html(m.after, title="After"),
    )
    parts = [
        plan_header_html(m),
        section("Schema", trees),
        section(f"New columns ({len(m.new_columns):,})", new_columns_html(m.new_columns)),
    ]
    if m.widening:
        q = m.quarantine
        parts += [
            section(
                f"Widenings ({len(m.widenings):,}, {counted(len(m.rewrites), 'rewrite')})",
                widenings_html(m.widenings, m.pending, m.optionals),
            ),
            section(f"Quarantine ({0 if q is None else q.total})", quarantine_preview_html(q)),
        ]
    parts.append(section("Where values land", landings_html(m.landings)))
    parts.append(section("SQL view", (view_folds_html(m.folds) if m.sql else "")
                         + sql_report_html(m.sql)))
    if code:
        parts.append(section(f"The plan as {code_language}", code_report_html(code)))
    if profile is not None:
        parts.append(section("Profile", explore_report_html(profile)))
    if outcome is not None:
        parts.append(section("Outcome", outcome_html(outcome)))
    if statistics is not None:
        parts.append(
            section("Written data statistics of the table now", explore_report_html(statistics))
        )
    return "".join(parts)


def editor_report_html(
    model: EvolutionEditorModel, *, outcome: Outcome | None = None
) -> str:
    """The evolution editor: its summary, the schema before and after the picked plan, the
    plan (or the error that stops it), the last ``outcome`` and the table's lineage."""
    before, after = trees_html(model)
    parts = [
        wrap(f"<p><b>Evolution of {text_html(model.table)}</b>: {text_html(model.summary)}</p>"),
        section("Schema", side_by_side(before, after)),
        section("Plan", plan_html(model)),
    ]
    if outcome is not None:
        parts.append(section("Outcome", outcome_html(outcome)))
    parts.append(section("Lineage of the table", _lineage_html(model.lineage)))
    return "".join(parts)


def _lineage_html(rows: Sequence[LineageRow]) -> str:
    """Every logged plan, newest first: its entry and what undoing it commits (or why it
    cannot), the cells the editor shows beside its "Undo" buttons."""
    if not rows:
        return no_lineage_html()
    body = "".join(
        f"<tr><td>{lineage_entry_html(r)}</td><td>{lineage_status_html(r)}</td></tr>"
        for r in sorted(rows, key=lambda r: -r.seq)
    )
    return wrap(scroll_box(fixed_table([("entry", "60%"), ("undo", "")], [body])))


def policies_report_html(comparison: PolicyComparison) -> str:
    """The policy comparison: the side-by-side table, then each policy's schema and plans
    (the panel shows one at a time; a static copy shows them all)."""
    details = "".join(
        section(f"Details of {o.label}", policy_html(o)) for o in comparison.outcomes
    )
    return comparison_html(comparison) + details


def maintenance_report_html(
    model: MaintenanceModel, outcome: MaintenanceOutcome | None = None
) -> str:
    """The maintenance panel: the plan's steps and, once applied, what was done."""
    done = "" if outcome is None else section("Outcome", maintenance_outcome_html(outcome))
    return maintenance_plan_html(model) + done


def quarantine_report_html(
    model: QuarantineModel,
    selected: Sequence[str] = (),
    *,
    plan: ReplayPlan | None = None,
    plan_error: str | None = None,
    outcome: ReplayOutcome | None = None,
) -> str:
    """The quarantine inspector: the groups, the ``selected`` groups' sample records and
    the plan replaying them needs, and the last replay's ``outcome``."""
    parts = [groups_html(model)]
    if model.groups:
        # every group's samples when none is selected: a static copy cannot be clicked
        chosen = model.selection(selected) if selected else model.groups
        parts.append(section("Sample records", samples_html(chosen)))
    if selected:
        parts.append(section("Replay", replay_plan_html(plan, plan_error)))
    if outcome is not None:
        parts.append(section("Outcome", replay_outcome_html(outcome)))
    return "".join(parts)
