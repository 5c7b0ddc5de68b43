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
import threading
from contextlib import nullcontext
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from pyiceberg.catalog import Catalog
from pyiceberg.catalog.sql import SqlCatalog
from sqlalchemy.engine import make_url

from toolkit.errors import SparkSetupError
from toolkit.iceberg.catalog import S3_SCHEMES, embedded
from toolkit.spark.cluster import SHARED_DISK, check_reachable, is_local_master, package_zip
from toolkit.spark.logs import quiet_java_option
from toolkit.spark.progress import Track, tracking
from toolkit.spark.startup import after_start, class_archive_options, forget, pending
from toolkit.spark.views import SUBSTITUTE

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "SparkSetupError",
    "iceberg_runtime_jar",
    "s3a_conf",
    "s3a_jars",
    "spark_conf",
    "spark_session",
]

ICEBERG_RUNTIME_PACKAGE = "snowpark_connect_deps_iceberg"
ICEBERG_RUNTIME_GLOB = "iceberg-spark-runtime-3.5_2.12-*.jar"
ICEBERG_EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
SQLITE_JDBC_JAR = "/usr/share/java/sqlite-jdbc.jar"
POSTGRES_JDBC_JAR = "/usr/share/java/postgresql.jar"
#: PyIceberg's S3 property names and Hadoop S3A's (after ``fs.s3a.``)
_S3A_NAMES = {
    "s3.endpoint": "endpoint",
    "s3.access-key-id": "access.key",
    "s3.secret-access-key": "secret.key",
    "s3.session-token": "session.token",
    "s3.region": "endpoint.region",
}
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


def _postgres_jdbc() -> str:
    jar = os.environ.get("TOOLKIT_POSTGRES_JDBC_JAR", POSTGRES_JDBC_JAR)
    if not Path(jar).is_file():
        raise SparkSetupError(
            f"The PostgreSQL JDBC driver {jar} is missing (Spark needs it to open a catalog "
            "kept in PostgreSQL): run `make sysdeps` or `apt-get install "
            "libpostgresql-jdbc-java`, or set TOOLKIT_POSTGRES_JDBC_JAR."
        )
    return jar


def s3a_jars() -> list[str]:
    """The jars Spark needs to read and write ``s3://``/``s3a://`` (Hadoop's S3A file
    system and the AWS SDK it uses): from ``TOOLKIT_S3A_JARS`` (a folder or a
    comma-separated list) or ``<venv>/share/toolkit/jars``, where ``make install`` puts
    them (no wheel ships them; scripts/s3a_jars.sh extracts them from a PyPI sdist)."""
    given = os.environ.get("TOOLKIT_S3A_JARS")
    if given and not Path(given).is_dir():
        jars = [j for j in given.split(",") if j]
    else:
        folder = Path(given) if given else Path(sys.prefix, "share", "toolkit", "jars")
        jars = sorted(str(p) for p in folder.glob("*.jar")) if folder.is_dir() else []
    names = " ".join(Path(j).name for j in jars)
    if "hadoop-aws" not in names or "aws-java-sdk" not in names:
        raise SparkSetupError(
            "Spark needs Hadoop's S3A jars (hadoop-aws and the AWS SDK bundle) for an s3:// "
            f"warehouse or input, and found {names or 'none'}: run `make install` (it runs "
            "scripts/s3a_jars.sh) or point TOOLKIT_S3A_JARS at them."
        )
    return jars


def _is_s3(location: str) -> bool:
    return location.split("://", 1)[0] in S3_SCHEMES if "://" in location else False


