"""A Spark session wired to the same Iceberg catalog PyIceberg uses.

Nothing is downloaded: the Iceberg Spark runtime jar comes from the PyPI package
``snowpark-connect-deps-iceberg`` (pinned to 1.0.2) and, for the embedded catalog,
the SQLite JDBC driver from Debian's ``libxerial-sqlite-jdbc-java``.
"""

from __future__ import annotations

import glob
import os
import shutil
import sys
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from pyiceberg.catalog import Catalog
from pyiceberg.catalog.sql import SqlCatalog

from toolkit.errors import SparkSetupError
from toolkit.iceberg.catalog import embedded

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["SparkSetupError", "iceberg_runtime_jar", "spark_conf", "spark_session"]

ICEBERG_RUNTIME_PACKAGE = "snowpark_connect_deps_iceberg"
ICEBERG_RUNTIME_GLOB = "iceberg-spark-runtime-3.5_2.12-*.jar"
ICEBERG_EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
SQLITE_JDBC_JAR = "/usr/share/java/sqlite-jdbc.jar"
SQLITE_JNI_GLOB = "/usr/lib/*/jni/libsqlitejdbc.so"
SQLITE_JNI_DEFAULT = "/usr/lib/x86_64-linux-gnu/jni"

# PyIceberg catalog classes and the Iceberg Java catalog `type` they correspond to.
_JAVA_TYPES = {
    "RestCatalog": "rest",
    "HiveCatalog": "hive",
    "GlueCatalog": "glue",
}


def iceberg_runtime_jar() -> Path:
    """The Iceberg Spark runtime jar (Spark 3.5, Scala 2.12) shipped in a PyPI package."""
    try:
        jars = resources.files(ICEBERG_RUNTIME_PACKAGE) / "jars"
    except ModuleNotFoundError as exc:
        raise SparkSetupError(
            "The Iceberg Spark runtime is missing: pip install 'toolkit[spark]' "
            "(it brings snowpark-connect-deps-iceberg==1.0.2)."
        ) from exc
    found = sorted(glob.glob(os.path.join(str(jars), ICEBERG_RUNTIME_GLOB)))
    if not found:
        raise SparkSetupError(f"No {ICEBERG_RUNTIME_GLOB} in {jars}")
    return Path(found[-1])


def _check_java() -> None:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and Path(java_home, "bin", "java").exists():
        return
    if shutil.which("java") is None:
        raise SparkSetupError(
            "Java is not installed (Spark needs Java 17): run `make sysdeps` "
            "or `apt-get install openjdk-17-jre-headless`."
        )


def _sqlite_jdbc() -> tuple[str, str]:
    """The SQLite JDBC jar and the folder holding its native library."""
    jar = os.environ.get("TOOLKIT_SQLITE_JDBC_JAR", SQLITE_JDBC_JAR)
    if not Path(jar).is_file():
        raise SparkSetupError(
            f"The SQLite JDBC driver {jar} is missing (Spark needs it to open the embedded "
            "catalog): run `make sysdeps` or `apt-get install libxerial-sqlite-jdbc-java`."
        )
    native = sorted(glob.glob(SQLITE_JNI_GLOB))
    jni_dir = os.path.dirname(native[0]) if native else SQLITE_JNI_DEFAULT
    return jar, jni_dir


