"""What runs inside Spark's Python workers: the very core engine, a chunk at a time.

Planning needs the whole batch (the driver merges the partitions' summaries); routing a
value depends only on the plan and on that value, so each Arrow chunk is routed on its
own and memory stays bounded by Spark's Arrow batch size.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from typing import Any, Literal, TypeAlias

import pyarrow as pa

from toolkit.core.engine import Engine, gc_paused
from toolkit.core.jsonlines import parse_line
from toolkit.core.options import Options
from toolkit.core.profile import Profile, profile_of
from toolkit.core.summary import Summary, summarize
from toolkit.core.types import Struct

#: How a source DataFrame carries records: JSON text, pickled Python dicts, or typed rows.
Mode: TypeAlias = Literal["json", "pickle", "rows"]


def records_of(batch: pa.RecordBatch, mode: Mode) -> list[Any]:
    """The records of one Arrow chunk of a source DataFrame."""
    if mode == "rows":
        return list(batch.to_pylist())
    column = batch.column(0).to_pylist()
    if mode == "pickle":
        return [pickle.loads(b) for b in column]
    return [parse_line(line) for line in column if line is not None and line.strip()]


def observe_partition(
    batches: Iterator[pa.RecordBatch], *, mode: Mode, options: Options, batch: int
) -> Iterator[pa.RecordBatch]:
    """One row per partition: the pickled (Summary, Profile) of its records."""
    engine = Engine(options)
    summary, prof = Summary(), Profile()
    for chunk in batches:
        with gc_paused():  # parsing and observing make no reference cycles
            obs = engine.observe(records_of(chunk, mode), batch)
            summary, prof = summary + summarize(obs), prof + profile_of(obs, batch)
    yield pa.RecordBatch.from_pydict({"payload": [pickle.dumps((summary, prof))]})


def route_partition(
    batches: Iterator[pa.RecordBatch],
    *,
    mode: Mode,
    options: Options,
    schema: Struct,
    arrow_schema: pa.Schema,
) -> Iterator[pa.RecordBatch]:
    """The routed rows of each chunk, as Arrow columns of the table's schema."""
    engine = Engine(options)
    for chunk in batches:
        with gc_paused():
            records = records_of(chunk, mode)
            routed = engine.route(schema, engine.observe(records)) if records else None
        if routed is None:
            continue
        arrays = [
            pa.nulls(routed.size, f.type) if values is None else pa.array(values, type=f.type)
            for values, f in zip(routed.columns, arrow_schema, strict=True)
        ]
        yield pa.RecordBatch.from_arrays(arrays, schema=arrow_schema)
