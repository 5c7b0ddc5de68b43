"""Task time, batch after batch: observe -> plan -> route, all in memory.

>>> run = simulate_batches([[{"my_field": 1}], [{"my_field": "one"}]])
>>> [c.name for c in run.schema.fields]
['my_field', 'my_field_string']
>>> run.rows[1]
{'my_field': None, 'my_field_string': 'one'}
"""

from __future__ import annotations

import dataclasses
import functools
import gc
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import repeat
from typing import Any, TypeVar, cast

from toolkit.core.batch.contracts import Contracts, contract_breaches, without_breaches
from toolkit.core.batch.conversion_warnings import BatchWarning, conversion_warnings
from toolkit.core.batch.hint_plans import as_they_came, hinted_rows, seeded, with_seeds
from toolkit.core.batch.hints import HintTally
from toolkit.core.batch.observe import Classifier, StructObservation, observe_struct
from toolkit.core.batch.observed import Observed
from toolkit.core.batch.options import Options
from toolkit.core.batch.profile import Profile, profile_of
from toolkit.core.batch.quarantine import Quarantined, Reason
from toolkit.core.batch.routing import Router, conform, rows_of
from toolkit.core.batch.summary import summarize
from toolkit.core.evolution.batch_plan import Plan, max_field_id
from toolkit.core.evolution.field_operations import refuse_identifier_changes
from toolkit.core.values.jsonlines import ReadRecords, UnreadLine
from toolkit.core.values.scalars import has_foreign, plain_record
from toolkit.core.values.types import Struct
from toolkit.errors import MalformedLineError, NotARecordError, NotARecordLineError

T = TypeVar("T")
V = TypeVar("V")


@dataclass(frozen=True)
class RoutedBatch:
    """One batch as routed: the schema it was written with and its column values."""

    schema: Struct
    columns: tuple[list[Any] | None, ...]
    size: int


