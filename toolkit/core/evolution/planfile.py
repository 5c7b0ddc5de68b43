"""Plan files: a previewed plan saved as JSON, to be reviewed and applied later (RULES 6).

A plan file holds the plan, the table state it was made against, the batch id and the
source to ingest, the evolution options, and a human-readable summary. It is stable,
versioned JSON (``"format": "toolkit-plan", "version": 1``) written with sorted keys and
one item per line, so two plan files diff line by line; schemas are written in Iceberg's
own JSON form (field ``id``, ``name``, ``required``, ``type``, ``doc``). The format is
described in ``docs/plan-files.md``.

>>> from toolkit.core.engine import Engine
>>> from toolkit.core.evolution.state import ABSENT
>>> engine = Engine()
>>> plan = engine.plan(Struct(), engine.observe([{"size": 4}]))
>>> text = dumps(PlanFile("db.events", plan, ABSENT, "day1", source="/data/day1.jsonl"))
>>> for line in text.splitlines()[:3]: print(line)
{
  "batch_id": "day1",
  "bound": {
>>> loads(text).plan == plan
True
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from toolkit.core.batch.contract_terms import CONTRACT_MODES, ContractBreach
from toolkit.core.evolution.batch_plan import AddColumn, Plan, RareType, Retype
from toolkit.core.evolution.operations import MakeOptional
from toolkit.core.evolution.reasons import reason_text
from toolkit.core.evolution.state import TableState
from toolkit.core.values.types import Column, ColumnType, Kind, ListOf, MapOf, Opaque, Shape, Struct
from toolkit.core.values.wording import batch_number
from toolkit.errors import PlanFileError

#: the ``format`` every plan file names, and the version this toolkit writes and reads
FORMAT: Final = "toolkit-plan"
VERSION: Final = 1

__all__ = [
    "FORMAT",
    "VERSION",
    "BOUND_PARTS",
    "PlanFile",
    "PlanFileError",
    "bound_digests",
    "dumps",
    "loads",
    "plan_file_name",
    "sha256_text",
    "plan_from_json",
    "plan_to_json",
    "schema_from_json",
    "schema_to_json",
]


@dataclass(frozen=True)
class PlanFile:
    """A plan as saved for later: what to commit, against which table state, with which
    batch (its id, its source and the options it is ingested with).

    ``source`` is a path, glob or folder (absolute, so the file applies from any folder),
    or None when the records were given in Python and cannot be read again; ``format``
    names the source's kind when its name cannot tell it. ``options`` are the keyword
    options of :func:`toolkit.core.batch.options.make_options` the plan was made with (JSON
    values: ``{"policy": "widen"}``). ``catalog`` and ``warehouse`` say where the table
    lives (a folder, a URL with its secrets masked, or a configured catalog name).

    What was reviewed is bound (docs/plan-files.md, "What a plan file binds"):
    ``source_digest`` holds the SHA-256 of each file of ``source`` when the plan was made
    (by name; None when it was not taken: records given in Python, a remote source, a file
    written before), and ``reviewed`` the digests of the table, catalog and options as the
    file holds them (:func:`bound_digests`; None for a plan file made here, or one written
    before plan files held them). Neither takes part in comparing two plan files."""

    table: str
    plan: Plan
    state: TableState
    batch_id: str
    source: str | None = None
    format: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    catalog: str | None = None
    warehouse: str | None = None
    source_digest: Mapping[str, str] | None = field(default=None, compare=False)
    reviewed: Mapping[str, str] | None = field(default=None, compare=False)

    @property
    def summary(self) -> str:
        """The plan in words, as the file shows it to a reviewer.

        >>> from toolkit.core.evolution.state import ABSENT
        >>> PlanFile("db.t", Plan(0, Struct(), Struct(), ()), ABSENT, "b1").summary
        'db.t, batch 1 (id b1): no schema change (against a table that does not exist yet)'
        """
        against = (
            "a table that does not exist yet"
            if self.state.schema_id < 0
            else f"schema id {self.state.schema_id}, snapshot {self.state.snapshot_id}"
        )
        # the batch by number and by id (which a reviewer matches in logs and commands)
        batch = f"batch {batch_number(self.plan.batch)} (id {self.batch_id})"
        return "\n".join([
            f"{self.table}, {batch}: {self.plan.headline} (against {against})",
            *self.plan.details,
        ])


def dumps(planfile: PlanFile) -> str:
    """The plan file's text: sorted keys, two-space indents, one item per line, a final
    newline (non-ASCII names are written as they are)."""
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "table": planfile.table,
        "batch_id": planfile.batch_id,
        "source": planfile.source,
        "source_format": planfile.format,
        "options": dict(planfile.options),
        "catalog": planfile.catalog,
        "warehouse": planfile.warehouse,
        "state": {
            "schema_id": planfile.state.schema_id,
            "snapshot_id": planfile.state.snapshot_id,
        },
        "plan": plan_to_json(planfile.plan),
        "bound": {
            **bound_digests(planfile),
            "source": None if planfile.source_digest is None else dict(planfile.source_digest),
        },
        # for a reviewer only: loads() rebuilds everything from the keys above
        "summary": planfile.summary.split("\n"),
    }
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def loads(text: str, where: str = "plan file") -> PlanFile:
    """The plan file :func:`dumps` wrote; :class:`PlanFileError` (naming ``where``) for
    anything else.

    >>> loads('{"format": "toolkit-plan", "version": 9}', "p.json")
    Traceback (most recent call last):
    ...
    toolkit.errors.PlanFileError: p.json: plan file version 9 is not one this \
