"""What each evolution policy would do with one sample, side by side, as data.

Every number comes from :func:`toolkit.simulate` run on the sample under each policy,
each labelled by the name ``policy=`` takes: the ``upsolver`` policy (suffixed columns,
RULES 2-4), the ``widen`` policy with rewrites approved, and without them (RULES 5);
given a rare-type threshold (``rare_type_percent``), the ``upsolver`` policy with it too,
as its own column right after the one without it (:func:`rare_type_setup`). Pure: no
widget, no
Spark; the HTML (:mod:`toolkit.notebook.panels.policies.html`) and the text table are
renderings of the model.

>>> day1 = [{"n": 1, "flag": True}]
>>> day2 = [{"n": 2.5, "flag": "maybe"}]
>>> c = policy_comparison([day1, day2])
>>> [(o.key, len(o.columns_added), o.values_converted, o.quarantined) for o in c.outcomes]
[('upsolver', 4, 0, 0), ('widen', 2, 1, 1), ('widen-no-rewrites', 2, 0, 1)]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from pyiceberg.table import Table as PyIcebergTable

from toolkit.core.batch.observe import Classifier
from toolkit.core.batch.options import (
    Options,
    checked_rare_type_percent,
    make_options,
)
from toolkit.core.batch.quarantine import reason_words
from toolkit.core.engine import Run, simulate_batches
from toolkit.core.policies import POLICIES, EvolutionPolicy
from toolkit.core.policies.widen import primary_columns
from toolkit.core.values.families import families
from toolkit.core.values.types import RECORD, Column, Kind, Shape, Struct
from toolkit.core.values.wording import batch_number, counted
from toolkit.iceberg.schema import from_iceberg, to_iceberg
from toolkit.pipeline.sources import source_kind

if TYPE_CHECKING:
    from pyiceberg.schema import Schema


__all__ = [
    "POLICY_SETUPS",
    "PolicyComparison",
    "PolicyOutcome",
    "PolicySetup",
    "policy_comparison",
    "policy_setups",
    "rare_type_setup",
]


@dataclass(frozen=True)
class PolicySetup:
    """One policy to compare: a key, a label, and the options it runs with."""

    key: str
    label: str
    options: Mapping[str, Any]


def policy_setups(percent: float | None = None) -> tuple[PolicySetup, ...]:
    """Each column of the comparison: every registered policy as it declares it runs
    (``EvolutionPolicy.comparison``), labelled by the name ``policy=`` takes; given a
    rare-type threshold, each policy that takes one with it too, right after its first."""
    setups: list[PolicySetup] = []
    for policy in POLICIES:
        runs = [PolicySetup(r.key, r.label, {"policy": policy.name, **r.options})
                for r in policy.comparison]
        if percent is not None and policy.takes_rare_type_threshold:
            runs.insert(1, rare_type_setup(percent, policy))
        setups += runs
    return tuple(setups)


def rare_type_setup(percent: float, policy: EvolutionPolicy | None = None) -> PolicySetup:
    """A policy with its rare-type threshold (the first that takes one unless given): the
    comparison's extra column when ``rare_type_percent`` is given.

    >>> rare_type_setup(1).label
    'upsolver, rare types (<1%) set aside'
    """
    if policy is None:
        policy = next(p for p in POLICIES if p.takes_rare_type_threshold)
    return PolicySetup(
        f"{policy.name}-rare", f"{policy.name}, rare types (<{percent:g}%) set aside",
        {"policy": policy.name, "rare_type_percent": percent},
    )


#: each column of the comparison without a rare-type threshold (:func:`policy_setups`)
POLICY_SETUPS: Final = policy_setups()


@dataclass(frozen=True)
class PolicyOutcome:
    """What one policy made of the sample (all counts over every batch)."""

    key: str
    label: str
    columns_added: tuple[str, ...]
    """Dotted paths of the columns the plans add, nested ones included."""
    widened_in_place: tuple[str, ...]
    """``path: before -> after`` of each in-place widening."""
    rewrites: tuple[str, ...]
    """Widenings that rewrite the column's data (they run: approved)."""
    pending: tuple[str, ...]
    """Rewrites the data needs but that are not approved: its records are set aside."""
    made_optional: tuple[str, ...]
    records: int
    records_written: int
    values: int
    """Values written (non-null leaves and arrays of the records written)."""
    values_converted: int
    """Values no column holds in the type they were observed as (``4`` stored as ``4.0``
    or ``"4"``; a value also copied into a wider column but kept as it came is not)."""
    quarantined: int
    quarantined_by_reason: tuple[tuple[str, int], ...]
    schema: str
    """The table schema after the sample, as text."""
    plans: tuple[str, ...]
    """Each batch's plan, as text."""
    rare_type_percent: float | None = None
    """The rare-type threshold it ran with, in percent (None: off)."""
    rare_types: tuple[str, ...] = ()
    """Each rare type set aside instead of evolving the schema, in words: batch, field,
    type, how many of the field's values."""

    @property
    def rewrites_needed(self) -> int:
        """Rewrites the sample needs: run (approved) or awaiting approval."""
        return len(self.rewrites) + len(self.pending)


