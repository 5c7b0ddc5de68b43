"""The words of field contracts (docs/rules.md, *Contracts*): the modes,
:class:`Contracts`, the value a caller gives (``contracts={"quantity": "freeze"}``), kept
as a table property, and :class:`ContractBreach`, what a plan says they refused. What a
contract does to a batch is the rule of :mod:`toolkit.core.batch.contracts`; this module sits
below the options (which hold a :class:`Contracts`) and the planner.

>>> c = Contracts.of({"quantity": "freeze", "*": "discard_row"})
>>> c.mode_for("quantity", new=False), c.mode_for("shipping", new=True)
('freeze', 'discard_row')
>>> c.mode_for("price", new=False)
'evolve'
>>> Contracts.from_json(c.to_json()) == c, c.to_json()
(True, '{"*":"discard_row","quantity":"freeze"}')
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias, get_args

from toolkit.core.maintenance.folding import ENTRY_BYTES, entry_size
from toolkit.core.values.types import Kind
from toolkit.core.values.wording import a_shape, and_join

__all__ = [
    "CONTRACTS_PROPERTY",
    "CONTRACT_MODES",
    "EVERY_NEW_FIELD",
    "ContractBreach",
    "ContractMode",
    "Contracts",
]

#: dlt's words for what a field may do when a value needs a change of its columns
ContractMode: TypeAlias = Literal["evolve", "freeze", "discard_row", "discard_value"]
CONTRACT_MODES: Final[tuple[ContractMode, ...]] = get_args(ContractMode)
#: the path that names every field the table has no column for yet
EVERY_NEW_FIELD: Final = "*"
#: the table property the contracts are kept in (JSON), so later batches obey them
CONTRACTS_PROPERTY: Final = "toolkit.contracts"


@dataclass(frozen=True)
class Contracts:
    """The contracts in force: ``(path, mode)`` pairs, sorted by path (``*`` first).
    Empty (or all ``evolve``) changes nothing: ``bool(contracts)`` says whether any binds.

    >>> bool(Contracts.of({"a": "evolve"})), bool(Contracts.of({"a": "freeze"}))
    (False, True)
    >>> Contracts.of({"a": "frozen"})
    Traceback (most recent call last):
    ...
    ValueError: contract 'a': unknown mode 'frozen'; choose one of evolve, freeze, \
discard_row, discard_value
    """

    rules: tuple[tuple[str, ContractMode], ...] = ()

    @classmethod
    def of(cls, given: Contracts | Mapping[str, str] | None) -> Contracts:
        """Contracts from a mapping ``{path: mode}`` (``*`` for every new field), checked;
        a :class:`Contracts` as it is; None as no contract."""
        if given is None:
            return cls()
        if isinstance(given, Contracts):
            return given
        if not isinstance(given, Mapping):
            raise ValueError(
                f"contracts={given!r}: give a mapping of field to mode, e.g. "
                '{"quantity": "freeze", "*": "discard_row"}'
            )
        rules = []
        for path, mode in given.items():
            if not isinstance(path, str) or not path:
                raise ValueError(f"contract {path!r}: name a field (a key) or '*'")
            if mode not in CONTRACT_MODES:
                raise ValueError(
                    f"contract {path!r}: unknown mode {mode!r}; choose one of "
                    f"{', '.join(CONTRACT_MODES)}"
                )
            rules.append((path, mode))
        made = cls(tuple(sorted(rules)))
        size = entry_size(CONTRACTS_PROPERTY, made.to_json())
        if size > ENTRY_BYTES:  # the bound every single table property of the toolkit keeps
            raise ValueError(
                f"contracts take {size:,} bytes as the table property {CONTRACTS_PROPERTY}, "
                f"more than the {ENTRY_BYTES:,} a property may: name fewer fields, or use "
                "'*' for every new one"
            )
        return made

    def __bool__(self) -> bool:
        return any(mode != "evolve" for _, mode in self.rules)

    def as_dict(self) -> dict[str, str]:
        """``{path: mode}``: what :meth:`of` takes, a plan file records and the CLI shows."""
        return dict(self.rules)

    def mode_for(self, key: str, *, new: bool) -> ContractMode:
        """The mode of top-level ``key``: its own contract, else ``*`` when the table has no
        column for it yet (``new``), else ``evolve``."""
        own = dict(self.rules)
        if key in own:
            return own[key]
        if new and EVERY_NEW_FIELD in own:
            return own[EVERY_NEW_FIELD]
        return "evolve"

    def to_json(self) -> str:
        """The table property's value: compact JSON, keys sorted (the same bytes for the
        same contracts)."""
        return json.dumps(dict(self.rules), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | None) -> Contracts:
        """The contracts a table property holds (none when it is absent)."""
        return cls.of(json.loads(text)) if text else cls()

    @classmethod
    def of_table(cls, properties: Mapping[str, str]) -> Contracts:
        """The contracts a table keeps in its properties (:data:`CONTRACTS_PROPERTY`)."""
        return cls.from_json(properties.get(CONTRACTS_PROPERTY))

    def __str__(self) -> str:
        return ", ".join(f"{p}={m}" for p, m in self.rules) or "none"


@dataclass(frozen=True)
class ContractBreach:
    """Values of one top-level key that a batch brought and that no column of the key
    holds as the table is (:func:`holds`), under a contract other than ``evolve``:
    ``count`` of the key's ``total`` values, of ``kinds``; ``columns`` the key's columns
    before the batch (empty: the key is new). The plan is made without them."""

    key: str
    mode: ContractMode
    kinds: frozenset[Kind]
    count: int
    total: int
    columns: tuple[str, ...] = ()

    @property
    def new(self) -> bool:
        """Whether the key had no column before the batch (``*`` may have named it)."""
        return not self.columns

    @property
    def arrived(self) -> str:
        """``a string``, ``a string and an array of longs``: how the values came."""
        return and_join(a_shape(s) for s in sorted({k.shape for k in self.kinds}, key=str))

    @property
    def outcome(self) -> str:
        """What the contract does with them, in words."""
        one = self.count == 1
        their, records = ("its", "record") if one else ("their", "records")
        return {
            "freeze": "fails the batch",
            "discard_row": f"sets {their} {records} aside (reason contract)",
            "discard_value": f"takes {'it' if one else 'them'} out, to the quarantine with "
                             f"{their} {records}, and writes the {records} without "
                             f"{'it' if one else 'them'}",
            "evolve": "lets the field evolve",
        }[self.mode]

    def __str__(self) -> str:
        them = "it" if self.count == 1 else "them"
        where = (
            f"`{self.key}` is a new field" if self.new
            else f"no column of `{self.key}` holds {them} ({and_join(self.columns)})"
        )
        values = "the one value" if self.total == 1 else f"{self.count:,} of {self.total:,} values"
        return (
            f"{values} of `{self.key}` arrived as {self.arrived}; {where}: its contract "
            f"{self.mode} {self.outcome}"
        )
