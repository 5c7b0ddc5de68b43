"""Routing JSON lines inside the JVM: ``jvm/Router.java``, fed a table made by the core.

The Python router (``toolkit.core.batch.routing``, run in Spark's Python workers) spends most of
an ingest's time walking values in Python. ``Router.java`` reads the lines with the
tally's tokenizer inside the executors and builds Spark's internal rows directly. It
decides nothing: for every column of the plan's schema and every kind code the batch's
tally saw for that column's key, :func:`routing_table` asks the core
:meth:`~toolkit.core.batch.routing.Router.rule` how such a value lands (or that it does not),
so RULES 3 lives in ``toolkit.core`` alone; the JVM converts leaves by RULES 2's table
(``toolkit.core.values.conversions``), which ``tests/spark/test_router.py`` holds equal to the
Python router value by value.

The pipeline routes a batch here when it can (:func:`jvm_routing`): a policy the JVM routes
(``options.policy.jvm_routes``), JSON lines the tally read in full, nothing set aside.
Otherwise, and whenever the JVM refuses a line or a kind its table does not foresee, the
batch goes through the Python router, as before.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolkit.core.batch.map_routing import map_value_column
from toolkit.core.batch.options import Options
from toolkit.core.batch.required import requires
from toolkit.core.batch.routing import Router
from toolkit.core.values.types import RECORD, Struct
from toolkit.spark.plans import LazyFrame
from toolkit.spark.tally import REPRESENTATIVES, KindCodes, is_array_code, jvm_class

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

__all__ = [
    "KIND_CODES_PROPERTY", "SCALAR_CODES", "JvmRouting", "codes_note", "fitting_codes",
    "jvm_routing", "kept_codes", "payload_texts", "route_on_jvm", "route_tallied",
    "routing_table",
]

#: Router.java's names for the ways a value lands (routing.Rule.how); -1: it does not
HOW = {"convert": 0, "records": 1, "empty": 2}
ROUTER_CLASS = "toolkit.spark.jvm.Router"
#: the table property keeping the array kind codes the table's batches brought, by key:
#: a one-pass routing table foresees them, in any process (a job per batch included)
KIND_CODES_PROPERTY = "toolkit.kind-codes"
#: every kind code that is not an array (scalars and records): a one-pass table covers them
SCALAR_CODES = frozenset(range(len(REPRESENTATIVES)))


def routing_table(
    struct: Struct,
    router: Router,
    codes: Mapping[tuple[str, ...], frozenset[int]],
    kinds: KindCodes,
    path: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Router.java's table for ``struct``: per column, its key, its leaves' lattice type,
    and ``[code, how, dimension, wrap]`` for every kind code seen for its key (``how`` -1:
    not written there), with the table of its struct for a record column.

    >>> from toolkit.core.values.types import Column
    >>> opts = Options()
    >>> table = routing_table(Struct((Column(1, "a", "double"),)), Router(opts),
    ...                       {("a",): frozenset({1, 4})}, KindCodes(opts))
    >>> table["columns"][0]["rules"]    # a long (code 1) converts; a string (4) does not land
    [[1, 0, 0, 0], [4, -1, 0, 0]]
    """
    columns = []
    for col in struct.fields:
        where = (*path, col.family)
        rules = []
        for code in sorted(codes.get(where, ())):
            k = kinds(code)
            rule = router.rule(k, col)
            if rule is None:
                rules.append([code, -1, 0, 0])
                continue
            rules.append([code, HOW[rule.how], k.dim, rule.wrap])
        leaf = col.leaf
        nested = None
        if col.shape.type == RECORD:
            assert isinstance(leaf, Struct)
            nested = routing_table(leaf, router, codes, kinds, where)
        columns.append(
            {"family": col.family, "target": col.shape.type, "rules": rules, "struct": nested}
        )
    return {"columns": columns}


