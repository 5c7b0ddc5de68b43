"""Frames (pandas, Arrow, Polars) reach Spark as Arrow record batches (the transport Spark's
``spark.sql.execution.arrow.pyspark.enabled`` uses), not as pickled records, when every
column travels with its values unchanged (the columnar path, ``toolkit.spark.columnar``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from toolkit.core.batch.typed_profile import decimal_source
from toolkit.spark.misreads import case_twin
from toolkit.spark.settings import held

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["arrow_dataframe", "frame_table"]


def _spark_ready(column: pa.ChunkedArray) -> pa.DataType | None:
    """The Arrow type a frame's column travels to Spark as, its values unchanged (a cast
    that would change one fails); None: a type it does not travel as (the records path)."""
    t = column.type
    T = pa.types
    if T.is_boolean(t) or T.is_int8(t) or T.is_int16(t) or T.is_int32(t) or T.is_int64(t):
        return t
    if T.is_uint8(t):
        return pa.int16()
    if T.is_uint16(t):
        return pa.int32()
    if T.is_uint32(t):
        return pa.int64()
    if T.is_float32(t) or T.is_float64(t):
        return t
    if T.is_string(t) or T.is_large_string(t) or T.is_string_view(t):
        return pa.string()
    if T.is_date(t):
        return pa.date32()
    if T.is_timestamp(t):
        # a zone or none: an instant in UTC either way (toolkit.arrow); nanoseconds only
        # when every value is a whole microsecond (the cast refuses otherwise)
        return pa.timestamp("us", "UTC")
    if T.is_decimal128(t) and decimal_source(t.precision, t.scale):
        return t
    return None


def frame_table(source: Any) -> pa.Table | None:
    """A pandas, Arrow or Polars frame as an Arrow table whose every column travels to
    Spark with its values unchanged; None when one does not (an ``object`` column of
    drifting values, nested or binary columns, nanoseconds...): the records path then."""
    try:
        table = _as_arrow(source)
    except (pa.ArrowException, TypeError, ValueError):
        return None
    if table is None or table.num_columns == 0:
        return None
    if case_twin(table.schema) is not None:
        return None  # names Spark's analyzer cannot tell apart (toolkit.spark.misreads)
    fields = []
    for name, column in zip(table.column_names, table.columns, strict=True):
        if not isinstance(name, str):
            return None
        target = _spark_ready(column)
        if target is None:
            return None
        fields.append(pa.field(name, target))
    try:
        return table.cast(pa.schema(fields), safe=True)
    except (pa.ArrowException, ValueError):
        return None


def _as_arrow(source: Any) -> pa.Table | None:
    module = type(source).__module__.split(".")[0]
    if module == "pandas":
        if any(str(d) == "object" for d in source.dtypes):
            return None  # drifting values live there: typed one by one in Python
        if len(set(map(str, source.columns))) != source.shape[1]:
            return None
        # pandas' missing values (NaN, NaT, None) are nulls, as toolkit.arrow reads them
        return pa.Table.from_pandas(source, preserve_index=False)
    if module == "polars":
        frame = source.collect() if hasattr(source, "collect") else source
        return frame.to_arrow()
    if module == "pyarrow":
        if isinstance(source, pa.RecordBatch):
            return pa.Table.from_batches([source])
        if isinstance(source, pa.Table):
            return source
    return None


def arrow_dataframe(spark: SparkSession, table: pa.Table) -> DataFrame:
    """A Spark DataFrame of an Arrow table's rows, sent as Arrow record batches (one a
    partition, of Spark's ``arrowMaxRecordsPerBatch`` rows), the way Spark's Arrow
    conversion of pandas frames sends them, without pandas in between."""
    from pyspark.serializers import Serializer
    from pyspark.sql import DataFrame
    from pyspark.sql.pandas.serializers import ArrowStreamSerializer
    from pyspark.sql.pandas.types import from_arrow_schema

    schema = from_arrow_schema(table.schema)
    jconf: Any = spark._jconf
    step = int(jconf.arrowMaxRecordsPerBatch()) or table.num_rows
    batches = table.combine_chunks().to_batches(max_chunksize=max(step, 1))
    if not batches:
        batches = [pa.RecordBatch.from_pylist([], schema=table.schema)]
    jvm: Any = spark._jvm
    serializer: Serializer = ArrowStreamSerializer()
    jiter = spark.sparkContext._serialize_to_jvm(
        batches, serializer,
        lambda path: jvm.PythonSQLUtils.readArrowStreamFromFile(path),
        lambda: jvm.ArrowIteratorServer(),
    )
    # Below this size Spark makes the batches a local relation, whose every projection its
    # optimizer then evaluates in the driver, row by row, uncompiled (ConvertToLocalRelation):
    # seconds for the class codes of 200,000 rows. Spread over partitions instead, they
    # are computed in the executors' compiled code, as a file's are. Held, not set and
    # put back: another thread's frame may be on its way meanwhile (toolkit.spark.settings)
    with held(spark, {_LOCAL_RELATION: "0"}):
        jdf = jvm.PythonSQLUtils.toDataFrame(jiter, schema.json(), spark._jsparkSession)
    return DataFrame(jdf, spark)


_LOCAL_RELATION = "spark.sql.execution.arrow.localRelationThreshold"
