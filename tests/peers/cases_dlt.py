"""dlt's own tests of type inference, coercion and variant columns, re-expressed as data
cases: the records dlt's test feeds its normalizer, batch by batch, and what the toolkit
makes of them by RULES 1-4 (and docs/rules.md where RULES is silent): the final table
schema, every record as a reader of the table sees it, and the records set aside.

dlt (github.com/dlt-hub/dlt) infers a column's type from its first value and, when a later
value does not coerce into it, adds a *variant* column `col__v_text` beside it: the
toolkit's `col_string`, documented `upsolver_evolved_from:col`. Three differences hold for
every case and are not marked one by one (docs/rules.md, "Where we differ from dlt's own
tests"): variant names, dlt's flattening of records into `a__b` columns and of lists into
child tables (the toolkit keeps struct and list columns, with the same evolution inside
them), and dlt's snake_case identifiers (the toolkit keeps the key). A case marked
``differs`` differs beyond those, on purpose; docs/rules.md lists it with the reason.

The tests cited (``dlt:<path>::<test>[<case>]``, the bracket naming the part of a longer
test or the parameter) are those of dlt's default ``relational`` normalizer, which coerces
a value into an existing column when it can (``coerce_value``), except where a case cites
``test_json_relational_no_coercion.py``, whose normalizer makes a variant for every change
of type. dlt's "preferred types" are the toolkit's ``hints``; its schema contract words
(`evolve`, `discard_value`, `discard_row`, `freeze`) are the toolkit's ``contracts``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from pyiceberg.schema import Schema
from pyiceberg.types import NestedField

from tests.peers.model import (
    DataCase,
    Lines,
    Refusal,
    SetAside,
    lst,
    opt,
    refused,
    req,
    schema,
    st,
)
from toolkit.errors import ContractError, IncompatibleRecordError

NC = "dlt:tests/common/normalizers/test_json_relational_no_coercion.py::"
JR = "dlt:tests/common/normalizers/test_json_relational.py::"
INF = "dlt:tests/normalize/test_json_item_inference.py::"
NORM = "dlt:tests/normalize/test_normalize.py::"
COE = "dlt:tests/common/schema/test_coercion.py::"
DET = "dlt:tests/common/schema/test_detections.py::"
JSN = "dlt:tests/common/test_json.py::"
SC = "dlt:tests/pipeline/test_schema_contracts.py::"

UTC = dt.UTC
CASES: list[DataCase] = []


def ev(fid: int, name: str, t: Any, source: str) -> NestedField:
    """A column evolution made for the key ``source`` (RULES 4: its doc names the key)."""
    return opt(fid, name, t, doc=f"upsolver_evolved_from:{source}")


def ts(year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0,
       micro: int = 0) -> dt.datetime:
    """An instant in UTC, as ``.rows`` holds timestamps (docs/rules.md: aware UTC)."""
    return dt.datetime(year, month, day, hour, minute, second, micro, tzinfo=UTC)


def case(
    test: str,
    batches: Sequence[Sequence[Any] | Lines],
    expect: Schema | Refusal,
    rows: Sequence[dict[str, Any]] = (),
    *,
    part: str | None = None,
    also: Sequence[str] = (),
    aside: Sequence[SetAside] = (),
    **kw: Any,
) -> None:
    """A case for ``test`` (``part``: which part of it, or its parameter); ``also`` are
    further tests asserting the same."""
    CASES.append(DataCase(
        test + (f"[{part}]" if part else ""),
        tuple(b if isinstance(b, Lines) else tuple(b) for b in batches),
        expect,
        tuple(rows),
        tuple(aside),
        cites=(test, *also),
        **kw,
    ))


# --- one column, and a value of another type in a later batch ----------------------------
# test_json_relational_no_coercion.py's table: a first row sets `col`'s type, a second
# brings another. The relational normalizer coerces six of them (its
# test_relational_coerces_same_cases); the toolkit writes a value into the column only when
# RULES 2 converts it exactly, and adds `col_<type>` otherwise (RULES 3.3).

REL = NC + "test_relational_coerces_same_cases"
VAR = NC + "test_type_mismatch_creates_variant"

case(REL, [[{"col": "hello"}], [{"col": 42}]],
     schema(opt(1, "col", "string")),
     [{"col": "hello"}, {"col": "42"}], part="text_col_gets_bigint")
case(REL, [[{"col": "hello"}], [{"col": 3.14}]],
     schema(opt(1, "col", "string")),
     [{"col": "hello"}, {"col": "3.14"}], part="text_col_gets_double")
# dlt writes str(True), "True"; RULES 2 spells a boolean as JSON and Spark do
case(REL, [[{"col": "hello"}], [{"col": True}]],
     schema(opt(1, "col", "string")),
     [{"col": "hello"}, {"col": "true"}], part="text_col_gets_bool",
     also=(COE + "test_coerce_type_to_text",), differs=True)
# dlt parses the text into the bigint column: a text is never read as a number here
case(REL, [[{"col": 100}], [{"col": "200"}]],
     schema(opt(1, "col", "long"), ev(2, "col_string", "string", "col")),
     [{"col": 100}, {"col_string": "200"}], part="bigint_col_gets_text", differs=True)
case(REL, [[{"col": 1.5}], [{"col": "3.14"}]],
     schema(opt(1, "col", "double"), ev(2, "col_string", "string", "col")),
     [{"col": 1.5}, {"col_string": "3.14"}], part="double_col_gets_text", differs=True)
case(REL, [[{"col": 1.5}], [{"col": 42}]],
     schema(opt(1, "col", "double")),
     [{"col": 1.5}, {"col": 42.0}], part="double_col_gets_bigint")
case(VAR, [[{"col": 100}], [{"col": 1.5}]],
     schema(opt(1, "col", "long"), ev(2, "col_double", "double", "col")),
     [{"col": 100}, {"col_double": 1.5}], part="bigint_col_gets_double")
case(VAR, [[{"col": True}], [{"col": "true"}]],
     schema(opt(1, "col", "boolean"), ev(2, "col_string", "string", "col")),
     [{"col": True}, {"col_string": "true"}], part="bool_col_gets_text")
case(VAR, [[{"col": True}], [{"col": 1}]],
     schema(opt(1, "col", "boolean"), ev(2, "col_long", "long", "col")),
     [{"col": True}, {"col_long": 1}], part="bool_col_gets_bigint")

# --- coerce_value, value by value (test_coercion.py) --------------------------------------

# dlt coerces a round double into the bigint column; a double is never narrower than long
case(COE + "test_coerce_type_to_bigint", [[{"x": 5}], [{"x": -762162.0}]],
     schema(opt(1, "x", "long"), ev(2, "x_double", "double", "x")),
     [{"x": 5}, {"x_double": -762162.0}], part="round double", differs=True)
# dlt refuses a boolean in a double column (a variant); RULES 2: boolean <= long <= double
case(COE + "test_coerce_type_to_double", [[{"x": 1.5}], [{"x": False}]],
     schema(opt(1, "x", "double")),
     [{"x": 1.5}, {"x": 0.0}], part="bool", differs=True)
# dlt reads "yes" and 0 as booleans
case(COE + "test_coerce_type_to_bool", [[{"b": True}], [{"b": "yes"}, {"b": 0}]],
     schema(opt(1, "b", "boolean"), ev(2, "b_long", "long", "b"), ev(3, "b_string", "string", "b")),
     [{"b": True}, {"b_string": "yes"}, {"b_long": 0, "b_string": "0"}], differs=True)
# dlt writes bytes into a text column as base64; UTF-8 bytes are that text here, and bytes
# that are no text keep their own column
case(COE + "test_coerce_type_to_text",
     [[{"t": "hello"}], [{"t": b"binary string"}, {"t": b"\xff\x00"}]],
     schema(opt(1, "t", "string"), ev(2, "t_binary", "binary", "t")),
     [{"t": "hello"}, {"t": "binary string", "t_binary": b"binary string"},
      {"t_binary": b"\xff\x00"}], part="binary", differs=True)
# dlt parses the text and coerces bigint and double into the decimal column; a decimal
# converts to string only (docs/rules.md, Typed values)
case(COE + "test_coerce_to_numeric",
     [[{"n": Decimal("1.5")}], [{"n": " -1726.839283 "}, {"n": -1726}, {"n": 1276.37}]],
     schema(opt(1, "n", "decimal(38, 18)"), ev(2, "n_double", "double", "n"),
            ev(3, "n_long", "long", "n"), ev(4, "n_string", "string", "n")),
     [{"n": Decimal("1.5")}, {"n_string": " -1726.839283 "},
      {"n_double": -1726.0, "n_long": -1726, "n_string": "-1726"},
      {"n_double": 1276.37, "n_string": "1276.37"}], part="decimal", differs=True)

ISO = "2022-05-10T03:41:31.466000+00:00"
# dlt drops the tenth of a microsecond into the timestamp column; the double keeps it
case(COE + "test_coerce_type_to_timestamp", [[{"ts": ISO}], [{"ts": 1633344898.7415245}]],
     schema(opt(1, "ts", "timestamptz"), ev(2, "ts_double", "double", "ts")),
     [{"ts": ts(2022, 5, 10, 3, 41, 31, 466000)}, {"ts_double": 1633344898.7415245}],
     part="double", differs=True)
case(COE + "test_coerce_type_to_timestamp", [[{"ts": ISO}], [{"ts": " 1580405246 "}]],
     schema(opt(1, "ts", "timestamptz"), ev(2, "ts_string", "string", "ts")),
     [{"ts": ts(2022, 5, 10, 3, 41, 31, 466000)}, {"ts_string": " 1580405246 "}],
     part="epoch text", differs=True)
# as JSON lines: on a table, the JVM reads these texts as Python does
case(COE + "test_coerce_type_to_timestamp",
     [Lines.of({"ts": ISO}),
      Lines.of({"ts": "2022-05-10T03:41:31.466+02:00"}, {"ts": "2022-05-10T03:41:31.466+0200"},
               {"ts": "2022-04-26 10:36+02"}, {"ts": "2022-04-26 10:36"}, {"ts": "2021-04-25"})],
     schema(opt(1, "ts", "timestamptz")),
     [{"ts": ts(2022, 5, 10, 3, 41, 31, 466000)}, {"ts": ts(2022, 5, 10, 1, 41, 31, 466000)},
      {"ts": ts(2022, 5, 10, 1, 41, 31, 466000)}, {"ts": ts(2022, 4, 26, 8, 36)},
      {"ts": ts(2022, 4, 26, 10, 36)}, {"ts": ts(2021, 4, 25)}], part="ISO texts")
NOT_TIMES = ["now", "2007-03-01T13:00:00Z/2008-05-11T15:30:00Z", "2011--20012",
             "06/04/22, 11:15PM IST", "Wed, 06 Jul 2022 11:58:08 +0200",
             "Tuesday, 13-Sep-22 18:42:31 UTC", "10:36", "x2022-05-10T03:41:31.466000X+00:00",
             "03:41:31.466"]
case(COE + "test_coerce_type_to_timestamp",
     [[{"ts": ISO}], [{"ts": t} for t in NOT_TIMES]],
     schema(opt(1, "ts", "timestamptz"), ev(2, "ts_string", "string", "ts")),
     [{"ts": ts(2022, 5, 10, 3, 41, 31, 466000)}, *({"ts_string": t} for t in NOT_TIMES)],
     part="no timestamps")
# dlt truncates a timestamp into the date column; a date cannot hold the time of day
case(COE + "test_coerce_type_to_date",
     [[{"d": "2023-02-27"}], [{"d": ts(1995, 5, 6, 0, 1, 1)}, {"d": ISO}]],
     schema(opt(1, "d", "date"), ev(2, "d_timestamp", "timestamptz", "d")),
     [{"d": dt.date(2023, 2, 27)}, {"d_timestamp": ts(1995, 5, 6, 0, 1, 1)},
      {"d_timestamp": ts(2022, 5, 10, 3, 41, 31, 466000)}], differs=True)

# --- rows of the item normalizer (test_json_item_inference.py) ----------------------------
# add_preferred_types: `timestamp` -> timestamp, `confidence` -> double, `number` -> decimal,
# `value` -> wei (no hint takes wei: a number of any size)

PREFERRED = {"timestamp": "timestamptz", "confidence": "double", "number": "decimal(38, 18)"}
# dlt reads the double as epoch seconds and the hex text as 255
case(INF + "test_coerce_row",
     [[{"timestamp": 78172.128, "confidence": "0.1", "value": "0xFF",
        "number": Decimal("128.67")}]],
     schema(opt(1, "confidence", "double"), opt(2, "number", "decimal(38, 18)"),
            opt(3, "timestamp", "timestamptz"), ev(4, "timestamp_double", "double", "timestamp"),
            opt(5, "value", "string")),
     [{"confidence": 0.1, "number": Decimal("128.67"), "timestamp_double": 78172.128,
       "value": "0xFF"}],
     part="first row", options={"hints": PREFERRED}, differs=True)
case(INF + "test_coerce_row",
     [[{"confidence": "0.1"}], [{"confidence": 0.18721}], [{"confidence": 1}],
      [{"confidence": "STR"}], [{"confidence": "STR"}]],
     schema(opt(1, "confidence", "double"), ev(2, "confidence_string", "string", "confidence")),
     [{"confidence": 0.1}, {"confidence": 0.18721}, {"confidence": 1.0},
      {"confidence_string": "STR"}, {"confidence_string": "STR"}],
     part="text variant", options={"hints": PREFERRED})
# dlt adds confidence__v_bool; the hint takes the boolean as RULES 2 converts it
case(INF + "test_coerce_row", [[{"confidence": 0.5}], [{"confidence": False}]],
     schema(opt(1, "confidence", "double")),
     [{"confidence": 0.5}, {"confidence": 0.0}],
     part="bool variant", options={"hints": PREFERRED}, differs=True)
# dlt fails (CannotCoerceColumnException) when the variant's name is a column of another
# type; RULES 4 numbers the name
case(INF + "test_coerce_row",
     [[{"new_colbool": False, "new_colbool_timestamp": b"not fit"}],
      [{"new_colbool": ts(2024, 1, 1)}]],
     schema(opt(1, "new_colbool", "boolean"), opt(2, "new_colbool_timestamp", "binary"),
            ev(3, "new_colbool_string", "string", "new_colbool"),
            ev(4, "new_colbool_timestamp_2", "timestamptz", "new_colbool")),
     [{"new_colbool": False, "new_colbool_timestamp": b"not fit"},
      {"new_colbool_string": "2024-01-01T00:00:00Z", "new_colbool_timestamp_2": ts(2024, 1, 1)}],
     part="variant name taken", differs=True)

TS_ISO = "2022-05-10T00:17:15.300000+00:00"
# dlt reads the double as epoch seconds; only a long is routed into a timestamp column
case(INF + "test_coerce_row_iso_timestamp", [[{"timestamp": TS_ISO}], [{"timestamp": 78172.128}]],
     schema(opt(1, "timestamp", "timestamptz"), ev(2, "timestamp_double", "double", "timestamp")),
     [{"timestamp": ts(2022, 5, 10, 0, 17, 15, 300000)}, {"timestamp_double": 78172.128}],
     part="double", differs=True)
case(INF + "test_coerce_row_iso_timestamp",
     [[{"timestamp": TS_ISO}], [{"timestamp": "übermorgen"}]],
     schema(opt(1, "timestamp", "timestamptz"), ev(2, "timestamp_string", "string", "timestamp")),
     [{"timestamp": ts(2022, 5, 10, 0, 17, 15, 300000)}, {"timestamp_string": "übermorgen"}],
     part="text")
case(INF + "test_coerce_tz_awareness_supports_naive",
     [[{"timestamp": "2022-05-10T00:17:15.300000+02:00",
        "created_at": "2022-05-10T00:17:15.300000+05:00"}]],
     schema(opt(1, "created_at", "timestamptz"), opt(2, "timestamp", "timestamptz")),
     [{"created_at": ts(2022, 5, 9, 19, 17, 15, 300000),
       "timestamp": ts(2022, 5, 9, 22, 17, 15, 300000)}],
     also=(INF + "test_coerce_timestamp_timezone_new_column_default",))
# a column without zone (dlt: timezone=False) takes the instant as naive UTC
case(INF + "test_coerce_timestamp_timezone_existing_column_preserve",
     [Lines.of({"event_time": "2022-05-10T05:30:45.500000-03:00"})],
     schema(opt(1, "event_time", "timestamp")),
     [{"event_time": dt.datetime(2022, 5, 10, 8, 30, 45, 500000)}],
     start=schema(opt(1, "event_time", "timestamp")))
case(INF + "test_coerce_timestamp_naive_datetime_input",
     [[{"local_time": dt.datetime(2022, 5, 10, 15, 30)}]],
     schema(opt(1, "local_time", "timestamptz")),
     [{"local_time": ts(2022, 5, 10, 15, 30)}])
# Wei.from_int256(2137 * 10**16, decimals=18) is 21.37; 2**256 - 1 fits no decimal column
case(INF + "test_supports_variant",
     [[{"evm": Decimal("21.37")}], [{"evm": Decimal(2**256 - 1)}]],
     schema(opt(1, "evm", "decimal(38, 18)"), ev(2, "evm_string", "string", "evm")),
     [{"evm": Decimal("21.37")}, {"evm_string": str(2**256 - 1)}])
case(INF + "test_coerce_new_null_value",
     [[{"timestamp": None}], [{"value": "0xFF", "x": None}], [{"a": None, "timestamp": 7}]],
     schema(opt(1, "value", "string"), opt(2, "timestamp", "long")),
     [{"value": "0xFF"}, {"timestamp": 7}],
     also=(JR + "test_keeps_none_values",), differs=True)
case(INF + "test_coerce_null_value_over_existing",
     [[{"timestamp": 82178.1298812}], [{"timestamp": None}]],
     schema(opt(1, "timestamp", "double")),
     [{"timestamp": 82178.1298812}, {}])
# dlt raises CannotCoerceNullException; failing the batch is the toolkit's `fail` choice
case(INF + "test_coerce_null_value_over_not_null",
     [[{"timestamp": 82178.1298812}], [{"timestamp": None}]],
     refused("timestamp", "required", error=IncompatibleRecordError),
     start=schema(req(1, "timestamp", "double")), options={"on_incompatible": "fail"})

NESTED_ROW = {"timestamp": 82178.1298812}
for part, nested, nested_type in [
    ("nested_item_list", [1, 2], lst(6, "long")),
    ("nested_item_dict", [dict(NESTED_ROW)], lst(6, st(opt(7, "timestamp", "double")))),
]:
    case(INF + "test_coerce_null_value_in_nested_table",
         [[{**NESTED_ROW, "a": [{**NESTED_ROW, "b": nested}]}],
          [{**NESTED_ROW, "a": [{**NESTED_ROW, "b": None}]}],
          [{**NESTED_ROW, "a": None}]],
         schema(opt(1, "a", lst(3, st(opt(4, "b", nested_type), opt(5, "timestamp", "double")))),
                opt(2, "timestamp", "double")),
         [{**NESTED_ROW, "a": [{**NESTED_ROW, "b": nested}]},
          {**NESTED_ROW, "a": [{**NESTED_ROW, "b": None}]}, NESTED_ROW],
         part=part)
case(INF + "test_coerce_null_value_as_compound_columns",
     [[{"id": "1", "a": {"b": 1, "c": 2}}], [{"id": "1", "a": None}], [{"id": "1", "a": "col"}]],
     schema(opt(1, "a", st(opt(3, "b", "long"), opt(4, "c", "long"))), opt(2, "id", "string"),
            ev(5, "a_string", "string", "a")),
     [{"id": "1", "a": {"b": 1, "c": 2}}, {"id": "1"}, {"id": "1", "a_string": "col"}])

V_LIST = [1, 2, "3", {"json": True}]
V_DICT = {"list": [1, 2], "str": "json"}
# dlt keeps both in json variants; a list of records and values splits by position here
case(INF + "test_coerce_json_variant",
     [[{"floatX": 78172.128, "confidenceX": 1.2}], [{"floatX": V_LIST, "confidenceX": V_DICT}]],
     schema(opt(1, "confidenceX", "double"), opt(2, "floatX", "double"),
            ev(3, "confidenceX_record", st(opt(4, "list", lst(6, "long")),
                                           opt(5, "str", "string")), "confidenceX"),
            ev(7, "floatX_array_record", lst(8, st(opt(9, "json", "boolean"))), "floatX"),
            ev(10, "floatX_array_string", lst(11, "string"), "floatX")),
     [{"floatX": 78172.128, "confidenceX": 1.2},
      {"confidenceX_record": V_DICT, "floatX_array_record": [None, None, None, {"json": True}],
       "floatX_array_string": ["1", "2", "3", None]}],
     part="records and lists", differs=True)
# dlt writes the dict into the text column as JSON text; records never go to string columns
case(INF + "test_coerce_json_variant", [[{"strX": "STR"}], [{"strX": V_DICT}]],
     schema(opt(1, "strX", "string"),
            ev(2, "strX_record", st(opt(3, "list", lst(5, "long")), opt(4, "str", "string")),
               "strX")),
     [{"strX": "STR"}, {"strX_record": V_DICT}], part="record into text", differs=True)
# dlt keeps the order in which columns arrived; a batch's new columns are ordered by name
case(INF + "test_preserve_column_order",
     [[{"tb": 1.5, "ta": 2.5, "tc": 3.5}], [{"tz": 4.5, "ty": 5.5}]],
     schema(opt(1, "ta", "double"), opt(2, "tb", "double"), opt(3, "tc", "double"),
            opt(4, "ty", "double"), opt(5, "tz", "double")),
     [{"tb": 1.5, "ta": 2.5, "tc": 3.5}, {"tz": 4.5, "ty": 5.5}], differs=True)
case(INF + "test_map_column_type",
     [[{"a": "18271.11", "b": ["city"], "c": 0x72, "d": b"bytes str"}]],
     schema(opt(1, "a", "string"), opt(2, "b", lst(5, "string")), opt(3, "c", "long"),
            opt(4, "d", "binary")),
     [{"a": "18271.11", "b": ["city"], "c": 114, "d": b"bytes str"}])
case(INF + "test_map_column_preferred_type",
     [[{"confidence": 1278712}, {"confidence": "18271"}]],
     schema(opt(1, "confidence", "double")),
     [{"confidence": 1278712.0}, {"confidence": 18271.0}],
     part="double", options={"hints": {"confidence": "double"}})
case(INF + "test_map_column_preferred_type",
     [[{"timestamp": 18271}, {"timestamp": "2022-05-10T00:54:38.237000+00:00"}]],
     schema(opt(1, "timestamp", "timestamptz")),
     [{"timestamp": ts(1970, 1, 1, 5, 4, 31)}, {"timestamp": ts(2022, 5, 10, 0, 54, 38, 237000)}],
     part="timestamp", options={"hints": {"timestamp": "timestamptz"}})
# dlt trims the text into the decimal; a hint takes a text that spells its value as it is
case(INF + "test_map_column_preferred_type", [[{"number": " -0.821 "}, {"number": "-0.821"}]],
     schema(opt(1, "number", "decimal(10, 3)"), ev(2, "number_string", "string", "number")),
     [{"number_string": " -0.821 "}, {"number": Decimal("-0.821"), "number_string": "-0.821"}],
     part="decimal", options={"hints": {"number": "decimal(10,3)"}}, differs=True)

# --- whole loads (test_normalize.py) ------------------------------------------------------

DOC = {"str": "text", "int": 1}
DOC2 = {"str": "text", "int": 1, "bool": True}
DOC_V = {"int": "hundred"}
# dlt's child table doc__comp gets `int` bigint and `int__v_text` as rows arrive; the
# batch's types are decided together here, so `comp.int` takes the wider string (RULES 3.2)
case(NORM + "test_schema_changes",
     [[DOC], [DOC, DOC2, DOC],
      [{"comp": [DOC]}, DOC, DOC_V, {"comp": [DOC2]}, {"comp": [DOC_V]}]],
     schema(opt(1, "int", "long"), opt(2, "str", "string"), opt(3, "bool", "boolean"),
            opt(4, "comp", lst(5, st(opt(6, "bool", "boolean"), opt(7, "int", "string"),
                                     ev(8, "int_long", "long", "int"),
                                     opt(9, "str", "string")))),
            ev(10, "int_string", "string", "int")),
     [DOC, DOC, DOC2, DOC,
      {"comp": [{"bool": None, "int": "1", "int_long": 1, "str": "text"}]},
      {**DOC, "int_string": "1"}, {"int_string": "hundred"},
      {"comp": [{"bool": True, "int": "1", "int_long": 1, "str": "text"}]},
      {"comp": [{"bool": None, "int": "hundred", "int_long": None, "str": None}]}],
     differs=True)
BIG = "115792089237316195423570985008687907853269984665640564039457584007913129639935.1"
# tests/cases.py JSON_TYPED_DICT (pendulum values as datetime's): a decimal beyond
# decimal(38, 18) is its text, nothing rounded; a time of day is its ISO text
case(NORM + "test_normalize_typed_json",
     [[{"str": "string", "decimal": Decimal("21.37"), "big_decimal": Decimal(BIG),
        "datetime": ts(2005, 4, 2, 20, 37, 37, 358236), "date": dt.date(2022, 2, 2),
        "hexbytes": bytes.fromhex("2137"), "bytes": b"2137", "wei": Decimal("21.37"),
        "time": dt.time(20, 37, 37, 358236)}]],
     schema(opt(1, "big_decimal", "string"), opt(2, "bytes", "binary"), opt(3, "date", "date"),
            opt(4, "datetime", "timestamptz"), opt(5, "decimal", "decimal(38, 18)"),
            opt(6, "hexbytes", "binary"), opt(7, "str", "string"), opt(8, "time", "string"),
            opt(9, "wei", "decimal(38, 18)")),
     [{"big_decimal": BIG, "bytes": b"2137", "date": dt.date(2022, 2, 2),
       "datetime": ts(2005, 4, 2, 20, 37, 37, 358236), "decimal": Decimal("21.37"),
       "hexbytes": b"\x21\x37", "str": "string", "time": "20:37:37.358236",
       "wei": Decimal("21.37")}], differs=True)

# --- the relational normalizer (test_json_relational.py) ----------------------------------

# dlt makes no column of an empty list (a child table without rows); RULES 1 gives an
# empty array with no other evidence an array of string
case(JR + "test_flatten_fix_field_name",
     [[{"f-1": "!  30", "f 2": [], "f!3": {"f4": "a", "f-5": "b",
                                          "f*6": {"c": 7, "c v": 8, "c x": []}}}]],
     schema(opt(1, "f 2", lst(4, "string")),
            opt(2, "f!3", st(opt(5, "f*6", st(opt(8, "c", "long"), opt(9, "c v", "long"),
                                              opt(10, "c x", lst(11, "string")))),
                             opt(6, "f-5", "string"), opt(7, "f4", "string"))),
            opt(3, "f-1", "string")),
     [{"f-1": "!  30", "f 2": [], "f!3": {"f4": "a", "f-5": "b",
                                         "f*6": {"c": 7, "c v": 8, "c x": []}}}],
     differs=True)
# dlt names an empty key `_empty`; it is numbered like a collision, its doc keeping the key
case(JR + "test_normalize_empty_keys",
     [[{"a": 1, "": 2}], [{"a": 1, "b": {"": 2}}], [{"a": 1, "l": [{"": 2}]}]],
     schema(ev(1, "_2", "long", ""), opt(2, "a", "long"),
            opt(3, "b", st(ev(4, "_2", "long", ""))),
            opt(5, "l", lst(6, st(ev(7, "_2", "long", ""))))),
     [{"_2": 2, "a": 1}, {"a": 1, "b": {"_2": 2}}, {"a": 1, "l": [{"_2": 2}]}], differs=True)
# dlt wraps an item that is no object as {"value": ...}; here it is set aside. The list
# of two-letter texts is one more such item: read as key-value pairs, it would pass for
# the record {"a": "b", "c": "d"}
NO_RECORDS = [1, [1, 2, 3, 4, "A"], ["ab", "cd"]]
case(JR + "test_wrap_in_dict", [[{"value": 0}, *NO_RECORDS]],
     schema(opt(1, "value", "long")), [{"value": 0}],
     aside=[SetAside("not-a-record", None, item) for item in NO_RECORDS], differs=True)


def _at(minute: int, second: int) -> dt.datetime:
    return ts(2023, 5, 12, 12, minute, second)


WEBPATH = [
    [{"url": "https://www.website.com/", "timestamp": "2023-05-12T12:35:01Z"},
     {"url": "https://www.website.com/products", "timestamp": "2023-05-12T12:38:45Z"},
     [{"url": "https://www.website.com/products/item1234", "timestamp": "2023-05-12T12:42:22Z"}]],
    [1, 2, 3],
]
# dlt makes child tables zen__webpath, zen__webpath__list (records and numbers in one) and
# zen__webpath__list__list; here the ragged list keeps its depth, records and numbers split
# by position (docs/rules.md, Mixed arrays)
case(JR + "test_list_in_list",
     [[{"created_at": "2023-05-12T12:34:56Z", "ended_at": "2023-05-12T13:14:32Z",
        "webpath": WEBPATH}]],
     schema(opt(1, "created_at", "timestamptz"), opt(2, "ended_at", "timestamptz"),
            opt(3, "webpath", lst(5, lst(6, lst(7, st(opt(8, "timestamp", "timestamptz"),
                                                      opt(9, "url", "string")))))),
            ev(4, "webpath_array3_long", lst(10, lst(11, lst(12, "long"))), "webpath")),
     [{"created_at": ts(2023, 5, 12, 12, 34, 56), "ended_at": ts(2023, 5, 12, 13, 14, 32),
       "webpath": [[[{"timestamp": _at(35, 1), "url": "https://www.website.com/"}],
                    [{"timestamp": _at(38, 45), "url": "https://www.website.com/products"}],
                    [{"timestamp": _at(42, 22),
                      "url": "https://www.website.com/products/item1234"}]],
                   [[None], [None], [None]]],
       "webpath_array3_long": [[[None], [None], [None]], [[1], [2], [3]]]}],
     differs=True)

# --- autodetection (test_detections.py) ---------------------------------------------------

# dlt's "timestamp" detection reads a number near now as epoch seconds; a number is a
# number (RULES 1), and a long beside a double in a first batch is dropped (RULES 3.2)
case(DET + "test_timestamp_detection", [[{"t": 1714557600.5}, {"t": 1714557600}]],
     schema(opt(1, "t", "double")), [{"t": 1714557600.5}, {"t": 1714557600.0}], differs=True)
TIMES = ["1975-05-21T22:00:00Z", "2022-06-01T00:48:35.040Z", "2021-07-24 10:51"]
NOT_ISO = ["0-05-01T27:00:00Z", "", "1975-05-01T27:00:00Z", "1975-0521T22 00:00",
           "Wed, 29 Jun 2022 13:56:34 +0000", "22:00:00"]
case(DET + "test_iso_timestamp_detection", [[{"t": t} for t in TIMES + NOT_ISO]],
     schema(opt(1, "t", "string"), ev(2, "t_timestamp", "timestamptz", "t")),
     [{"t": TIMES[0], "t_timestamp": ts(1975, 5, 21, 22)},
      {"t": TIMES[1], "t_timestamp": ts(2022, 6, 1, 0, 48, 35, 40000)},
      {"t": TIMES[2], "t_timestamp": ts(2021, 7, 24, 10, 51)},
      *({"t": t} for t in NOT_ISO)])
# dlt's "iso_date" detection takes reduced ISO forms as dates; a date is YYYY-MM-DD
REDUCED = ["19750521", "1975-05", "1975", "1975/05/01"]
NOT_DATES = ["22:00:00", "75", "01-12"]
case(DET + "test_iso_date_detection", [[{"d": d} for d in ["1975-05-21", *REDUCED, *NOT_DATES]]],
     schema(opt(1, "d", "string"), ev(2, "d_date", "date", "d")),
     [{"d": "1975-05-21", "d_date": dt.date(1975, 5, 21)},
      *({"d": d} for d in REDUCED + NOT_DATES)],
     differs=True)
case(DET + "test_detection_function", [[{"ts": "2022-05-10T00:54:38.237000+00:00",
                                         "n": 1652144078.237}]],
     schema(opt(1, "n", "double"), opt(2, "ts", "string")),
     [{"ts": "2022-05-10T00:54:38.237000+00:00", "n": 1652144078.237}],
     also=(INF + "test_infer_with_autodetection",), options={"detect_dates": False})
# dlt's "large_integer" detection makes 2**63 a wei (decimal) and larger ones text; every
# integer beyond 64-bit range is its digits as text (RULES 1)
case(DET + "test_detection_large_integer",
     [Lines('{"a": 9223372036854775808}\n{"a": 578960446186580977117854925043439539267}\n'
            '{"a": 9223372036854775807}\n')],
     schema(opt(1, "a", "string"), ev(2, "a_long", "long", "a")),
     [{"a": "9223372036854775808"}, {"a": "578960446186580977117854925043439539267"},
      {"a": "9223372036854775807", "a_long": 9223372036854775807}], differs=True)
case(JSN + "test_json_decimals",
     [Lines(f'{{"v": 21.37, "a": {2**256}}}\n')],
     schema(opt(1, "a", "string"), opt(2, "v", "double")),
     [{"v": 21.37, "a": str(2**256)}], also=(JSN + "test_json_large_int",))

# --- schema contracts on a variant (test_schema_contracts.py) -----------------------------
# dlt's `data_type` contract on the resource; here the contract of the key

ITEMS = [{"id": i, "SomeInt": 1, "name": f"item {i}"} for i in (1, 2)]
VARIANTS = [{"id": i, "name": f"item {i}", "SomeInt": "hello"} for i in (3, 4)]
ITEMS_SCHEMA = (opt(1, "SomeInt", "long"), opt(2, "id", "long"), opt(3, "name", "string"))
SOLID = [dict(r) for r in ITEMS]
case(SC + "test_variant_columns", [ITEMS, VARIANTS],
     schema(*ITEMS_SCHEMA, ev(4, "SomeInt_string", "string", "SomeInt")),
     [*SOLID, *({"id": r["id"], "name": r["name"], "SomeInt_string": "hello"} for r in VARIANTS)],
     part="evolve", options={"contracts": {"SomeInt": "evolve"}})
case(SC + "test_variant_columns", [ITEMS, VARIANTS], schema(*ITEMS_SCHEMA),
     [*SOLID, *({"id": r["id"], "name": r["name"]} for r in VARIANTS)],
     aside=[SetAside("contract-value", "SomeInt", r) for r in VARIANTS],
     part="discard_value", options={"contracts": {"SomeInt": "discard_value"}})
case(SC + "test_variant_columns", [ITEMS, VARIANTS], schema(*ITEMS_SCHEMA), SOLID,
     aside=[SetAside("contract", "SomeInt", r) for r in VARIANTS],
     part="discard_row", options={"contracts": {"SomeInt": "discard_row"}})
case(SC + "test_variant_columns", [ITEMS, VARIANTS],
     refused("SomeInt", "freeze", error=ContractError),
     part="freeze", options={"contracts": {"SomeInt": "freeze"}})
