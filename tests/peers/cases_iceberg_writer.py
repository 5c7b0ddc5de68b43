"""Iceberg's Spark write-time schema merging, re-expressed as ingest cases: Iceberg Java's
``spark/v3.5/spark/src/test/java/org/apache/iceberg/spark/source/TestDataFrameWriterV2.java``
and ``TestDataFrameWriterV2Coercion.java`` (apache/iceberg), every test of both.

Each Iceberg test makes a table with Spark SQL (``id bigint, data string``, or its own
``CREATE TABLE``), appends typed DataFrames read from JSON lines with a DDL schema
(``jsonToDF(schema, lines...)``) and checks the table's schema and the rows Spark reads
back. A case here is the same table, made the same way, and the same DataFrames, given to
``toolkit.ingest`` batch by batch and to ``toolkit.simulate`` with the table's schema.

Iceberg merges a DataFrame's schema into the table only when asked (the table property
``write.spark.accept-any-schema`` and the write option ``merge-schema``); without them a
new column fails the write. The toolkit's default, ``contracts`` ``evolve``, is Iceberg's
merge-schema; Iceberg's default is the contract ``{"*": "freeze"}`` (docs/rules.md,
Contracts). Iceberg's tests run one policy; a case here runs under both of the toolkit's
(``[upsolver]``, the default, and ``[widen]``, RULES 5, whose types are closer to
Iceberg's), and some also with the same records as JSON lines, which carry no float, int
or decimal type (``[JSON lines]``). A case marked ``differs`` is listed with the reason in
docs/rules.md ("Spark write-time schema merging").
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from pyiceberg.schema import Schema

from tests.peers.model import Lines, Refusal, opt, refused, schema
from toolkit.errors import ContractError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

W = "iceberg-java:TestDataFrameWriterV2."
C = "iceberg-java:TestDataFrameWriterV2Coercion."

#: every test of the two Iceberg classes (apache/iceberg, spark/v3.5), each cited by a case
ICEBERG_TESTS = (
    *(W + name for name in [
        "testMergeSchemaFailsWithoutWriterOption", "testMergeSchemaWithoutAcceptAnySchema",
        "testMergeSchemaSparkProperty", "testMergeSchemaIcebergProperty",
        "testWriteWithCaseSensitiveOption", "testMergeSchemaSparkConfiguration",
        "testMergeSchemaIgnoreCastingLongToInt", "testMergeSchemaIgnoreCastingDoubleToFloat",
        "testMergeSchemaIgnoreCastingDecimalToDecimalWithNarrowerPrecision",
    ]),
    C + "testByteAndShortCoercion",
)


@dataclass(frozen=True)
class JsonFrame:
    """Iceberg's ``jsonToDF(schema, lines...)``: JSON lines read by Spark with a DDL schema,
    a typed DataFrame (a ``float`` column holds 32-bit floats)."""

    ddl: str
    lines: tuple[str, ...]

    def dataframe(self, spark: SparkSession) -> DataFrame:
        text = spark.sparkContext.parallelize(list(self.lines), 1)
        return spark.read.schema(self.ddl).json(text)


@dataclass(frozen=True)
class RowFrame:
    """A typed DataFrame of the given rows (tuples in the DDL's column order)."""

    ddl: str
    rows: tuple[tuple[Any, ...], ...]

    def dataframe(self, spark: SparkSession) -> DataFrame:
        return spark.createDataFrame(list(self.rows), self.ddl)


Frame = JsonFrame | RowFrame | Lines


@dataclass(frozen=True)
class WriterCase:
    """One Iceberg write test: ``create`` the table's columns as Spark SQL declares them
    (None: the first batch makes the table, as ``createOrReplace`` does), ``batches``
    appended in order, under ``options`` and the Spark session settings ``conf``.

    ``expect`` is the final table schema, or the refusal of the last batch (the table is
    then as the batches before it left it). ``rows`` are the rows a reader of the final
    table sees, in input order, each without its null columns; ``aside`` the (reason,
    field) of each record set aside."""

    id: str
    create: str | None
    batches: tuple[Frame, ...]
    expect: Schema | Refusal
    rows: tuple[dict[str, Any], ...]
    aside: tuple[tuple[str, str | None], ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)
    conf: Mapping[str, str] = field(default_factory=dict)
    cites: tuple[str, ...] = ()
    differs: bool = False

    def param(self) -> Any:
        return pytest.param(self, id=self.id)

    def sources(self, spark: SparkSession, folder: Path) -> list[Any]:
        """The batches as ``ingest`` and ``simulate`` take them: DataFrames of ``spark``,
        JSON lines as files in ``folder``."""
        return [b.write(folder, f"batch{i}") if isinstance(b, Lines) else b.dataframe(spark)
                for i, b in enumerate(self.batches)]


def f32(x: float) -> float:
    """``x`` as a 32-bit float holds it (Iceberg's ``12.06F``), read as a double."""
    held: float = struct.unpack("<f", struct.pack("<f", x))[0]
    return held


def as_lines(frame: JsonFrame) -> Lines:
    """The same records as JSON lines, which Spark types by their text (RULES 1)."""
    return Lines("".join(json.dumps(json.loads(line)) + "\n" for line in frame.lines))


CASES: list[WriterCase] = []
POLICIES = ("upsolver", "widen")


def case(test: str, *, variant: str | None = None, also: tuple[str, ...] = (),
         options: Mapping[str, Any] | None = None, **kw: Any) -> None:
    cls = C if test.startswith("testByte") else W
    policy = dict(options or {}).get("policy")
    label = ", ".join(p for p in (variant, policy) if p)
    case_id = cls + test + (f"[{label}]" if label else "")
    CASES.append(WriterCase(case_id, cites=(cls + test, *(W + a for a in also)),
                            options=dict(options or {}), **kw))


BASE = "id bigint, data string"
TWO = JsonFrame(BASE, ('{ "id": 1, "data": "a" }', '{ "id": 2, "data": "b" }'))
TWO_ROWS = ({"id": 1, "data": "a"}, {"id": 2, "data": "b"})
START = schema(opt(1, "id", "long"), opt(2, "data", "string"))


def ev(fid: int, name: str, t: str, source: str) -> Any:
    """A column evolution made for ``source`` (RULES 4: its doc names the key)."""
    return opt(fid, name, t, doc=f"upsolver_evolved_from:{source}")


# --- a new column: refused without merge-schema, added with it ------------------------------

THREE = JsonFrame(f"{BASE}, new_col float", (
    '{ "id": 3, "data": "c", "new_col": 12.06 }', '{ "id": 4, "data": "d", "new_col": 14.41 }'))

# Iceberg fails the write (`Field new_col not found in source schema`); a frozen key fails
# the batch naming the field and the contract, and the first batch's rows stay as they were
case("testMergeSchemaFailsWithoutWriterOption", also=("testMergeSchemaWithoutAcceptAnySchema",),
     create=BASE, batches=(TWO, THREE), options={"contracts": {"*": "freeze"}},
     expect=refused("'new_col'", "freeze", "nothing was written", error=ContractError),
     rows=TWO_ROWS)

for policy, new_type in [("upsolver", "double"), ("widen", "float")]:
    # Iceberg: `new_col float`, reading 12.06F; under upsolver a float counts as a double
    # (RULES 1): the same number, in a double column
    case("testMergeSchemaSparkProperty", also=("testMergeSchemaIcebergProperty",),
         create=BASE, batches=(TWO, THREE), options={"policy": policy},
         expect=schema(opt(1, "id", "long"), opt(2, "data", "string"),
                       opt(3, "new_col", new_type)),
         rows=(*TWO_ROWS, {"id": 3, "data": "c", "new_col": f32(12.06)},
               {"id": 4, "data": "d", "new_col": f32(14.41)}),
         differs=policy == "upsolver")

# the same records as JSON lines: 12.06 is a double, read back as written
case("testMergeSchemaSparkProperty", variant="JSON lines", create=BASE,
     batches=(as_lines(TWO), as_lines(THREE)),
     expect=schema(opt(1, "id", "long"), opt(2, "data", "string"), opt(3, "new_col", "double")),
     rows=(*TWO_ROWS, {"id": 3, "data": "c", "new_col": 12.06},
           {"id": 4, "data": "d", "new_col": 14.41}))

SALARY = JsonFrame(f"{BASE}, salary float", (
    '{ "id": 3, "data": "c", "salary": 120000.34 }',
    '{ "id": 4, "data": "d", "salary": 140000.56 }'))
for policy, new_type in [("upsolver", "double"), ("widen", "float")]:
    # a float holds 120000.34 as 120000.34375, which Iceberg's 120000.34F is too
    case("testMergeSchemaSparkConfiguration", create=BASE, batches=(TWO, SALARY),
         options={"policy": policy},
         expect=schema(opt(1, "id", "long"), opt(2, "data", "string"),
                       opt(3, "salary", new_type)),
         rows=(*TWO_ROWS, {"id": 3, "data": "c", "salary": f32(120000.34)},
               {"id": 4, "data": "d", "salary": f32(140000.56)}),
         differs=policy == "upsolver")

# --- a narrower type into a column: the column keeps its type --------------------------------

INTS = JsonFrame("id int, data string", ('{ "id": 3, "data": "c" }', '{ "id": 4, "data": "d" }'))
for policy in POLICIES:
    case("testMergeSchemaIgnoreCastingLongToInt", create=BASE, batches=(TWO, INTS),
         options={"policy": policy}, expect=START,
         rows=(*TWO_ROWS, {"id": 3, "data": "c"}, {"id": 4, "data": "d"}))

DOUBLES = JsonFrame("id double, data string",
                    ('{ "id": 1.0, "data": "a" }', '{ "id": 2.0, "data": "b" }'))
FLOATS = JsonFrame("id float, data string",
                   ('{ "id": 3.0, "data": "c" }', '{ "id": 4.0, "data": "d" }'))
for policy in POLICIES:
    case("testMergeSchemaIgnoreCastingDoubleToFloat", create="id double, data string",
         batches=(DOUBLES, FLOATS), options={"policy": policy},
         expect=schema(opt(1, "id", "double"), opt(2, "data", "string")),
         rows=tuple({"id": float(i), "data": d} for i, d in enumerate("abcd", start=1)))

DECIMAL = "id decimal(6,2), data string"
DEC6 = JsonFrame(DECIMAL, ('{ "id": 1.0, "data": "a" }', '{ "id": 2.0, "data": "b" }'))
DEC4 = JsonFrame("id decimal(4,2), data string",
                 ('{ "id": 3.0, "data": "c" }', '{ "id": 4.0, "data": "d" }'))
DEC_START = schema(opt(1, "id", "decimal(6, 2)"), opt(2, "data", "string"))
NARROWER = "testMergeSchemaIgnoreCastingDecimalToDecimalWithNarrowerPrecision"
# Iceberg writes both DataFrames into `id decimal(6, 2)`; the upsolver policy never writes
# a declared decimal(6, 2) (outside its lattice) and gives every decimal `id_decimal`
case(NARROWER, create=DECIMAL, batches=(DEC6, DEC4), options={"policy": "upsolver"},
     expect=schema(*DEC_START.fields, ev(3, "id_decimal", "decimal(38, 18)", "id")),
     rows=tuple({"data": d, "id_decimal": Decimal(i)} for i, d in enumerate("abcd", start=1)),
     differs=True)
case(NARROWER, create=DECIMAL, batches=(DEC6, DEC4), options={"policy": "widen"},
     expect=DEC_START,
     rows=tuple({"id": Decimal(f"{i}.00"), "data": d} for i, d in enumerate("abcd", start=1)))
# as JSON lines `1.0` is a double, which no decimal column holds (RULES 5: decimals do not
# widen): upsolver adds `id_double`, widen sets the records aside
case(NARROWER, variant="JSON lines", create=DECIMAL, batches=(as_lines(DEC6), as_lines(DEC4)),
     options={"policy": "upsolver"},
     expect=schema(*DEC_START.fields, ev(3, "id_double", "double", "id")),
     rows=tuple({"data": d, "id_double": float(i)} for i, d in enumerate("abcd", start=1)))
case(NARROWER, variant="JSON lines", create=DECIMAL, batches=(as_lines(DEC6), as_lines(DEC4)),
     options={"policy": "widen"}, expect=DEC_START, rows=(),
     aside=(("incompatible", "id"),) * 4)

# --- names that differ from the table's only by case -----------------------------------------

CASE_DDL = "ID bigint, DaTa string"
# Iceberg's DataFrame: its JSON keys (`id`, `data`) do not match the schema's `ID`, `DaTa`
# (Spark's JSON reader matches names exactly), so both columns read null
CASE_NULLS = JsonFrame(CASE_DDL, TWO.lines)
SENSITIVE = "spark.sql.caseSensitive"
# Iceberg, case-insensitive: no column added (2 fields); case-sensitive: `ID` and `DaTa`
# added (4 fields). Keys that only hold nulls make no column (RULES 3.5) either way
case("testWriteWithCaseSensitiveOption", variant="case-insensitive", create=BASE,
     batches=(CASE_NULLS,), conf={SENSITIVE: "false"}, expect=START, rows=({}, {}))
case("testWriteWithCaseSensitiveOption", variant="case-sensitive", create=BASE,
     batches=(CASE_NULLS,), conf={SENSITIVE: "true"}, expect=START, rows=({}, {}),
     differs=True)
# the rows the test means: `ID` beside the table's `id` is its own field, whose column is
# `ID_2` (RULES 4: names collide case-insensitively), whatever Spark's setting
for sensitive in ("false", "true"):
    case("testWriteWithCaseSensitiveOption",
         variant=f"values, case-{'sensitive' if sensitive == 'true' else 'insensitive'}",
         create=BASE, batches=(RowFrame(CASE_DDL, ((1, "a"), (2, "b"))),),
         conf={SENSITIVE: sensitive},
         expect=schema(*START.fields, ev(3, "DaTa_2", "string", "DaTa"),
                       ev(4, "ID_2", "long", "ID")),
         rows=({"DaTa_2": "a", "ID_2": 1}, {"DaTa_2": "b", "ID_2": 2}),
         differs=True)

# --- a new table from byte and short columns (Iceberg: `id int, data string`) ----------------

for spark_type in ("byte", "short"):
    for policy, id_type in [("upsolver", "long"), ("widen", "int")]:
        # a batch's new columns are ordered by name (RULES 3.3): `data` first
        case("testByteAndShortCoercion", variant=spark_type, create=None,
             batches=(JsonFrame(f"id {spark_type}, data string", TWO.lines),),
             options={"policy": policy},
             expect=schema(opt(1, "data", "string"), opt(2, "id", id_type)), rows=TWO_ROWS,
             differs=True)
