"""What runs inside Spark's Python workers: the very core engine, a chunk at a time.

Planning needs the whole batch (the driver merges the partitions' summaries); routing a
value depends only on the plan and on that value, so each Arrow chunk is routed on its
own and memory stays bounded by Spark's Arrow batch size.
"""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Iterable, Iterator
from typing import Any, Literal, TypeAlias, cast

import pyarrow as pa

from toolkit.arrow import records as arrow_records
from toolkit.core.batch.observe import StructObservation
from toolkit.core.batch.options import Options
from toolkit.core.batch.profile import Profile, profile_of
from toolkit.core.batch.quarantine import Quarantined, Reason
from toolkit.core.batch.summary import Summary, summarize
from toolkit.core.engine import Engine, RoutedBatch, gc_paused
from toolkit.core.evolution.batch_plan import Plan
from toolkit.core.values.jsonlines import has_lone_surrogate, parse_line
from toolkit.core.values.types import Struct
from toolkit.errors import MalformedLineError, NotUtf8LineError

#: How a source DataFrame carries records: JSON text, pickled Python dicts, or typed rows.
#: Each kind of source (``toolkit.pipeline.sources``) names the mode its DataFrame uses.
Mode: TypeAlias = Literal["json", "pickle", "rows"]
#: the modes the JVM tally and router read (one string column of JSON lines)
JVM_MODES: frozenset[Mode] = frozenset({"json"})


def records_of(batch: pa.RecordBatch, mode: Mode) -> list[Any]:
    """The records of one Arrow chunk of a source DataFrame (a malformed line raises).
    Typed rows keep their types (RULES 1): an int, short or byte column arrives as Arrow
    int32/16/8 and its values as ``Int``, a float column's as ``Float`` (``toolkit.arrow``)."""
    if mode == "rows":
        return arrow_records(batch)
    if mode == "pickle":
        return [pickle.loads(b) for b in batch.column(0).to_pylist()]
    return [parse_line(line) for line in line_bytes(batch) if line is not None and line.strip()]


def line_bytes(batch: pa.RecordBatch) -> list[bytes | None]:
    """The lines of a chunk of JSON lines as the bytes Spark read. Spark's text reader
    keeps a file's bytes as they are, valid UTF-8 or not; Arrow's text would fail on the
    first line that is not, so the lines are taken as bytes and each decoded on its own
    (``parse_line``: a line that is not UTF-8 is set aside as its bytes)."""
    column = batch.column(0)
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        column = column.cast(pa.binary() if pa.types.is_string(column.type) else pa.large_binary())
    return column.to_pylist()  # type: ignore[no-any-return]


def admitted(
    engine: Engine, chunk: pa.RecordBatch, mode: Mode, batch: int | str
) -> tuple[list[dict[str, Any]], list[Quarantined]]:
    """The records of a chunk, and what cannot be a record: malformed lines and JSON values
    that are not objects, set aside whole (workers never fail a batch on data: the driver
    decides, from what they send back, whether the batch fails or quarantines). A record
    set aside from a JSON line is kept as that line (see :func:`as_lines`)."""
    if mode != "json":
        return engine.admit(records_of(chunk, mode), batch)
    _LINES.clear()  # one chunk at a time: memory stays bounded by the chunk
    values: list[Any] = []
    aside: list[Quarantined] = []
    for line in line_bytes(chunk):
        if line is None or not line.strip():
            continue
        try:
            value = parse_line(line)
        except (MalformedLineError, RecursionError) as err:
            aside.append(unread(line, err, batch))
            continue
        values.append(value)
        _LINES[id(value)] = line
    rows, not_records = engine.admit(values, batch)
    return rows, aside + not_records


