"""Options of the automatic evolution policy (RULES 1 and 2 switches).

>>> Options(detect_dates=False).detect_dates
False
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from toolkit.core.conversions import Conversions, EpochUnit, LongTimestampUnit
from toolkit.core.lattice import UPSOLVER, Lattice


@dataclass(frozen=True)
class Options:
    """How values are typed and converted.

    - ``detect_dates``: type ISO-8601 date / date-time texts as date / timestamp (RULES 1).
    - ``timestamp_unit``: unit of the epoch value a timestamp becomes in a long column.
    - ``long_timestamp_unit``: unit of a long written into a timestamp column; ``auto``
      reads it from the magnitude (RULES 2).
    - ``lattice``: the primitive lattice table (RULES 2).
    """

    detect_dates: bool = True
    timestamp_unit: EpochUnit = "ms"
    long_timestamp_unit: LongTimestampUnit = "auto"
    lattice: Lattice = field(default=UPSOLVER)

    @cached_property
    def conversions(self) -> Conversions:
        return Conversions(self.timestamp_unit, self.long_timestamp_unit)