@dataclass(frozen=True)
class PolicyComparison:
    """The outcomes of every policy on one sample, in :data:`POLICY_SETUPS` order (with
    the rare-type variant second, when a threshold was given)."""

    records: int
    batches: int
    table: str | None
    """The starting table's name, when the comparison started from a table."""
    outcomes: tuple[PolicyOutcome, ...]
    table_rows: int | None = None
    """Rows (and bytes) of the starting table's current snapshot: what each rewrite of one
    of its columns touches."""
    table_bytes: int | None = None

    def outcome(self, key: str) -> PolicyOutcome:
        for o in self.outcomes:
            if o.key == key:
                return o
        raise KeyError(f"no policy {key!r} (policies: {', '.join(o.key for o in self.outcomes)})")

    def rows(self) -> list[tuple[str, tuple[str, ...]]]:
        """The side-by-side table: a measure, then one cell per policy."""
        def cell(n: int, items: Sequence[str] = ()) -> str:
            return f"{n:,}" if not items else f"{n:,}: {', '.join(items)}"

        cost = ""
        if self.table_rows is not None:
            cost = f" (each touches {self.table_rows:,} rows, {self.table_bytes or 0:,} bytes)"
        out = [
            ("columns added", tuple(cell(len(o.columns_added), o.columns_added)
                                    for o in self.outcomes)),
            ("widened in place", tuple(cell(len(o.widened_in_place), o.widened_in_place)
                                       for o in self.outcomes)),
            ("rewrites needed" + cost, tuple(
                cell(len(o.rewrites), o.rewrites) if not o.pending
                else f"{len(o.pending):,} not approved (records set aside): {', '.join(o.pending)}"
                for o in self.outcomes
            )),
            ("made optional", tuple(cell(len(o.made_optional), o.made_optional)
                                    for o in self.outcomes)),
            ("values converted", tuple(f"{o.values_converted:,} of {o.values:,}"
                                       for o in self.outcomes)),
            ("records written", tuple(f"{o.records_written:,} of {o.records:,}"
                                      for o in self.outcomes)),
            ("records quarantined", tuple(_set_aside(o) for o in self.outcomes)),
        ]
        if any(o.rare_type_percent is not None for o in self.outcomes):
            out.append(("rare types set aside", tuple(
                "threshold off" if o.rare_type_percent is None
                else cell(len(o.rare_types), o.rare_types)
                for o in self.outcomes
            )))
        return out

    def __str__(self) -> str:
        head = ("", *(o.label for o in self.outcomes))
        body = [(name, *cells) for name, cells in self.rows()]
        widths = [max(len(r[i]) for r in (head, *body)) for i in range(len(head))]
        lines = [
            "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
            for r in (head, *body)
        ]
        where = f" against {self.table}" if self.table else ""
        said = f"{counted(self.records, 'record')} in {counted(self.batches, 'batch')}{where}"
        return f"{said}\n" + "\n".join(lines)


def _set_aside(o: PolicyOutcome) -> str:
    """The records a policy set aside, counted per reason in words: ``0``,
    ``3 records: a value needs a column rewrite nobody approved``, or with several
    reasons the total first, as the other rows lead with theirs.

    >>> c = policy_comparison([[{"n": 1, "f": True}], [{"n": "x"}, {"f": "maybe"}, {"f": "no"}]])
    >>> _set_aside(c.outcome("upsolver"))
    '0'
    >>> _set_aside(c.outcome("widen"))
    '2 records: a value its column cannot take, even widened'
    >>> for part in _set_aside(c.outcome("widen-no-rewrites")).split("; "):
    ...     print(part)
    3 records — 2: a value its column cannot take, even widened
    1: a value needs a column rewrite nobody approved
    """
    if not o.quarantined_by_reason:
        return f"{o.quarantined:,}"
    if len(o.quarantined_by_reason) == 1:
        [(reason, n)] = o.quarantined_by_reason
        return f"{counted(n, 'record')}: {reason_words(reason)}"
    return f"{counted(o.quarantined, 'record')} — " + "; ".join(
        f"{n:,}: {reason_words(reason)}" for reason, n in o.quarantined_by_reason)


# --- the sample and the starting schema ----------------------------------------------------


