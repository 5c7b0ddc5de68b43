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

The words (the modes, :class:`~toolkit.core.batch.contract_terms.Contracts`) live in
:mod:`toolkit.core.batch.contract_terms`, below the options that hold them.

>>> from toolkit.core.batch.observe import observe_struct
>>> from toolkit.core.batch.options import Options
>>> table = Struct((Column(1, "quantity", "long"),))
>>> batch = [{"quantity": 3}, {"quantity": "two"}]
>>> contracts = Contracts.of({"quantity": "discard_row"})
>>> held = contract_breaches(table, observe_struct(batch, Options()), contracts, False,
...                          Options().lattice)
>>> print(*held)
1 of 2 values of `quantity` arrived as a string; no column of `quantity` holds it \
(quantity long): its contract discard_row sets its record aside (reason contract)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from toolkit.core.batch.contract_terms import (
    CONTRACT_MODES,
    CONTRACTS_PROPERTY,
    EVERY_NEW_FIELD,
    ContractBreach,
    ContractMode,
    Contracts,
)
from toolkit.core.batch.observe import observe_struct
from toolkit.core.batch.quarantine import Quarantined
from toolkit.core.values.families import accepts, families
from toolkit.core.values.jsonlines import parse_line
from toolkit.core.values.kinds import crosses
from toolkit.core.values.types import RECORD, Column, Kind, ListOf, MapOf, Struct, type_to_str
from toolkit.core.values.widening import accepted, matrix_name, primary_columns
from toolkit.core.values.wording import a_shape, and_join, batch_number, value_text
from toolkit.errors import ContractError

if TYPE_CHECKING:
    from toolkit.core.batch.observe import Classifier, StructObservation
    from toolkit.core.batch.observed import Observed, ObservedField
    from toolkit.core.evolution.batch_plan import Plan
    from toolkit.core.values.lattice import Lattice

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
    "without_breaches",
]

def holds(widens: bool, lattice: Lattice, members: list[Column], kind: Kind) -> bool:
    """Whether a column of the family ``members`` takes a value of ``kind`` as the table is,
    with no new column and no widening, as the same kind of value: RULES 3.3's test
    (``accepts``) under the ``upsolver`` policy; under ``widen`` (RULES 5), the key's one
    column when its type stays what it is (same depth of lists, the matrix gives the
    column's own type). A column that would take it only across kinds (a boolean into a
    number column, a number into text: ``toolkit.core.values.kinds``) does not hold it:
    that is what a conversion warning tells, and what a ``freeze`` contract refuses.
    Records only ask for a record column: the fields inside them evolve as always."""
    if not members:
        return False
    if not widens:
        return all(any(accepts(lattice, p, c) and not crosses(p.type, c.shape.type)
                       for c in members) for p in kind.parts)
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
    return accepted(kind.type, table) == table and not crosses(kind.type, t)


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


def contracted(
    plan: Plan, obs: StructObservation, classifier: Classifier, batch: int | str,
    *, fail: bool = True,
) -> tuple[StructObservation, Enforced]:
    """``obs`` once the field contracts had their say (``plan.held``, docs/rules.md,
    *Contracts*): the records they let through, observed again when any changed, and what
    they did (its :meth:`~Enforced.settled` gives everything set aside once routing set
    records aside too); a ``freeze`` contract raises unless ``fail`` is False (Spark's
    workers set the record aside and the driver raises)."""
    if not plan.held:
        return obs, Enforced(obs.rows, [], {})
    done = enforce_contracts(plan.held, obs, batch, fail=fail)
    if not done.aside:
        return obs, done
    return observe_struct(done.kept, classifier), done
