"""Counting the value classes of typed columns as a write reads them, inside the JVM
(``jvm/ClassTally.java``): the one pass of typed sources (``toolkit.pipeline.typed``)
routes, stages and counts a batch in one Spark job, and plans on the counts as on the
aggregation :func:`toolkit.spark.columnar.class_counts` gives.

Each row's class codes (:func:`toolkit.spark.columnar.classified`) are counted by a JVM
expression per pack of columns, in a filter inside the write's own generated code, and
each task sends its partition's counts when it ends.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from toolkit.core.batch.options import Options
from toolkit.core.batch.typed_profile import value_classes
from toolkit.spark.columnar import ROW_BITS, TypedColumns, built, code_name
from toolkit.spark.plans import LazyFrame

__all__ = ["CLASS_TALLY", "Counting", "counting", "head_of", "tally_counts"]

#: the JVM class counting value classes as rows pass (``jvm/ClassTally.java``)
CLASS_TALLY: Final = "toolkit.spark.jvm.ClassTally"
#: the JVM class keeping a partition's first rows as a write reads them (``jvm/HeadRows.java``)
HEAD_ROWS_CLASS: Final = "toolkit.spark.jvm.HeadRows"
#: the partitions whose first rows :func:`counting` keeps: a batch whose first rows are
#: not all in them (first partitions empty) has them read by a job of their own
HEAD_PARTITIONS: Final = 4


#: the columns one counting expression takes: its generated code grows with them, and
#: Spark compiles no method past 64 KB
PACK_COLUMNS: Final = 32


@dataclass(frozen=True)
class Counting:
    """A batch's rows counted by class as they pass (:func:`counting`): read the counts
    with :func:`tally_counts` once the rows are written."""

    #: the rows, counted as a job reads them: the class codes' frame and one more column
    lazy: LazyFrame
    payloads: Any
    keys: tuple[tuple[str, str], ...]
    packs: int
    #: the accumulator of the first rows kept (:func:`head_of`), or None: not kept
    heads: Any = None
    #: the source's column names, the kept rows' keys
    names: tuple[str, ...] = ()


def counting(cols: TypedColumns, options: Options, head: int = 0) -> Counting | None:
    """``cols``' rows (of a frame :func:`classified`) counted by class as a write reads
    them, inside the write's own code in the JVM (``jvm/ClassTally.java``), and the first
    ``head`` rows of the first partitions kept as they pass (:func:`head_of`); None when
    the session has no such helper.

    The JVM expression reads each column's class code, or the value of a column of one
    class (a value that is not null is in it), :data:`PACK_COLUMNS` columns a pack."""
    from toolkit.spark.tally import jvm_class

    spark = cols.lazy.session
    klass = jvm_class(spark, CLASS_TALLY)
    if klass is None or cols.lazy.done is not None:  # a JVM without the helpers' jar
        return None

    def arrays() -> tuple[Any, Any, Any, Any, tuple[tuple[str, str], ...], int]:
        from pyspark.sql import functions as F

        gateway: Any = spark.sparkContext._gateway
        jvm: Any = spark._jvm
        keys: list[tuple[str, str]] = []
        n = len(cols.names)
        columns = gateway.new_array(jvm.org.apache.spark.sql.Column, n)
        coded = gateway.new_array(jvm.boolean, n)
        bases = gateway.new_array(jvm.int, n)
        for j, name in enumerate(cols.names):
            names = value_classes(cols.source_type(name), options)
            keys += [(name, c) for c in names]
            # one class: every value that is not null is in it
            code = F.col(code_name(cols, name)) if name in cols.coded else cols.column(name)
            columns[j], coded[j], bases[j] = code._jc, name in cols.coded, len(names) + 1
        packs = -(-n // PACK_COLUMNS)
        sizes = gateway.new_array(jvm.int, packs)
        for i in range(packs):
            sizes[i] = min(PACK_COLUMNS, n - i * PACK_COLUMNS)
        return columns, coded, bases, sizes, tuple(keys), packs

    # the columns and arrays are only read by the JVM: one set serves every batch of the
    # layout
    columns, coded, bases, sizes, keys, n = built(
        ("tally", cols.names, cols.types, cols.naive, cols.coded, options), arrays)
    # unnamed: Spark keeps a copy of a named accumulator's updates with every task it lists
    context = spark.sparkContext._jsc.sc()
    payloads = context.collectionAccumulator()
    heads = kept = None
    if head:
        heads = context.collectionAccumulator()
        kept = _keeping(cols, head, heads)
    counted = cols.lazy.stacked(
        lambda plan: klass.counted(plan, columns, coded, bases, sizes, payloads, kept))
    return Counting(counted, payloads, keys, n, heads, cols.names)


def _keeping(cols: TypedColumns, head: int, heads: Any) -> Any:
    """The JVM column, always true, that keeps the first ``head`` rows' values of each of
    the first :data:`HEAD_PARTITIONS` partitions (``jvm/HeadRows.java``): the values
    alone are evaluated for those rows only, by a test on the row id."""
    from toolkit.spark.tally import jvm_class

    def columns() -> tuple[Any, Any]:
        from pyspark.sql import functions as F

        row = F.monotonically_increasing_id()
        first = (row < F.lit(HEAD_PARTITIONS << ROW_BITS)) & \
            (row.bitwiseAND(F.lit((1 << ROW_BITS) - 1)) < F.lit(head))
        return F.struct(*map(F.col, cols.value_names()))._jc, first._jc

    # one set of columns serves every batch of the layout; the accumulator is the batch's
    values, first = built(("head", cols.names, head), columns)
    spark = cols.lazy.session
    return jvm_class(spark, HEAD_ROWS_CLASS).kept(
        spark._jsparkSession, values, first, head, heads)


def head_of(counts: Counting, row: Mapping[str, int], head: int) -> list[dict[str, Any]] | None:
    """The first ``head`` rows of the batch :func:`counting` counted, kept as the write
    read them (``row``: what :func:`tally_counts` gave), read as
    :func:`toolkit.spark.columnar.head_records` reads them; None when they were not all
    kept (rows in later partitions only)."""
    import base64

    import pyarrow as pa

    from toolkit.arrow import records
    from toolkit.spark.router import payload_texts

    if counts.heads is None:
        return None
    kept: dict[int, bytes] = {}
    for line in payload_texts(counts.lazy.session, counts.heads):
        number, _, data = line.partition(" ")
        kept[int(number)] = base64.b64decode(data)  # a task run twice kept the same rows
    found: list[dict[str, Any]] = []
    for part in sorted(int(k[1:]) for k in row if k[0] == "p" and k[1:].isdigit()):
        if len(found) >= head:
            break
        if not row[f"p{part}"]:
            continue
        if part not in kept:
            return None
        table = pa.ipc.open_stream(kept[part]).read_all()
        found += records(table.rename_columns(list(counts.names)))
    return found[:head]


def tally_counts(counts: Counting) -> dict[str, int]:
    """What :func:`counting` counted, as the aggregation of :func:`class_counts` gives it
    (``rows``, ``k0``, ``f0``, ``l0``... with row ids as :func:`numbered` makes them, and
    ``p0``... the rows of each partition that has any). Read once the job that wrote the
    rows succeeded: every partition ran then, and one that sent nothing had no rows."""
    from toolkit.spark.router import payload_texts

    sent: dict[tuple[int, int], list[int]] = {}
    for line in payload_texts(counts.lazy.session, counts.payloads):
        pack, part, *numbers = (int(x) for x in line.split())
        sent[pack, part] = numbers  # a task run twice sent the same counts
    # per partition, its packs in order (sorted by pack first): every class once
    by_part: dict[int, list[int]] = {}
    for (_, part), numbers in sorted(sent.items()):
        by_part.setdefault(part, numbers[:1]).extend(numbers[1:])
    row = {"rows": sum(v[0] for v in by_part.values())}
    row |= {f"p{q}": v[0] for q, v in by_part.items()}
    for j in range(len(counts.keys)):
        row[f"k{j}"] = sum(v[1 + 3 * j] for v in by_part.values())
        ends = [(q << ROW_BITS | v[2 + 3 * j], q << ROW_BITS | v[3 + 3 * j])
                for q, v in by_part.items() if v[1 + 3 * j]]
        if ends:
            row[f"f{j}"] = min(a for a, _ in ends)
            row[f"l{j}"] = max(b for _, b in ends)
    return row