def s3a_conf(properties: dict[str, str]) -> dict[str, str]:
    """Hadoop S3A settings for PyIceberg's ``s3.*`` catalog properties, so Spark reads
    and writes the same objects (``s3://`` URLs are served by S3A too).

    >>> conf = s3a_conf({"s3.endpoint": "http://127.0.0.1:9000", "s3.access-key-id": "k"})
    >>> conf["spark.hadoop.fs.s3a.endpoint"], conf["spark.hadoop.fs.s3a.path.style.access"]
    ('http://127.0.0.1:9000', 'true')
    >>> conf["spark.hadoop.fs.s3a.connection.ssl.enabled"], conf["spark.hadoop.fs.s3a.access.key"]
    ('false', 'k')
    """
    hadoop = "spark.hadoop.fs.s3a."
    conf = {
        "spark.hadoop.fs.s3.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
        # S3-compatible servers (rclone, some MinIO set-ups) refuse the deletes of
        # directory markers; keeping them is also what AWS recommends since Hadoop 3.3
        f"{hadoop}directory.marker.retention": "keep",
    }
    for key, name in _S3A_NAMES.items():
        if properties.get(key):
            conf[hadoop + name] = str(properties[key])
    endpoint = properties.get("s3.endpoint")
    if endpoint:
        conf[f"{hadoop}connection.ssl.enabled"] = str(endpoint.startswith("https")).lower()
        virtual = str(properties.get("s3.force-virtual-addressing", "")).lower() == "true"
        conf[f"{hadoop}path.style.access"] = str(not virtual).lower()
    if properties.get("s3.access-key-id"):
        conf[f"{hadoop}aws.credentials.provider"] = (
            "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider"
            if properties.get("s3.session-token")
            else "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"
        )
    return conf


def _sql_catalog_conf(cat: SqlCatalog, prefix: str) -> tuple[dict[str, str], list[str]]:
    """Iceberg's ``JdbcCatalog`` settings for a PyIceberg ``SqlCatalog`` on PostgreSQL."""
    url = make_url(str(cat.properties.get("uri", "")))
    if url.get_backend_name() != "postgresql":
        raise SparkSetupError(
            f"Catalog {cat.name!r} is a SQL catalog on {url.get_backend_name()!r}: SQLite "
            "and PostgreSQL are mapped to Spark automatically, others are not. Pass the "
            f"Spark catalog settings ('{prefix}.catalog-impl', '{prefix}.uri', ...) to "
            "spark_session(**conf) and they are used instead."
        )
    host = url.host or "localhost"
    jdbc = f"jdbc:postgresql://{host}:{url.port or 5432}/{url.database or ''}"
    conf = {
        f"{prefix}.catalog-impl": "org.apache.iceberg.jdbc.JdbcCatalog",
        f"{prefix}.uri": jdbc,
        f"{prefix}.warehouse": str(cat.properties.get("warehouse", "")),
        f"{prefix}.jdbc.schema-version": "V1",  # views, and the layout PyIceberg expects
    }
    # libpq also takes them as query parameters (postgresql://me@host/db?password=...)
    user = url.username or url.query.get("user")
    password = url.password or url.query.get("password")
    if user:
        conf[f"{prefix}.jdbc.user"] = str(user)
    if password:
        conf[f"{prefix}.jdbc.password"] = str(password)
    return conf, [_postgres_jdbc()]