@dataclass(frozen=True, eq=False)
class JvmRouting:
    """A routing table (:func:`routing_table`) as the JSON text Router.java reads: what
    each batch hands the JVM, written once (a wide table's takes a while to write). Build
    one with :meth:`of`."""

    text: str

    @classmethod
    def of(cls, table: Mapping[str, Any]) -> JvmRouting:
        return cls(json.dumps(table))

    @property
    def table(self) -> dict[str, Any]:
        """The routing table itself (a new copy each time: to read, or to change in a
        test)."""
        table: dict[str, Any] = json.loads(self.text)
        return table


def jvm_routing(
    schema: Struct, codes: Mapping[tuple[str, ...], frozenset[int]] | None, options: Options
) -> JvmRouting | None:
    """The routing table for a batch the JVM can route under ``options``, with its JSON,
    or None (with the reason logged): a policy the JVM cannot route (the widening one
    routes by its own plan, in Python), and a batch the tally did not read in full has no
    codes. Both are made once per schema, codes and options, and shared: read the table,
    do not change it."""
    if not options.policy.jvm_routes or codes is None:
        return None
    if options.hints:  # Router.java converts no value into a hint's type: Python does
        return None
    if not schema.fields:  # rows without columns: what Python workers do with them stays
        return None
    if requires(schema):  # records that leave a required field empty: Python sets them aside
        return None
    if _map_receives(schema, codes):  # Router.java routes no object into a map: Python does
        return None
    return _routing(schema, frozenset(codes.items()), options)


def _map_receives(
    struct: Struct, codes: Mapping[tuple[str, ...], frozenset[int]], path: tuple[str, ...] = ()
) -> bool:
    """Whether a map column that may take JSON objects (docs/rules.md, *Maps under
    automatic evolution*) has a family that arrived in this batch, at any level."""
    for col in struct.fields:
        where = (*path, col.family)
        if map_value_column(col) is not None and codes.get(where):
            return True
        leaf = col.leaf
        if isinstance(leaf, Struct) and _map_receives(leaf, codes, where):
            return True
    return False


@functools.lru_cache(maxsize=32)
def _routing(
    schema: Struct, codes: frozenset[tuple[tuple[str, ...], frozenset[int]]], options: Options
) -> JvmRouting:
    """:func:`routing_table` and its JSON, made once per schema, codes and options: a
    stream's batches mostly share all three, and a wide table's routing table takes a
    while to make and to write as JSON."""
    return JvmRouting.of(routing_table(schema, Router(options), dict(codes), KindCodes(options)))


def route_on_jvm(
    df: DataFrame, routing: JvmRouting, schema: StructType, options: Options
) -> DataFrame:
    """The routed rows of ``df`` (one string column of JSON lines) as a DataFrame of
    ``schema``, the Spark schema of the plan's table."""
    from pyspark.sql import DataFrame

    jdf = jvm_class(df.sparkSession, ROUTER_CLASS).route(
        df._jdf, routing.text, schema.json(), options.detect_dates,
        options.timestamp_unit, options.long_timestamp_unit,
    )
    return DataFrame(jdf, df.sparkSession)


def fitting_codes(
    struct: Struct,
    known: Mapping[tuple[str, ...], frozenset[int]] = {},  # noqa: B006 - never mutated
    path: tuple[str, ...] = (),
) -> dict[tuple[str, ...], frozenset[int]]:
    """The kind codes a one-pass routing table foresees for each key of ``struct`` before
    any line is read: every scalar and record code, and the array codes ``known`` to have
    arrived at that key (arrays come in too many shapes to list them all). A code it does
    not foresee is found in the tally after the write, which is then done again.

    >>> from toolkit.core.values.types import Column
    >>> codes = fitting_codes(Struct((Column(1, "a", "long"),)), {("a",): frozenset({1025})})
    >>> sorted(codes[("a",)])
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1025]
    """
    out: dict[tuple[str, ...], frozenset[int]] = {}
    for col in struct.fields:
        where = (*path, col.family)
        out[where] = out.get(where, SCALAR_CODES) | known.get(where, frozenset())
        leaf = col.leaf
        if col.shape.type == RECORD and isinstance(leaf, Struct):
            out.update(fitting_codes(leaf, known, where))
    return out


