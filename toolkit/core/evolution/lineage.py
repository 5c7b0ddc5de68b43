"""Lineage (RULES 6): every committed plan is logged in the table, with its inverse.

Each plan is one table property ``toolkit.lineage.<n>`` (``n`` = 1, 2, ... in commit
order) holding compact JSON: what changed, who or which rule decided it, the batch that
triggered it, and its inverse when it has one. The property is written in the same
commit as the change it describes, so the log never disagrees with the table. Older
entries are folded into files in the table's metadata folder as the log grows
(:mod:`toolkit.core.maintenance.folding`); readers see them all (:func:`toolkit.lineage`).

>>> from toolkit.core.evolution.plans import plan_evolution
>>> from toolkit.core.evolution.operations import rename
>>> from toolkit.core.values.types import Column, Struct
>>> plan = plan_evolution(Struct((Column(1, "a", "long"),)), [rename("a", "b")], batch="day2")
>>> props = lineage_properties(plan, {}, at_ms=0)
>>> props
{'toolkit.lineage.1': '{"at":0,"by":"user","batch":"day2","ops":[{"op":"rename","path":["a"],\
"to":"b"}],"inverse":[{"op":"rename","path":["b"],"to":"a"}],"guard":[1]}'}
>>> entry = read_lineage(props)[0]
>>> entry.seq, entry.inverse()
(1, (RenameField(path=('b',), new_name='a'),))
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from toolkit.core.evolution.batch_plan import Plan
from toolkit.core.evolution.layout import TableLayout
from toolkit.core.evolution.operations import Operation
from toolkit.core.evolution.plans import (
    Evolution,
    operation_from_json,
    operation_lines,
    operation_to_json,
    plan_evolution,
)
from toolkit.core.evolution.reasons import reason_text
from toolkit.core.maintenance.folding import LINEAGE_PREFIX, folded_high
from toolkit.core.policies import decided_by_text, policy_of_reasons
from toolkit.errors import AlreadyUndoneError, IrreversibleError, OperationError, UndoMovedError


@dataclass(frozen=True)
class LineageEntry:
    """One committed plan, as logged in the table."""

    seq: int
    at_ms: int
    decided_by: str
    batch: str | None
    reason: str | None
    operations: tuple[Operation, ...]
    reasons: tuple[str | None, ...]
    inverse_operations: tuple[Operation, ...] | None
    irreversible: tuple[str, ...]
    guard: tuple[int | None, ...]
    """per inverse operation, the field ID it must act on (see ``Evolution.subject_ids``)"""
    schema_id: int | None = None
    """the table's schema ID once the plan was committed (for time travel)"""

    @property
    def reversible(self) -> bool:
        return self.inverse_operations is not None

    def inverse(self) -> tuple[Operation, ...] | None:
        """The operations that undo this plan (on the table as it was right after it), or
        None when it has none (:attr:`irreversible` says why)."""
        return self.inverse_operations

    def __str__(self) -> str:
        head = f"#{self.seq} by {decided_by_text(self.decided_by)}"
        if self.batch is not None:
            head += f", batch {self.batch}"
        if self.reason:
            head += f": {self.reason}"
        lines = [head, *operation_lines(self.operations, self.reasons)]
        lines.append(
            "  undo: " + ("; ".join(str(op) for op in self.inverse_operations) or "nothing")
            if self.inverse_operations is not None
            else "  irreversible: " + "; ".join(self.irreversible)
        )
        return "\n".join(lines)


def next_seq(properties: Mapping[str, str]) -> int:
    """The number the next logged plan gets (after those folded into files, too: see
    :mod:`toolkit.core.maintenance.folding`)."""
    seqs = [int(k[len(LINEAGE_PREFIX) :]) for k in properties if _is_entry_key(k)]
    return max([*seqs, folded_high(properties, "lineage") or 0], default=0) + 1


def _is_entry_key(key: str) -> bool:
    return key.startswith(LINEAGE_PREFIX) and key[len(LINEAGE_PREFIX) :].isdigit()


