"""The evolution editor: a thin ipywidgets shell over
:class:`~toolkit.notebook.panels.editor.model.EvolutionEditorModel`.

Example (notebook cells)::

    editor = toolkit.edit_schema(cat, "db.events")
    editor                                  # pick, fill, "Add to plan", "Commit", "Undo"
    editor.choose("rename")                 # what the menu does
    editor.fill(path="name", new_name="full_name")
    editor.add()                            # what "Add to plan" does (an error is shown)
    editor.commit()                         # commits; editor.outcome says what it did
    editor.undo(3)                          # what the "Undo #3" button on entry 3's row does

Each lineage row carries its own "Undo" button, disabled with the reason beside it (and as
its tooltip) when the entry has no inverse, was undone already, or no longer applies. A
plan that rewrites data files is not committed by one click: "Commit" first asks "This
rewrites every data file of db.events: 1,234,567 rows in 42 files, 3.2 GB. Rewrite?", and
only "Rewrite" commits ("Cancel" commits nothing). Likewise a plan or an "Undo" that drops
columns holding values is refused by the first click (nothing is committed) and asks again,
with the columns and their value counts: only "Drop the values" commits it.

Everything that touches the table is injected (``commit``, ``undo``, ``reload``), as the
preview panel injects its commit, so a test records what a click would do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import ipywidgets as widgets

from toolkit.core.evolution.layout import as_path
from toolkit.core.evolution.operations import Operation
from toolkit.core.evolution.state import TableState
from toolkit.errors import DataLossError, OperationError
from toolkit.notebook.common import PANEL_CLASS, STYLE, StaticHtmlPanel, text_html
from toolkit.notebook.confirm import (
    drop_confirmation,
    drop_question,
    drop_question_html,
    rewrite_confirmation,
)
from toolkit.notebook.outcome import outcome_html, rewrite_question, rewrite_question_html
from toolkit.notebook.panels.editor.html import (
    lineage_entry_html,
    lineage_status_html,
    no_lineage_html,
    plan_html,
    trees_html,
)
from toolkit.notebook.panels.editor.model import (
    OPERATION_KINDS,
    EvolutionEditorModel,
    EvolutionOutcome,
    EvolutionRequest,
    FormField,
    LineageRow,
    build_operation,
    form_of,
)
from toolkit.notebook.report_html import editor_report_html

if TYPE_CHECKING:

    from toolkit.core.evolution.lineage import LineageEntry

__all__ = ["EvolutionEditor", "LineageRowView"]

class CommitFunction(Protocol):
    """Commits a checked plan (the default: ``toolkit.evolve(..., expected=)``); called
    with ``drop_data=True`` only once a user said yes to the values it destroys."""

    def __call__(
        self, request: EvolutionRequest, /, *, drop_data: bool = ...
    ) -> LineageEntry: ...


class UndoFunction(Protocol):
    """Commits the inverse of lineage entry ``seq`` against the state shown
    (``toolkit.undo``); ``drop_data=True`` only once a user said yes."""

    def __call__(
        self, seq: int, expected: TableState, /, *, drop_data: bool = ...
    ) -> LineageEntry: ...


#: the columns of the lineage grid: the entry, then its "Undo" button and why (a reason
#: is often longer than the entry: as wide a column)
_LINEAGE_COLUMNS = "minmax(320px, 1fr) minmax(320px, 1fr)"
#: each row's cells, a rule above them so a long reason is seen to belong to its entry
_ROW_CELL = {"border_top": "1px solid #e0e0e0", "padding": "4px 0 6px"}


class LineageRowView:
    """One lineage row as shown: the entry (who, when, its operations) and, on the same
    row, its "Undo" button with what it commits or why it is disabled."""

    def __init__(self, row: LineageRow, undo: Callable[[int], object] | None) -> None:
        self.row = row
        self.entry = widgets.HTML(lineage_entry_html(row), layout=_ROW_CELL)
        why = row.why_not
        if why is None and undo is None:
            why = "Read-only editor: open it with toolkit.edit_schema to undo."
        self.status = widgets.HTML(lineage_status_html(row, why))
        self.button = widgets.Button(
            description=row.button_label,
            icon="undo" if row.can_undo else "ban",
            disabled=why is not None,
            tooltip=why or row.status,
            layout={"width": "140px"},
        )
        if undo is not None and why is None:
            self.button.on_click(lambda _: undo(row.seq))
        self.cells = [self.entry, widgets.VBox([self.button, self.status], layout=_ROW_CELL)]


class EvolutionEditor(StaticHtmlPanel):
    """Pick an operation, fill its inputs (the table's fields in dropdowns), add it to the
    plan, see the schema after and the plan's text (or the error that stops it), commit
    (after a second click when the plan rewrites data files), then see the table's lineage,
    each row with its own "Undo" button (disabled, saying why, when it cannot be used)."""

    def __init__(
        self,
        model: EvolutionEditorModel,
        *,
        commit: CommitFunction | None = None,
        undo: UndoFunction | None = None,
        reload: Callable[[], EvolutionEditorModel] | None = None,
    ) -> None:
        self.model = model
        self._commit = commit
        self._undo = undo
        self._reload = reload
        self.outcome: EvolutionOutcome | None = None
        self.inputs: dict[str, widgets.Widget] = {}

        self.header = widgets.HTML()
        self.kind = widgets.Dropdown(
            options=OPERATION_KINDS, value=OPERATION_KINDS[0], description="Operation",
            style={"description_width": "initial"},  # as the form's inputs under it
        )
        self.form = widgets.VBox()
        self.add_button = widgets.Button(description="Add to plan", icon="plus")
        self.form_message = widgets.HTML()
        self.operations = widgets.Select(
            description="Plan", rows=6, layout={"width": "520px"}
        )
        self.remove_button = widgets.Button(description="Remove selected", icon="minus")
        self.clear_button = widgets.Button(description="Clear", icon="trash")
        self.before = widgets.HTML()
        self.after = widgets.HTML()
        self.plan = widgets.HTML()
        self.tabs = widgets.Tab(
            children=[
                widgets.HBox([self.before, self.after], layout={"grid_gap": "40px"}),
                self.plan,
            ],
            titles=["Schema", "Plan"],
        )
        self.commit_button = widgets.Button(
            description="Commit", button_style="success", icon="check"
        )
        # what a refused commit ("The table changed") asks for, without losing the plan
        self.reload_button = widgets.Button(
            description="Reload table", icon="refresh",
            tooltip="Read the table again; the plan is kept and checked against it",
        )
        # asked before a plan that rewrites data files is committed (RULES 5)
        self.question: str | None = None
        """The question shown before a rewrite is committed (None: none is shown)."""
        self.rewrite_text, self.rewrite_button, self.cancel_button, self.rewrite_confirmation = (
            rewrite_confirmation()
        )
        # asked when a commit or an undo would drop columns holding values (docs/rules.md)
        self.drop_question: str | None = None
        """The question shown before values are dropped (None: none is shown)."""
        self._confirmed: Callable[[], EvolutionOutcome] | None = None
        self.drop_text, self.drop_button, self.drop_cancel_button, self.drop_confirmation = (
            drop_confirmation()
        )
        self.message = widgets.HTML()
        self.lineage_rows: dict[int, LineageRowView] = {}
        """Each lineage entry's row (newest first), by its number."""
        self.lineage = widgets.GridBox(
            layout={"grid_template_columns": _LINEAGE_COLUMNS, "grid_gap": "2px 16px"}
        )

        self.kind.observe(lambda _: self._build_form(), names="value")
        self.add_button.on_click(lambda _: self.add())
        self.remove_button.on_click(lambda _: self._remove_selected())
        self.clear_button.on_click(lambda _: self.clear())
        self.commit_button.on_click(lambda _: self.click_commit())
        self.rewrite_button.on_click(lambda _: self.confirm_rewrite())
        self.cancel_button.on_click(lambda _: self.cancel_rewrite())
        self.reload_button.on_click(lambda _: self.reload())
        self.drop_button.on_click(lambda _: self.confirm_drop())
        self.drop_cancel_button.on_click(lambda _: self.cancel_drop())

        self.widget = widgets.VBox(
            [
                self.header,
                widgets.HBox([self.kind, self.add_button]),
                self.form,
                self.form_message,
                widgets.HBox([self.operations, widgets.VBox([self.remove_button,
                                                             self.clear_button])]),
                self.tabs,
                widgets.HBox([self.commit_button, self.reload_button]),
                self.rewrite_confirmation,
                self.drop_confirmation,
                self.message,
                widgets.HTML("<b>Lineage of the table</b> (newest first)"),
                self.lineage,
            ]
        )
        self.widget.add_class(PANEL_CLASS)  # the stylesheet's panel rules speak to it
        self._build_form()
        self._refresh()

    # --- what the controls do (callable headless) ---------------------------------------

    def choose(self, kind: str) -> None:
        """Pick an operation in the menu (its form is rebuilt)."""
        form_of(kind)
        self.kind.value = kind

    def fill(self, **values: Any) -> None:
        """Set the form's inputs as a user would; a field path may be dotted or a tuple."""
        for name, value in values.items():
            control = self.inputs.get(name)
            if control is None:
                raise KeyError(
                    f"{self.kind.value} has no input {name!r} (inputs: {', '.join(self.inputs)})"
                )
            if isinstance(control, widgets.Dropdown) and isinstance(value, str) and value:
                paths = dict(control.options)
                if value in paths:
                    value = paths[value]
                elif all(isinstance(v, tuple) for v in paths.values()):
                    value = as_path(value)
                if value not in paths.values():
                    offered = ", ".join(label for label in paths if label) or "none"
                    raise ValueError(
                        f"{self.kind.value}: {name} {values[name]!r} is not offered "
                        f"(offered: {offered})"
                    )
            control.value = value

    def values(self) -> dict[str, Any]:
        return {name: control.value for name, control in self.inputs.items()}

    def add(self) -> str | None:
        """Add the filled form's operation to the plan ("Add to plan"); returns the error
        (also shown) when the form is incomplete or the operation cannot apply."""
        try:
            op = build_operation(self.kind.value, self.values())
        except (OperationError, ValueError) as exc:
            return self._form_error(str(exc))
        return self.add_operation(op)

    def add_operation(self, op: Operation) -> str | None:
        """Add an operation written by hand (``toolkit.ops``), checked like a form's."""
        candidate = self.model.with_operation(op)
        if candidate.error is not None:
            return self._form_error(candidate.error)
        self.model = candidate
        self.form_message.value = ""
        self._build_form()  # the inputs offer the fields as the plan leaves them
        self._refresh()
        return None

    def remove(self, index: int) -> None:
        self.model = self.model.without(index)
        self._build_form()
        self._refresh()

    def clear(self) -> None:
        self.model = self.model.cleared()
        self._build_form()
        self._refresh()

    @property
    def undo_buttons(self) -> dict[int, widgets.Button]:
        """The "Undo" buttons offered (enabled), by entry number, newest first; every
        row's button, disabled ones too, is in :attr:`lineage_rows`."""
        return {
            seq: view.button for seq, view in self.lineage_rows.items() if not view.button.disabled
        }

    def click_commit(self) -> EvolutionOutcome | None:
        """What the "Commit" button does: commit, or, when the plan rewrites data files,
        only ask (:attr:`question`, with "Rewrite" and "Cancel") and return None."""
        if self._commit is None or not self.model.can_commit or not self.model.rewrites:
            return self.commit()
        m = self.model
        self.question = rewrite_question(m.table, m.rewrite_size)
        self.rewrite_text.value = rewrite_question_html(
            m.table, m.rewrite_size, [f"{'.'.join(r.path)} -> {r.to}" for r in m.rewrites]
        )
        self.rewrite_confirmation.layout.display = ""
        self.commit_button.disabled = True
        self.message.value = ""
        return None

    def confirm_rewrite(self) -> EvolutionOutcome | None:
        """The "Rewrite" button: commit the plan the question was asked about."""
        if self.question is None:
            return None
        self._hide_question()
        return self.commit()

    def cancel_rewrite(self) -> None:
        """The "Cancel" button: commit nothing; the plan stays, "Commit" is offered again."""
        if self.question is None:
            return
        self._hide_question()
        self._refresh()
        self._show(EvolutionOutcome(
            "cancelled", "Cancelled", f"Nothing was committed to {self.model.table}."
        ))

    def _hide_question(self) -> None:
        self.question = None
        self.rewrite_text.value = ""
        self.rewrite_confirmation.layout.display = "none"

    def commit(self) -> EvolutionOutcome:
        """Commit the plan in one commit, held to the table state shown (its rewrites
        included: from code this is the approval itself; the button asks first)."""
        if self._commit is None:
            return self._show(EvolutionOutcome.from_exception(
                RuntimeError("this editor has no commit function; open it with toolkit.edit_schema")
            ))
        commit, request = self._commit, self.model.request
        return self._run(lambda **yes: commit(request, **yes), "This plan", undo=False)

    def _run(
        self, work: Callable[..., LineageEntry], what: str, *, undo: bool
    ) -> EvolutionOutcome:
        """Commit through ``work``; if it would drop columns holding values, commit nothing
        and ask (:attr:`drop_question`): "Drop the values" runs ``work(drop_data=True)``."""
        try:
            entry = work()
        except DataLossError as exc:  # nothing was applied: ask, with the counts
            return self._ask_drop(exc, what, lambda: self._done(work(drop_data=True), undo))
        except Exception as exc:  # shown in the panel; the traceback stays in the outcome
            return self._show(EvolutionOutcome.from_exception(exc))
        return self._done(entry, undo)

    def _done(self, entry: LineageEntry, undo: bool) -> EvolutionOutcome:
        outcome = EvolutionOutcome.from_entry(entry, self.model.table, undo=undo)
        self._reload_model()
        return self._show(outcome)

    def _ask_drop(
        self, exc: DataLossError, what: str, confirmed: Callable[[], EvolutionOutcome]
    ) -> EvolutionOutcome:
        table = self.model.table
        self.drop_question = drop_question(table, what, exc.destruction)
        self.drop_text.value = drop_question_html(table, what, exc.destruction)
        self.drop_confirmation.layout.display = ""
        self._confirmed = confirmed
        self.commit_button.disabled = True
        for button in self.undo_buttons.values():
            button.disabled = True  # the answer is "Drop the values" or "Cancel"
        return self._show(EvolutionOutcome(
            "refused", "Asking first",
            f"Nothing was committed to {table} yet: {what.lower()} {exc.destruction}.",
        ))

    def confirm_drop(self) -> EvolutionOutcome | None:
        """The "Drop the values" button: commit what the question was asked about."""
        confirmed = self._confirmed
        if confirmed is None:
            return None
        self._hide_drop_question()
        try:
            return confirmed()
        except Exception as exc:
            self._refresh()
            return self._show(EvolutionOutcome.from_exception(exc))

    def cancel_drop(self) -> None:
        """The "Cancel" button of the drop question: commit nothing."""
        if self._confirmed is None:
            return
        self._hide_drop_question()
        self._refresh()
        self._show(EvolutionOutcome(
            "cancelled", "Cancelled", f"Nothing was committed to {self.model.table}."
        ))

    def _hide_drop_question(self) -> None:
        self.drop_question = None
        self._confirmed = None
        self.drop_text.value = ""
        self.drop_confirmation.layout.display = "none"

    def undo(self, seq: int) -> EvolutionOutcome:
        """Commit the inverse of lineage entry ``seq`` (the "Undo" button on its row);
        refused, changing nothing, when its row says it cannot be undone."""
        if self._undo is None:
            return self._show(EvolutionOutcome.from_exception(
                RuntimeError("this editor has no undo function; open it with toolkit.edit_schema")
            ))
        row = self.model.row(seq)
        if row is not None and not row.can_undo:
            return self._show(EvolutionOutcome.not_undoable(row))
        undo, state = self._undo, self.model.state
        return self._run(lambda **yes: undo(seq, state, **yes), f"Undoing entry #{seq}",
                         undo=True)

    def reload(self) -> None:
        """Read the table again (the plan picked so far is kept and checked again)."""
        if self._reload is None:
            return
        self._reload_model(keep=True)
        self._build_form()
        self._refresh()
        m = self.model
        check = (
            "" if not m.operations
            else " The plan applies to it." if m.error is None
            else " The plan no longer applies: see the Plan tab."
        )
        self._show(EvolutionOutcome(
            "reloaded", "Reloaded", f"{m.table} as it is now: {m.where}.{check}"
        ))

    # --- rendering -------------------------------------------------------------------------

    def _reload_model(self, *, keep: bool = False) -> None:
        if self._reload is None:
            return
        fresh = self._reload()
        for op in self.model.operations if keep else ():
            fresh = fresh.with_operation(op)
        self.model = fresh
        self._build_form()
        self._refresh()

    def _form_error(self, text: str) -> str:
        self.form_message.value = outcome_html(EvolutionOutcome("refused", "Not added", text))
        return text

    def _remove_selected(self) -> None:
        if self.operations.value is not None:
            self.remove(self.operations.value)

    def _input(self, f: FormField) -> widgets.Widget:
        label = f.label + ("" if not f.hint else f" ({f.hint})")
        style = {"description_width": "initial"}
        choices = self.model.choices(f)
        if f.kind == "text":
            return widgets.Text(description=label, style=style)
        if f.kind == "type":
            return widgets.Combobox(
                description=label, options=[v for _, v in choices], ensure_option=False,
                placeholder="an Iceberg type", style=style,
            )
        return widgets.Dropdown(
            description=label, options=choices, value=choices[0][1] if choices else None,
            style=style,
        )

    def _build_form(self) -> None:
        self.inputs = {f.name: self._input(f) for f in form_of(self.kind.value)}
        self.form.children = list(self.inputs.values())
        self.form_message.value = ""

    def _refresh(self) -> None:
        m = self.model
        self.header.value = (
            f"{STYLE}<b>Evolution of {text_html(m.table)}</b>: {text_html(m.summary)}"
        )
        self.operations.options = [
            (f"{i + 1}. {str(op).strip()}", i) for i, op in enumerate(m.operations)
        ]
        self.before.value, self.after.value = trees_html(m)
        self.plan.value = plan_html(m)
        self.tabs.titles = ["Schema", "Plan" if m.error is None else "Plan (error)"]
        self._hide_question()  # a question about another plan is never answered
        self._hide_drop_question()
        self.commit_button.disabled = self._commit is None or not m.can_commit
        self.reload_button.disabled = self._reload is None
        undo = None if self._undo is None else self.undo
        self.lineage_rows = {
            row.seq: LineageRowView(row, undo) for row in sorted(m.lineage, key=lambda r: -r.seq)
        }
        header = [widgets.HTML("<b>entry</b>"), widgets.HTML("<b>undo</b>")]
        cells = [cell for view in self.lineage_rows.values() for cell in view.cells]
        self.lineage.children = [*header, *cells] if cells else [widgets.HTML(no_lineage_html())]

    def _show(self, outcome: EvolutionOutcome) -> EvolutionOutcome:
        self.outcome = outcome
        self.message.value = outcome_html(outcome)
        return outcome


    def report_title(self) -> str:
        return f"Evolution of {self.model.table}"

    def report_html(self) -> str:
        return editor_report_html(self.model, outcome=self.outcome)


