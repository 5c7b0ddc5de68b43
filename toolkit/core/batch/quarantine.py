"""Records the engine will not write as they are, kept whole with the reason (RULES 5).

A record goes to quarantine when one of its values is incompatible with the table under
the ``widen`` policy, when it needs a rewrite nobody approved, when one of its values has
a type under the ``upsolver`` policy's rare-type threshold, or when it is not a record
at all (a malformed JSON line, a JSON array, nesting too deep to walk). Nothing is dropped:
the raw record travels with the field, the observed type and the batch, so it can be
inspected and replayed once a plan accepts it.

>>> q = Quarantined({"n": "x"}, "incompatible", "n", "string", "boolean", 0, "…")
>>> q.raw
'{"n":"x"}'
"""

from __future__ import annotations

import base64
import datetime as dt
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final, Literal, NamedTuple, TypeAlias, cast, get_args

from toolkit.core.values.conversions import render_json
from toolkit.core.values.jsonlines import parse_line
from toolkit.core.values.types import ListOf, Struct
from toolkit.core.values.wording import counted
from toolkit.errors import IncompatibleRecordError, UnknownIdsError

#: Why a record was quarantined.
Reason: TypeAlias = Literal[
    "incompatible",  # a value the widening matrix (RULES 5) marks X for its column
    "rewrite-not-approved",  # accepting the value needs a column rewrite not yet approved
    "malformed",  # a line that is not valid JSON
    "not-utf8",  # a line whose bytes are not UTF-8 text (kept as its bytes)
    "duplicate-key",  # a JSON object naming one key twice (docs/rules.md)
    "not-a-record",  # valid JSON that is not an object
    "invalid-value",  # a value the engine cannot type or store (too deep, NaN...)
    "rare-type",  # a type under the upsolver policy's rare-type threshold (docs/rules.md)
    "contract",  # a discard_row contract set the record aside (docs/rules.md, Contracts)
    "contract-value",  # a discard_value contract took the value out; the rest was written
    "missing-required",  # leaves a field the table requires empty (toolkit.core.batch.required)
]
REASONS: tuple[Reason, ...] = get_args(Reason)


class ReasonTerms(NamedTuple):
    """How texts name one reason. The key stays what data, JSON and the quarantine table
    hold, and what ``reason=`` / ``--reason`` filter by."""

    #: a short name, where a line has little room: a group's label in a selector
    #: ("incompatible type: flag (string into boolean)"), counts in parentheses
    name: str
    #: the reason in a phrase that reads after a count ("3 records: a value needs a column
    #: rewrite nobody approved")
    words: str


#: Every reason in words: the one place a face takes them from.
REASON_TERMS: Final[dict[Reason, ReasonTerms]] = {
    "incompatible": ReasonTerms(
        "incompatible type", "a value its column cannot take, even widened"),
    "rewrite-not-approved": ReasonTerms(
        "rewrite not approved", "a value needs a column rewrite nobody approved"),
    "malformed": ReasonTerms("not valid JSON", "a line that is not valid JSON"),
    "not-utf8": ReasonTerms("undecodable bytes", "a line whose bytes are not UTF-8 text"),
    "duplicate-key": ReasonTerms("duplicate key", "a JSON object that names a key twice"),
    "not-a-record": ReasonTerms("not a JSON object", "JSON that is not an object"),
    "invalid-value": ReasonTerms(
        "value cannot be stored", "a value that cannot be typed or stored"),
    "rare-type": ReasonTerms("rare type", "a value of a type under the rare-type threshold"),
    "contract": ReasonTerms("refused by contract", "a value its field's contract refuses"),
    "contract-value": ReasonTerms(
        "value taken out by contract",
        "a value its field's contract refuses, taken out of a record written without it"),
    "missing-required": ReasonTerms(
        "required field empty", "a record that leaves a field the table requires empty"),
}
REASON_WORDS: Final[dict[Reason, str]] = {k: t.words for k, t in REASON_TERMS.items()}
REASON_NAMES: Final[dict[Reason, str]] = {k: t.name for k, t in REASON_TERMS.items()}


def reason_words(reason: str) -> str:
    """A reason key in plain words; an unknown key (a quarantine table written by another
    version) as it is.

    >>> reason_words("rewrite-not-approved"), reason_words("gone-missing")
    ('a value needs a column rewrite nobody approved', 'gone-missing')
    """
    return REASON_WORDS.get(cast(Reason, reason), reason)