def lineage_properties(
    plan: Evolution,
    properties: Mapping[str, str],
    *,
    schema_id: int | None = None,
    at_ms: int | None = None,
) -> dict[str, str]:
    """The table property update that logs ``plan`` (set it in the plan's own commit).

    ``properties`` are the table's current properties (to number the entry).
    """
    inverse = plan.inverse()
    return _entry_properties(LineageEntry(
        next_seq(properties), _now_ms(at_ms), plan.decided_by, plan.batch, plan.reason,
        tuple(plan.operations), tuple(plan.reasons),
        None if inverse is None else tuple(inverse.operations), tuple(plan.irreversible),
        () if inverse is None else tuple(inverse.subject_ids()), schema_id,
    ))


def _now_ms(at_ms: int | None) -> int:
    return int(time.time() * 1000) if at_ms is None else at_ms


def _entry_properties(entry: LineageEntry) -> dict[str, str]:
    """The table property logging ``entry``, under its ``seq``."""
    reversible = entry.inverse_operations is not None
    data: dict[str, Any] = {
        "at": entry.at_ms,
        "by": entry.decided_by,
        "batch": entry.batch,
        "reason": entry.reason,
        "ops": [operation_to_json(op) for op in entry.operations],
        "why": list(entry.reasons) if any(entry.reasons) else None,
        "inverse": [operation_to_json(op) for op in entry.inverse_operations or ()]
        if reversible else None,
        "irreversible": list(entry.irreversible) or None,
        "guard": list(entry.guard) if reversible else None,
        "schema": entry.schema_id,
    }
    compact = {k: v for k, v in data.items() if v is not None}
    text = json.dumps(compact, separators=(",", ":"), ensure_ascii=False)
    return {f"{LINEAGE_PREFIX}{entry.seq}": text}


def evolution_of_plan(
    plan: Plan,
    batch_id: str | None = None,
    *,
    before: TableLayout | None = None,
    rewrites: bool = False,
) -> Evolution:
    """A policy's plan (RULES 3: columns added per batch; RULES 5: also widenings in place
    and columns made optional) as an :class:`Evolution`: its changes are operations
    already (``plan.operations``), each with the rule's reason. Rewrites are logged by the
    commit that runs them: with ``rewrites``, they follow the other changes (for one commit
    that runs them all). ``before``: the table's whole layout (default: the plan's schema).

    >>> from toolkit.core.engine import Engine
    >>> from toolkit.core.values.types import Struct
    >>> engine = Engine()
    >>> first = engine.plan(Struct(), engine.observe([{"size": 4}]))
    >>> evo = evolution_of_plan(engine.plan(first.after, engine.observe([{"size": 2.5}]), 1))
    >>> evo.decided_by, [c.name for c in evo.schema.fields]
    ('RULES 3', ['size', 'size_double'])
    >>> print(*evo.reasons)
    This batch had `size` as a double, which none of its columns holds: `size` holds longs \
(RULES 3.3)
    >>> print(evo.inverse())
    the upsolver policy (RULES 3): 1 operation (batch 1): undo
      - drop size_double
    """
    ops: tuple[Operation, ...] = plan.operations
    reasons: tuple[str, ...] = plan.reasons
    if rewrites:
        ops += plan.rewrites
        reasons += tuple(r.reason for r in plan.rewrites)
    return plan_evolution(
        TableLayout(plan.before) if before is None else before,
        ops,
        decided_by=policy_of_reasons(reasons),
        batch=str(plan.batch) if batch_id is None else batch_id,
        reasons=reasons,
    )


def plan_lineage_properties(
    plan: Plan,
    properties: Mapping[str, str],
    batch_id: str | None = None,
    *,
    schema_id: int | None = None,
) -> dict[str, str]:
    """The property update logging a policy's plan (empty when it changes nothing), for
    the commit that applies it (``properties``: the table's current ones). Its inverse
    drops the columns it added; each change carries the rule's reason (RULES 3.x, 5)."""
    if not plan.operations:
        return {}
    try:
        return lineage_properties(
            evolution_of_plan(plan, batch_id), properties, schema_id=schema_id
        )
    except OperationError as exc:
        # A plan the preview cannot replay is still logged (never a failed ingest for
        # want of a log line), without an inverse.
        changes = tuple(plan.changes)
        return _entry_properties(LineageEntry(
            next_seq(properties), _now_ms(None), policy_of_reasons([c.reason for c in changes]),
            str(plan.batch) if batch_id is None else batch_id, None, changes,
            tuple(c.reason for c in changes), None,
            (f"the toolkit could not work out how to reverse it when it was committed "
             f"({exc})",),
            (), schema_id,
        ))


