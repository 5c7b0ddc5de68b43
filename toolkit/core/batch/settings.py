"""What the steps of a batch (observe, route, plan) read of its options: a protocol that
:class:`~toolkit.core.batch.options.Options` meets.

``Options`` hold the policy object, and a policy is made of these steps: they read the
options through this protocol, so the options and the policies import each other in no
circle.
"""

from __future__ import annotations

from typing import Protocol

from toolkit.core.batch.contract_terms import Contracts
from toolkit.core.batch.hints import Hint
from toolkit.core.batch.quarantine import OnIncompatible
from toolkit.core.values.conversions import Conversions, EpochUnit, LongTimestampUnit
from toolkit.core.values.lattice import Lattice

__all__ = ["PolicyTraits", "Settings"]


class PolicyTraits(Protocol):
    """What a step reads of the policy (``toolkit.core.policies.EvolutionPolicy``)."""

    @property
    def name(self) -> str: ...

    @property
    def widens(self) -> bool:
        """Whether its plans widen a key's one column (RULES 5): observation then keeps a
        typed source's narrow types apart."""


class Settings(Protocol):
    """The options as a step of a batch reads them (each documented on ``Options``)."""

    @property
    def detect_dates(self) -> bool: ...

    @property
    def timestamp_unit(self) -> EpochUnit: ...

    @property
    def long_timestamp_unit(self) -> LongTimestampUnit: ...

    @property
    def lattice(self) -> Lattice: ...

    @property
    def policy(self) -> PolicyTraits: ...

    @property
    def on_incompatible(self) -> OnIncompatible: ...

    @property
    def allow_rewrites(self) -> bool: ...

    @property
    def rare_type_percent(self) -> float | None: ...

    @property
    def conversions(self) -> Conversions: ...

    @property
    def hints(self) -> tuple[Hint, ...]: ...

    @property
    def contracts(self) -> Contracts | None: ...