@dataclass(frozen=True)
class Run:
    """The outcome of a run of batches over one table."""

    schema: Struct
    plans: tuple[Plan, ...]
    batches: tuple[RoutedBatch, ...]
    profile: Profile
    quarantined: tuple[Quarantined, ...] = ()
    #: values written only as another kind of value, per batch, field and type (issue #28),
    #: and the records of a batch that left the table without a column (not written)
    warnings: tuple[BatchWarning, ...] = ()

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Every record written, as a reader sees the table at the end (RULES 3.5); the
        quarantined ones are in :attr:`quarantined`."""
        with gc_paused():
            return read_rows(self.schema, self.batches, rewritten_ids(self.plans))


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic GC off for a bulk step. The engine allocates millions of containers but
    (next to) no reference cycles, while each full collection re-traverses every record the
    caller holds: about half of simulate's time at 200k records. Reference counting frees
    the engine's garbage; the collector's state is restored after."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class Engine:
    """Plans and routes batches against a schema, under one set of options."""

    def __init__(
        self, options: Options | None = None, identifier_ids: Sequence[int] = ()
    ) -> None:
        self.options = options or Options()
        #: the table's identifier fields, which no batch may change
        self.identifier_ids = tuple(identifier_ids)
        self.policy = self.options.policy
        self.classifier = Classifier(self.options)
        self.router = Router(self.options, self.classifier)

    def observe(self, records: Iterable[Mapping[str, Any]], batch: int = 0) -> StructObservation:
        rows = list(records)
        for i, r in enumerate(rows):
            if type(r) is not dict:
                if isinstance(r, Mapping):
                    rows[i] = dict(r)
                else:
                    raise NotARecordError(batch, i, r)
        self.classifier.parsed.clear()  # the texts the previous batch's routing needed
        # type hints convert their fields' values first (docs/rules.md, Type hints)
        tally: HintTally = {}
        hinted = hinted_rows(rows, self.options, tally)  # type: ignore[arg-type]
        obs = observe_struct(hinted, self.classifier)
        obs.hinted = tally  # the profile counts them: the conversion warnings tell them
        return obs

    def admit(
        self, records: Iterable[Any], batch: int | str = 0
    ) -> tuple[list[dict[str, Any]], list[Quarantined]]:
        """The items of a batch that are records, and the others set aside (with
        ``on_incompatible="fail"``, an error instead, naming the item's place counted from
        1). A line of a file that could not be taken whole (:class:`UnreadLine`) is set
        aside as it arrived, with its line number and its reason (``fail``: its error).
        The reason of an item set aside does not number it: on Spark the engine sees a
        chunk of the batch, not the batch, so its place here is not its place there."""
        rows: list[dict[str, Any]] = []
        out: list[Quarantined] = []
        for i, r in enumerate(records):
            if type(r) is dict:
                rows.append(r)
            elif isinstance(r, Mapping):
                rows.append(dict(r))
            elif type(r) is UnreadLine:
                if self.options.on_incompatible == "fail":
                    raise r.error
                out.append(set_aside_line(r, batch))
            elif self.options.on_incompatible == "fail":
                raise NotARecordError(batch, i, r)  # type: ignore[arg-type]
            else:
                text = repr(r)
                out.append(Quarantined(
                    r, "not-a-record", None, type(r).__name__, None, batch,
                    f"expected a JSON object, got {type(r).__name__} {text[:80]}",
                ))
        return rows, out

    def invalid(
        self, rows: list[dict[str, Any]], batch: int | str = 0
    ) -> tuple[list[dict[str, Any]], list[Quarantined]]:
        """The records whose every value the engine can type, and the others set aside.
        Observation is lazy below the top level, so each record is observed in full: this
        runs only after a batch failed, to find the records at fault. (Their reasons do not
        number them: ``rows`` are what :meth:`admit` kept, of one chunk of the batch.)"""
        good, out = [], []
        for r in rows:
            try:
                summarize(observe_struct([r], self.classifier))
            except (TypeError, ValueError, RecursionError) as err:
                path = getattr(err, "path", None)
                out.append(Quarantined(
                    r, "invalid-value", ".".join(path) if path else None, None, None, batch,
                    str(err) or type(err).__name__,
                ))
            else:
                good.append(r)
        return good, out

    def route(self, schema: Struct, obs: StructObservation) -> RoutedBatch:
        return RoutedBatch(schema, tuple(self.router.route_struct(schema, obs)), len(obs.rows))

    def run(
        self, batches: Iterable[Iterable[Mapping[str, Any]]], schema: Struct | None = None
    ) -> Run:
        current = schema or Struct()
        plans, routed, prof = [], [], Profile()
        quarantined: list[Quarantined] = []
        warnings: list[BatchWarning] = []
        with gc_paused():
            for i, batch in enumerate(batches):
                rows, aside = self.admit(batch, i)
                quarantined += aside
                (plan, done, aside, p), bad = self.tolerant(
                    rows, i, functools.partial(self._batch, current, i)
                )
                read = batch if isinstance(batch, ReadRecords) else None
                quarantined += _as_read(bad, read)
                quarantined += _as_read(aside, read)
                current = plan.after
                plans.append(plan)
                routed.append(done)
                prof = prof + p
                warnings += conversion_warnings(plan, p, self.options, aside)
                self.classifier.parsed.clear()  # ISO texts parsed for this batch only
        return Run(current, tuple(plans), tuple(routed), prof, tuple(quarantined),
                   tuple(warnings))

    def tolerant(
        self,
        rows: list[dict[str, Any]],
        batch: int | str,
        work: Callable[[list[dict[str, Any]]], T],
    ) -> tuple[T, list[Quarantined]]:
        """``work(rows)``; if it fails on a value the engine cannot type, the records at
        fault are set aside (or, with ``on_incompatible="fail"``, the error goes up) and
        ``work`` runs again on the others. An error no record is at fault for goes up."""
        try:
            return work(rows), []
        except (TypeError, ValueError, RecursionError) as err:
            if not any(map(has_foreign, rows)):
                return self._without_invalid(rows, batch, work, err)
        # numpy/pandas scalars, UUIDs...: their plain values (RULES 1), then again (looked
        # for only after a failure, so JSON-like batches never pay for it)
        rows = [plain_record(r) for r in rows]
        try:
            return work(rows), []
        except (TypeError, ValueError, RecursionError) as err:
            return self._without_invalid(rows, batch, work, err)

    def _without_invalid(
        self,
        rows: list[dict[str, Any]],
        batch: int | str,
        work: Callable[[list[dict[str, Any]]], T],
        err: Exception,
    ) -> tuple[T, list[Quarantined]]:
        """After ``work(rows)`` failed with ``err``: ``work`` on the records the engine can
        type, and the others set aside; ``err`` goes up when failing is configured or no
        record is at fault."""
        if self.options.on_incompatible == "fail":
            raise err
        good, bad = self.invalid(rows, batch)
        if not bad:
            raise err
        return work(good), bad

    def plan(
        self, schema: Struct, obs: StructObservation, batch: int = 0,
        seen: Profile | None = None,
    ) -> Plan:
        return make_plan(schema, obs, self.options, batch, seen=seen)

    def _batch(
        self, current: Struct, i: int, rows: list[dict[str, Any]]
    ) -> tuple[Plan, RoutedBatch, list[Quarantined], Profile]:
        """Observe, plan and route one batch of records under the configured policy."""
        obs = self.observe(rows, i)
        seen = profile_of(obs, i)
        plan = self.plan(current, obs, i, seen)
        if self.identifier_ids:  # refused whole, as a real table refuses it
            refuse_identifier_changes(f"the plan of batch {i + 1}", plan.after,
                                      self.identifier_ids, plan.rewritten)
        columns, size, aside = self.policy.route(plan, obs, self.options, self.router, i)
        if self.options.hints:  # a record set aside as it came, its values unconverted
            aside = as_they_came(aside, obs.rows, rows)
        if not plan.after.fields:
            # RULES 3.5: nulls make no column, and a row of no column is in no data file
            # (Spark writes none): not written, said by conversion_warnings
            size = 0
        done = RoutedBatch(plan.after, tuple(columns), size)
        return plan, done, aside, seen


def _as_read(items: list[Quarantined], read: ReadRecords | None) -> list[Quarantined]:
    """``items`` with each record parsed from a line of ``read`` kept as that line, its
    detail naming the line (the reader's own text and number, as ``ingest`` keeps a line
    and :func:`set_aside_line` names one)."""
    if read is None or not read.texts:
        return items
    out = []
    for q in items:
        found = read.line_of(q.record)
        out.append(q if found is None else dataclasses.replace(
            q, record=found[1], detail=f"line {found[0]}: {q.detail}"))
    return out


def set_aside_line(line: UnreadLine, batch: int | str) -> Quarantined:
    """A line that could not be taken whole, set aside as it arrived: its text (its bytes
    when not UTF-8), its reason, the key path named twice (a duplicate key) and a detail
    naming the line (JSON that is not an object: the type it is, as for any item)."""
    return Quarantined(
        line.raw, cast(Reason, line.error.reason_key), error_path(line.error),
        error_observed(line.error), None, batch, str(line.error),
    )


def error_path(error: MalformedLineError) -> str | None:
    """The key path a line's error names (a key named twice), dotted, or None."""
    path = getattr(error, "path", None)
    return ".".join(path) if path else None