toolkit reads (it reads version 1); use the toolkit that wrote it
    """
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlanFileError(f"{where}: not JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise PlanFileError(f"{where}: not a toolkit plan file (no \"format\": \"{FORMAT}\")")
    if doc.get("version") != VERSION:
        raise PlanFileError(
            f"{where}: plan file version {doc.get('version')} is not one this toolkit reads "
            f"(it reads version {VERSION}); use the toolkit that wrote it"
        )
    try:
        state = doc["state"]
        bound = doc.get("bound")  # none in files written before plan files bound their parts
        if bound is not None and not isinstance(bound, dict):
            raise TypeError(f"\"bound\" holds {bound!r}, not the digests of what was reviewed")
        digest = None if bound is None else bound.get("source")
        return PlanFile(
            table=_text(doc["table"]),
            plan=plan_from_json(doc["plan"]),
            state=TableState(int(state["schema_id"]), _optional_int(state["snapshot_id"])),
            batch_id=_text(doc["batch_id"]),
            source=doc.get("source"),
            format=doc.get("source_format"),
            options=dict(doc.get("options") or {}),
            catalog=doc.get("catalog"),
            warehouse=doc.get("warehouse"),
            source_digest=None if digest is None else {
                _text(k): _text(v) for k, v in dict(digest).items()},
            reviewed=None if bound is None else {
                k: _text(bound[k]) for k in BOUND_PARTS if k in bound},
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        what = f"key {exc.args[0]!r} is missing" if isinstance(exc, KeyError) else str(exc)
        raise PlanFileError(f"{where}: not a valid plan file: {what}") from None


#: the parts of a plan file bound by a digest of their own, besides its source's files; a
#: changed part is named by this word in :class:`~toolkit.errors.UnreviewedPlanError`
BOUND_PARTS: Final = ("table", "catalog", "options")


def sha256_text(value: Any) -> str:
    """``sha256:`` and the hex SHA-256 of a JSON value's canonical text (sorted keys, no
    spaces): the same value always gives the same digest.

    >>> sha256_text({"b": 1, "a": [True, None]}) == sha256_text({"a": [True, None], "b": 1})
    True
    >>> sha256_text("db.t")[:15]
    'sha256:4ef17c2d'
    """
    raw = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(raw.encode("utf-8")).hexdigest()


def bound_digests(planfile: PlanFile) -> dict[str, str]:
    """The digests that bind a plan file's table, catalog (and warehouse) and options (and
    source format) to what was reviewed, by :data:`BOUND_PARTS`' names. ``dumps`` writes
    them; ``toolkit apply`` refuses a file whose parts no longer give the digests it holds.

    >>> from toolkit.core.evolution.state import ABSENT
    >>> made = PlanFile("db.t", Plan(0, Struct(), Struct(), ()), ABSENT, "b1",
    ...                 options={"policy": "upsolver"}, catalog="/data/lake")
    >>> edited = PlanFile("db.t", made.plan, ABSENT, "b1", options={"policy": "widen"},
    ...                   catalog="/data/lake")
    >>> [k for k, v in bound_digests(made).items() if bound_digests(edited)[k] != v]
    ['options']
    """
    return {
        "table": sha256_text(planfile.table),
        "catalog": sha256_text([planfile.catalog, planfile.warehouse]),
        "options": sha256_text([dict(planfile.options), planfile.format]),
    }


#: characters a plan file's own name keeps from a table name or a batch id: letters,
#: digits, ``_``, ``-`` and single dots (no path separator, no control character, no ``..``)
_UNSAFE_NAME: Final = re.compile(r"[^\w.\-]|\.{2,}", re.ASCII)
_NAME_PART_MAX: Final = 80


def plan_file_name(table: str, batch_id: str) -> str:
    """The name ``toolkit ingest --require-approval`` gives the plan file it writes:
    ``TABLE.BATCH_ID.plan.json``, each part kept to a plain file name (a character that
    could leave the folder, hide or disturb a terminal becomes ``_``; a part that had
    any, or that is long, is clipped and ends with a short digest of the whole, so two
    ids never share a name). The file stays in the folder it is written to.

    >>> plan_file_name("db.events", "day-2")
    'db.events.day-2.plan.json'
    >>> plan_file_name("db.events", "sub/../../../x")
    'db.events.sub_______x-5c091655.plan.json'
    >>> plan_file_name("db.t", "\\x1b[2J")
    'db.t.__2J-05704e8a.plan.json'
    """
    def part(text: str) -> str:
        safe = _UNSAFE_NAME.sub("_", text)[:_NAME_PART_MAX].strip(".") or "_"
        if safe == text:
            return safe
        return f"{safe}-{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"

    return f"{part(table)}.{part(batch_id)}.plan.json"


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a text, found {value!r}")
    return value


def _optional_int(value: Any) -> int | None:
    return None if value is None else int(value)


# --- plans -----------------------------------------------------------------------------------


def plan_to_json(plan: Plan) -> dict[str, Any]:
    """A plan as JSON values: its batch, schemas before and after, every change, and the
    rare types it sets aside."""
    return {
        "batch": plan.batch,
        "before": schema_to_json(plan.before),
        "after": schema_to_json(plan.after),
        "changes": [
            {
                "parent": list(c.parent),
                "column": _field_to_json(c.column),
                "family": c.family,
                "reason": c.reason,
            }
            for c in plan.changes
        ],
        "retypes": [_retype_to_json(r) for r in plan.retypes],
        "optionals": [
            {"path": list(o.path), "column_id": o.column_id, "reason": o.reason}
            for o in plan.optionals
        ],
        "pending": [_retype_to_json(r) for r in plan.pending],
        "rare": [_rare_to_json(r) for r in plan.rare],
        "held": [_held_to_json(b) for b in plan.held],
    }


def plan_from_json(data: Mapping[str, Any]) -> Plan:
    """The plan :func:`plan_to_json` wrote. A reason an older version wrote (``RULES 3.2:
    first batch saw long``) reads as today's faces show one: its sentence, then the rule
    (:func:`~toolkit.core.evolution.reasons.reason_text`)."""
    return Plan(
        batch=int(data["batch"]),
        before=schema_from_json(data["before"]),
        after=schema_from_json(data["after"]),
        changes=tuple(
            AddColumn(
                tuple(c["parent"]), _field_from_json(c["column"]), c["family"],
                reason_text(c["reason"]),
            )
            for c in data["changes"]
        ),
        retypes=tuple(_retype_from_json(r) for r in data.get("retypes", ())),
        optionals=tuple(
            MakeOptional(tuple(o["path"]), o.get("column_id"), reason_text(o.get("reason", "")))
            for o in data.get("optionals", ())
        ),
        pending=tuple(_retype_from_json(r) for r in data.get("pending", ())),
        # files written before plans kept their rare types have none to read
        rare=tuple(_rare_from_json(r) for r in data.get("rare", ())),
        # (and those written before field contracts, no values they refuse)
        held=tuple(_held_from_json(b) for b in data.get("held", ())),
    )


_RETYPE_KEYS: Final = (
    "path", "column_id", "before", "after", "in_place", "reason", "rows", "bytes", "new_id",
)  # fmt: skip


def _retype_to_json(r: Retype) -> dict[str, Any]:
    out = {k: getattr(r, k) for k in _RETYPE_KEYS}
    out["path"] = list(r.path)
    return out


def _retype_from_json(data: Mapping[str, Any]) -> Retype:
    return Retype(
        tuple(data["path"]), int(data["column_id"]), data["before"], data["after"],
        bool(data["in_place"]), reason_text(data["reason"]), data.get("rows"), data.get("bytes"),
        data.get("new_id"),
    )


def _rare_to_json(r: RareType) -> dict[str, Any]:
    return {
        "key": r.key,
        "shape": {"type": r.shape.type, "dim": r.shape.dim, "mixed": r.shape.mixed},
        # the kinds a rare type covers are all of its shape (planner.rare_kinds): only
        # which of their values were lossy tells them apart; sorted, for the same bytes
        "lossy": sorted(sorted(k.lossy) for k in r.kinds),
        "count": r.count,
        "total": r.total,
        "percent": r.percent,
        "instead": list(r.instead),
    }


def _rare_from_json(data: Mapping[str, Any]) -> RareType:
    shape = Shape(data["shape"]["type"], int(data["shape"]["dim"]), data["shape"].get("mixed"))
    return RareType(
        _text(data["key"]),
        shape,
        frozenset(Kind(shape.type, shape.dim, frozenset(lossy), shape.mixed)
                  for lossy in data["lossy"]),
        int(data["count"]),
        int(data["total"]),
        float(data["percent"]),
        tuple(data.get("instead", ())),
    )


def _held_to_json(b: ContractBreach) -> dict[str, Any]:
    return {
        "key": b.key,
        "mode": b.mode,
        # sorted, for the same bytes
        "kinds": sorted(
            ({"type": k.type, "dim": k.dim, "lossy": sorted(k.lossy), "mixed": k.mixed}
             for k in b.kinds), key=lambda k: json.dumps(k, sort_keys=True)),
        "count": b.count,
        "total": b.total,
        "columns": list(b.columns),
    }


def _held_from_json(data: Mapping[str, Any]) -> ContractBreach:
    mode = data["mode"]
    if mode not in CONTRACT_MODES:
        raise PlanFileError(f"a contract's mode {mode!r} is none of {', '.join(CONTRACT_MODES)}")
    return ContractBreach(
        _text(data["key"]), mode,
        frozenset(Kind(k["type"], int(k["dim"]), frozenset(k["lossy"]), k.get("mixed"))
                  for k in data["kinds"]),
        int(data["count"]), int(data["total"]), tuple(data.get("columns", ())),
    )


# --- schemas, in Iceberg's JSON form ---------------------------------------------------------


def schema_to_json(struct: Struct) -> dict[str, Any]:
    """A schema in Iceberg's JSON form (``{"type": "struct", "fields": [...]}``); types the
    core keeps opaque are ``{"type": "opaque", "text": ..., "ids": [...]}``.

    >>> schema_to_json(Struct((Column(1, "a", ListOf(2, "long"), "why"),)))
    {'type': 'struct', 'fields': [{'id': 1, 'name': 'a', 'required': False, 'type': \
{'type': 'list', 'element-id': 2, 'element': 'long', 'element-required': False}, 'doc': 'why'}]}
    """
    out = _type_to_json(struct)
    assert isinstance(out, dict)
    return out


def schema_from_json(data: Mapping[str, Any]) -> Struct:
    """The schema :func:`schema_to_json` wrote."""
    t = _type_from_json(data)
    if not isinstance(t, Struct):
        raise ValueError(f"expected a struct, found {data!r}")
    return t


def _field_to_json(c: Column) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": c.id, "name": c.name, "required": c.required, "type": _type_to_json(c.type),
    }
    if c.doc is not None:
        out["doc"] = c.doc
    return out


def _field_from_json(data: Mapping[str, Any]) -> Column:
    return Column(
        int(data["id"]), _text(data["name"]), _type_from_json(data["type"]), data.get("doc"),
        bool(data.get("required", False)),
    )


def _type_to_json(t: ColumnType) -> str | dict[str, Any]:
    if isinstance(t, Struct):
        return {"type": "struct", "fields": [_field_to_json(c) for c in t.fields]}
    if isinstance(t, ListOf):
        return {"type": "list", "element-id": t.element_id, "element": _type_to_json(t.element),
                "element-required": t.element_required}
    if isinstance(t, MapOf):
        return {
            "type": "map", "key-id": t.key_id, "key": _type_to_json(t.key),
            "value-id": t.value_id, "value": _type_to_json(t.value),
            "value-required": t.value_required,
        }
    if isinstance(t, Opaque):
        return {"type": "opaque", "text": t.text, "ids": list(t.ids)}
    return t


def _type_from_json(data: Any) -> ColumnType:
    if isinstance(data, str):
        return data
    kind = data["type"]
    if kind == "struct":
        return Struct(tuple(_field_from_json(f) for f in data["fields"]))
    if kind == "list":
        return ListOf(
            int(data["element-id"]), _type_from_json(data["element"]),
            bool(data.get("element-required", False)),
        )
    if kind == "map":
        return MapOf(
            int(data["key-id"]), _type_from_json(data["key"]), int(data["value-id"]),
            _type_from_json(data["value"]), bool(data.get("value-required", False)),
        )
    if kind == "opaque":
        return Opaque(_text(data["text"]), tuple(int(i) for i in data.get("ids", ())))
    raise ValueError(f"unknown type {kind!r}")