def _catalog_conf(cat: Catalog) -> tuple[dict[str, str], list[str], list[str]]:
    """Spark catalog settings for ``cat``, plus extra jars and driver Java options."""
    prefix = f"spark.sql.catalog.{cat.name}"
    conf = {
        prefix: "org.apache.iceberg.spark.SparkCatalog",
        # Spark caches loaded tables (30 s by default) and would not see PyIceberg's
        # commits meanwhile; both sides write here, so always read the current metadata.
        f"{prefix}.cache-enabled": "false",
    }

    info = embedded(cat)
    if info is not None:
        jar, jni_dir = _sqlite_jdbc()
        conf |= {
            f"{prefix}.catalog-impl": "org.apache.iceberg.jdbc.JdbcCatalog",
            f"{prefix}.uri": info.jdbc_uri,
            f"{prefix}.warehouse": info.warehouse,
            # V1 keeps views possible and the layout PyIceberg expects.
            f"{prefix}.jdbc.schema-version": "V1",
            # PyIceberg has created the catalog tables already (SqlCatalog does on open).
            # Iceberg's own check for them (1.10) leaves a DatabaseMetaData.getTables
            # result set open, i.e. a read transaction that never ends on a pooled
            # SQLite connection: every later PyIceberg commit then fails with
            # "database is locked". Skipping that check avoids it.
            f"{prefix}.jdbc.init-catalog-tables": "false",
        }
        return conf, [jar], [f"-Djava.library.path={jni_dir}"]

    if isinstance(cat, SqlCatalog):
        raise SparkSetupError(
            f"Catalog {cat.name!r} is a SQL catalog on {cat.properties.get('uri')!r}: only "
            "SQLite files are mapped automatically. Pass the Spark catalog settings "
            f"('{prefix}.catalog-impl', '{prefix}.uri', ...) to spark_session(**conf)."
        )

    java_type = _JAVA_TYPES.get(type(cat).__name__) or str(cat.properties.get("type", ""))
    if java_type not in _JAVA_TYPES.values():
        raise SparkSetupError(
            f"Cannot tell which Iceberg catalog type {type(cat).__name__} is for Spark: pass "
            f"'{prefix}.type' (or '{prefix}.catalog-impl') and its settings via **conf."
        )
    conf[f"{prefix}.type"] = java_type
    for key, value in cat.properties.items():
        # PyIceberg-only settings (py-io-impl, ...) mean nothing to Iceberg's Java code.
        if key == "type" or key.startswith("py-") or value is None:
            continue
        conf[f"{prefix}.{key}"] = str(value)
    return conf, [], []


def spark_conf(cat: Catalog, **conf: str) -> dict[str, str]:
    """The Spark settings :func:`spark_session` uses for ``cat`` (``conf`` wins)."""
    catalog_conf, jars, java_options = _catalog_conf(cat)
    settings = {
        "spark.master": "local[*]",
        "spark.app.name": "toolkit",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "4",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.extensions": ICEBERG_EXTENSIONS,
        "spark.jars": ",".join([str(iceberg_runtime_jar()), *jars]),
        "spark.sql.defaultCatalog": cat.name,

        **catalog_conf,
    }
    if java_options:
        settings["spark.driver.extraJavaOptions"] = " ".join(java_options)
    settings.update({key: str(value) for key, value in conf.items()})
    return settings


def spark_session(cat: Catalog, **conf: str) -> SparkSession:
    """A Spark session (``getOrCreate``) that sees the tables of the PyIceberg catalog ``cat``.

    Defaults: ``local[*]`` (unless ``spark.master`` is given), no UI, 4 shuffle
    partitions, UTC session time zone, Iceberg's SQL extensions, the Iceberg runtime
    jar from ``snowpark-connect-deps-iceberg``, and an Iceberg catalog in Spark with
    the same name as ``cat.name`` (also made Spark's default catalog), so
    ``spark.sql("SELECT * FROM lakehouse.db.t")`` reads what PyIceberg wrote.

    How ``cat`` is mapped:

    * the embedded SQLite catalog (:func:`toolkit.iceberg.catalog`): Iceberg's
      ``JdbcCatalog`` on ``jdbc:sqlite:<folder>/catalog.db`` with the same warehouse and
      ``jdbc.schema-version=V1``; Debian's SQLite JDBC jar is added to ``spark.jars``
      and its native library folder to the driver's ``java.library.path``.
    * REST, Hive and Glue catalogs: ``type=rest|hive|glue`` and every catalog
      property copied as is (``uri``, ``warehouse``, ``credential``, ``s3.*`` ...; the
      Java and Python names are mostly the same), PyIceberg-only ``py-*`` keys dropped.
      This is best effort: jars such as Iceberg's AWS bundle are not added.
    * anything else: pass ``spark.sql.catalog.<name>.*`` settings yourself.

    Spark's table cache is off for that catalog (``cache-enabled=false``), so each
    query sees the commits PyIceberg made just before.

    Keyword settings override all of the above, e.g.
    ``spark_session(cat, **{"spark.master": "local[2]"})``. If a session already
    runs, Spark keeps it and applies only the runtime SQL settings (catalogs
    included); jars and JVM options need a fresh process.
    """
    _check_java()
    # Workers run the toolkit's own engine, so they need this interpreter (its venv).
    # PySpark reads the environment, not spark.pyspark.python, when it starts the context.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    settings = spark_conf(cat, **conf)
    # The JVM type tally (compiled at first use): on the driver's classpath from the start.
    from toolkit.spark.tally import tally_jar

    jar = tally_jar()
    if jar is not None:
        settings["spark.jars"] = ",".join(j for j in (settings.get("spark.jars"), str(jar)) if j)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    for key, value in settings.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()
