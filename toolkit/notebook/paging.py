"""One page of a panel's rows: the explorer's field grid and the preview's landing grid
page the same way.

>>> page = page_of(tuple("abcdefg"), 1, size=3)
>>> page.rows, str(page)
(('d', 'e', 'f'), 'rows 4-6 of 7 (page 2 of 3)')
>>> str(page_of(tuple("abc"), 9, size=3))  # a page past the end is the last one
'rows 1-3 of 3 (page 1 of 1)'
>>> str(page_of(range(5000), 0))
'rows 1-25 of 5,000 (page 1 of 200)'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

Row = TypeVar("Row")

__all__ = ["Page", "page_of"]


@dataclass(frozen=True, slots=True)
class Page(Generic[Row]):
    """One page of rows; ``number`` counts from 0 and is clamped to the pages there are."""

    rows: tuple[Row, ...]
    number: int
    size: int
    pages: int
    total: int

    @property
    def first(self) -> int:
        """The 1-based position of the first row shown (0 when there is none)."""
        return self.number * self.size + 1 if self.rows else 0

    @property
    def last(self) -> int:
        return self.number * self.size + len(self.rows)

    def __str__(self) -> str:
        """``rows 1-25 of 5,000 (page 1 of 200)``: every number with thousands separators."""
        where = f"page {self.number + 1:,} of {self.pages:,}"
        return f"rows {self.first:,}-{self.last:,} of {self.total:,} ({where})"


def page_of(rows: Sequence[Row], number: int, size: int = 25) -> Page[Row]:
    """Rows ``number * size`` onwards (``number`` from 0, clamped to the pages there are)."""
    if size < 1:
        raise ValueError(f"page size must be at least 1, not {size}")
    pages = max(1, -(-len(rows) // size))
    number = min(max(number, 0), pages - 1)
    start = number * size
    return Page(tuple(rows[start : start + size]), number, size, pages, len(rows))
