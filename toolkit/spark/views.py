"""RULES 7 COALESCE views, created by Spark as Iceberg views in the table's catalog.

The view is stored in the catalog (with the embedded SQLite catalog: Iceberg's
``JdbcCatalog`` with ``jdbc.schema-version=V1``, which :func:`toolkit.spark_session` sets),
so any session on that catalog can query it::

    from toolkit.spark.views import create_coalesce_view

    sql = create_coalesce_view(spark, "db.events", "db.events_folded")
    spark.table("lakehouse.db.events_folded").show()

A view is a snapshot of the table's schema when it was made: after an ingest that added
columns, create it again (``CREATE OR REPLACE``), e.g. from a stream's ``on_batch``::

    stream(..., on_batch=lambda r: r.plan.changed and
           create_coalesce_view(spark, "db.events", "db.events_folded"))
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from pyiceberg.schema import Schema

from toolkit.core.batch.options import make_options, takes_options
from toolkit.core.evolution.view_types import HINTS_PROPERTY
from toolkit.errors import CatalogFeatureError
from toolkit.iceberg.views import coalesce_sql
from toolkit.spark.settings import held

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "ESCAPED_LITERALS",
    "SUBSTITUTE",
    "as_written",
    "create_coalesce_view",
    "iceberg_schema",
    "kept_hints",
    "qualify",
]

#: Spark's switch for replacing ``${...}`` in SQL text (on by default)
SUBSTITUTE = "spark.sql.variable.substitute"
#: Spark's switch for reading string literals without backslash escapes (off by default)
ESCAPED_LITERALS = "spark.sql.parser.escapedStringLiterals"


def qualify(spark: SparkSession, name: str, catalog_name: str | None = None) -> str:
    """``name`` with a catalog in front: ``catalog_name`` if given, else Spark's current one,
    unless ``name`` already starts with a catalog Spark knows (three or more parts)."""
    parts = name.split(".")
    if catalog_name is None:
        if len(parts) >= 3:
            return name
        catalog_name = spark.catalog.currentCatalog()
    elif parts[0] == catalog_name and len(parts) >= 3:
        return name
    return f"{catalog_name}.{name}"


def iceberg_schema(spark: SparkSession, table: str) -> Schema:
    """The current Iceberg schema of ``table`` (a qualified name), field IDs and docs
    included, as Spark's Iceberg catalog loads it (Spark's own ``StructType`` keeps no IDs)."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None, "no JVM: is the Spark session stopped?"
    jtable = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, table)
    text = jvm.org.apache.iceberg.SchemaParser.toJson(jtable.schema())
    return Schema.model_validate_json(text)


def kept_hints(spark: SparkSession, table: str) -> dict[str, str]:
    """The type hints ``table`` keeps (its ``toolkit.hints`` property, as Spark's Iceberg
    catalog loads it): a hinted field reads as its hint's type in the view."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None, "no JVM: is the Spark session stopped?"
    jtable = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, table)
    text = jtable.properties().get(HINTS_PROPERTY)
    return {} if text is None else {HINTS_PROPERTY: str(text)}


@takes_options
def create_coalesce_view(
    spark: SparkSession,
    table: str,
    view: str,
    *,
    catalog_name: str | None = None,
    pretty: bool = False,
    view_types: Mapping[str, str] | None = None,
    **options: Any,
) -> str:
    """Create (or replace) ``view``: the COALESCE view of RULES 7 over the current schema of
    the Iceberg ``table``, and return the Spark SQL it ran: one column per source key,
    nested families folded inside their structs, ``view_types`` as for
    :func:`toolkit.coalesce_sql`.

    ``table`` and ``view`` are ``namespace.name`` in ``catalog_name`` (default: Spark's
    current catalog) or fully qualified ``catalog.namespace.name``. ``options`` as for
    :func:`toolkit.coalesce_sql` (``lattice``, ``timestamp_unit``...): use the ones the
    table was ingested with.

    Example::

        create_coalesce_view(spark, "db.events", "db.events_folded")
        # CREATE OR REPLACE VIEW lakehouse.db.events_folded AS SELECT
        #   COALESCE(`my_field_string`, CAST(`my_field` AS STRING)) AS `my_field`
        #   /* my_field: long and string fold into string (longs as text) */, ...
        #   FROM lakehouse.db.events
    """
    make_options(**options)  # a misspelt option fails before Spark is asked anything
    source = qualify(spark, table, catalog_name)
    target = qualify(spark, view, catalog_name)
    schema = iceberg_schema(spark, source)
    sql = coalesce_sql(schema, source, "spark", view=target, pretty=pretty,
                       view_types=view_types, properties=kept_hints(spark, source),
                       **options)
    try:
        with as_written(spark):
            spark.sql(sql)
    except Exception as exc:
        if "does not support endpoint" not in str(exc) or "/views" not in str(exc):
            raise
        # a REST catalog server without the view endpoints (lakana, for one): the view
        # cannot be kept there, but its SQL is a plain query that needs no view
        raise CatalogFeatureError(
            f"the catalog of {source} keeps no views (its REST server has no view "
            "endpoints): run the view's query as it is (toolkit.coalesce_sql gives it), "
            "or create the view in a catalog that keeps views, such as the embedded one"
        ) from None
    return sql


@contextmanager
def as_written(spark: SparkSession) -> Iterator[None]:
    """While the block runs, Spark parses SQL text as written, and as the toolkit renders
    it; the settings are as they were after. The SQL the toolkit runs holds names from
    data: variable substitution is off (``${...}`` would be replaced by an environment
    variable or a setting; toolkit.core.views), and string literals take backslash escapes
    (sqlglot writes ``'`` and ``\\`` so). Held while any such block runs on the session
    (another thread's view or maintenance, say: :func:`toolkit.spark.settings.held`)."""
    with held(spark, {SUBSTITUTE: "false", ESCAPED_LITERALS: "false"}):
        yield