def policy_comparison(
    sample: Iterable[Any],
    schema: PyIcebergTable | Schema | Struct | None = None,
    **options: Any,
) -> PolicyComparison:
    """Run ``sample`` (records, or batches of records) through each policy of
    :data:`POLICY_SETUPS`, from ``schema`` (a PyIceberg table or schema, or None: a new
    table); ``options`` (``detect_dates``...) apply to all of them."""
    for taken in ("policy", "allow_rewrites"):
        if taken in options:
            raise ValueError(f"{taken}= is what the comparison varies; leave it out")
    # a rare-type threshold is a policy's own: its own column, beside the policy without it
    percent = checked_rare_type_percent(options.pop("rare_type_percent", None))
    setups = policy_setups(percent)
    batches = source_kind(sample).records(sample)  # any source, batch by batch
    table_name: str | None = None
    rows: int | None = None
    size: int | None = None
    start: Struct
    if schema is None:
        start = Struct()
    elif isinstance(schema, Struct):
        start = schema
    elif isinstance(schema, PyIcebergTable):
        from toolkit.iceberg.operations import rewrite_cost

        schema.refresh()
        start = from_iceberg(schema.schema())
        table_name = ".".join(schema.name())
        rows, size = rewrite_cost(schema)
    else:
        start = from_iceberg(schema)
    outcomes = []
    for setup in setups:
        opts = {**options, **setup.options}
        # what toolkit.simulate runs (the panel's numbers are the simulation's)
        run = simulate_batches(batches, start, make_options(**opts))
        outcomes.append(_outcome(setup, batches, run, make_options(**opts)))
    return PolicyComparison(
        sum(len(b) for b in batches), len(batches), table_name, tuple(outcomes), rows, size
    )


def _outcome(
    setup: PolicySetup, batches: list[list[Any]], sim: Run, options: Options
) -> PolicyOutcome:
    plans = sim.plans
    aside = {id(q.record) for q in sim.quarantined}
    written = [r for b in batches for r in b if isinstance(r, Mapping) and id(r) not in aside]
    rows = sim.rows
    assert len(rows) == len(written), "every record is written or set aside"
    schema = sim.schema
    counter = _Converted(Classifier(options), widen=options.policy.widens)
    for record, row in zip(written, rows, strict=True):
        counter.record(record, row, schema, ())
    by_reason: dict[str, int] = {}
    for q in sim.quarantined:
        by_reason[q.reason] = by_reason.get(q.reason, 0) + 1
    pending: dict[tuple[str, ...], str] = {}
    for p in plans:
        for r in p.pending:
            pending.setdefault(r.path, f"{'.'.join(r.path)}: {r.before} -> {r.after}")
    return PolicyOutcome(
        setup.key,
        setup.label,
        tuple(".".join(c.path) for p in plans for c in p.changes),
        tuple(f"{'.'.join(r.path)}: {r.before} -> {r.after}"
              for p in plans for r in p.retypes if r.in_place),
        tuple(f"{'.'.join(r.path)}: {r.before} -> {r.after}" for p in plans for r in p.rewrites),
        tuple(pending.values()),
        tuple(".".join(m.path) for p in plans for m in p.optionals),
        sum(len(b) for b in batches),
        len(written),
        counter.values,
        counter.converted,
        len(sim.quarantined),
        tuple(sorted(by_reason.items(), key=lambda kv: (-kv[1], kv[0]))),
        str(to_iceberg(sim.schema)),
        tuple(str(p) for p in plans),
        options.rare_type_percent,
        tuple(
            f"batch {batch_number(p.batch)}: {r.key} as {r.shape} "
            f"({r.count:,} of {r.total:,} values)"
            for p in plans for r in p.rare
        ),
    )


class _Converted:
    """Counts the values of written records, and those no column holds in their type."""

    def __init__(self, classifier: Classifier, *, widen: bool) -> None:
        self.classifier = classifier
        self.widen = widen
        self.values = 0
        self.converted = 0
        # each struct's columns by key, indexed once: indexing it again for every key made
        # a sample of 5,000 fields quadratic (the struct is kept, so its id is not reused)
        self._index: dict[int, tuple[Struct, dict[str, list[Column]]]] = {}

    def _columns(self, struct: Struct, key: str) -> list[Column]:
        held = self._index.get(id(struct))
        if held is None:
            held = self._index[id(struct)] = (struct, self._by_key(struct))
        return held[1].get(key, [])

    def _by_key(self, struct: Struct) -> dict[str, list[Column]]:
        if self.widen:  # RULES 5: one column per key
            return {key: [col] for key, col in primary_columns(struct).items()}
        return dict(families(struct))  # RULES 3.1: every column of its family

    def _shape(self, value: Any, path: tuple[str, ...]) -> Shape | None:
        try:
            kind: Kind | None = self.classifier.kind(value, path)
        except (TypeError, ValueError):  # a stored type JSON has no kind for (decimal...)
            return None
        return None if kind is None else kind.shape

    def record(
        self, record: Mapping[str, Any], row: Mapping[str, Any], struct: Struct,
        path: tuple[str, ...],
    ) -> None:
        for key, value in record.items():
            if value is None:
                continue
            where = (*path, key)
            stored = [
                (c, row[c.name]) for c in self._columns(struct, key) if row.get(c.name) is not None
            ]
            if not stored:
                continue  # written nowhere: an empty record (no column yet, RULES 3.5)
            shape = self._shape(value, where)
            if shape == Shape(RECORD, 0):
                inner = [
                    (c, s) for c, s in stored if isinstance(c.type, Struct) and isinstance(s, dict)
                ]
                if inner:
                    col, nested = inner[0]
                    assert isinstance(col.type, Struct)
                    self.record(value, nested, col.type, where)
                    continue
            self.values += 1
            if not any(self._shape(s, where) == shape for _, s in stored):
                self.converted += 1
