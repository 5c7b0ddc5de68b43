"""The input bytes of Apache Spark's own JSON data-source tests, as files another system
wrote (apache/spark, ``sql/core/src/test/scala/org/apache/spark/sql/execution/datasources/
json/``: ``TestJsonData.scala``'s named inputs, ``JsonSuite.scala``'s and
``JsonParsingOptionsSuite.scala``'s literals, and ``sql/core/src/test/resources/test-data/``).

Each case is what a user of this project reads such a file as (``toolkit.simulate`` of the
file, the reference the Spark path is held to): its columns, each row's non-null values,
and the lines set aside with their reasons. Spark's expectations are not this project's:
where they differ, the case says why in ``differs`` (a rule of RULES.md or docs/rules.md).
Spark's multi-line literals are written on one line where Spark's test does so itself
(``record.replaceAll("\\n", " ")``, or a default ``multiLine=false`` read of one record per
line); ``pretty`` keeps one as it is, a record spread over lines.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from typing import Any, Final

UTC: Final = dt.UTC


def one_line(text: str) -> str:
    """A Scala multi-line literal as Spark's tests write it to a text file: on one line."""
    return " ".join(text.split())


def lines(*records: str) -> bytes:
    return "".join(r + "\n" for r in records).encode()


#: the rows are the good lines' records themselves (every value in its own column)
SAME: Final = "same"


@dataclass(frozen=True)
class Case:
    """One Spark input. ``rows``: each row's non-null values, nested nulls left out (what a
    reader sees, columns named as the table names them), or :data:`SAME`; ``aside``: per
    line set aside, in line order, (line number, reason)."""

    spark: str
    data: bytes
    columns: dict[str, str]
    rows: list[dict[str, Any]] | str
    aside: tuple[tuple[int, str], ...] = ()
    differs: str = ""
    #: whether Spark's path (``toolkit.ingest``) is held to this case too
    on_spark: bool = False
    #: the file's name ends so (a ``.gz`` one is gzipped)
    suffix: str = ".jsonl"


# --- TestJsonData.scala ----------------------------------------------------------------------

PRIMITIVE = '''{"string":"this is a simple string.",
          "integer":10,
          "long":21474836470,
          "bigInteger":92233720368547758070,
          "double":1.7976931348623157,
          "boolean":true,
          "null":null
      }'''

COMPLEX1 = '''{"struct":{"field1": true, "field2": 92233720368547758070},
          "structWithArrayFields":{"field1":[4, 5, 6], "field2":["str1", "str2"]},
          "arrayOfString":["str1", "str2"],
          "arrayOfInteger":[1, 2147483647, -2147483648],
          "arrayOfLong":[21474836470, 9223372036854775807, -9223372036854775808],
          "arrayOfBigInteger":[922337203685477580700, -922337203685477580800],
          "arrayOfDouble":[1.2, 1.7976931348623157, 4.9E-324, 2.2250738585072014E-308],
          "arrayOfBoolean":[true, false, true],
          "arrayOfNull":[null, null, null, null],
          "arrayOfStruct":[{"field1": true, "field2": "str1"}, {"field1": false}, {"field3": null}],
          "arrayOfArray1":[[1, 2, 3], ["str1", "str2"]],
          "arrayOfArray2":[[1, 2, 3], [1.1, 2.1, 3.1]]
         }'''

COMPLEX2 = '''{"arrayOfStruct":[{"field1": true, "field2": "str1"}, {"field1": false},
            {"field3": null}],
          "complexArrayOfStruct": [
          {"field1": [{"inner1": "str1"}, {"inner2": ["str2", "str22"]}],
           "field2": [[1, 2], [3, 4]]},
          {"field1": [{"inner2": ["str3", "str33"]}, {"inner1": "str4"}],
           "field2": [[5, 6], [7, 8]]}],
          "arrayOfArray1": [[[5]], [[6, 7], [8]]],
          "arrayOfArray2": [[[{"inner1": "str1"}]],
            [[], [{"inner2": ["str3", "str33"]}, {"inner2": ["str4"], "inner1": "str11"}]],
            [[{"inner3": [[{"inner4": 2}]]}]]]
      }'''

WIDE = ", ".join(f'"c{i}": {i}' for i in range(1, 101))

