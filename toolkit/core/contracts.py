"""Contracts per field (docs/rules.md, *Contracts*): what happens to a value that no column
of its field holds as it is, when the field may not evolve for it.

A contract names a top-level key (a key holding a dot is named whole) or ``*``, every key
the table has no column for yet, and one of dlt's words:

* ``evolve`` (the default): RULES 3.3 / RULES 5 as always, a new column or a widening;
* ``freeze``: no new column, no widening; such a value fails the batch, which writes
  nothing (:class:`~toolkit.errors.ContractError`, naming field, value and record);
* ``discard_row``: the record goes to the quarantine (reason ``contract``), the rest of the
  batch is written;
* ``discard_value``: the value goes to the quarantine with its record (reason
  ``contract-value``), and the record is written without it.

Nothing is lost: every value a contract refuses is either in an error or in the quarantine.

The test is made per kind against the table as it was before the batch, by the policy's
own rule (RULES 3.3's ``accepts`` for ``upsolver``, the matrix of RULES 5 for ``widen``),
so it never depends on the order of records and reads the same from a Spark summary as
from the records themselves: the plan is made without the refused kinds
(:func:`contract_breaches`, :func:`without_breaches`) and routing sets their records
aside (:func:`enforce_contracts`). A table with no column yet takes its first batch as it
comes (as dlt does): that batch sets the schema the contracts then hold.

>>> c = Contracts.of({"quantity": "freeze", "*": "discard_row"})
>>> c.mode_for("quantity", new=False), c.mode_for("shipping", new=True)
('freeze', 'discard_row')
>>> c.mode_for("price", new=False)
'evolve'
>>> Contracts.from_json(c.to_json()) == c, c.to_json()
(True, '{"*":"discard_row","quantity":"freeze"}')
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, get_args

from toolkit.core.families import accepts, families
from toolkit.core.folding import ENTRY_BYTES, entry_size
from toolkit.core.jsonlines import parse_line
from toolkit.core.quarantine import Quarantined
from toolkit.core.types import RECORD, Column, Kind, ListOf, MapOf, Struct, type_to_str
from toolkit.core.wording import a_shape, and_join, batch_number, value_text
from toolkit.errors import ContractError

if TYPE_CHECKING:
    from toolkit.core.lattice import Lattice
    from toolkit.core.observe import StructObservation
    from toolkit.core.observed import Observed, ObservedField
    from toolkit.core.options import Options

__all__ = [
    "CONTRACTS_PROPERTY",
    "CONTRACT_MODES",
    "EVERY_NEW_FIELD",
    "ContractBreach",
    "ContractMode",
    "Contracts",
    "Enforced",
    "contract_breaches",
    "contract_error",
    "enforce_contracts",
    "frozen",
    "holds",
    "with_table_contracts",
    "without_breaches",
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


def with_table_contracts(options: Options, properties: Mapping[str, str] | None) -> Options:
    """``options`` with the contracts a table keeps (``properties``: its table properties,
    None for a table not created yet) when none were given (``options.contracts`` is None):
    what every later batch obeys until contracts are given again."""
    if options.contracts is not None:
        return options
    kept = Contracts() if properties is None else Contracts.of_table(properties)
    return dataclasses.replace(options, contracts=kept)


def holds(widens: bool, lattice: Lattice, members: list[Column], kind: Kind) -> bool:
    """Whether a column of the family ``members`` takes a value of ``kind`` as the table is,
    with no new column and no widening: RULES 3.3's test (``accepts``) under the
    ``upsolver`` policy; under ``widen`` (RULES 5), the key's one column when its type
    stays what it is (same depth of lists, the matrix gives the column's own type).
    Records only ask for a record column: the fields inside them evolve as always."""
    if not members:
        return False
    if not widens:
        return all(any(accepts(lattice, p, c) for c in members) for p in kind.parts)
    from toolkit.core.widen_policy import accepted, matrix_name, primary_columns

    col = primary_columns(Struct(tuple(members)))[members[0].family]
    t, dim = col.type, 0
    while isinstance(t, ListOf):
        t, dim = t.element, dim + 1
    if kind.mixed is not None:
        return False
    if kind.type is None:  # an array with no typed leaf: into any list of its depth or more
        return 0 < kind.dim <= dim
    if kind.dim != dim:
        return False
    if kind.type == RECORD:
        return isinstance(t, Struct) or (isinstance(t, MapOf) and t.key == "string")
    if not isinstance(t, str):
        return False
    table = matrix_name(t)
    return accepted(kind.type, table) == table


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


def contract_breaches(
    schema: Struct, obs: Observed, contracts: Contracts, widens: bool, lattice: Lattice
) -> tuple[ContractBreach, ...]:
    """The values of a batch (``obs``: an observation or a Spark summary) its contracts
    refuse, per top-level key, in key order: none for a table with no column yet (its
    first batch sets the schema the contracts hold, as dlt does)."""
    if not contracts or not schema.fields:
        return ()
    members = families(schema)
    out = []
    for key, fobs in sorted(obs.fields.items()):
        family = members.get(key, [])
        mode = contracts.mode_for(key, new=not family)
        if mode == "evolve":
            continue
        kinds = frozenset(k for k in fobs.counts if not holds(widens, lattice, family, k))
        if kinds:
            out.append(ContractBreach(
                key, mode, kinds, sum(fobs.counts[k] for k in kinds), sum(fobs.counts.values()),
                tuple(f"{c.name} {type_to_str(c.type)}" for c in family),
            ))
    return tuple(out)


@dataclass(frozen=True)
class _HeldField:
    """One key's observation without the kinds its contract refuses."""

    counts: Mapping[Kind, int]
    whole: ObservedField

    def nested(self, max_dim: int) -> Observed:
        return self.whole.nested(max_dim)


@dataclass(frozen=True)
class _Held:
    fields: Mapping[str, ObservedField]
    rows: int


def without_breaches(obs: Observed, breaches: Iterable[ContractBreach]) -> Observed:
    """``obs`` as the planner sees it once the values its contracts refuse are out: no
    column is added and no column widened for them."""
    fields: dict[str, ObservedField] = dict(obs.fields)
    for b in breaches:
        whole = fields[b.key]
        fields[b.key] = _HeldField(
            {k: n for k, n in whole.counts.items() if k not in b.kinds}, whole)
    rows = getattr(obs, "rows", 0)
    return _Held(fields, rows if isinstance(rows, int) else len(rows))


@dataclass(frozen=True)
class Enforced:
    """What the contracts made of a batch's records (:func:`enforce_contracts`): ``kept``,
    the records to route (a record a value was taken out of is a new dict, whose record
    as it came ``originals`` keeps by the new dict's ``id``), and ``aside``, what they set
    aside, in record order."""

    kept: list[dict[str, Any]]
    aside: list[Quarantined]
    originals: Mapping[int, dict[str, Any]]

    def settled(self, later: list[Quarantined]) -> list[Quarantined]:
        """Everything set aside once routing set ``later`` aside too: a record routing sets
        aside whole after a value was taken out of it goes as it came, with that value
        (nothing of it was written, so the value is not set aside apart)."""
        if not later or not self.originals:
            return self.aside + later
        whole = {}
        for i, q in enumerate(later):
            original = self.originals.get(id(q.record))
            if original is not None:
                later[i] = dataclasses.replace(q, record=original)
                whole[id(original)] = original
        return [q for q in self.aside if not (
            q.reason == "contract-value" and id(q.record) in whole)] + later


def enforce_contracts(
    breaches: tuple[ContractBreach, ...],
    obs: StructObservation,
    batch: int | str = 0,
    *,
    fail: bool = True,
) -> Enforced:
    """The records of ``obs`` as the contracts let them be written, and what they set
    aside, in record order: a record holding a value a ``freeze`` contract refuses raises
    :class:`~toolkit.errors.ContractError` (with ``fail=False``, as Spark's workers do, it
    is set aside with reason ``contract`` and the caller raises); one a ``discard_row``
    contract refuses is set aside whole (reason ``contract``); a value a
    ``discard_value`` contract refuses is taken out of its record, which is written
    without it, and set aside with the record as it came (reason ``contract-value``).
    The strictest mode a record meets decides: freeze, then discard_row."""
    if not breaches:
        return Enforced(obs.rows, [], {})
    kinds = [(b, obs.fields[b.key]) for b in breaches if b.key in obs.fields]
    kept: list[dict[str, Any]] = []
    aside: list[Quarantined] = []
    originals: dict[int, dict[str, Any]] = {}
    for i, row in enumerate(obs.rows):
        met = [b for b, fobs in kinds if fobs.kind_at(i) in b.kinds]
        if not met:
            kept.append(row)
            continue
        worst = min(met, key=lambda b: _STRICTNESS[b.mode])
        if worst.mode == "freeze" or worst.mode == "discard_row":
            item = _set_aside(row, worst, obs, i, batch, "contract")
            if worst.mode == "freeze" and fail:
                raise contract_error(item, f"record {i + 1:,} of batch {batch_number(batch)}")
            aside.append(item)
            continue
        aside += [_set_aside(row, b, obs, i, batch, "contract-value") for b in met]
        without = {k: v for k, v in row.items() if k not in {b.key for b in met}}
        originals[id(without)] = row
        kept.append(without)
    return Enforced(kept, aside, originals)


_STRICTNESS: Final[dict[ContractMode, int]] = {
    "freeze": 0, "discard_row": 1, "discard_value": 2, "evolve": 3,
}


def _set_aside(
    row: dict[str, Any], b: ContractBreach, obs: StructObservation, i: int, batch: int | str,
    reason: Literal["contract", "contract-value"],
) -> Quarantined:
    kind = obs.fields[b.key].kind_at(i)
    assert kind is not None
    value = row[b.key]
    held = and_join(b.columns) if b.columns else None
    where = (
        "a new field" if b.new else f"no column of it holds {a_shape(kind.shape)} ({held})"
    )
    done = {
        "freeze": "no new column or widening may be made for it",
        "discard_row": "the record was set aside",
        "discard_value": "the value was taken out and the record written without it",
        "evolve": "",
    }[b.mode]
    return Quarantined(
        row, reason, b.key, str(kind.shape), held, batch,
        f"field {b.key!r}: value {value_text(value)} arrived as {a_shape(kind.shape)}; "
        f"{where}, and its contract is {b.mode}: {done} (docs/rules.md, Contracts)",
    )


def contract_error(item: Quarantined, where: str | None = None) -> ContractError:
    """The error a ``freeze`` contract raises for ``item`` (a record set aside by
    :func:`enforce_contracts`); ``where`` names the record (by default, its text)."""
    assert item.field is not None
    record = item.record
    if isinstance(record, str):  # as Spark's workers keep a JSON line: the line itself
        record = parse_line(record)
    value = record.get(item.field) if isinstance(record, dict) else None
    place = where or f"batch {batch_number(item.batch)}, record {value_text(item.record, 200)}"
    return ContractError(item.field, value, place, f"{item.detail}; nothing was written")


def frozen(breaches: Iterable[ContractBreach]) -> bool:
    """Whether any of ``breaches`` is under a ``freeze`` contract (the batch fails)."""
    return any(b.mode == "freeze" for b in breaches)
