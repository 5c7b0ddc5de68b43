"""Routing JSON lines inside the JVM: ``jvm/Router.java``, fed a table made by the core.

The Python router (``toolkit.core.routing``, run in Spark's Python workers) spends most of
an ingest's time walking values in Python. ``Router.java`` reads the lines with the
tally's tokenizer inside the executors and builds Spark's internal rows directly. It
decides nothing: for every column of the plan's schema and every kind code the batch's
tally saw for that column's key, :func:`routing_table` asks the core
:meth:`~toolkit.core.routing.Router.rule` how such a value lands (or that it does not),
so RULES 3 lives in ``toolkit.core`` alone; the JVM converts leaves by RULES 2's table
(``toolkit.core.conversions``), which ``tests/spark/test_router.py`` holds equal to the
Python router value by value.

The pipeline routes a batch here when it can (:func:`jvm_routing`): the automatic policy,
JSON lines the tally read in full, nothing set aside. Otherwise, and whenever the JVM
refuses a line or a kind its table does not foresee, the batch goes through the Python
router, as before.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolkit.core.options import Options
from toolkit.core.policies import policy_of
from toolkit.core.routing import Router
from toolkit.core.types import RECORD, Struct
from toolkit.spark.tally import KindCodes

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

__all__ = ["jvm_routing", "route_on_jvm", "routing_table"]

#: Router.java's names for the ways a value lands (routing.Rule.how); -1: it does not
HOW = {"convert": 0, "records": 1, "empty": 2}


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

    >>> from toolkit.core.types import Column
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


def jvm_routing(
    schema: Struct, codes: Mapping[tuple[str, ...], frozenset[int]] | None, options: Options
) -> dict[str, Any] | None:
    """The routing table for a batch the JVM can route under ``options``, or None (with
    the reason logged): a policy the JVM cannot route (the widening one routes by its own
    plan, in Python), and a batch the tally did not read in full has no codes."""
    if not policy_of(options).jvm_routes or codes is None:
        return None
    if not schema.fields:  # rows without columns: what Python workers do with them stays
        return None
    return routing_table(schema, Router(options), codes, KindCodes(options))


def route_on_jvm(
    df: DataFrame, table: Mapping[str, Any], schema: StructType, options: Options
) -> DataFrame:
    """The routed rows of ``df`` (one string column of JSON lines) as a DataFrame of
    ``schema``, the Spark schema of the plan's table."""
    from pyspark.sql import DataFrame

    jvm: Any = df.sparkSession._jvm
    jdf = jvm.toolkit.spark.jvm.Router.route(
        df._jdf, json.dumps(table), schema.json(), options.detect_dates,
        options.timestamp_unit, options.long_timestamp_unit,
    )
    return DataFrame(jdf, df.sparkSession)