def unread(
    line: bytes, err: MalformedLineError | RecursionError, batch: int | str, where: str = ""
) -> Quarantined:
    """A line that cannot be taken whole, set aside as it arrived (its text, or its bytes
    when they are not UTF-8) with the reason ``parse_line`` gave, ``where`` (its file)
    before the detail."""
    if isinstance(err, RecursionError):
        text = line.decode()
        return Quarantined(text, "invalid-value", None, None, None, batch,
                           f"{where}JSON nested too deeply to parse: {text[:80]!r}")
    raw = line if isinstance(err, NotUtf8LineError) else err.line
    path = getattr(err, "path", None)
    return Quarantined(
        raw, cast(Reason, err.reason_key), ".".join(path) if path else None, None, None,
        batch, f"{where}{err}",
    )


def reread(
    lines: Iterable[tuple[str | None, int, bytes]], options: Options, batch: int | str
) -> list[Quarantined] | None:
    """The lines the JVM router set aside (it could not read them; per line its file, its
    line number there or -1, its bytes), read again by the Python path, which decides as
    it decides for every line: each is set aside with its reason. None when the Python
    path reads one of them as a record after all (the JVM was stricter): the batch is then
    routed the two-pass way, where Python reads every such line."""
    engine = _quarantining(options)
    out: list[Quarantined] = []
    for file, number, line in lines:
        where = "" if file is None else f"{file}: "
        try:
            value = parse_line(line, None if number < 0 else number)
        except (MalformedLineError, RecursionError) as err:
            out.append(unread(line, err, batch, where))
            continue
        rows, not_records = engine.admit([value], batch)
        if rows:
            return None
        # numbered as the Python reader numbers such a line (NotARecordLineError)
        at = where if number < 0 else f"{where}line {number}: "
        out += [dataclasses.replace(q, record=line.decode(), detail=f"{at}{q.detail}")
                for q in not_records]
    return out


#: the raw line of each record parsed from the chunk being worked on, by object identity
#: (the records are alive while their chunk is worked on; :func:`admitted` starts afresh)
_LINES: dict[int, bytes] = {}


def as_lines(items: list[Quarantined]) -> list[Quarantined]:
    """``items`` with each record parsed from a JSON line replaced by that very line: the
    exact text is what the quarantine keeps, and a deeply nested record could not even be
    pickled back to the driver."""
    out = []
    for q in items:
        line = None if isinstance(q.record, str | bytes) else _LINES.get(id(q.record))
        # (a line parsed into a record is UTF-8: its text)
        out.append(q if line is None else dataclasses.replace(q, record=line.decode()))
    return out


def _quarantining(options: Options) -> Engine:
    """Workers always set records aside; ``on_incompatible`` is applied by the driver."""
    if options.on_incompatible == "quarantine":
        return Engine(options)
    return Engine(dataclasses.replace(options, on_incompatible="quarantine"))


def _observed(engine: Engine, batch: int) -> Any:
    def work(rows: list[dict[str, Any]]) -> tuple[StructObservation, Summary, Profile]:
        obs = engine.observe(rows, batch)
        return obs, summarize(obs), profile_of(obs, batch)

    return work


def observe_partition(
    batches: Iterator[pa.RecordBatch], *, mode: Mode, options: Options, batch: int
) -> Iterator[pa.RecordBatch]:
    """One row per partition: the pickled (Summary, Profile, records set aside, first one
    set aside) of its records."""
    engine = _quarantining(options)
    summary, prof = Summary(), Profile()
    aside, first = 0, None
    for chunk in batches:
        with gc_paused():  # parsing and observing make no reference cycles
            _LINES.clear()
            rows, bad = admitted(engine, chunk, mode, batch)
            (_, s, p), invalid = engine.tolerant(rows, batch, _observed(engine, batch))
            summary, prof = summary + s, prof + p
            bad += invalid
            aside += len(bad)
            if first is None and bad:
                first = as_lines(bad[:1])[0]
            _LINES.clear()
    yield pa.RecordBatch.from_pydict({"payload": [pickle.dumps((summary, prof, aside, first))]})


