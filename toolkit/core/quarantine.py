"""Records the engine will not write as they are, kept whole with the reason (RULES 5).

A record goes to quarantine when one of its values is incompatible with the table under
the widening policy, when it needs a rewrite nobody approved, or when it is not a record
at all (a malformed JSON line, a JSON array, nesting too deep to walk). Nothing is dropped:
the raw record travels with the field, the observed type and the batch, so it can be
inspected and replayed once a plan accepts it.

>>> q = Quarantined({"n": "x"}, "incompatible", "n", "string", "boolean", 0, "…")
>>> q.raw
'{"n":"x"}'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from toolkit.core.conversions import render_json

#: Why a record was quarantined.
Reason: TypeAlias = Literal[
    "incompatible",  # a value the widening matrix (RULES 5) marks X for its column
    "rewrite-not-approved",  # accepting the value needs a column rewrite not yet approved
    "malformed",  # a line that is not valid JSON
    "not-a-record",  # valid JSON that is not an object
    "invalid-value",  # a value the engine cannot type or store (too deep, NaN...)
]
REASONS: tuple[Reason, ...] = (
    "incompatible",
    "rewrite-not-approved",
    "malformed",
    "not-a-record",
    "invalid-value",
)

#: What to do with a record the table cannot take as it is.
OnIncompatible: TypeAlias = Literal["fail", "quarantine"]


@dataclass(frozen=True)
class Quarantined:
    """One record set aside, with why.

    ``record`` is the record as it arrived (a dict, or the raw text of a line that did
    not parse); ``field`` the dotted path of the offending value (None when the whole
    record is at fault); ``observed`` its observed type, ``table_type`` the column's type;
    ``batch`` the batch index (simulate) or batch id (ingest); ``detail`` a sentence naming
    field, types and value.
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
        """The record as JSON text (a line that did not parse is kept as it was)."""
        return self.record if isinstance(self.record, str) else render_json(self.record)


class IncompatibleRecordError(ValueError):
    """A record the table cannot take, under ``on_incompatible="fail"``."""

    def __init__(self, item: Quarantined) -> None:
        self.item = item
        super().__init__(f"batch {item.batch}: {item.detail}")


__all__ = ["REASONS", "IncompatibleRecordError", "OnIncompatible", "Quarantined", "Reason"]
