"""The Spark schema of one Parquet file on this disk, read from its footer by Arrow in a
millisecond, instead of by Spark's schema inference, which runs a Spark job of its own
(``ParquetFileFormat.mergeSchemasInParallel``, 60-70 ms on two cores) before every read.

Only the types whose reading is plain are given (flat columns of booleans, signed
integers, floats, doubles, strings, dates, decimals, and microsecond or millisecond
timestamps), each as Spark's own inference types it: any other file (nested columns,
unsigned integers, nanoseconds, INT96, bare binary, field ids) gets None, and Spark
infers its schema as before. ``tests/spark/test_parquet_footer.py`` holds the two equal
on files written by Arrow and by Spark.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import DataType, StructType

__all__ = ["footer_schema"]

#: Spark infers a timestamp not adjusted to UTC as one without a zone when this holds
_INFER_NTZ: Final = "spark.sql.parquet.inferTimestampNTZ.enabled"


def footer_schema(spark: SparkSession, path: str | os.PathLike[str]) -> StructType | None:
    """The schema Spark infers for the Parquet file ``path``, or None when this module
    does not type it alike (then Spark infers it)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql.types import StructField, StructType

    try:
        schema = pq.ParquetFile(path).schema
        arrow = schema.to_arrow_schema()
    except (OSError, pa.ArrowException):
        return None  # Spark's own reading says what is wrong
    if len(schema) != len(arrow) or not len(arrow):
        return None  # nested columns: several leaves for one field
    ntz = spark.conf.get(_INFER_NTZ, "true") == "true"
    fields = []
    for i, field in enumerate(arrow):
        column = schema.column(i)
        if column.path != field.name or column.max_repetition_level \
                or column.max_definition_level > 1 \
                or (field.metadata and b"PARQUET:field_id" in field.metadata):
            return None
        found = _spark_type(column.physical_type, json.loads(column.logical_type.to_json()),
                            ntz)
        if found is None:
            return None
        # a file's columns read nullable, required or not (Spark's file sources)
        fields.append(StructField(field.name, found, nullable=True))
    return StructType(fields)


def _spark_type(physical: str, logical: dict[str, Any], ntz: bool) -> DataType | None:
    """Spark's type of a flat Parquet column (``ParquetToSparkSchemaConverter``)."""
    from pyspark.sql import types as T

    kind = logical.get("Type", "None")
    if kind == "Decimal" and physical in ("INT32", "INT64", "FIXED_LEN_BYTE_ARRAY"):
        return T.DecimalType(int(logical["precision"]), int(logical["scale"]))
    if physical == "BOOLEAN" and kind == "None":
        return T.BooleanType()
    if physical == "INT32":
        if kind == "Date":
            return T.DateType()
        if kind == "None":
            return T.IntegerType()
        if kind == "Int" and logical.get("isSigned"):
            return {8: T.ByteType(), 16: T.ShortType(), 32: T.IntegerType()}.get(
                int(logical["bitWidth"]))
        return None
    if physical == "INT64":
        if kind == "None" or (kind == "Int" and logical.get("isSigned")
                              and int(logical["bitWidth"]) == 64):
            return T.LongType()
        if kind == "Timestamp" and logical.get("timeUnit") in ("milliseconds",
                                                               "microseconds"):
            if logical.get("isAdjustedToUTC"):
                return T.TimestampType()
            return T.TimestampNTZType() if ntz else None
        return None
    if physical == "FLOAT" and kind == "None":
        return T.FloatType()
    if physical == "DOUBLE" and kind == "None":
        return T.DoubleType()
    if physical == "BYTE_ARRAY" and kind == "String":
        return T.StringType()
    return None