def _catalog_conf(
    cat: Catalog, conf: dict[str, str] | None = None
) -> tuple[dict[str, str], list[str], list[str]]:
    """Spark catalog settings for ``cat``, plus extra jars and driver Java options.
    Settings the user gives for the catalog (``conf``) replace the mapping."""
    prefix = f"spark.sql.catalog.{cat.name}"
    settings = {
        prefix: "org.apache.iceberg.spark.SparkCatalog",
        # Spark caches loaded tables (30 s by default) and would not see PyIceberg's
        # commits meanwhile; both sides write here, so always read the current metadata.
        f"{prefix}.cache-enabled": "false",
    }
    jars: list[str] = []
    properties = {k: str(v) for k, v in cat.properties.items() if v is not None}
    if _is_s3(properties.get("warehouse", "")) or any(k.startswith("s3.") for k in properties):
        settings |= s3a_conf(properties)
        jars += s3a_jars()
    if conf and any(k in conf for k in (f"{prefix}.catalog-impl", f"{prefix}.type")):
        return settings, jars, []

    info = embedded(cat)
    if info is not None:
        jar, jni_dir = _sqlite_jdbc()
        settings |= {
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
        return settings, [*jars, jar], [f"-Djava.library.path={jni_dir}"]

    if isinstance(cat, SqlCatalog):
        sql, sql_jars = _sql_catalog_conf(cat, prefix)
        return settings | sql, jars + sql_jars, []

    java_type = _JAVA_TYPES.get(type(cat).__name__) or properties.get("type", "")
    if java_type not in _JAVA_TYPES.values():
        raise SparkSetupError(
            f"Cannot tell which Iceberg catalog type {type(cat).__name__} is for Spark: pass "
            f"'{prefix}.type' (or '{prefix}.catalog-impl') and its settings via **conf."
        )
    settings[f"{prefix}.type"] = java_type
    if java_type == "rest":
        # Iceberg's Java client posts a metrics report after each scan and commit to an
        # endpoint REST servers need not have (lakana has none): a failed report only
        # logs a warning per write; a server that keeps them can be told so in **conf
        settings[f"{prefix}.rest-metrics-reporting-enabled"] = "false"
        if jars:
            # its default ResolvingFileIO picks S3FileIO for s3:// (the class is in the
            # runtime jar, the AWS SDK v2 it needs is not): read and write through S3A
            settings[f"{prefix}.io-impl"] = "org.apache.iceberg.hadoop.HadoopFileIO"
    for key, value in properties.items():
        # PyIceberg-only settings (py-io-impl, ...) mean nothing to Iceberg's Java code.
        if key == "type" or key.startswith("py-"):
            continue
        settings[f"{prefix}.{key}"] = value
    return settings, jars, []


def spark_conf(
    cat: Catalog, *, master: str | None = None, shared_disk: bool = False,
    quiet: bool = True, **conf: str,
) -> dict[str, str]:
    """The Spark settings :func:`spark_session` uses for ``cat`` (``conf`` wins)."""
    conf = {key: str(value) for key, value in conf.items()}
    catalog_conf, jars, java_options = _catalog_conf(cat, conf)
    if quiet:
        java_options = [*java_options, quiet_java_option()]
    master = master or conf.get("spark.master") or "local[*]"
    settings = {
        "spark.master": master,
        "spark.app.name": "toolkit",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "4",
        "spark.sql.session.timeZone": "UTC",
        # names from data may hold ``${...}``, which Spark would replace in SQL text by an
        # environment variable or a setting (toolkit.core.views, SPARK_VARIABLE)
        SUBSTITUTE: "false",
        "spark.sql.extensions": ICEBERG_EXTENSIONS,
        "spark.jars": ",".join([str(iceberg_runtime_jar()), *jars]),
        "spark.sql.defaultCatalog": cat.name,
        SHARED_DISK: str(shared_disk).lower(),
        **catalog_conf,
    }
    if java_options:
        settings["spark.driver.extraJavaOptions"] = " ".join(java_options)
    if not is_local_master(master):
        warehouse = str(cat.properties.get("warehouse", ""))
        check_reachable(master, warehouse or "(none)", f"Catalog {cat.name!r}'s warehouse",
                        shared_disk=shared_disk)
        # executors import the toolkit from this zip, whatever their own disks hold
        settings["spark.submit.pyFiles"] = str(package_zip())
    settings.update(conf)
    settings["spark.master"] = master
    return settings


def _await_background(cat: Catalog) -> None:
    """A session for ``cat`` being started in the background (a notebook's preview,
    :func:`toolkit.spark.startup.start_in_background`): wait for it rather than start a
    second; its error, if it failed, is raised here (once: a later call starts afresh)."""
    started = pending(cat.name)
    if started is None or threading.current_thread().name == started.name:
        return
    try:
        started.result()
    except SparkSetupError:
        forget(cat.name)
        raise


def spark_session(
    cat: Catalog, *, master: str | None = None, shared_disk: bool = False, quiet: bool = True,
    **conf: str,
) -> SparkSession:
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
    * a catalog kept in PostgreSQL (``toolkit.catalog("postgresql://...",
      warehouse=...)``): Iceberg's ``JdbcCatalog`` on ``jdbc:postgresql://...`` with the
      URL's user and password; Debian's PostgreSQL JDBC jar is added to ``spark.jars``.
    * REST, Hive and Glue catalogs: ``type=rest|hive|glue`` and every catalog
      property copied as is (``uri``, ``warehouse``, ``credential``, ``s3.*`` ...; the
      Java and Python names are mostly the same), PyIceberg-only ``py-*`` keys dropped.
      REST also gets ``rest-metrics-reporting-enabled=false`` and, with S3 settings,
      ``io-impl=HadoopFileIO`` (S3A; the AWS SDK v2 that S3FileIO needs is not here).
      Tested against lakana-server 0.20 with tables in S3 (tests/streams/).
    * anything else: pass ``spark.sql.catalog.<name>.*`` settings yourself; given
      ``spark.sql.catalog.<name>.catalog-impl`` or ``.type``, your settings are used and
      nothing is refused.

    An ``s3://`` or ``s3a://`` warehouse, or ``s3.*`` catalog properties, add Hadoop's
    S3A file system (its jars, see :func:`s3a_jars`, and :func:`s3a_conf`'s settings
    from ``s3.endpoint``, ``s3.access-key-id``, ``s3.secret-access-key``, ...).

    ``master`` (or ``spark.master``; default ``local[*]``) may be a cluster such as
    ``spark://host:7077``: the toolkit is then shipped to the executors as a zip
    (``spark.submit.pyFiles``), and a warehouse on this machine's disk is refused
    (executors would write their files on their own disks), as are local input paths
    later, unless ``shared_disk=True`` says every machine sees the same paths.
    Executors run the Python of ``PYSPARK_PYTHON`` (default: this interpreter's path),
    which must hold the toolkit's dependencies on every machine.

    Spark's variable substitution is off (``spark.sql.variable.substitute=false``): names
    from data may hold ``${env:HOME}`` or ``${spark.app.name}``, which Spark would replace
    in SQL text; the views the toolkit creates also read right in sessions that keep it on.

    Spark's table cache is off for that catalog (``cache-enabled=false``), so each
    query sees the commits PyIceberg made just before.

    ``quiet`` (the default): the driver logs errors only, so no warning or log-level
    banner lands under a notebook cell (:mod:`toolkit.spark.logs`); ``quiet=False``
    keeps Spark's own logging. Starting the JVM shows "Starting Spark...", then "Spark
    ready (N s)", through the progress reporter (:mod:`toolkit.spark.progress`: under a
    notebook cell, on a terminal running ``toolkit``; nowhere by default).

    The driver JVM maps the classes a first ingest loads from the class archive ``make
    install`` recorded (:mod:`toolkit.spark.startup`), when one matches this Java, pyspark
    and jars; ``TOOLKIT_CLASS_ARCHIVE=off`` starts without it. A session being started in
    the background for ``cat`` (a notebook's preview) is waited for, not started twice.

    Keyword settings override all of the above, e.g.
    ``spark_session(cat, **{"spark.sql.shuffle.partitions": "8"})``. If a session
    already runs, Spark keeps it and applies only the runtime SQL settings (catalogs
    included); jars, the master and JVM options need a fresh process.
    """
    _check_java()
    _await_background(cat)
    # Workers run the toolkit's own engine, so they need this interpreter (its venv).
    # PySpark reads the environment, not spark.pyspark.python, when it starts the context.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    settings = spark_conf(cat, master=master, shared_disk=shared_disk, quiet=quiet, **conf)
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    # a JVM takes seconds to start (the tally's first compile too): say so, in a notebook
    # or a terminal, then how long it took; a session already running starts nothing
    fresh = SparkContext._active_spark_context is None
    with tracking(None, "Starting Spark...") if fresh else nullcontext(Track()) as track:
        # The JVM type tally (compiled at first use): on the driver's classpath from the start.
        from toolkit.spark.tally import tally_jar

        jar = tally_jar()
        if jar is not None:
            settings["spark.jars"] = ",".join(
                j for j in (settings.get("spark.jars"), str(jar)) if j)
        if fresh:  # the classes a first ingest loads, mapped from an archive (startup.py)
            options = settings.get("spark.driver.extraJavaOptions", "")
            archive = class_archive_options(settings["spark.jars"].split(","), options)
            if archive:
                settings["spark.driver.extraJavaOptions"] = " ".join([options, *archive])
        builder = SparkSession.builder
        for key, value in settings.items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        track.finish("Spark ready")
    if quiet:  # a session that already ran keeps its JVM's logging: quieten it from now
        spark.sparkContext.setLogLevel("ERROR")
    if fresh:
        after_start(spark, cat)
    return spark
