"""Conversion warnings: values a batch wrote only as another kind of value (issue #28).

RULES 2-3 convert a value into every column of its family that holds it exactly; a value
whose own type has a column is also written there, and nothing is lost. A value whose
family has no column of its own type is written *only* converted, and when the conversion
crosses kinds (a boolean into a number, a number into text, a long into a timestamp, a
time into a number) a reader can no longer tell it from the values it joined:
``SUM(quantity)`` counts ``true`` as 1. Such values are counted per field and batch and
told as a warning line, with the contract that refuses them. Exactness is not in question
(the conversion is exact, RULES 2); the meaning is.

Not warned: conversions within a kind (long -> double, int -> long, date -> timestamp),
and dates and timestamps written as text: they arrived as text (RULES 1 detects them), so
the text is the very value sent.

>>> from toolkit.core.engine import simulate_batches
>>> run = simulate_batches([[{"quantity": 2}], [{"quantity": True}] * 3 + [{"quantity": 5}]])
>>> print(*conversion_warnings(run.plans[1], run.profile))
quantity: 3 booleans were written as numbers (true -> 1); a contract `quantity=freeze` \
refuses them
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any, Final, cast

from toolkit.core.batch.hint_plans import lattice_view
from toolkit.core.batch.options import Options
from toolkit.core.batch.profile import Profile
from toolkit.core.batch.profile import profile as profile_of_records
from toolkit.core.batch.quarantine import SET_ASIDE_AFTER_READING, Quarantined
from toolkit.core.evolution.batch_plan import Plan
from toolkit.core.policies.widen import accepted, primary_columns
from toolkit.core.values.conversions import (
    LOSSY,
    Conversions,
    decimal_text,
    render_double,
    render_timestamp,
)
from toolkit.core.values.families import families, receives
from toolkit.core.values.jsonlines import parse_record
from toolkit.core.values.kinds import crosses, kind_of_type
from toolkit.core.values.lattice import UPSOLVER, Lattice
from toolkit.core.values.types import RECORD, Column, Kind, Shape, Struct, TypeName
from toolkit.core.values.widening import matrix_name
from toolkit.core.values.wording import clip, shape_words
from toolkit.errors import MalformedLineError

__all__ = [
    "BatchWarning", "ConversionWarning", "HintedConversion", "LeafConversion", "UnwrittenRecords",
    "conversion_warnings", "kind_of_type",
]

#: the widest a value of an example is shown (it comes from data: clipped)
_EXAMPLE_WIDTH: Final = 40
#: the words of each kind, singular
_ONE: Final[dict[str, str]] = {"boolean": "boolean", "number": "number", "time": "timestamp"}
#: the words of each kind, plural
_WORDS: Final[dict[str, str]] = {
    "boolean": "booleans", "number": "numbers", "text": "text", "time": "timestamps",
}
#: the words of each kind as the leaves of a list
_IN_LISTS: Final[dict[str, str]] = {**_WORDS, "text": "texts"}


@dataclass(frozen=True)
class ConversionWarning:
    """``count`` values of field ``path`` arriving as ``observed`` that batch ``batch``
    wrote only as ``written`` (in column ``column``)."""

    path: tuple[str, ...]
    batch: int
    count: int
    observed: Shape
    written: str
    column: str
    #: the batch's first such value as it came and as it was written (``12.5 -> "12.5"``),
    #: shown as JSON-escaped ASCII: it comes from data; empty when not known
    example: str = ""

    @property
    def field(self) -> str:
        return ".".join(self.path)

    def __str__(self) -> str:
        one = self.count == 1
        if self.observed.dim:  # [true] into a list of longs: a list of numbers
            went = kind_of_type(self.written)
            assert went is not None
            into = f"{'a list' if one else 'lists'} of {_IN_LISTS[went]}"
        else:
            into = _written_as(self.written, one)
        example = f" ({self.example})" if self.example else ""
        return (f"{self.field}: {self.count:,} {shape_words(self.observed, many=not one)} "
                f"{'was' if one else 'were'} written as {into}{example}; "
                f"a contract `{self.field}=freeze` refuses {'it' if one else 'them'}")


@dataclass(frozen=True)
class UnwrittenRecords:
    """``count`` records of batch ``batch`` that were not written: the table has no column
    (every value so far was null or an empty record), and a row needs one."""

    batch: int
    count: int

    def __str__(self) -> str:
        one = self.count == 1
        return (f"{self.count:,} {'record was' if one else 'records were'} not written to "
                "the table: it has no column yet, as every value so far was null or an empty "
                "record, which makes no column (RULES 3.5), and a row needs a column to be "
                "written (any record set aside is in the quarantine)")


def _written_as(written: str, one: bool) -> str:
    """What values written as type ``written`` became, in words: "a number", "numbers",
    "text" (one value, or several)."""
    went = kind_of_type(written)
    assert went is not None
    return "text" if went == "text" else _WORDS[went] if not one else f"a {_ONE[went]}"


@dataclass(frozen=True)
class HintedConversion:
    """``count`` values of top-level field ``field`` arriving as ``came`` that a type hint
    (``hint``, as given) converted into ``written`` before batch ``batch`` was observed
    (docs/rules.md, Type hints): the profile sees them as written, so only the hint's
    tally knows what they were."""

    field: str
    batch: int
    count: int
    came: str
    written: str
    hint: str
    #: the batch's first such value as it came and as it was written (see
    #: :attr:`ConversionWarning.example`)
    example: str = ""

    @property
    def path(self) -> tuple[str, ...]:
        return (self.field,)

    def __str__(self) -> str:
        one = self.count == 1
        into = _written_as(self.written, one)
        example = f" ({self.example})" if self.example else ""
        came = shape_words(Shape(cast(TypeName, self.came), 0), many=not one)
        return (f"{self.field}: {self.count:,} {came} "
                f"{'was' if one else 'were'} written as {into}{example} by the hint "
                f"`{self.field}={self.hint}`")


@dataclass(frozen=True)
class LeafConversion:
    """``count`` leaves of type ``leaf`` in arrays of field ``path`` (arrays whose leaves
    are of several types, RULES 1) that batch ``batch`` wrote only as ``written``, the
    element type of column ``column``: ``[1, 1.1, true]`` is a list of doubles, its
    ``true`` written 1.0."""

    path: tuple[str, ...]
    batch: int
    count: int
    leaf: str
    written: str
    column: str

    @property
    def field(self) -> str:
        return ".".join(self.path)

    def __str__(self) -> str:
        one = self.count == 1
        into = _written_as(self.written, one)
        leaf = shape_words(Shape(cast(TypeName, self.leaf), 0), many=not one)
        return (f"{self.field}: {self.count:,} {leaf} inside lists {'was' if one else 'were'} "
                f"written as {into}")


#: what a batch's warnings tell: values written only converted (by the rules, or by a
#: type hint; leaves of lists too), records not written
BatchWarning = ConversionWarning | HintedConversion | LeafConversion | UnwrittenRecords


def conversion_warnings(
    plan: Plan, profile: Profile, options: Options | None = None,
    aside: Sequence[Quarantined] = (),
) -> list[BatchWarning]:
    """The values batch ``plan.batch`` (as ``profile`` counted it) wrote only across kinds
    into the schema ``plan.after``, per field and observed type, by path. Top-level fields
    and fields nested in records (a record column's struct). A batch that leaves the table
    without a column wrote none of its records: that is said instead.

    >>> from toolkit.core.engine import simulate_batches
    >>> print(*simulate_batches([[{"a": None}, {}]]).warnings)
    2 records were not written to the table: it has no column yet, as every value so far \
was null or an empty record, which makes no column (RULES 3.5), and a row needs a column \
to be written (any record set aside is in the quarantine)
    """
    if not plan.after.fields:
        # RULES 3.5 makes no column for nulls, and no data file holds a row of no column
        # (Parquet refuses an empty schema): the records are not written, on Spark as here
        return [UnwrittenRecords(plan.batch, profile.records)] if profile.records else []
    opts = options or Options()
    counts: Mapping[tuple[str, ...], Mapping[Shape, int]] = {
        path: s.by_batch.get(plan.batch, {}) for path, s in profile.fields.items()}
    # records set aside whole after they were read: none of their values was written (and
    # the profile's first value of such a type may be theirs: no example is shown then)
    less = _aside_counts(aside, plan.batch, opts) if aside else {}
    if less:
        counts = _minus(counts, less)
    widen = opts.policy.widens
    lattice = opts.lattice if not widen else UPSOLVER
    samples = {path: s.samples for path, s in profile.fields.items()}
    # a hinted decimal column is the decimal column evolution creates, as the upsolver
    # policy plans and routes it: its values are written there as themselves
    after = plan.after if widen else lattice_view(plan.after, opts)
    # values a contract refuses are set aside or fail the batch: not written, not warned
    refused = {((b.key,), k.shape) for b in plan.held for k in b.kinds}
    found = _warnings(after, (), counts, plan.batch, lattice, widen)
    converted: list[BatchWarning] = [
        w if less.get(w.path, {}).get(w.observed) else
        _with_example(w, samples.get(w.path, {}), opts.conversions) for w in found
        if (w.path, w.observed) not in refused]
    converted += _hinted(profile, plan.batch)
    leaves = {path: s.leaves.get(plan.batch, {}) for path, s in profile.fields.items()
              if s.leaves}
    if leaves:
        converted += _leaf_warnings(after, (), leaves, plan.batch, lattice, widen)
    return sorted(converted, key=_order)


def _aside_counts(
    aside: Sequence[Quarantined], batch: int, options: Options
) -> dict[tuple[str, ...], dict[Shape, int]]:
    """The values of the records in ``aside`` set aside whole after reading, per field and
    shape, as the batch's profile counts them (a record kept as its line is read again,
    as the reader read it)."""
    records = []
    for q in aside:
        if q.reason not in SET_ASIDE_AFTER_READING:
            continue
        if isinstance(q.record, dict):
            records.append(q.record)
        elif isinstance(q.record, str | bytes):
            try:
                records.append(parse_record(q.record))
            except MalformedLineError:
                continue  # not profiled either
    if not records:
        return {}
    seen = profile_of_records(records, batch=batch, options=options)
    return {path: dict(s.by_batch.get(batch, {})) for path, s in seen.fields.items()}


def _minus(
    counts: Mapping[tuple[str, ...], Mapping[Shape, int]],
    less: Mapping[tuple[str, ...], Mapping[Shape, int]],
) -> dict[tuple[str, ...], dict[Shape, int]]:
    return {path: {shape: n - less.get(path, {}).get(shape, 0) for shape, n in c.items()}
            for path, c in counts.items()}


def _order(w: BatchWarning) -> tuple[tuple[str, ...], str]:
    if isinstance(w, ConversionWarning):
        return w.path, str(w.observed)
    if isinstance(w, HintedConversion):
        return w.path, w.came
    if isinstance(w, LeafConversion):
        return w.path, f"~{w.leaf}"  # after the field's values
    return (), ""


def _leaf_warnings(
    struct: Struct, prefix: tuple[str, ...],
    leaves: Mapping[tuple[str, ...], Mapping[tuple[Shape, str], int]],
    batch: int, lattice: Lattice, widen: bool,
) -> Iterator[LeafConversion]:
    """The leaves of arrays of several leaf types written only across kinds: each leaf
    lands converted in every column its array goes to (none has the leaf's own type, as
    the array's widest type is another), the narrowest of them telling it best."""
    primary = primary_columns(struct) if widen else {}
    for key, members in families(struct).items():
        path = (*prefix, key)
        found: dict[tuple[str, str, str], int] = {}
        for (shape, leaf), n in leaves.get(path, {}).items():
            elem = shape.mixed if shape.type == RECORD else shape.type
            if elem is None or elem == leaf:
                continue
            kind = Kind(elem, shape.dim)
            if widen:
                target = primary.get(key)
                if target is None or target.shape.type is None or accepted(
                        elem, matrix_name(target.shape.type)) is None:
                    continue  # set aside, not written (RULES 5)
            else:
                taking = [c for c in members if receives(lattice, kind, c)
                          and c.shape.type is not None]
                taking.sort(key=lambda c: (-len(lattice.up(c.shape.type or "")),
                                           c.shape.dim, c.name))
                if not taking:
                    continue
                target = taking[0]
            written = target.shape.type
            assert written is not None
            if crosses(leaf, written):
                k = (leaf, written, target.name)
                found[k] = found.get(k, 0) + n
        for (leaf_type, into, column), n in found.items():
            yield LeafConversion(path, batch, n, leaf_type, into, column)
        for col in members:  # RULES 3.4: nested fields, inside their record columns
            if isinstance(col.leaf, Struct):
                yield from _leaf_warnings(col.leaf, path, leaves, batch, lattice, widen)


def _hinted(profile: Profile, batch: int) -> Iterator[HintedConversion]:
    """The values type hints converted across kinds in ``batch`` (``true`` into a double:
    1.0), which the profile counts as written: the hint's tally says what they were."""
    for path, stats in profile.fields.items():
        for (came, written, hint), (n, first, went) in stats.hinted.get(batch, {}).items():
            if crosses(came, written):
                yield HintedConversion(path[0], batch, n, came, written, hint,
                                       f"{_shown(first)} -> {_shown(went)}")


def _warnings(
    struct: Struct, prefix: tuple[str, ...], counts: Mapping[tuple[str, ...], Mapping[Shape, int]],
    batch: int, lattice: Lattice, widen: bool,
) -> Iterator[ConversionWarning]:
    primary = primary_columns(struct) if widen else {}
    for key, members in families(struct).items():
        path = (*prefix, key)
        for shape, n in counts.get(path, {}).items():
            if not n or shape.type in (None, RECORD) or shape.mixed is not None:
                continue
            target = primary.get(key) if widen else _upsolver_target(lattice, shape, members)
            if target is None or target.shape.type is None:
                continue
            written = target.shape.type
            if widen and accepted(shape.type, matrix_name(written)) is None:
                continue  # set aside, not written (RULES 5)
            if crosses(shape.type, written):
                yield ConversionWarning(path, batch, n, shape, written, target.name)
        for col in members:  # RULES 3.4: nested fields, inside their record columns
            leaf = col.leaf
            if isinstance(leaf, Struct):
                yield from _warnings(leaf, path, counts, batch, lattice, widen)


def _with_example(
    warning: ConversionWarning, samples: Mapping[Shape, tuple[Any, ...]],
    conversions: Conversions,
) -> ConversionWarning:
    """``warning`` with its example: the first value of its type the profile sampled (the
    batch's first), as it came and converted into the written type (RULES 2's conversion,
    the one routing makes). None when the profile has no plain value of it (an array's
    sample is a summary) or the written type is not one RULES 2 converts to."""
    first = samples.get(warning.observed, ())
    if not first or warning.observed.dim or warning.observed.type is None:
        return warning
    value = first[0]
    try:
        written = conversions.convert(value, warning.observed.type, warning.written)
    except (TypeError, ValueError):
        return warning
    if written is LOSSY or written is None:
        return warning
    came = value if type(value) is str else conversions.own(value, warning.observed.type)
    example = f"{_shown(came)} -> {_shown(written)}"
    return replace(warning, example=example)


def _shown(value: Any) -> str:
    """A value of data as the warning shows it: JSON, ASCII only (no control character,
    no terminal escape reaches a screen), a time as its ISO text, clipped."""
    if isinstance(value, dt.datetime):
        text = render_timestamp(value)
    elif isinstance(value, dt.date):
        text = value.isoformat()
    elif type(value) is float:
        text = render_double(value)
    elif isinstance(value, Decimal):
        text = decimal_text(value)
    else:
        text = json.dumps(value[:_EXAMPLE_WIDTH] if type(value) is str else value,
                          ensure_ascii=True, default=str)
    return clip(text, _EXAMPLE_WIDTH)


def _upsolver_target(lattice: Lattice, shape: Shape, members: list[Column]) -> Column | None:
    """RULES 3.1: the column a value of ``shape`` is written to as itself, else None when
    its own type has a column; else the narrowest column receiving it (None: none)."""
    if any(c.shape.type == shape.type and c.shape.dim >= shape.dim for c in members):
        return None  # also written as itself: a reader finds it in its own column
    kind = Kind(shape.type, shape.dim)
    taking = [c for c in members if receives(lattice, kind, c) and c.shape.type is not None]
    # the narrowest first: the type reaching the most others
    taking.sort(key=lambda c: (-len(lattice.up(c.shape.type or "")), c.shape.dim, c.name))
    return taking[0] if taking else None
