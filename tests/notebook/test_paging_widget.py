"""The filter and the pager the explorer and the preview's grid of landings share
(:mod:`toolkit.notebook.paging_widget`)."""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import pytest

from tests.notebook.panel_tables import sample_day
from toolkit.notebook import explore
from toolkit.notebook.paging import Page, page_of
from toolkit.notebook.paging_widget import Filters, Pager
from toolkit.notebook.panels.explore.model import StatisticsModel


def counting_filters() -> tuple[Filters, widgets.Text, widgets.Checkbox, list[tuple[str, bool]]]:
    text, box = widgets.Text(), widgets.Checkbox()
    seen: list[tuple[str, bool]] = []
    return Filters((text, box), lambda: seen.append((text.value, box.value))), text, box, seen


def test_each_change_a_user_makes_refilters_once() -> None:
    _, text, box, seen = counting_filters()
    text.value = "a"
    box.value = True
    assert seen == [("a", False), ("a", True)]


def test_controls_set_by_code_refilter_once_when_the_outermost_block_ends() -> None:
    filters, text, box, seen = counting_filters()
    with filters.setting():
        text.value = "a"
        with filters.setting():
            box.value = True
        assert seen == []
    assert seen == [("a", True)]

    with pytest.raises(RuntimeError), filters.setting():
        text.value = "b"
        raise RuntimeError("half set")
    assert seen == [("a", True)]  # no refilter on half-set controls...
    text.value = "c"
    assert seen == [("a", True), ("c", True)]  # ...and the controls still answer the user


def test_the_pager_clamps_and_greys_out_what_cannot_be_pressed() -> None:
    rows = tuple(range(7))
    drawn: list[Page[int]] = []
    pager: Pager[int] = Pager(lambda n: page_of(rows, n, size=3), drawn.append)
    previous, next_, position = pager.controls

    pager.show(0)
    assert position.value == "rows 1-3 of 7 (page 1 of 3)"
    assert previous.disabled and not next_.disabled
    next_.click()
    next_.click()
    assert pager.number == 2 and pager.page.rows == (6,) and next_.disabled
    assert not previous.disabled
    pager.show(9)  # past the end: the last page
    assert pager.number == 2 and position.value == "rows 7-7 of 7 (page 3 of 3)"
    previous.click()
    assert [p.number for p in drawn] == [0, 1, 2, 2, 1]
    assert position.value == "rows 4-6 of 7 (page 2 of 3)"


def test_the_explorer_filters_once_per_filter_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """``panel.filter`` sets three controls and filters the rows once, not three times."""
    panel = explore([sample_day(n) for n in (1, 2, 3)], page_size=4)
    calls: list[tuple[Any, ...]] = []
    real = StatisticsModel.filter

    def counting(self: StatisticsModel, *args: Any, **kwargs: Any) -> StatisticsModel:
        calls.append(args)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(StatisticsModel, "filter", counting)
    panel.next_button.click()
    panel.filter("device", evolved_only=True, drifted_only=True)
    assert calls == [("device",)]
    assert panel.page_number == 0  # a new filter starts on the first page
