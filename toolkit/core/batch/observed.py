"""What the planners read of a batch's observation: one protocol for a full observation
(``toolkit.core.batch.observe``) and for a mergeable summary of one (a Spark partition's tally),
so the planner and the map-routing check read both the same way."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from toolkit.core.values.types import Kind, Shape

__all__ = ["Observed", "ObservedField"]


class ObservedField(Protocol):
    """What the planner reads of one key: its kinds, and its records' nested fields."""

    @property
    def counts(self) -> Mapping[Kind, int]: ...

    def nested(self, max_dim: int) -> Observed: ...


class Observed(Protocol):
    """One struct level of a batch: a full observation, or a mergeable summary of one."""

    @property
    def fields(self) -> Mapping[str, ObservedField]: ...


class Seen(Protocol):
    """Where a batch's values were seen, as a plan's reasons tell it (a
    :class:`~toolkit.core.batch.profile.Profile` is one)."""

    def first_records(self, batch: int) -> Mapping[str, Mapping[Shape, int]]:
        """Per top-level key and shape, the first record of ``batch`` holding one (counted
        from 1 in the batch)."""
        ...