def read_lineage(properties: Mapping[str, str]) -> tuple[LineageEntry, ...]:
    """The log held in a table's properties, oldest first."""
    entries = []
    for key, text in properties.items():
        if not _is_entry_key(key):
            continue
        data = json.loads(text)
        inverse = data.get("inverse")
        entries.append(
            LineageEntry(
                seq=int(key[len(LINEAGE_PREFIX) :]),
                at_ms=data["at"],
                decided_by=data["by"],
                batch=data.get("batch"),
                reason=data.get("reason"),
                operations=tuple(operation_from_json(op) for op in data["ops"]),
                # a reason an older version logged reads as today's (sentence, then rule)
                reasons=tuple(None if r is None else reason_text(r)
                              for r in data.get("why") or ()),
                inverse_operations=(
                    None if inverse is None else tuple(operation_from_json(op) for op in inverse)
                ),
                irreversible=tuple(data.get("irreversible") or ()),
                guard=tuple(data.get("guard") or ()),
                schema_id=data.get("schema"),
            )
        )
    return tuple(sorted(entries, key=lambda e: e.seq))


#: the reason an undo's entry is logged with; "already undone" is read back from it
_UNDO_REASON: Final = "undo of lineage entry {}"
_UNDOES = re.compile(r"undo of lineage entry (\d+)")


def undo_reason(seq: int) -> str:
    """The reason the entry undoing entry ``seq`` is logged with."""
    return _UNDO_REASON.format(seq)


def undoes(entry: LineageEntry | Evolution) -> int | None:
    """The entry ``entry`` (a logged entry, or a plan about to be) undid, if it is an undo."""
    found = _UNDOES.fullmatch(entry.reason or "")
    return None if found is None else int(found.group(1))


def undo_plan(
    entry: LineageEntry, entries: Sequence[LineageEntry], layout: TableLayout
) -> Evolution:
    """The plan that undoes ``entry`` (RULES 6), checked against the log ``entries`` and
    the table as it is (``layout``): the one rule :func:`toolkit.undo`, the evolution
    editor's Undo buttons and ``toolkit undo`` follow. Refused with
    :class:`~toolkit.errors.IrreversibleError` when the entry has no inverse,
    :class:`~toolkit.errors.AlreadyUndoneError` when a later entry undid it, and
    :class:`~toolkit.errors.UndoMovedError` when its inverse would now act on another field
    than the entry changed; an inverse that no longer applies at all raises the
    planner's own :class:`~toolkit.errors.OperationError`."""
    inverse = entry.inverse()
    if inverse is None:
        raise IrreversibleError(entry.seq, entry.irreversible)
    later = undone_by(entries, entry.seq)
    if later is not None:
        raise AlreadyUndoneError(entry.seq, later.seq)
    plan = plan_evolution(
        layout, inverse, decided_by="user", batch=entry.batch, reason=undo_reason(entry.seq)
    )
    for op, logged, current in zip(plan.operations, entry.guard, plan.subject_ids(),
                                   strict=False):
        if logged != current:
            raise UndoMovedError(str(op).strip(), entry.seq, logged, current)
    return plan


def undone_by(entries: Sequence[LineageEntry], seq: int) -> LineageEntry | None:
    """The later entry that undid entry ``seq``, unless that undo was itself undone.

    >>> def entry(seq, reason=None):
    ...     return LineageEntry(seq, 0, "user", None, reason, (), (), (), (), ())
    >>> log = (entry(1), entry(2, undo_reason(1)))
    >>> undone_by(log, 1).seq, undone_by(log, 2), undoes(log[1])
    (2, None, 1)
    >>> undone_by((*log, entry(3, undo_reason(2))), 1) is None
    True
    """
    for e in entries:
        if e.seq > seq and undoes(e) == seq and undone_by(entries, e.seq) is None:
            return e
    return None


__all__ = [
    "undo_plan",
    "undo_reason",
    "undone_by",
    "undoes",
    "LINEAGE_PREFIX",
    "LineageEntry",
    "evolution_of_plan",
    "lineage_properties",
    "next_seq",
    "plan_lineage_properties",
    "read_lineage",
]