def quarantine_partition(
    batches: Iterator[pa.RecordBatch], *, mode: Mode, options: Options, plan: Plan,
    batch_id: str,
) -> Iterator[pa.RecordBatch]:
    """One row per partition: the pickled list of the records it sets aside under
    ``plan`` (those that are no records, hold untypable values, or, under a policy that
    sets records aside (the widening one), values the table cannot take, or a rare type
    of ``plan``)."""
    engine = _quarantining(options)
    policy = options.policy
    out: list[Quarantined] = []
    for chunk in batches:
        with gc_paused():
            _LINES.clear()
            rows, bad = admitted(engine, chunk, mode, batch_id)
            rows, invalid = _validated(engine, rows, batch_id)
            bad += invalid
            bad += policy.rejected(plan, rows, options, engine.classifier, batch_id)
            out += as_lines(bad)
            _LINES.clear()
    yield pa.RecordBatch.from_pydict({"payload": [pickle.dumps(out)]})


def _validated(
    engine: Engine, rows: list[dict[str, Any]], batch: int | str
) -> tuple[list[dict[str, Any]], list[Quarantined]]:
    """The rows whose values all observe, by one full observation of the chunk."""

    def observed(good: list[dict[str, Any]]) -> list[dict[str, Any]]:
        summarize(engine.observe(good))  # observation is lazy below the top level
        return good

    return engine.tolerant(rows, batch, observed)


def route_partition(
    batches: Iterator[pa.RecordBatch],
    *,
    mode: Mode,
    options: Options,
    schema: Struct,
    arrow_schema: pa.Schema,
    plan: Plan | None = None,
    clean: bool = True,
) -> Iterator[pa.RecordBatch]:
    """The routed rows of each chunk, as Arrow columns of the table's schema. Records set
    aside are skipped (the quarantine pass writes them); ``clean`` says the observation
    pass found none, so the chunk is routed without looking for them."""
    engine = _quarantining(options)
    policy = options.policy
    # a policy whose routing sets records aside (the widening one), or a plan with rare
    # types, routes by the plan the records that observe, and is never clean: routing
    # itself may set records aside
    fits = policy.sets_aside if plan is None else policy.sets_aside_under(plan)

    def route(good: list[dict[str, Any]]) -> RoutedBatch:
        return engine.route(schema, engine.observe(good))

    for chunk in batches:
        with gc_paused():
            if clean and not fits:
                records = records_of(chunk, mode)
                # (tolerant only for the plain values of numpy and pandas scalars: the
                # observation pass found no record to set aside)
                routed = engine.tolerant(records, "", route)[0] if records else None
            else:
                rows, _ = admitted(engine, chunk, mode, "")
                if fits:
                    assert plan is not None
                    rows, _ = _validated(engine, rows, "")
                    kept = policy.fit(plan, rows, options, engine.classifier, "")[0]
                    columns = [[r.get(c.name) for r in kept] for c in schema.fields]
                    routed = RoutedBatch(schema, tuple(columns), len(kept)) if kept else None
                else:
                    done, _ = engine.tolerant(rows, "", route)
                    routed = done if done.size else None
        if routed is None:
            continue
        arrays = [
            pa.nulls(routed.size, f.type) if values is None else _arrow(values, f)
            for values, f in zip(routed.columns, arrow_schema, strict=True)
        ]
        yield pa.RecordBatch.from_arrays(arrays, schema=arrow_schema)


def _arrow(values: list[Any], f: pa.Field) -> pa.Array:
    """A routed column as Arrow. A text with a lone surrogate (from Python records: JSON
    lines refuse it when read) has no UTF-8 form: the error names the column and value."""
    try:
        return pa.array(values, type=f.type)
    except UnicodeEncodeError:
        bad = next(v for v in values if has_lone_surrogate(v))
        raise ValueError(
            f"column {f.name!r}: value {bad!r} holds a lone surrogate, which has no UTF-8 "
            "form: no file can store it"
        ) from None
