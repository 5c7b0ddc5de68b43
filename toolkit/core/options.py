"""Options of the automatic evolution policy (RULES 1 and 2 switches).

>>> Options(detect_dates=False).detect_dates
False
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal, TypeAlias

from toolkit.core.conversions import Conversions, EpochUnit, LongTimestampUnit
from toolkit.core.lattice import UPSOLVER, Lattice
from toolkit.core.quarantine import OnIncompatible

#: ``upsolver``: the automatic policy, suffixed columns (RULES 3-4); ``widen``: one column
#: per key widened by the matrix, the incompatible quarantined or failed (RULES 5).
Policy: TypeAlias = Literal["upsolver", "widen"]
POLICIES: tuple[Policy, ...] = ("upsolver", "widen")


@dataclass(frozen=True)
class Options:
    """How values are typed and converted.

    - ``detect_dates``: type ISO-8601 date / date-time texts as date / timestamp (RULES 1).
    - ``timestamp_unit``: unit of the epoch value a timestamp becomes in a long column.
    - ``long_timestamp_unit``: unit of a long written into a timestamp column; ``auto``
      reads it from the magnitude (RULES 2).
    - ``lattice``: the primitive lattice table (RULES 2).
    - ``policy``: ``upsolver`` (automatic evolution) or ``widen`` (RULES 5).
    - ``on_incompatible``: a record the table cannot take (an X cell of RULES 5, a line
      that is not a JSON object, a value that cannot be typed) goes to ``quarantine`` or
      makes the batch ``fail`` with an error naming field, types and value.
    - ``allow_rewrites``: whether the widening policy may plan a column rewrite (RULES 5:
      only when approved); when not, the values needing one are treated as incompatible.
    """

    detect_dates: bool = True
    timestamp_unit: EpochUnit = "ms"
    long_timestamp_unit: LongTimestampUnit = "auto"
    lattice: Lattice = field(default=UPSOLVER)
    policy: Policy = "upsolver"
    on_incompatible: OnIncompatible = "quarantine"
    allow_rewrites: bool = True

    @cached_property
    def conversions(self) -> Conversions:
        return Conversions(self.timestamp_unit, self.long_timestamp_unit)
