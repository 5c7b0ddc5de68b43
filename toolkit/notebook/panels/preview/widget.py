"""The preview panel: a thin ipywidgets shell (ipywidgets 8) over
:class:`~toolkit.notebook.panels.preview.model.PlanModel`.

The panel keeps its model (``panel.model``), assigns the HTML of
:mod:`toolkit.notebook.panels.preview.html`, embeds an explore panel for the profile, and wires
its buttons to plain methods, so a notebook run headless (or a test) calls
``panel.approve()`` to commit as the button does. A plan that rewrites data files (a
widening Iceberg cannot do in place, RULES 5) is never committed by one click: the button
first asks "This rewrites every data file of db.events: 1,234,567 rows in 42 files,
3.2 GB. Rewrite?", and only "Rewrite" commits ("Cancel" commits nothing).

"Copy as code" exports the plan (``Plan.to_sql`` / ``Plan.to_pyiceberg``) in the language
the dropdown names; the button lives in the page itself (an inline handler in an HTML
widget, which JupyterLab runs, unlike a ``<script>``), because only the browser can reach
the clipboard. From Python, ``panel.copy_as_code("trino")`` selects the language and
returns the same code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Final, Literal, TypeAlias

import ipywidgets as widgets

from toolkit.core.batch.options import Options
from toolkit.core.evolution.batch_plan import Plan
from toolkit.core.values.wording import counted
from toolkit.errors import ExportError
from toolkit.notebook.common import StaticHtmlPanel
from toolkit.notebook.confirm import rewrite_confirmation
from toolkit.notebook.landings import LandingGrid, LandingPage, LandingRow, Show
from toolkit.notebook.outcome import (
    CommitOutcome,
    TableSize,
    outcome_html,
    rewrite_question_html,
)
from toolkit.notebook.paging_widget import Filters, Pager
from toolkit.notebook.panels.explore.model import StatisticsModel
from toolkit.notebook.panels.explore.widget import ExplorePanel
from toolkit.notebook.panels.preview.html import (
    SHOW_TEXT,
    code_html,
    landing_grid_html,
    new_columns_html,
    plan_header_html,
    quarantine_preview_html,
    sql_html,
    view_folds_html,
    widenings_html,
)
from toolkit.notebook.panels.preview.model import (
    Approval,
    CommitRequest,
    PlanModel,
    commit_request,
    rewrite_size,
)
from toolkit.notebook.report_html import preview_report_html
from toolkit.notebook.schema_tree import schema_tree_html

if TYPE_CHECKING:
    from toolkit.iceberg.statistics import WrittenDataStatistics
    from toolkit.pipeline.ingest import IngestReport
    from toolkit.pipeline.preview import Preview

__all__ = ["CODE_LANGUAGES", "CodeLanguage", "CommitFunction", "PreviewPanel", "plan_code"]

#: commits an approved preview (the default calls ``toolkit.pipeline.ingest``)
CommitFunction = Callable[[CommitRequest], "IngestReport"]

CodeLanguage: TypeAlias = Literal["spark", "trino", "pyiceberg"]
#: what "Copy as code" offers: (what the dropdown shows, the language)
CODE_LANGUAGES: Final[tuple[tuple[str, CodeLanguage], ...]] = (
    ("Spark SQL", "spark"),
    ("Trino", "trino"),
    ("PyIceberg", "pyiceberg"),
)


def plan_code(plan: Plan, table: str, language: CodeLanguage) -> str:
    """``plan`` as code for ``table``: Spark SQL or Trino ``ALTER TABLE`` statements, or
    PyIceberg code; raises :class:`~toolkit.errors.ExportError` when it cannot be."""
    if language == "pyiceberg":
        return plan.to_pyiceberg(table)
    if language in ("spark", "trino"):
        return plan.to_sql(language, table)
    raise ValueError(_unknown(language))


def _unknown(language: str) -> str:
    known = ", ".join(repr(key) for _, key in CODE_LANGUAGES)
    return f"unknown code language {language!r}: choose one of {known}"


def _display(on: bool) -> str:
    return "" if on else "none"


class PreviewPanel(StaticHtmlPanel):
    """A plan before anything changes: the schema before and after (field IDs, new fields
    marked), the new columns and why, where sample values land (one grid, filtered by field
    and by what happened, and paged), the view's SQL per dialect, the profile; then
    "Approve and commit", and what the commit did.

    ``commit`` receives a :class:`~toolkit.notebook.panels.preview.model.CommitRequest`
    (the approved plan, the table state it was made against, a stable batch id) and returns an
    ``IngestReport``; without one the panel is read-only. ``statistics`` (optional) returns
    the table's written data statistics after a commit; ``repreview`` (optional) makes a new
    preview when the table moved. ``table_size`` (optional) reads the rows, data files and
    bytes of the table's current snapshot (:meth:`TableSize.of`), which the question before
    a rewrite states; without it the question states the rows and bytes the plan's
    rewrites carry. ``sample``: how many records the grid of landings shows at least (see
    :meth:`PlanModel.from_preview <toolkit.notebook.panels.preview.model.PlanModel.from_preview>`);
    :attr:`landing_page_size`: its rows per page.
    """

    #: the rows per page of the grid of landings (set on a panel to change its own)
    landing_page_size: int = 25

    def __init__(
        self,
        preview: Preview,
        commit: CommitFunction | None = None,
        *,
        options: Options | None = None,
        sample: int = 20,
        batch_id: str | None = None,
        statistics: Callable[[], WrittenDataStatistics] | None = None,
        repreview: Callable[[], Preview] | None = None,
        table_size: Callable[[], TableSize] | None = None,
    ) -> None:
        self.options = options or Options()
        self.sample = sample
        self._batch_id = batch_id
        self._commit = commit
        self._statistics = statistics
        self._repreview = repreview
        self._table_size = table_size
        #: where approving stands: the question asked before a rewrite, the last outcome
        self.approval = Approval()
        self.statistics: WrittenDataStatistics | None = None
        self.statistics_panel: ExplorePanel | None = None

        self.header = widgets.HTML()
        self.tabs = widgets.Tab()
        self.approve_button = widgets.Button(
            description="Approve and commit",
            button_style="success",
            icon="check",
            layout={"width": "200px"},
        )
        self.progress = widgets.HBox(
            [
                widgets.IntProgress(value=1, min=0, max=1, bar_style="info",
                                    layout={"width": "160px"}),
                widgets.Label("Committing: profiling, committing the schema, writing rows…"),
            ],
            layout={"display": "none"},
        )
        self.preview_again_button = widgets.Button(
            description="Preview again", icon="refresh", layout={"display": "none"}
        )
        # asked before a plan that rewrites data files is committed (RULES 5)
        self.rewrite_text, self.rewrite_button, self.cancel_button, self.rewrite_confirmation = (
            rewrite_confirmation()
        )
        self.message = widgets.HTML()
        self.result = widgets.VBox()
        self.approve_button.on_click(lambda _: self.click_approve())
        self.rewrite_button.on_click(lambda _: self.confirm_rewrite())
        self.cancel_button.on_click(lambda _: self.cancel_rewrite())
        self.preview_again_button.on_click(lambda _: self.preview_again())
        # "Copy as code": the language, then the button and the code (or why there is none)
        self.code_language = widgets.Dropdown(
            options=CODE_LANGUAGES,
            value="spark",
            description="Export as",
            layout={"width": "220px"},
        )
        self.code_box = widgets.HTML()
        self.code_language.observe(lambda _: self._show_code(), names="value")
        self._landing_controls()

        self.widget = widgets.VBox(
            [
                self.header,
                self.tabs,
                widgets.HBox([self.code_language, self.code_box]),
                widgets.HBox([self.approve_button, self.preview_again_button, self.progress]),
                self.rewrite_confirmation,
                self.message,
                self.result,
            ]
        )
        self.rebuild(preview)

    # --- the model ------------------------------------------------------------------------

    def rebuild(self, preview: Preview) -> None:
        """Show ``preview`` (a new one after "Preview again"); the last outcome is cleared."""
        self.preview = preview
        self.model = PlanModel.from_preview(
            preview, self.options, sample=self.sample, batch_id=self._batch_id
        )
        self.approval = Approval()
        self.statistics = None
        self.statistics_panel = None
        m = self.model
        self.header.value = plan_header_html(m)
        self.profile_panel = ExplorePanel(
            StatisticsModel.from_profile(
                preview.profile, preview.plan.after, source=f"{m.records} previewed records"
            ),
            page_size=15,
        )
        sql = widgets.Tab(
            # above each dialect's SQL, what each field folds to and what that costs
            children=[widgets.HTML(view_folds_html(m.folds) + sql_html(text, d))
                      for d, text in m.sql],
            titles=[d for d, _ in m.sql],
        )
        # RULES 5: under the widen policy, the retypes and the records set aside too
        widen: list[tuple[str, widgets.Widget]] = []
        if m.widening:
            q = m.quarantine
            widen = [
                (
                    f"Widenings ({len(m.widenings):,}, {counted(len(m.rewrites), 'rewrite')})",
                    widgets.HTML(
                        widenings_html(m.widenings, m.pending, m.optionals, rows=None)
                    ),
                ),
                (
                    f"Quarantine ({0 if q is None else q.total})",
                    widgets.HTML(quarantine_preview_html(q)),
                ),
            ]
        pages: list[tuple[str, widgets.Widget]] = [
            (
                "Schema",
                widgets.HBox(
                    [
                        widgets.HTML(schema_tree_html(m.before, title="Before")),
                        widgets.HTML(schema_tree_html(m.after, title="After")),
                    ],
                    layout={"grid_gap": "40px"},
                ),
            ),
            # the tab lists every column, in a box that scrolls (a static copy, the first ones)
            (
                f"New columns ({len(m.new_columns):,})",
                widgets.HTML(new_columns_html(m.new_columns, rows=None)),
            ),
            *widen,
            ("Where values land", self.landings_box),
            ("SQL view", sql if m.sql else widgets.HTML("(no columns: no view)")),
            ("Profile", self.profile_panel.widget),
        ]
        self.landing_grid = m.landings
        self._reset_landings()
        self.tabs.children = [w for _, w in pages]
        self.tabs.titles = [t for t, _ in pages]
        self.message.value = "" if self._commit else (
            "<i>Read-only preview: no commit function was given.</i>"
        )
        self.result.children = []
        self._hide_question()
        self.approve_button.disabled = self._commit is None
        self.preview_again_button.layout.display = "none"
        self._show_code()

    # --- where values land ----------------------------------------------------------------

    def _landing_controls(self) -> None:
        """The grid's controls: a field box, a "Show" choice, Previous and Next."""
        self.landing_view: LandingGrid | None = None
        self.landing_field = widgets.Text(
            placeholder="words in a key or a column",
            description="Field",
            continuous_update=True,
            layout={"width": "340px"},
        )
        self.landing_show = widgets.Dropdown(description="Show", layout={"width": "300px"})
        self.landing_filters = Filters((self.landing_field, self.landing_show),
                                       self._on_landing_filter)
        self.landing_pager: Pager[LandingRow] = Pager(
            lambda number: self.landings.page(number, self.landing_page_size),
            self._render_landings,
        )
        self.landing_previous, self.landing_next, self.landing_position = (
            self.landing_pager.controls
        )
        self.landing_table = widgets.HTML()
        self.landings_box = widgets.VBox([
            widgets.HBox([self.landing_field, self.landing_show]),
            widgets.HBox(self.landing_pager.controls),
            self.landing_table,
        ])

    def _reset_landings(self) -> None:
        """A new grid: the filter offers what happened to its values, and starts on the
        grid's first view (each kind of drift once, when some value drifts)."""
        grid = self.landing_grid
        first = grid.first_view
        choices: list[Show] = ["every value", "drifting", "each drift", *grid.happenings]
        with self.landing_filters.setting():  # new options pass through another value
            self.landing_show.options = [(SHOW_TEXT[c], c) for c in choices]
            self.filter_landings(show=first.show)

    def filter_landings(self, field: str = "", show: Show = "every value") -> None:
        """Set the grid's field box and its "Show" choice, as a user would: rows whose key
        or column holds every word of ``field``, and whose happening ``show`` names."""
        with self.landing_filters.setting():
            self.landing_field.value = field
            if show not in (key for _, key in self.landing_show.options):
                self.landing_show.options = [*self.landing_show.options, (SHOW_TEXT[show], show)]
            self.landing_show.value = show

    def show_landings_page(self, number: int) -> None:
        """Show page ``number`` of the grid (from 0, clamped), as Previous and Next do."""
        self.landing_pager.show(number)

    @property
    def landing_page_number(self) -> int:
        """The page of the grid shown now, from 0."""
        return self.landing_pager.number

    @property
    def landings(self) -> LandingGrid:
        """The grid as filtered now."""
        return self.landing_view or self.landing_grid

    @property
    def landings_page(self) -> LandingPage:
        """The page of the grid shown now."""
        return self.landing_pager.page

    def _on_landing_filter(self) -> None:
        self.landing_view = self.landing_grid.filter(
            self.landing_field.value, self.landing_show.value or "every value"
        )
        self.landing_pager.show(0)

    def _render_landings(self, page: LandingPage) -> None:
        self.landing_table.value = landing_grid_html(self.landing_grid, page)

    # --- copy as code ---------------------------------------------------------------------

    @property
    def code(self) -> str | None:
        """The plan as code in the language the dropdown names; None when the plan changes
        nothing, or cannot be exported (:attr:`code_refusal` says why)."""
        return self._code[0]

    @property
    def code_refusal(self) -> str | None:
        """Why the plan cannot be exported in the chosen language (the ExportError's
        sentence), shown instead of the "Copy as code" button; None when it can."""
        return self._code[1]

    def copy_as_code(self, language: CodeLanguage | None = None) -> str:
        """Choose ``language`` (``"spark"``, ``"trino"`` or ``"pyiceberg"``; default: the
        dropdown's) and return the code the "Copy as code" button copies in the browser;
        raises :class:`~toolkit.errors.ExportError` when the plan cannot be exported."""
        if language is not None:
            if language not in (key for _, key in CODE_LANGUAGES):
                raise ValueError(_unknown(language))
            self.code_language.value = language  # redraws through the observer
        return plan_code(self.preview.plan, self.model.table, self.code_language.value)

    def _show_code(self) -> None:
        language: CodeLanguage = self.code_language.value
        self._code: tuple[str | None, str | None] = (None, None)
        if self.preview.plan.changed:
            try:
                self._code = (plan_code(self.preview.plan, self.model.table, language), None)
            except ExportError as exc:
                self._code = (None, str(exc))
        label = next(name for name, key in CODE_LANGUAGES if key == language)
        self.code_box.value = code_html(self.code, label, self.code_refusal)

    @property
    def outcome(self) -> CommitOutcome | None:
        """What the last commit did (None: nothing yet)."""
        return self.approval.outcome

    @property
    def question(self) -> str | None:
        """The question shown before a rewrite is committed (None: none is shown)."""
        return self.approval.question

    @property
    def request(self) -> CommitRequest:
        """What "Approve and commit" sends to the commit function."""
        return commit_request(self.model, self.preview)

    # --- the buttons ----------------------------------------------------------------------

    @property
    def rewrites(self) -> bool:
        """Whether approving the plan rewrites data files (then a click asks first)."""
        return bool(self.preview.plan.rewrites)

    def click_approve(self) -> CommitOutcome | None:
        """What the "Approve and commit" button does: commit, or, when the plan rewrites
        data files, only ask (:attr:`question`, with "Rewrite" and "Cancel") and return
        None; "Rewrite" (:meth:`confirm_rewrite`) then commits."""
        if self._commit is None or not self.rewrites:
            return self.approve()
        size = self._size()
        self.approval = self.approval.asked(self.model.table, size)
        self.rewrite_text.value = rewrite_question_html(
            self.model.table,
            size,
            [f"{r.name}: {r.before} -> {r.after}" for r in self.preview.plan.rewrites],
        )
        self.rewrite_confirmation.layout.display = ""
        self.approve_button.disabled = True
        self.message.value = ""
        return None

    def confirm_rewrite(self) -> CommitOutcome | None:
        """The "Rewrite" button: commit the plan the question was asked about."""
        if self.question is None:  # nothing was asked: nothing to confirm
            return None
        self._hide_question()
        return self.approve()

    def cancel_rewrite(self) -> None:
        """The "Cancel" button: commit nothing, and offer "Approve and commit" again."""
        if self.question is None:
            return
        self._hide_question()
        self.approve_button.disabled = self._commit is None
        self.message.value = outcome_html(CommitOutcome.cancelled(self.model.table))

    def _size(self) -> TableSize | None:
        """What the rewrite touches: the table's current snapshot (``table_size``), else
        the rows and bytes the plan's rewrites carry (files unknown)."""
        try:
            measured = None if self._table_size is None else self._table_size()
        except Exception:  # the question is still asked, with what the plan knows
            measured = None
        return rewrite_size(self.preview, measured)

    def _hide_question(self) -> None:
        self.approval = self.approval.answered()
        self.rewrite_text.value = ""
        self.rewrite_confirmation.layout.display = "none"

    def approve(self) -> CommitOutcome:
        """Commit the previewed plan and data, its rewrites included (from code this is
        the approval itself; the button asks first when the plan rewrites data files).

        Errors are not raised: they become the outcome, shown in plain words (with the
        traceback folded underneath) and returned.
        """
        if self._commit is None:
            outcome = CommitOutcome.from_exception(
                RuntimeError("this preview has no commit function; build it with toolkit.preview")
            )
            self._show_outcome(outcome)
            return outcome
        self.approve_button.disabled = True
        self.preview_again_button.layout.display = "none"
        self.progress.layout.display = ""
        self.message.value = ""
        try:
            outcome = CommitOutcome.from_report(self._commit(self.request))
        except Exception as exc:  # shown in the panel; the traceback stays in the outcome
            outcome = CommitOutcome.from_exception(exc)
        finally:
            self.progress.layout.display = "none"
        self._show_outcome(outcome)
        return outcome

    def preview_again(self) -> None:
        """Plan again against the table as it is now (the "Preview again" button)."""
        if self._repreview is None:
            return
        try:
            fresh = self._repreview()
        except Exception as exc:
            self._show_outcome(CommitOutcome.from_exception(exc))
            return
        self.rebuild(fresh)

    def _show_outcome(self, outcome: CommitOutcome) -> None:
        self.approval = self.approval.ended(outcome)
        self.message.value = outcome_html(outcome)
        children: list[widgets.Widget] = []
        if outcome.kind == "committed" and self._statistics is not None:
            try:
                self.statistics = self._statistics()
            except Exception as exc:  # the commit stands; only the statistics are missing
                failed = replace(
                    CommitOutcome.from_exception(exc),
                    title="The statistics of the table could not be read",
                )
                children.append(widgets.HTML(outcome_html(failed)))
            else:
                self.statistics_panel = ExplorePanel(
                    StatisticsModel.from_statistics(self.statistics), page_size=15
                )
                children += [
                    widgets.HTML("<b>Written data statistics of the table now</b>"),
                    self.statistics_panel.widget,
                ]
        self.result.children = children
        # a plan that no longer fits is never retried as is: only a new preview helps
        again = outcome.preview_again and self._repreview is not None
        self.preview_again_button.layout.display = _display(again)
        self.approve_button.disabled = outcome.ok or outcome.preview_again


    def report_title(self) -> str:
        return f"Preview of {self.model.table}"

    def report_html(self) -> str:
        stats = self.statistics_panel
        return preview_report_html(
            self.model, profile=self.profile_panel.model, code=self.code,
            code_language=dict((k, n) for n, k in CODE_LANGUAGES)[self.code_language.value],
            outcome=self.outcome, statistics=None if stats is None else stats.model,
        )