def reason_name(reason: str) -> str:
    """A reason key as a short name; an unknown key as it is.

    >>> reason_name("not-a-record"), reason_name("gone-missing")
    ('not a JSON object', 'gone-missing')
    """
    return REASON_NAMES.get(cast(Reason, reason), reason)


def types_text(observed: str | None, table_type: str | None) -> str | None:
    """The type a value arrived as and its column's, as far as they are known (None when
    neither is).

    >>> types_text("string", "boolean"), types_text("list", None), types_text(None, "long")
    ('string into boolean', 'list', 'into long')
    """
    if observed is not None and table_type is not None:
        return f"{observed} into {table_type}"
    if observed is not None:  # no column
        return observed
    return None if table_type is None else f"into {table_type}"  # no type seen


#: What to do with a record the table cannot take as it is.
OnIncompatible: TypeAlias = Literal["fail", "quarantine"]


@dataclass(frozen=True)
class Quarantined:
    """One record set aside, with why.

    ``record`` is the record as it arrived (a dict, the raw text of a line that did
    not parse, or its bytes when they are not UTF-8); ``field`` the dotted path of the
    offending value (None when the whole record is at fault); ``observed`` its observed
    type, ``table_type`` the column's type; ``batch`` the batch index (simulate) or batch
    id (ingest); ``detail`` a sentence naming field, types and value.
    """

    record: Any
    reason: Reason
    field: str | None
    observed: str | None
    table_type: str | None
    batch: int | str
    detail: str

    @property
    def raw(self) -> str:
        """The record as JSON text (a line that did not parse is kept as it was; bytes that
        are not UTF-8 are shown escaped, ``\\xff``)."""
        if isinstance(self.record, bytes):
            return shown_bytes(self.record)
        return self.record if isinstance(self.record, str) else render_json(self.record)

    @property
    def stored(self) -> str:
        """What the quarantine table's ``raw`` column holds: :attr:`raw`, or the bytes of a
        line that is not UTF-8 in base64 (every byte kept; :class:`QuarantinedRow` reads
        them back)."""
        if isinstance(self.record, bytes):
            return base64.b64encode(self.record).decode("ascii")
        return self.raw


def shown_bytes(data: bytes) -> str:
    """Bytes as a person reads them: UTF-8 text, each byte that is not escaped.

    >>> shown_bytes(b'{"v":"caf\\xc3\\xa9 \\xff"}')
    '{"v":"café \\\\xff"}'
    """
    return data.decode("utf-8", "backslashreplace")


# --- a quarantine table's rows, grouped (what the inspector and replay read) ------------------

#: Reasons whose rows cannot go back through ``ingest``: a line that never parsed, and
#: JSON that is not an object (ingest takes records). They stay until discarded
#: (``toolkit.iceberg.quarantine.discard``).
UNREPLAYABLE: Final[frozenset[str]] = frozenset(
    {"malformed", "not-a-record", "not-utf8", "duplicate-key",
     # the record itself was written (without the value): replaying it would write it twice
     "contract-value"}
)

#: Reasons that set a record aside whole after it was read and profiled (RULES 5, rare
#: types, contracts, required fields): its values count in the batch's profile, and none
#: is written (``toolkit.core.batch.conversion_warnings`` takes them out of its counts).
SET_ASIDE_AFTER_READING: Final[frozenset[Reason]] = frozenset(
    {"incompatible", "rewrite-not-approved", "rare-type", "contract", "missing-required"})


#: a quarantine table's row, its columns in order: id, raw (as stored), reason, field,
#: observed, table_type, detail, batch_id, position, quarantined_at
StoredRow: TypeAlias = tuple[
    str, str, str, str | None, str | None, str | None, str, str, int, dt.datetime | None
]


