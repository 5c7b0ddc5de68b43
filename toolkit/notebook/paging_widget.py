"""The controls of a filtered, paged grid: the explorer's field table and the preview's
grid of landings filter and page the same way, through these two pieces.

:class:`Filters` watches the controls that choose the rows (a text box, check boxes, a
dropdown); :class:`Pager` holds "◀ Previous", "Next ▶" and where the page is ("rows 1-25
of 41 (page 1 of 2)", :mod:`toolkit.notebook.paging`). What the rows are and how a page is
drawn stay with each panel. The pure paging lives in :mod:`toolkit.notebook.paging`, which
the view-models import; this module holds the widgets, so they import none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

import ipywidgets as widgets

from toolkit.notebook.paging import Page

Row = TypeVar("Row")

__all__ = ["Filters", "Pager"]


class Filters:
    """Controls whose values choose what is shown (the rows; the explorer's field to
    chart): each change a user makes calls ``refilter`` once. Code that sets several
    controls does it inside :meth:`setting`, so that they refilter once, when it is done,
    not once per control (and not for the passing value a dropdown takes when its options
    are replaced)."""

    def __init__(self, controls: Sequence[widgets.ValueWidget], refilter: Callable[[], None]):
        self._refilter = refilter
        self._setting = 0  # how many setting() blocks are open
        for control in controls:
            control.observe(self._changed, names="value")

    @contextmanager
    def setting(self) -> Iterator[None]:
        """Set the controls from code: one refilter when the outermost block ends (none
        when it raises)."""
        self._setting += 1
        try:
            yield
        finally:
            self._setting -= 1
        if not self._setting:
            self._refilter()

    def _changed(self, _change: Any = None) -> None:
        if not self._setting:
            self._refilter()


class Pager(Generic[Row]):
    """Previous, Next and the position of a paged grid.

    ``page(number)`` returns page ``number`` (from 0, clamped) of the rows as filtered now;
    ``draw(page)`` shows it (the table, and whatever else follows the page)."""

    def __init__(
        self, page: Callable[[int], Page[Row]], draw: Callable[[Page[Row]], None]
    ) -> None:
        self._page = page
        self._draw = draw
        self.number = 0
        """The page shown, from 0."""
        self.previous = widgets.Button(description="◀ Previous", layout={"width": "110px"})
        self.next = widgets.Button(description="Next ▶", layout={"width": "110px"})
        self.position = widgets.Label()
        self.previous.on_click(lambda _: self.show(self.number - 1))
        self.next.on_click(lambda _: self.show(self.number + 1))

    @property
    def controls(self) -> tuple[widgets.Button, widgets.Button, widgets.Label]:
        """Previous, Next and the position, in the order a panel lays them out."""
        return self.previous, self.next, self.position

    @property
    def page(self) -> Page[Row]:
        """The page shown now."""
        return self._page(self.number)

    def show(self, number: int) -> None:
        """Show page ``number`` (from 0, clamped to the pages there are), as Previous and
        Next do; after a new filter, page 0."""
        page = self._page(number)
        self.number = page.number
        self._draw(page)
        self.position.value = str(page)
        self.previous.disabled = page.number == 0
        self.next.disabled = page.number >= page.pages - 1
