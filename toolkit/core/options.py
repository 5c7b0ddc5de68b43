"""Options of the automatic evolution policy (RULES 1 and 2 switches).

>>> Options(detect_dates=False).detect_dates
False
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal, TypeAlias

from toolkit.core.conversions import Conversions, EpochUnit, LongTimestampUnit
from toolkit.core.lattice import STRICT, UPSOLVER, Lattice
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
    - ``policy``: ``upsolver`` (automatic evolution) or ``widen`` (RULES 5): the name;
      :func:`toolkit.core.policies.policy_of` gives the policy object the engine asks.
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


LATTICES: dict[str, Lattice] = {"upsolver": UPSOLVER, "strict": STRICT}

def make_options(
    *,
    detect_dates: bool = True,
    timestamp_unit: EpochUnit = "ms",
    long_timestamp_unit: LongTimestampUnit = "auto",
    lattice: Lattice | str = UPSOLVER,
    policy: Policy = "upsolver",
    on_incompatible: OnIncompatible = "quarantine",
    allow_rewrites: bool = True,
) -> Options:
    """Options from keyword arguments (see :class:`~toolkit.core.options.Options`);
    ``lattice`` may be a name (``upsolver``, ``strict``)."""
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; choose one of {', '.join(POLICIES)}")
    if on_incompatible not in ("fail", "quarantine"):
        raise ValueError(
            f"unknown on_incompatible {on_incompatible!r}; choose 'fail' or 'quarantine'"
        )
    if isinstance(lattice, str):
        try:
            lattice = LATTICES[lattice]
        except KeyError:
            raise ValueError(
                f"unknown lattice {lattice!r}; choose one of {', '.join(LATTICES)}"
            ) from None
    return Options(
        detect_dates, timestamp_unit, long_timestamp_unit, lattice, policy, on_incompatible,
        allow_rewrites,
    )
