"""What the planners read of a batch's observation: one protocol for a full observation
(``toolkit.core.batch.observe``) and for a mergeable summary of one (a Spark partition's tally),
so the planner and the map-routing check read both the same way."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from toolkit.core.values.types import Kind

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