def kept_codes(properties: Mapping[str, str]) -> dict[tuple[str, ...], frozenset[int]]:
    """The array kind codes a table's ``properties`` keep, by key (:func:`codes_note`).

    >>> kept_codes({KIND_CODES_PROPERTY: '[[["a"], [1025]]]'})
    {('a',): frozenset({1025})}
    >>> kept_codes({})
    {}
    """
    text = properties.get(KIND_CODES_PROPERTY)
    if not text:
        return {}
    return {tuple(path): frozenset(codes) for path, codes in json.loads(text)}


def codes_note(
    kept: Mapping[tuple[str, ...], frozenset[int]],
    seen: Mapping[tuple[str, ...], frozenset[int]],
) -> dict[str, str]:
    """The table property to set when a batch saw array kind codes the table does not keep
    yet (``kept``, :func:`kept_codes`): all of them, old and new; nothing otherwise (most
    batches of a stream bring no new shape of array).

    >>> codes_note({}, {("a",): frozenset({1, 1025})})
    {'toolkit.kind-codes': '[[["a"], [1025]]]'}
    >>> codes_note({("a",): frozenset({1025})}, {("a",): frozenset({1, 1025})})
    {}
    """
    arrays = {path: frozenset(filter(is_array_code, codes)) for path, codes in seen.items()}
    if all(codes <= kept.get(path, frozenset()) for path, codes in arrays.items()):
        return {}
    merged = {path: kept.get(path, frozenset()) | arrays.get(path, frozenset())
              for path in {*kept, *arrays}}
    value = [[list(path), sorted(codes)] for path, codes in sorted(merged.items()) if codes]
    return {KIND_CODES_PROPERTY: json.dumps(value)}


def foreseen(
    seen: Mapping[tuple[str, ...], frozenset[int]],
    table: Mapping[tuple[str, ...], frozenset[int]],
) -> bool:
    """Whether a routing table made for the codes ``table`` routed every value of a batch
    whose tally saw ``seen`` (a key or a code it did not foresee was written as null).

    >>> foreseen({("a",): frozenset({1})}, {("a",): frozenset({1, 4})})
    True
    >>> foreseen({("a",): frozenset({1}), ("b",): frozenset({4})}, {("a",): frozenset({1})})
    False
    """
    return all(codes <= table.get(path, frozenset()) for path, codes in seen.items())


def route_tallied(
    df: DataFrame, routing: JvmRouting, schema: StructType, options: Options
) -> tuple[LazyFrame, Any, int]:
    """:func:`route_on_jvm` that also tallies every line it routes: the routed rows (not
    analysed yet: the write analyses them in its own session), the accumulator its tasks
    add their tally payloads to (read it once the write is done:
    :func:`toolkit.spark.tally.tallied_payloads`), and how many partitions send one."""
    spark = df.sparkSession
    # unnamed: Spark keeps a copy of a named accumulator's updates with every task it lists
    payloads = spark.sparkContext._jsc.sc().collectionAccumulator()
    router = jvm_class(spark, ROUTER_CLASS)
    plan = router.routeTallied(
        df._jdf, routing.text, schema.json(), options.detect_dates,
        options.timestamp_unit, options.long_timestamp_unit, payloads,
    )
    return LazyFrame(spark, plan), payloads, router.partitions(df._jdf)


def payload_texts(spark: SparkSession, payloads: Any) -> list[str]:
    """The text payloads tasks added to the accumulator ``payloads`` (those of a
    :func:`route_tallied` write, or of ``toolkit.spark.class_tally``'s count), read in one
    JVM round trip."""
    text: str = jvm_class(spark, ROUTER_CLASS).payloadLines(payloads)
    return [t for t in text.split("\n") if t]
