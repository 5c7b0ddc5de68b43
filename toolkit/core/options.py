"""Options of the automatic evolution policy (RULES 1 and 2 switches).

>>> Options(detect_dates=False).detect_dates
False
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, TypeAlias

from toolkit.core.conversions import Conversions, EpochUnit, LongTimestampUnit
from toolkit.core.lattice import STRICT, UPSOLVER, Lattice
from toolkit.core.quarantine import OnIncompatible
from toolkit.errors import UnknownOptionError

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
    - ``rare_type_percent``: the automatic policy's rare-type threshold, in percent (``1``
      is 1%, not 100%), off (None) by default: a type seen in fewer than this share of a
      top-level field's non-null values in a batch, and which would need a new column, is
      not evolved for; its records are set aside (reason ``rare-type``, replayable).
      Decided per batch by :func:`toolkit.core.planner.rare_kinds` (docs/rules.md).
    """

    detect_dates: bool = True
    timestamp_unit: EpochUnit = "ms"
    long_timestamp_unit: LongTimestampUnit = "auto"
    lattice: Lattice = field(default=UPSOLVER)
    policy: Policy = "upsolver"
    on_incompatible: OnIncompatible = "quarantine"
    allow_rewrites: bool = True
    rare_type_percent: float | None = None

    @cached_property
    def conversions(self) -> Conversions:
        return Conversions(self.timestamp_unit, self.long_timestamp_unit)


LATTICES: dict[str, Lattice] = {"upsolver": UPSOLVER, "strict": STRICT}

#: the accepted range of ``rare_type_percent``: above 0, at most 50 (so a type that holds
#: most of a field's values is never rare)
RARE_TYPE_PERCENT_MAX = 50.0


def checked_rare_type_percent(value: object) -> float | None:
    """``rare_type_percent`` validated: None (off) or a number of percent in (0, 50].

    >>> checked_rare_type_percent(1)
    1.0
    >>> checked_rare_type_percent(0.01)
    0.01
    >>> checked_rare_type_percent(75)
    Traceback (most recent call last):
    ...
    ValueError: rare_type_percent=75 is out of range: give a share in percent above 0 and \
at most 50 (1 means 1%), or None to switch the rare-type threshold off
    """
    if value is None:
        return None
    accepted = (
        f"give a share in percent above 0 and at most {RARE_TYPE_PERCENT_MAX:g} (1 means 1%), "
        "or None to switch the rare-type threshold off"
    )
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"rare_type_percent={value!r} is not a number: {accepted}")
    if not 0 < value <= RARE_TYPE_PERCENT_MAX:  # NaN fails both comparisons
        raise ValueError(f"rare_type_percent={value!r} is out of range: {accepted}")
    return float(value)


def make_options(
    *,
    detect_dates: bool = True,
    timestamp_unit: EpochUnit = "ms",
    long_timestamp_unit: LongTimestampUnit = "auto",
    lattice: Lattice | str = UPSOLVER,
    policy: Policy = "upsolver",
    on_incompatible: OnIncompatible = "quarantine",
    allow_rewrites: bool = True,
    rare_type_percent: float | None = None,
    **unknown: Any,
) -> Options:
    """Options from keyword arguments (see :class:`~toolkit.core.options.Options`);
    ``lattice`` may be a name (``upsolver``, ``strict``). An unknown name is refused with
    the nearest known one:

    >>> make_options(detect_date=False)
    Traceback (most recent call last):
    ...
    toolkit.errors.UnknownOptionError: unknown option 'detect_date'; did you mean
    'detect_dates'? The options are: detect_dates, timestamp_unit, long_timestamp_unit,
    lattice, policy, on_incompatible, allow_rewrites, rare_type_percent
    """
    if unknown:
        raise UnknownOptionError(next(iter(unknown)), OPTION_NAMES)
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; choose one of {', '.join(POLICIES)}")
    rare_type_percent = checked_rare_type_percent(rare_type_percent)
    if rare_type_percent is not None and policy != "upsolver":
        raise ValueError(
            f"rare_type_percent={rare_type_percent:g} is an option of the automatic policy "
            f"(policy='upsolver'), not of policy={policy!r}; leave it out"
        )
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
        allow_rewrites, rare_type_percent,
    )


#: the options every entry point takes (``simulate``, ``ingest``, ``preview``...), in order
OPTION_NAMES: tuple[str, ...] = tuple(
    p.name for p in inspect.signature(make_options).parameters.values()
    if p.kind is inspect.Parameter.KEYWORD_ONLY
)