@dataclass(frozen=True)
class QuarantinedRow:
    """One row of a quarantine table: a :class:`~toolkit.core.batch.quarantine.Quarantined` with
    its row ``id``, the ``batch_id`` that set it aside and when."""

    id: str
    raw: str
    reason: str
    field: str | None
    observed: str | None
    table_type: str | None
    detail: str
    batch_id: str
    position: int
    quarantined_at: dt.datetime | None
    #: the bytes of a line that is not UTF-8 (``raw`` shows them escaped); else None
    data: bytes | None = None

    @classmethod
    def stored_as(cls, row: StoredRow) -> QuarantinedRow:
        """A row as the quarantine table holds it (:data:`StoredRow`; its ``raw`` is
        :attr:`Quarantined.stored`): the base64 of a line that is not UTF-8 becomes its
        bytes, shown escaped."""
        id, stored, reason, field, observed, table_type, detail, batch_id, position, \
            quarantined_at = row
        data = base64.b64decode(stored) if reason == "not-utf8" else None
        raw = stored if data is None else shown_bytes(data)
        return cls(id, raw, reason, field, observed, table_type, detail, batch_id, position,
                   quarantined_at, data)

    @property
    def replayable(self) -> bool:
        """Whether replay (``toolkit.pipeline.replay``) can send it back through ``ingest``
        (a JSON object)."""
        return self.reason not in UNREPLAYABLE

    @property
    def record(self) -> Any:
        """The record, parsed with every value exact; a line that never parsed is its text
        (its bytes, when they are not UTF-8)."""
        if self.data is not None:
            return self.data
        if self.reason in ("malformed", "duplicate-key"):
            return self.raw
        return parse_line(self.raw)

    def as_quarantined(self) -> Quarantined:
        return Quarantined(
            self.record, cast(Reason, self.reason), self.field, self.observed,
            self.table_type, self.batch_id, self.detail,
        )


GroupKey = tuple[str, str | None, str | None, str | None]


@dataclass(frozen=True)
class QuarantineGroup:
    """Rows that share a reason, a field, an observed type and a table type."""

    reason: str
    field: str | None
    observed: str | None
    table_type: str | None
    rows: tuple[QuarantinedRow, ...]

    @property
    def count(self) -> int:
        return len(self.rows)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(r.id for r in self.rows)

    @property
    def replayable(self) -> bool:
        return self.reason not in UNREPLAYABLE

    @property
    def label(self) -> str:
        """``incompatible type: flag (string into boolean)``, in plain words."""
        return group_label(self.reason, self.field, self.observed, self.table_type)


#: how older versions began the reason of an item set aside before planning: a number
#: counted from 0 within what the engine saw (on Spark, one chunk of the batch), which no
#: face can show as the record's place
_OLD_PLACE = re.compile(r"record \d+: ")


def detail_text(detail: str) -> str:
    """A stored reason (``detail``) as faces show it: without the number older versions
    put first (see :data:`_OLD_PLACE`); today's reasons carry none.

    >>> detail_text("record 0: expected a JSON object, got list [1]")
    'expected a JSON object, got list [1]'
    """
    found = _OLD_PLACE.match(detail)
    return detail if found is None else detail[found.end():]


def group_label(
    reason: str, field: str | None, observed: str | None, table_type: str | None
) -> str:
    """A group of quarantined records in plain words, short enough for a selector.

    >>> group_label("incompatible", "flag", "string", "boolean")
    'incompatible type: flag (string into boolean)'
    >>> group_label("not-a-record", None, "list", None)
    'not a JSON object (list)'
    """
    text = reason_name(reason)
    if field is not None:
        text += f": {field}"
    types = types_text(observed, table_type)
    return text if types is None else f"{text} ({types})"


def _key(r: QuarantinedRow) -> tuple[str, str, str, str]:
    return (r.reason, r.field or "", r.observed or "", r.table_type or "")