CASES: Final[dict[str, Case]] = {
    "primitiveFieldAndType": Case(
        "TestJsonData.primitiveFieldAndType, as 'Loading a JSON dataset from a text file' "
        "writes it (one line)",
        lines(one_line(PRIMITIVE)),
        {"bigInteger": "string", "boolean": "boolean", "double": "double", "integer": "long",
         "long": "long", "string": "string"},
        [{"bigInteger": "92233720368547758070", "boolean": True, "double": 1.7976931348623157,
          "integer": 10, "long": 21474836470, "string": "this is a simple string."}],
        differs="Spark reads 92233720368547758070 as decimal(20, 0); RULES 1: an integer "
        "beyond 64 bits is its digits as text. `null` alone makes no column (RULES 3.5), where "
        "Spark makes a string column",
        on_spark=True,
    ),
    "primitiveFieldAndType.pretty": Case(
        "TestJsonData.primitiveFieldAndType as it is: one record over 8 lines",
        PRIMITIVE.encode() + b"\n",
        {},
        [],
        tuple((n, "malformed") for n in range(1, 9)),
        differs="Spark needs multiLine=true for it; JSON lines hold one record a line, so "
        "each line is set aside as it came (Spark's default reads them as corrupt records too)",
    ),
    "primitiveFieldValueTypeConflict": Case(
        "TestJsonData.primitiveFieldValueTypeConflict (one record a line)",
        lines(
            '{"num_num_1":11, "num_num_2":null, "num_num_3": 1.1, "num_bool":true, '
            '"num_str":13.1, "str_bool":"str1"}',
            '{"num_num_1":null, "num_num_2":21474836470.9, "num_num_3": null, "num_bool":12, '
            '"num_str":null, "str_bool":true}',
            '{"num_num_1":21474836470, "num_num_2":92233720368547758070, "num_num_3": 100, '
            '"num_bool":false, "num_str":"str1", "str_bool":false}',
            '{"num_num_1":21474836570, "num_num_2":1.1, "num_num_3": 21474836470, '
            '"num_bool":null, "num_str":92233720368547758070, "str_bool":null}',
        ),
        # RULES 3.2: the original name takes the widest type seen; every other type its
        # own suffixed column (long dropped beside double); RULES 3.1 routes each value
        # into every column that holds it exactly
        {"num_bool": "long", "num_bool_boolean": "boolean", "num_num_1": "long",
         "num_num_2": "string", "num_num_2_double": "double", "num_num_3": "double",
         "num_str": "string", "num_str_double": "double", "str_bool": "string",
         "str_bool_boolean": "boolean"},
        [
            {"num_bool": 1, "num_bool_boolean": True, "num_num_1": 11, "num_num_3": 1.1,
             "num_str": "13.1", "num_str_double": 13.1, "str_bool": "str1"},
            {"num_bool": 12, "num_num_2": "21474836470.9", "num_num_2_double": 21474836470.9,
             "str_bool": "true", "str_bool_boolean": True},
            {"num_bool": 0, "num_bool_boolean": False, "num_num_1": 21474836470,
             "num_num_2": "92233720368547758070", "num_num_3": 100.0, "num_str": "str1",
             "str_bool": "false", "str_bool_boolean": False},
            {"num_num_1": 21474836570, "num_num_2": "1.1", "num_num_2_double": 1.1,
             "num_num_3": 21474836470.0, "num_str": "92233720368547758070"},
        ],
        differs="Spark widens num_bool and str_bool to strings and num_num_2 to a double "
        "(92233720368547758070 rounded); RULES 2's lattice puts booleans below longs, and "
        "every value keeps a column that holds it exactly",
        on_spark=True,
    ),
    "jsonNullStruct": Case(
        "TestJsonData.jsonNullStruct",
        lines(
            '{"nullstr":"","ip":"27.31.100.29","headers":{"Host":"1.abc.com","Charset":"UTF-8"}}',
            '{"nullstr":"","ip":"27.31.100.29","headers":{}}',
            '{"nullstr":"","ip":"27.31.100.29","headers":""}',
            '{"nullstr":null,"ip":"27.31.100.29","headers":null}',
        ),
        # RULES 3: records never go to string columns: the text "" has its own column
        {"headers": "struct<Charset: string, Host: string>", "headers_string": "string",
         "ip": "string", "nullstr": "string"},
        [
            {"headers": {"Charset": "UTF-8", "Host": "1.abc.com"}, "ip": "27.31.100.29",
             "nullstr": ""},
            {"headers": {}, "ip": "27.31.100.29", "nullstr": ""},
            {"headers_string": "", "ip": "27.31.100.29", "nullstr": ""},
            {"ip": "27.31.100.29"},
        ],
        differs="Spark reads \"\" for a struct as null; here it is kept, as text",
        on_spark=True,
    ),
    "complexFieldValueTypeConflict": Case(
        "TestJsonData.complexFieldValueTypeConflict (one record a line)",
        lines(
            '{"num_struct":11, "str_array":[1, 2, 3], "array":[], "struct_array":[], '
            '"struct": {}}',
            '{"num_struct":{"field":false}, "str_array":null, "array":null, '
            '"struct_array":{}, "struct": null}',
            '{"num_struct":null, "str_array":"str", "array":[4, 5, 6], '
            '"struct_array":[7, 8, 9], "struct": {"field":null}}',
            '{"num_struct":{}, "str_array":["str1", "str2", 33], "array":[7], '
            '"struct_array":{"field": true}, "struct": {"field": "str"}}',
        ),
        {"array": "list<long>", "num_struct": "struct<field: boolean>",
         "num_struct_long": "long", "str_array": "list<string>",
         "str_array_array_long": "list<long>", "str_array_string": "string",
         "struct": "struct<field: string>", "struct_array": "struct<field: boolean>",
         "struct_array_array_long": "list<long>"},
        [
            # RULES 3.1: [1, 2, 3] also lands in the list of strings as text; "str" also
            # as a one-element list (a lower dimension is wrapped)
            {"array": [], "num_struct_long": 11, "str_array": ["1", "2", "3"],
             "str_array_array_long": [1, 2, 3], "struct": {}, "struct_array_array_long": []},
            {"num_struct": {"field": False}, "struct_array": {}},
            {"array": [4, 5, 6], "str_array": ["str"], "str_array_string": "str",
             "struct": {}, "struct_array_array_long": [7, 8, 9]},
            {"array": [7], "num_struct": {}, "str_array": ["str1", "str2", "33"],
             "struct": {"field": "str"}, "struct_array": {"field": True}},
        ],
        differs="Spark writes records and arrays into string columns as JSON text; RULES 3 "
        "never does (a record keeps its struct, beside its family's other columns)",
    ),
    "arrayElementTypeConflict": Case(
        "TestJsonData.arrayElementTypeConflict (one record a line)",
        lines(
            '{"array1": [1, 1.1, true, null, [], {}, [2,3,4], {"field":"str"}], '
            '"array2": [{"field":214748364700}, {"field":1}]}',
            '{"array3": [{"field":"str"}, {"field":1}]}',
            '{"array3": [1, 2, 3]}',
        ),
        # docs/rules.md, Mixed arrays: records and primitives of one array split by position
        # into two columns of the same shape (depth 2: the largest; shallow leaves wrapped)
        {"array1": "list<list<struct<field: string>>>",
         "array1_array2_double": "list<list<double>>",
         "array2": "list<struct<field: long>>",
         "array3": "list<struct<field: string, field_long: long>>",
         "array3_array_long": "list<long>"},
        [
            {"array1": [[None], [None], [None], None, [], [{}], [None, None, None],
                        [{"field": "str"}]],
             "array1_array2_double": [[1.0], [1.1], [1.0], None, [], [None], [2.0, 3.0, 4.0],
                                      [None]],
             "array2": [{"field": 214748364700}, {"field": 1}]},
            {"array3": [{"field": "str"}, {"field": "1", "field_long": 1}]},
            {"array3_array_long": [1, 2, 3]},
        ],
        differs="Spark writes every element of array1 as JSON text; RULES 3 never writes "
        "records as text (the booleans among numbers: see the xfail test on warnings)",
        on_spark=True,
    ),
    "missingFields": Case(
        "TestJsonData.missingFields",
        lines('{"a":true}', '{"b":21474836470}', '{"c":[33, 44]}', '{"d":{"field":true}}',
              '{"e":"str"}'),
        {"a": "boolean", "b": "long", "c": "list<long>", "d": "struct<field: boolean>",
         "e": "string"},
        SAME,
    ),
    "complexFieldAndType1": Case(
        "TestJsonData.complexFieldAndType1, as 'SPARK-4228 DataFrame to JSON' reads it back "
        "(one line)",
        lines(one_line(COMPLEX1)),
        {"arrayOfArray1": "list<list<string>>", "arrayOfArray2": "list<list<double>>",
         "arrayOfBigInteger": "list<string>", "arrayOfBoolean": "list<boolean>",
         "arrayOfDouble": "list<double>", "arrayOfInteger": "list<long>",
         "arrayOfLong": "list<long>", "arrayOfNull": "list<string>",
         "arrayOfString": "list<string>",
         "arrayOfStruct": "list<struct<field1: boolean, field2: string>>",
         "struct": "struct<field1: boolean, field2: string>",
         "structWithArrayFields": "struct<field1: list<long>, field2: list<string>>"},
        [{
            # RULES 1: one array's element type is its leaves' widest: 1 is "1" among texts
            "arrayOfArray1": [["1", "2", "3"], ["str1", "str2"]],
            "arrayOfArray2": [[1.0, 2.0, 3.0], [1.1, 2.1, 3.1]],
            "arrayOfBigInteger": ["922337203685477580700", "-922337203685477580800"],
            "arrayOfBoolean": [True, False, True],
            "arrayOfDouble": [1.2, 1.7976931348623157, 4.9e-324, 2.2250738585072014e-308],
            "arrayOfInteger": [1, 2147483647, -2147483648],
            "arrayOfLong": [21474836470, 9223372036854775807, -9223372036854775808],
            "arrayOfNull": [None, None, None, None],
            "arrayOfString": ["str1", "str2"],
            "arrayOfStruct": [{"field1": True, "field2": "str1"}, {"field1": False}, {}],
            "struct": {"field1": True, "field2": "92233720368547758070"},
            "structWithArrayFields": {"field1": [4, 5, 6], "field2": ["str1", "str2"]},
        }],
        differs="Spark reads the big integers as decimal(20, 0) and decimal(21, 0); "
        "RULES 1: their digits, as text",
        on_spark=True,
    ),
    "complexFieldAndType2": Case(
        "TestJsonData.complexFieldAndType2 (one line), 'SPARK-3390 Complex arrays'",
        lines(one_line(COMPLEX2)),
        {"arrayOfArray1": "list<list<list<long>>>",
         "arrayOfArray2": "list<list<list<struct<inner1: string, inner2: list<string>, "
                          "inner3: list<list<struct<inner4: long>>>>>>>",
         "arrayOfStruct": "list<struct<field1: boolean, field2: string>>",
         "complexArrayOfStruct": "list<struct<field1: list<struct<inner1: string, "
                                 "inner2: list<string>>>, field2: list<list<long>>>>"},
        SAME,
    ),
    "mapType1": Case(
        "TestJsonData.mapType1",
        lines('{"map": {"a": 1}}', '{"map": {"b": 2}}', '{"map": {"c": 3}}',
              '{"map": {"c": 1, "d": 4}}', '{"map": {"e": null}}'),
        {"map": "struct<a: long, b: long, c: long, d: long>"},
        SAME,
        differs="Spark reads a map with a schema given; inferred, objects are records "
        "(RULES 1) and `e`, only null, has no field yet (RULES 3.5)",
    ),
    "mapType2": Case(
        "TestJsonData.mapType2",
        lines('{"map": {"a": {"field1": [1, 2, 3, null]}}}', '{"map": {"b": {"field2": 2}}}',
              '{"map": {"c": {"field1": [], "field2": 4}}}',
              '{"map": {"c": {"field2": 3}, "d": {"field1": [null]}}}',
              '{"map": {"e": null}}', '{"map": {"f": {"field1": null}}}'),
        {"map": "struct<a: struct<field1: list<long>>, b: struct<field2: long>, "
                "c: struct<field1: list<string>, field2: long>, d: struct<field1: list<string>>>"},
        [{"map": {"a": {"field1": [1, 2, 3, None]}}}, {"map": {"b": {"field2": 2}}},
         {"map": {"c": {"field1": [], "field2": 4}}},
         {"map": {"c": {"field2": 3}, "d": {"field1": [None]}}},
         # `e` and `f` hold nulls only: no field yet (RULES 3.5, docs/rules.md Empty records)
         {"map": {}}, {"map": {}}],
    ),
    "nullsInArrays": Case(
        "TestJsonData.nullsInArrays, 'SPARK-4068: nulls in arrays'",
        lines('{"field1":[[null], [[["Test"]]]]}', '{"field2":[null, [{"Test":1}]]}',
              '{"field3":[[null], [{"Test":"2"}]]}', '{"field4":[[null, [1,2,3]]]}'),
        {"field1": "list<list<list<list<string>>>>",
         "field2": "list<list<struct<Test: long>>>",
         "field3": "list<list<struct<Test: string>>>",
         "field4": "list<list<list<long>>>"},
        SAME,
    ),
    "jsonArray": Case(
        "TestJsonData.jsonArray, 'SPARK-3308 Read top level JSON arrays'",
        lines('[{"a":"str_a_1"}]', '[{"a":"str_a_2"}, {"b":"str_b_3"}]',
              '{"b":"str_b_4", "a":"str_a_4", "c":"str_c_4"}', "[]"),
        {"a": "string", "b": "string", "c": "string"},
        SAME,
        ((1, "not-a-record"), (2, "not-a-record"), (4, "not-a-record")),
        differs="Spark makes a row of each object in a top-level array; in JSON lines each "
        "line is a record, and a line that is no object is set aside as it came "
        "(docs/rules.md, Types and values)",
    ),
    "corruptRecords": Case(
        "TestJsonData.corruptRecords, 'Corrupt records: PERMISSIVE mode'",
        lines("{", "", '{"a":1, b:2}', '{"a":{, b:3}',
              '{"b":"str_b_4", "a":"str_a_4", "c":"str_c_4"}', "]"),
        {"a": "string", "b": "string", "c": "string"},
        SAME,
        ((1, "malformed"), (3, "malformed"), (4, "malformed"),
         (6, "malformed")),
        on_spark=True,
    ),
    "additionalCorruptRecords": Case(
        "TestJsonData.additionalCorruptRecords, 'SPARK-12057 additional corrupt records'",
        lines('{"dummy":"test"}', "[1,2,3]", '":"test", "a":1}', "42",
              '     ","ian":"test"}'),
        {"dummy": "string"},
        SAME,
        ((2, "not-a-record"), (3, "malformed"), (4, "not-a-record"),
         (5, "malformed")),
        on_spark=True,
    ),
    "emptyRecords": Case(
        "TestJsonData.emptyRecords, 'SPARK-8093 Erase empty structs'",
        lines("{", "", '{"a": {}}', '{"a": {"b": {}}}', '{"b": [{"c": {}}]}', "]"),
        {},  # docs/rules.md, Empty records: no column until a key arrives
        [],  # and a row of no column is not written: a warning counts the records
        ((1, "malformed"), (6, "malformed")),
    ),
    "timestampAsLong": Case(
        "TestJsonData.timestampAsLong, 'Casting long as timestamp'",
        lines('{"ts":1451732645}'),
        {"ts": "long"},
        SAME,
        differs="Spark reads it as a timestamp with a schema given; without one it is a "
        "long (RULES 1), read as an instant only beside a timestamp column (RULES 3.1)",
    ),
    "arrayAndStructRecords": Case(
        "TestJsonData.arrayAndStructRecords, 'Parse JSON rows having an array type and a "
        "struct type in the same field'",
        lines('{"a": {"b": 1}}', '{"a": []}'),
        # an empty array of no element type: a list of strings (RULES 1)
        {"a": "struct<b: long>", "a_array_string": "list<string>"},
        [{"a": {"b": 1}}, {"a_array_string": []}],
    ),
    "floatingValueRecords": Case(
        "TestJsonData.floatingValueRecords, 'Infer floating-point values correctly even when "
        "it does not fit in decimal'",
        lines('{"a": 0.' + "0" * 38 + '1, "b": 0.01}'),
        {"a": "double", "b": "double"},
        [{"a": 1e-39, "b": 0.01}],
    ),
    "bigIntegerRecords": Case(
        "TestJsonData.bigIntegerRecords, 'Infer big integers correctly even when it does not "
        "fit in decimal'",
        lines('{"a": 1' + "0" * 38 + ', "b": 92233720368547758070}'),
        {"a": "string", "b": "string"},
        [{"a": "1" + "0" * 38, "b": "92233720368547758070"}],
        differs="Spark reads `a` as the double 1.0E38 (prefersDecimal) and `b` as "
        "decimal(20, 0); RULES 1: every digit, as text",
        on_spark=True,
    ),
    "datesRecords": Case(
        "TestJsonData.datesRecords, 'Write dates correctly with dateFormat option'",
        lines('{"date": "26/08/2015 18:00"}', '{"date": "27/10/2014 18:30"}',
              '{"date": "28/01/2016 20:00"}'),
        {"date": "string"},
        SAME,
        differs="Spark parses them with dateFormat dd/MM/yyyy HH:mm; RULES 1 detects ISO-8601 "
        "texts only: the others are kept as they are",
    ),
    "sampledTestData": Case(
        "TestJsonData.sampledTestData (its first 25 records), 'SPARK-23849 samplingRatio'",
        lines(*(f'{{"f1":{i}}}' if i in (3, 18, 20, 24) else f'{{"f1":{i + 0.1}}}'
                for i in range(25))),
        # RULES 3.2 (seed edge case 1): long is dropped beside double in one batch
        {"f1": "double"},
        [{"f1": float(i) if i in (3, 18, 20, 24) else i + 0.1} for i in range(25)],
        differs="Spark infers long from a 10% sample; every record is read here",
    ),
    # --- JsonSuite.scala ----------------------------------------------------------------------
    "lineSep.default": Case(
        r"JsonSuite 'SPARK-21289: Support line separator - default value \r, \r\n and \n'",
        b'{"f": "a", "f0": 1}\r{"f": "c",  "f0": 2}\r\n{"f": "d",  "f0": 3}\n',
        {"f": "string", "f0": "long"},
        SAME,
        on_spark=True,
    ),
    "lineSep.0x1E": Case(
        "JsonSuite 'SPARK-21289: Support line separator - lineSep: '\\u001e'' (read without "
        "lineSep)",
        b'\n  {"f":\n"a", "f0": 1}\x1e{"f":\n\n"c",  "f0": 2}\x1e{"f": "d",  "f0": 3}\n        ',
        {},
        [],
        ((2, "malformed"), (3, "malformed"), (5, "malformed")),
        differs="Spark reads records between the lineSep option's separators; lines end "
        "only at \\n, \\r\\n or \\r here, so these lines are set aside as they came",
    ),
    "lineSep.LF_CR": Case(
        "JsonSuite 'SPARK-23724: checks reading json in UTF-8 #11' (lineSep \\n\\r)",
        b'{"f1":"a", "f2":1}\n\r{"f1":"b", "f2":2}',
        {"f1": "string", "f2": "long"},
        SAME,
    ),
    "utf8.bom": Case(
        "JsonSuite 'SPARK-23723: json in UTF-16 with BOM' (test-data/utf16WithBOM.json's "
        "records), saved as UTF-8 with its byte order mark, as Windows tools save it",
        b"\xef\xbb\xbf" + lines('{"firstName": "Chris", "lastName": "Baird"}',
                                '{"firstName": "Doug", "lastName": "Rood"}'),
        {"firstName": "string", "lastName": "string"},
        SAME,
    ),
    "utf8.bom.concatenated": Case(
        "the same, two such files joined by `cat`: Spark's text reader drops the mark "
        "opening the file only (Hadoop's LineRecordReader)",
        b"\xef\xbb\xbf" + lines('{"firstName": "Chris", "lastName": "Baird"}')
        + b"\xef\xbb\xbf" + lines('{"firstName": "Doug", "lastName": "Rood"}'),
        {"firstName": "string", "lastName": "string"},
        [{"firstName": "Chris", "lastName": "Baird"}],
        ((2, "malformed"),),
        on_spark=True,
    ),
    "utf8.bom.gz": Case(
        "the same, gzipped",
        b"\xef\xbb\xbf" + lines('{"firstName": "Chris", "lastName": "Baird"}'),
        {"firstName": "string", "lastName": "string"},
        SAME,
        suffix=".jsonl.gz",
    ),
    "utf16.bom": Case(
        "JsonSuite 'SPARK-23723: json in UTF-16 with BOM' (test-data/utf16WithBOM.json's "
        "records, one a line, as UTF-16 with its byte order mark)",
        lines('{"firstName": "Chris", "lastName": "Baird"}',
              '{"firstName": "Doug", "lastName": "Rood"}').decode().encode("utf-16"),
        {},
        [],
        # UTF-16's \n is 0a 00: the byte 00 after it starts the next line
        ((1, "not-utf8"), (2, "malformed"), (3, "malformed")),
        differs="Spark reads it with the encoding option; lines here are UTF-8: every "
        "line is set aside, every byte kept",
        on_spark=True,
    ),
    "utf32be.bom": Case(
        "JsonSuite 'SPARK-23723: multi-line json in UTF-32BE with BOM' "
        "(test-data/utf32BEWithBOM.json's record)",
        b"\x00\x00\xfe\xff" + '{"firstName": "Chris", "lastName": "Baird"}\n'.encode("utf-32-be"),
        {},
        [],
        ((1, "not-utf8"),),
    ),
    "utf16be.lineSep": Case(
        "JsonSuite 'SPARK-23724: checks reading json in UTF-16BE #1' (lineSep ^)",
        '{"f1":"a", "f2":1}^{"f1":"b", "f2":2}'.encode("utf-16-be"),
        {},
        [],
        ((1, "malformed"),),
    ),
    "cp1251.lineSep": Case(
        "JsonSuite 'SPARK-23724: checks reading json in CP1251 #6' (lineSep куку)",
        '{"f1":"a", "f2":1}куку{"f1":"b", "f2":2}'.encode("cp1251"),
        {},
        [],
        ((1, "not-utf8"),),
    ),
    "leadingNulls": Case(
        "JsonSuite 'SPARK-23094: permissively read JSON file with leading nulls when "
        "multiLine is disabled'",
        lines("\x00\x00\x00A\x01AAA", '{"a":1}'),
        {"a": "long"},
        SAME,
        ((1, "malformed"),),
        on_spark=True,
    ),
    "leadingNulls.sameLine": Case(
        "JsonSuite 'SPARK-37176: inferring should be possible when parse mode is permissive'",
        lines('{"a":1}', '\x00\x00\x00A\x01AAA{"a":1}'),
        {"a": "long"},
        SAME,
        ((2, "malformed"),),
    ),
    "malformed_utf8": Case(
        "JsonSuite 'SPARK-31716: inferring should handle malformed input' "
        "(test-data/malformed_utf8.json: its last byte, 0x80, is no UTF-8)",
        b'{"a": 1}\n{"a": 1}\n\x80',
        {"a": "long"},
        SAME,
        ((3, "not-utf8"),),
        on_spark=True,
    ),
    "emptyLines": Case(
        "JsonSuite 'SPARK-26745: count() for non-multiline input with empty lines'",
        lines('{ "a" : 1 }', "", '     { "a" : 2 }', " \t "),
        {"a": "long"},
        SAME,
    ),
    "with-empty-line.json": Case(
        "test-data/with-empty-line.json",
        b'{ "a" : 1 , "b" : 2 , "c" : 3 }\n\n     { "a" : 4 , "b" : 5 , "c" : 6 }\n'
        b'     \t     \n{ "a" : 7 , "b" : 8 , "c" : 9 }\n\n     \n',
        {"a": "long", "b": "long", "c": "long"},
        SAME,
    ),
    "specialFloats.text": Case(
        "JsonSuite 'SPARK-18772: Parse special floats correctly'",
        lines('{"a": "NaN"}', '{"a": "+INF"}', '{"a": "-INF"}', '{"a": "Infinity"}',
              '{"a": "+Infinity"}', '{"a": "-Infinity"}'),
        {"a": "string"},
        SAME,
        differs="Spark reads these texts as doubles for a double column given; inferred, "
        "texts are texts (RULES 1)",
    ),
    "specialFloats.tokens": Case(
        "JsonParsingOptionsSuite 'allowNonNumericNumbers on' (Jackson's tokens: NaN, "
        "Infinity, +Infinity, -Infinity, +INF, -INF)",
        lines('{"id": 1, "age": NaN}', '{"id": 2, "age": Infinity}',
              '{"id": 3, "age": -Infinity}', '{"id": 4, "age": +Infinity}',
              '{"id": 5, "age": +INF}', '{"id": 6, "age": -INF}'),
        {"age": "double", "id": "long"},
        [{"age": math.nan, "id": 1}, {"age": math.inf, "id": 2}, {"age": -math.inf, "id": 3}],
        ((4, "malformed"), (5, "malformed"), (6, "malformed")),
        differs="Jackson reads every spelling; the toolkit reads those JSON libraries agree "
        "on (docs/rules.md, Bytes from other systems: NaN, Infinity, -Infinity) and sets "
        "the others aside, on the JVM path too",
        on_spark=True,
    ),
    "allowComments": Case(
        "JsonParsingOptionsSuite 'allowComments off'",
        lines("{'name': /* hello */ 'Reynold Xin'}"),
        {}, [], ((1, "malformed"),),
    ),
    "allowSingleQuotes": Case(
        "JsonParsingOptionsSuite 'allowSingleQuotes on' (Spark's default)",
        lines('{"id": 1}', "{'name': 'Reynold Xin'}"),
        {"id": "long"}, SAME, ((2, "malformed"),),
        differs="Spark's reader takes single quotes by default; a line that is not JSON "
        "is set aside as it came (docs/rules.md, Hostile input)",
    ),
    "allowUnquotedFieldNames": Case(
        "JsonParsingOptionsSuite 'allowUnquotedFieldNames off'",
        lines("{name: 'Reynold Xin'}"),
        {}, [], ((1, "malformed"),),
    ),
    "allowNumericLeadingZeros": Case(
        "JsonParsingOptionsSuite 'allowNumericLeadingZeros off'",
        lines('{"age": 0018}', '{"age": 18}'),
        {"age": "long"}, SAME, ((1, "malformed"),),
    ),
    "allowBackslashEscapingAnyCharacter": Case(
        "JsonParsingOptionsSuite 'allowBackslashEscapingAnyCharacter off'",
        lines('{"name": "Cazen Lee", "price": "\\$10"}', '{"name": "Cazen Lee", "price": "$10"}'),
        {"name": "string", "price": "string"}, SAME, ((1, "malformed"),),
    ),
    "allowUnquotedControlChars": Case(
        "JsonSuite 'SPARK-40667: validate JSON Options' (allowUnquotedControlChars: a tab "
        "inside a text)",
        lines('{"s": "a\tb"}', '{"s": "a\\tb"}'),
        {"s": "string"}, SAME, ((1, "malformed"),),
    ),
    "nonAsciiAsCodePoint": Case(
        "JsonSuite 'SPARK-35047: Write Non-ASCII character as codepoint'",
        lines('{"value":"\\n"}', '{"value":"\\u3042"}', '{"value":"a"}'),
        {"value": "string"}, SAME,
    ),
    "backwardCompatibility": Case(
        "JsonSuite 'backward compatibility' (the line Spark 1.2.2 wrote)",
        lines('{"col0":"Spark 1.2.2","col1":"YSBzdHJpbmcgaW4gYmluYXJ5","col3":true,"col4":1,'
              '"col5":2,"col6":3,"col7":9223372036854775807,"col8":0.25,"col9":0.75,'
              '"col10":1234.23456,"col11":1.23456,"col12":"2015-01-01",'
              '"col13":"2015-01-01 23:50:59.123","col14":[2,3,4],"col15":{"a string":2000},'
              '"col16":{"f1":4.75,"f2":[false,true]},"col17":[0.25,2.25,4.25]}'),
        {"col0": "string", "col1": "string", "col10": "double", "col11": "double",
         "col12": "date", "col13": "timestamptz", "col14": "list<long>",
         "col15": "struct<a string: long>", "col16": "struct<f1: double, f2: list<boolean>>",
         "col17": "list<double>", "col3": "boolean", "col4": "long", "col5": "long",
         "col6": "long", "col7": "long", "col8": "double", "col9": "double"},
        [{"col0": "Spark 1.2.2", "col1": "YSBzdHJpbmcgaW4gYmluYXJ5", "col3": True, "col4": 1,
          "col5": 2, "col6": 3, "col7": 9223372036854775807, "col8": 0.25, "col9": 0.75,
          "col10": 1234.23456, "col11": 1.23456, "col12": dt.date(2015, 1, 1),
          "col13": dt.datetime(2015, 1, 1, 23, 50, 59, 123000, tzinfo=UTC),
          "col14": [2, 3, 4], "col15": {"a string": 2000},
          "col16": {"f1": 4.75, "f2": [False, True]}, "col17": [0.25, 2.25, 4.25]}],
        differs="Spark reads col12 and col13 as texts unless a schema says dates; RULES 1 "
        "detects ISO dates and date-times (a naive one read as UTC)",
    ),
    "inferTimestamp": Case(
        "JsonSuite 'inferring timestamp type'",
        lines('{"a":"2018-12-17T10:11:12.123-01:00"}', '{"a":"2018-12-16T22:23:24.123-02:00"}',
              '{"a":1}', '{"a":"123"}', '{"a":null}'),
        # RULES 3.2: the widest (string) takes the name; RULES 3.1: the long is also an
        # instant in the timestamp column (its magnitude: epoch seconds), and timestamps are
        # epoch milliseconds in the long column
        {"a": "string", "a_long": "long", "a_timestamp": "timestamptz"},
        [{"a": "2018-12-17T10:11:12.123-01:00", "a_long": 1545045072123,
          "a_timestamp": dt.datetime(2018, 12, 17, 11, 11, 12, 123000, tzinfo=UTC)},
         {"a": "2018-12-16T22:23:24.123-02:00", "a_long": 1545006204123,
          "a_timestamp": dt.datetime(2018, 12, 17, 0, 23, 24, 123000, tzinfo=UTC)},
         {"a": "1", "a_long": 1, "a_timestamp": dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC)},
         {"a": "123"}, {}],
        differs="Spark makes `a` one string column; RULES 3.2 keeps each type its column",
    ),
    "timestampNtzLtzMix": Case(
        "JsonSuite 'SPARK-37360: Timestamp type inference for a mix of TIMESTAMP_NTZ and "
        "TIMESTAMP_LTZ'",
        lines('{"col0":"2020-12-12T12:12:12.000"}', '{"col0":"2020-12-12T17:12:12.000Z"}',
              '{"col0":"2020-12-12T17:12:12.000+05:00"}', '{"col0":"2020-12-12T12:12:12.000"}'),
        {"col0": "timestamptz"},
        # docs/rules.md, Timestamps are instants: without an offset, UTC
        [{"col0": dt.datetime(2020, 12, 12, 12, 12, 12, tzinfo=UTC)},
         {"col0": dt.datetime(2020, 12, 12, 17, 12, 12, tzinfo=UTC)},
         {"col0": dt.datetime(2020, 12, 12, 12, 12, 12, tzinfo=UTC)},
         {"col0": dt.datetime(2020, 12, 12, 12, 12, 12, tzinfo=UTC)}],
        on_spark=True,
    ),
    "timestampNanos": Case(
        "JsonSuite 'SPARK-37360: Malformed records when reading TIMESTAMP_LTZ as "
        "TIMESTAMP_NTZ', with nine fraction digits",
        lines('{"col0": "2020-12-12T12:12:12.000"}', '{"col0": "2020-12-12T12:12:12.123456789"}'),
        # docs/rules.md: a date-time text with nanoseconds stays a string (never rounded)
        {"col0": "string", "col0_timestamp": "timestamptz"},
        [{"col0": "2020-12-12T12:12:12.000",
          "col0_timestamp": dt.datetime(2020, 12, 12, 12, 12, 12, tzinfo=UTC)},
         {"col0": "2020-12-12T12:12:12.123456789"}],
    ),
    "datetimeNoPattern": Case(
        "JsonSuite 'SPARK-36536: use casting when datetime pattern is not set'",
        lines('{"d":"2021","ts_ltz":"2021","ts_ntz": "2021"}',
              '{"d":"2021-01","ts_ltz":"2021-01 ","ts_ntz":"2021-01"}',
              '{"d":" 2021-2-1","ts_ltz":"2021-3-02","ts_ntz": "2021-10-1"}',
              '{"d":"2021-8-18 00:00:00","ts_ltz":"2021-8-18 21:44:30Z",'
              '"ts_ntz":"2021-8-18T21:44:30.123"}'),
        {"d": "string", "ts_ltz": "string", "ts_ntz": "string"},
        SAME,
        differs="Spark casts them to dates for a date column given; RULES 1 detects only "
        "ISO-8601 texts, and keeps the others as they are",
    ),
    "filtersOnMalformedRows": Case(
        "JsonSuite 'apply filters to malformed rows'",
        lines("{}", '{"invalid": 0}', '{"i":}', '{"i": 0}',
              '{"i": 1, "t": "2020-01-28 01:00:00"}', '{"t": "2020-01-28 02:00:00"}',
              '{"i": "abc", "t": "2020-01-28 03:00:00"}',
              '{"i": 2, "t": "2020-01-28 04:00:00", "d": 3.14}'),
        {"d": "double", "i": "string", "i_long": "long", "invalid": "long",
         "t": "timestamptz"},
        [{}, {"invalid": 0}, {"i": "0", "i_long": 0},
         {"i": "1", "i_long": 1, "t": dt.datetime(2020, 1, 28, 1, tzinfo=UTC)},
         {"t": dt.datetime(2020, 1, 28, 2, tzinfo=UTC)},
         {"i": "abc", "t": dt.datetime(2020, 1, 28, 3, tzinfo=UTC)},
         {"d": 3.14, "i": "2", "i_long": 2, "t": dt.datetime(2020, 1, 28, 4, tzinfo=UTC)}],
        ((3, "malformed"),),
    ),
    "caseSensitiveKeys": Case(
        "JsonSuite 'case sensitivity of filters references'",
        lines('{"aaa": 0, "BBB": 1}', '{"AAA": 2, "bbb": 3}'),
        # RULES 4: names collide case-insensitively; the second of a pair is numbered
        {"AAA": "long", "BBB": "long", "aaa_2": "long", "bbb_2": "long"},
        [{"BBB": 1, "aaa_2": 0}, {"AAA": 2, "bbb_2": 3}],
        differs="Spark's inference fails (COLUMN_ALREADY_EXISTS) unless case-sensitive",
    ),
    "dropFieldIfAllNull": Case(
        "JsonSuite 'SPARK-23772 ignore column of all null values or empty array during "
        "schema inference' (arrays)",
        lines('{"a":[2, 1], "b":[null, null], "c":null, "d":[[], [null]], "e":[[], null, [[]]]}',
              '{"a":[null], "b":[null], "c":[], "d":[null, []], "e":null}',
              '{"a":null, "b":null, "c":[], "d":null, "e":[null, [], null]}'),
        # RULES 1: arrays with no element type are lists of strings; a ragged array takes
        # its largest depth, a shallower one wrapped
        {"a": "list<long>", "b": "list<string>", "c": "list<string>",
         "d": "list<list<string>>", "e": "list<list<list<string>>>"},
        [{"a": [2, 1], "b": [None, None], "d": [[], [None]], "e": [[], None, [[]]]},
         {"a": [None], "b": [None], "c": [], "d": [None, []]},
         {"c": [], "e": [[None, [], None]]}],
        differs="Spark's dropFieldIfAllNull drops b to e; nothing is dropped here (RULES 3.5 "
        "keeps every value, an empty list too)",
    ),
    "partialResults": Case(
        "JsonSuite 'SPARK-44940: fully parse array of arrays if partial results are enabled'",
        lines('{"a1": "AAA", "a2": [[12, ""], [""]], "a3": "id1", "a4": "XXX"}',
              '{"a1": "BBB", "a2": [[12, 34], [""]], "a3": "id2", "a4": "YYY"}'),
        {"a1": "string", "a2": "list<list<string>>", "a3": "string", "a4": "string"},
        [{"a1": "AAA", "a2": [["12", ""], [""]], "a3": "id1", "a4": "XXX"},
         {"a1": "BBB", "a2": [["12", "34"], [""]], "a3": "id2", "a4": "YYY"}],
        differs="Spark makes a2 null in both rows; here every value is kept (RULES 1: the "
        "array's element type is its leaves' widest)",
    ),
    "partialStruct": Case(
        "JsonSuite 'SPARK-40646: parse subsequent fields if the first JSON field does not "
        "match schema'",
        lines('{"a": {"x": 1, "y": true}, "b": {"x": 1}}', '{"a": {"x": 2}, "b": {"x": 2}}'),
        {"a": "struct<x: long, y: boolean>", "b": "struct<x: long>"}, SAME,
    ),
    "rootNulls": Case(
        "JsonSuite 'SPARK-36379: proceed parsing with root nulls in permissive mode'",
        lines('[{"a": "str"}, null, {"a": "str"}]', '{"a": "str"}'),
        {"a": "string"}, SAME, ((1, "not-a-record"),),
    ),
    "oneDocumentPerFile": Case(
        "JsonSuite 'SPARK-18352: Expect one JSON document per file'",
        lines("{}{invalid}", "{}"),
        {}, [], ((1, "malformed"),),  # {}: no column, not written (a warning says)
        differs="Spark's multiLine reader keeps the first document and drops the rest "
        "silently; the line is set aside whole",
    ),
    "emptyString": Case(
        "JsonSuite 'SPARK-25040: empty strings should be disallowed'",
        lines('{"a":""}', '{"a":1}'),
        {"a": "string", "a_long": "long"},
        [{"a": ""}, {"a": "1", "a_long": 1}],
    ),
    "wideNested": Case(
        "JsonSuite 'wide nested json table'",
        lines(f'{{"a": [{{{WIDE}}}], "b": [{{{WIDE}}}]}}'),
        {"a": "list<struct<" + ", ".join(f"c{i}: long" for i in sorted(range(1, 101), key=str))
              + ">>",
         "b": "list<struct<" + ", ".join(f"c{i}: long" for i in sorted(range(1, 101), key=str))
              + ">>"},
        SAME,
    ),
}

#: the cases Spark's path is run for
ON_SPARK: Final = tuple(name for name, case in CASES.items() if case.on_spark)