def error_observed(error: MalformedLineError) -> str | None:
    """What a line set aside holds, when it is JSON but not an object (``list``)."""
    return type(error.value).__name__ if isinstance(error, NotARecordLineError) else None


def make_plan(
    schema: Struct, obs: Observed, options: Options, batch: int = 0, last_assigned: int = 0,
    *, seen: Profile | None = None,
) -> Plan:
    """The plan of one batch under the configured policy: the ``upsolver`` one (RULES 2-4) or
    the ``widen`` one (RULES 5). ``obs`` is an observation or a Spark summary of one;
    ``last_assigned`` the table's last assigned field ID (new IDs come after it); ``seen``
    the batch's profile (reasons then say where a new field starts in the batch). A hinted
    field without a column gets one of the hint's type first (docs/rules.md, Type hints).

    The values the field contracts refuse (``options.contracts``, docs/rules.md) take no
    part in planning: the plan lists them in ``held``, and routing deals with them."""
    last_id = max(max_field_id(schema), last_assigned)
    seeds, adds = seeded(schema, obs, options, last_id)
    policy = options.policy
    held = contract_breaches(
        seeds, obs, options.contracts or Contracts(), policy.widens, options.lattice)
    planned = obs if not held else without_breaches(obs, held)
    plan = policy.plan(seeds, planned, options, batch, last_id + len(adds), seen=seen)
    if held:
        plan = dataclasses.replace(plan, held=held)
    return with_seeds(plan, schema, adds, last_id)


def simulate_batches(
    batches: Iterable[Iterable[Mapping[str, Any]]],
    schema: Struct | None = None,
    options: Options | None = None,
    identifier_ids: Sequence[int] = (),
) -> Run:
    """Run batches through the engine in memory (no Spark, no catalog); ``identifier_ids``
    are the starting schema's identifier fields (a batch that would change one is refused,
    :class:`~toolkit.errors.OperationError`)."""
    return Engine(options, identifier_ids).run(batches, schema)


def rewritten_ids(plans: Iterable[Plan]) -> dict[int, int]:
    """For each field a rewrite created, the ID of the field it replaced (a field rewritten
    twice reads values written under any ID of the chain: see :func:`written_as`)."""
    return {r.new_id: r.column_id for p in plans for r in p.rewrites if r.new_id is not None}


def written_as(field_id: int, present: Mapping[int, V], rewritten: Mapping[int, int]) -> V | None:
    """``present[i]`` for the first ``i`` in ``field_id``'s chain of rewrites, or None."""
    i: int | None = field_id
    while i is not None:
        if i in present:
            return present[i]
        i = rewritten.get(i)
    return None


def read_rows(
    schema: Struct, batches: Iterable[RoutedBatch], rewritten: Mapping[int, int] | None = None
) -> list[dict[str, Any]]:
    """Rows of every batch under the final schema: columns matched by field ID, those added
    after a batch read as null in it, as any Iceberg reader does; a rewritten column reads
    the rewritten values of the column it replaced (``rewritten``: new ID -> old ID)."""
    parts = list(batches)
    total = sum(b.size for b in parts)
    rewritten = rewritten or {}
    # each batch's column positions by field ID, once (not once per column: 5,000 columns)
    indexes = [{c.id: i for i, c in enumerate(b.schema.fields)} for b in parts]
    columns: list[list[Any] | None] = []
    for col in schema.fields:
        values: list[Any] = []
        seen = False
        for b, idx in zip(parts, indexes, strict=True):
            i = written_as(col.id, idx, rewritten)
            vals = None if i is None else b.columns[i]
            if vals is None:
                values.extend(repeat(None, b.size))
                continue
            seen = True
            old = b.schema.fields[i].type  # type: ignore[index]
            values.extend(
                vals if old == col.type else (conform(v, old, col.type, rewritten) for v in vals)
            )
        columns.append(values if seen else None)
    return rows_of(schema, columns, total)