@dataclass(frozen=True)
class Quarantine:
    """What a target table's quarantine holds, read once.

    ``exists`` is False when nothing was ever quarantined for the table (no quarantine
    table); ``rows`` are in the order they were set aside.
    """

    table: str
    quarantine_table: str
    exists: bool
    rows: tuple[QuarantinedRow, ...]

    def __len__(self) -> int:
        return len(self.rows)

    def __bool__(self) -> bool:
        return bool(self.rows)

    @property
    def empty(self) -> bool:
        return not self.rows

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(r.id for r in self.rows)

    def counts(self) -> dict[str, int]:
        """Rows per reason, most frequent first."""
        return dict(Counter(r.reason for r in self.rows).most_common())

    def by_reason(self) -> dict[str, tuple[QuarantinedRow, ...]]:
        """Rows grouped by reason, most frequent reason first."""
        return {
            reason: tuple(r for r in self.rows if r.reason == reason) for reason in self.counts()
        }

    def groups(self) -> tuple[QuarantineGroup, ...]:
        """Rows grouped by reason, field, observed type and table type, largest first."""
        grouped: dict[tuple[str, str, str, str], list[QuarantinedRow]] = {}
        for r in self.rows:
            grouped.setdefault(_key(r), []).append(r)
        ordered = sorted(grouped.values(), key=lambda rs: (-len(rs), _key(rs[0])))
        return tuple(
            QuarantineGroup(rs[0].reason, rs[0].field, rs[0].observed, rs[0].table_type, tuple(rs))
            for rs in ordered
        )

    def select(
        self,
        *,
        ids: Iterable[str] | None = None,
        reason: str | None = None,
        field: str | None = None,
        observed: str | None = None,
    ) -> Quarantine:
        """The rows matching every criterion given; unknown ``ids`` raise
        :class:`UnknownIdsError`."""
        rows = self.rows
        if ids is not None:
            wanted = set(ids)
            missing = wanted - {r.id for r in rows}
            if missing:
                raise UnknownIdsError(self.quarantine_table, missing)
            rows = tuple(r for r in rows if r.id in wanted)
        if reason is not None:
            rows = tuple(r for r in rows if r.reason == reason)
        if field is not None:
            rows = tuple(r for r in rows if r.field == field)
        if observed is not None:
            rows = tuple(r for r in rows if r.observed == observed)
        return Quarantine(self.table, self.quarantine_table, self.exists, rows)

    def __str__(self) -> str:
        if not self.exists:
            return f"{self.table}: no quarantine table; no record was ever quarantined"
        if not self.rows:
            return f"{self.quarantine_table}: empty; nothing is quarantined"
        lines = [f"{self.quarantine_table}: {counted(len(self.rows), 'record')}"]
        for g in self.groups():
            note = "" if g.replayable else "  (cannot be replayed; discard(ids) removes them)"
            lines.append(f"  {g.count:>6}  {g.label}{note}")
        return "\n".join(lines)


def _has_column(struct: Struct, field: str) -> bool:
    """Whether the value at dotted path ``field`` has a column in ``struct`` (a key with a
    dot in its name is tried whole first)."""
    keys = {c.family for c in struct.fields}
    if field in keys:
        return True
    head, _, rest = field.partition(".")
    if head not in keys or not rest:
        return False
    for col in struct.fields:
        t = col.type
        while isinstance(t, ListOf):
            t = t.element
        if col.family == head and isinstance(t, Struct) and _has_column(t, rest):
            return True
    return False


def set_aside_line(records: int, struct: Struct, quarantined: Iterable[Quarantined]) -> str:
    """A sentence on what was set aside, and above all on fields every value of which was
    set aside: they have no column, which the schema alone never says ("" when nothing
    was set aside).

    >>> q = Quarantined({"t": 1}, "invalid-value", "t", None, None, 0, "field 't': ...")
    >>> for part in set_aside_line(2, Struct(), [q, q]).split("; "):
    ...     print(part)
    all 2 records were set aside (value cannot be stored: 2), nothing was written
    every value of field 't' was set aside, so it has no column: field 't': ...
    """
    items = list(quarantined)
    if not items:
        return ""
    reasons = Counter(q.reason for q in items)
    counts = ", ".join(f"{reason_name(r)}: {n:,}" for r, n in sorted(reasons.items()))
    if len(items) >= records:
        every = "the one record was" if records == 1 else f"all {records:,} records were"
        line = f"{every} set aside ({counts}), nothing was written"
    else:
        line = f"{len(items):,} of {records:,} records were set aside ({counts})"
    for name, q in fields_set_aside(struct, items).items():
        line += f"; every value of field {name!r} was set aside, so it has no column: {q.detail}"
    return line


def fields_set_aside(struct: Struct, quarantined: Iterable[Quarantined]) -> dict[str, Quarantined]:
    """The fields named by records set aside that have no column in ``struct`` (every
    value of them was set aside), each with the first record that says why."""
    first: dict[str, Quarantined] = {}
    for q in quarantined:
        if q.field is not None and q.field not in first and not _has_column(struct, q.field):
            first[q.field] = q
    return first


__all__ = [
    "fields_set_aside",
    "set_aside_line",
    "REASONS",
    "REASON_NAMES",
    "REASON_TERMS",
    "REASON_WORDS",
    "ReasonTerms",
    "SET_ASIDE_AFTER_READING",
    "UNREPLAYABLE",
    "IncompatibleRecordError",
    "OnIncompatible",
    "Quarantine",
    "QuarantineGroup",
    "Quarantined",
    "QuarantinedRow",
    "Reason",
    "detail_text",
    "group_label",
    "reason_name",
    "reason_words",
    "shown_bytes",
    "types_text",
]

