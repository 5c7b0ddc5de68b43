"""How spark_session() maps a PyIceberg catalog to Spark settings (no JVM started here)."""

from __future__ import annotations

import json
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.catalog.sql import SqlCatalog

from toolkit.errors import SparkSetupError
from toolkit.iceberg import catalog
from toolkit.spark import iceberg_runtime_jar, spark_conf
from toolkit.spark.logs import quiet_java_option


def test_runtime_jar_is_the_pinned_iceberg_build() -> None:
    jar = iceberg_runtime_jar()
    assert jar.is_file()
    assert jar.name == "iceberg-spark-runtime-3.5_2.12-1.10.2.jar"


def test_embedded_catalog_maps_to_a_jdbc_catalog_on_the_same_sqlite_file(tmp_path: Path) -> None:
    cat = catalog(tmp_path, name="lake")
    conf = spark_conf(cat)
    p = "spark.sql.catalog.lake"
    assert conf[p] == "org.apache.iceberg.spark.SparkCatalog"
    assert conf[f"{p}.catalog-impl"] == "org.apache.iceberg.jdbc.JdbcCatalog"
    assert conf[f"{p}.uri"] == f"jdbc:sqlite:{tmp_path.resolve()}/catalog.db"
    assert conf[f"{p}.warehouse"] == f"file://{tmp_path.resolve()}/warehouse"
    assert conf[f"{p}.jdbc.schema-version"] == "V1"
    assert conf[f"{p}.jdbc.init-catalog-tables"] == "false"
    assert conf[f"{p}.cache-enabled"] == "false"
    assert conf["spark.sql.defaultCatalog"] == "lake"
    assert conf["spark.master"] == "local[*]"
    assert conf["spark.ui.enabled"] == "false"
    assert conf["spark.sql.session.timeZone"] == "UTC"
    jars = conf["spark.jars"].split(",")
    assert jars[0] == str(iceberg_runtime_jar())
    assert jars[1].endswith("sqlite-jdbc.jar")
    assert "-Djava.library.path=" in conf["spark.driver.extraJavaOptions"]


def test_keyword_settings_win(tmp_path: Path) -> None:
    conf = spark_conf(
        catalog(tmp_path),
        **{"spark.master": "local[2]", "spark.sql.catalog.lakehouse.cache-enabled": "true"},
    )
    assert conf["spark.master"] == "local[2]"
    assert conf["spark.sql.catalog.lakehouse.cache-enabled"] == "true"


def test_sql_catalog_on_another_database_is_refused_unless_the_user_maps_it() -> None:
    cat = SqlCatalog("mem", uri="sqlite:///:memory:", warehouse="file:///tmp/unused")
    with pytest.raises(SparkSetupError, match="SQLite and PostgreSQL are mapped"):
        spark_conf(cat)
    # the refusal's own advice works: the user's catalog settings are used as given
    mine = {"spark.sql.catalog.mem.catalog-impl": "com.example.MyCatalog",
            "spark.sql.catalog.mem.uri": "jdbc:example://db"}
    conf = spark_conf(cat, **mine)
    assert conf["spark.sql.catalog.mem.catalog-impl"] == "com.example.MyCatalog"
    assert conf["spark.sql.catalog.mem"] == "org.apache.iceberg.spark.SparkCatalog"
    assert "spark.sql.catalog.mem.jdbc.schema-version" not in conf


def test_a_cluster_gets_the_toolkit_shipped_and_no_local_warehouse(tmp_path: Path) -> None:
    cat = catalog(tmp_path)
    with pytest.raises(SparkSetupError, match="executors on spark://10.0.0.1:7077 do not see"):
        spark_conf(cat, master="spark://10.0.0.1:7077")
    with pytest.raises(SparkSetupError, match="warehouse"):
        spark_conf(cat, **{"spark.master": "spark://10.0.0.1:7077"})
    conf = spark_conf(cat, master="spark://10.0.0.1:7077", shared_disk=True)
    assert conf["spark.master"] == "spark://10.0.0.1:7077"
    shipped = Path(conf["spark.submit.pyFiles"])
    with zipfile.ZipFile(shipped) as zf:
        names = zf.namelist()
    assert "toolkit/core/engine.py" in names and "toolkit/spark/workers.py" in names
    assert not any("__pycache__" in n for n in names)
    assert "spark.submit.pyFiles" not in spark_conf(cat)  # local: executors share the driver


def test_s3_settings_go_to_s3a_with_its_jars(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    props = {"s3.endpoint": "http://127.0.0.1:9000", "s3.access-key-id": "key",
             "s3.secret-access-key": "secret"}
    cat = SqlCatalog("lake", uri=f"sqlite:///{tmp_path}/c.db", warehouse="s3a://bucket/wh",
                     **props)
    monkeypatch.setenv("TOOLKIT_S3A_JARS", str(tmp_path / "nowhere"))
    with pytest.raises(SparkSetupError, match="S3A jars"):
        spark_conf(cat)
    jars = [tmp_path / "hadoop-aws-3.3.1.jar", tmp_path / "aws-java-sdk-bundle-1.11.901.jar"]
    for jar in jars:
        jar.touch()
    monkeypatch.setenv("TOOLKIT_S3A_JARS", str(tmp_path))
    conf = spark_conf(cat)
    assert set(conf["spark.jars"].split(",")) >= {str(j) for j in jars}
    s3a = "spark.hadoop.fs.s3a."
    assert conf[s3a + "endpoint"] == "http://127.0.0.1:9000"
    assert conf[s3a + "access.key"] == "key" and conf[s3a + "secret.key"] == "secret"
    assert conf[s3a + "path.style.access"] == "true"
    assert conf[s3a + "connection.ssl.enabled"] == "false"
    assert conf["spark.hadoop.fs.s3.impl"] == "org.apache.hadoop.fs.s3a.S3AFileSystem"
    assert conf["spark.sql.catalog.lake.warehouse"] == "s3a://bucket/wh"


@pytest.fixture
def rest_server() -> Iterator[str]:
    """The smallest Iceberg REST catalog PyIceberg will open: it answers GET /v1/config."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps({"defaults": {}, "overrides": {}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def test_rest_catalog_maps_type_and_properties(rest_server: str) -> None:
    cat = load_catalog(
        "prod",
        type="rest",
        uri=rest_server,
        warehouse="s3://bucket/wh",
        **{"s3.endpoint": "http://minio:9000", "py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO"},
    )
    conf = spark_conf(cat)
    p = "spark.sql.catalog.prod"
    assert conf[p] == "org.apache.iceberg.spark.SparkCatalog"
    assert conf[f"{p}.type"] == "rest"
    assert conf[f"{p}.uri"] == rest_server
    assert conf[f"{p}.warehouse"] == "s3://bucket/wh"
    assert conf[f"{p}.s3.endpoint"] == "http://minio:9000"
    assert f"{p}.py-io-impl" not in conf
    assert f"{p}.catalog-impl" not in conf
    assert conf["spark.jars"].split(",")[0] == str(iceberg_runtime_jar())
    assert conf["spark.hadoop.fs.s3a.endpoint"] == "http://minio:9000"  # s3a reads it too
    # no SQLite native library path: only the quiet logging option
    assert conf["spark.driver.extraJavaOptions"] == quiet_java_option()


def test_a_url_opens_a_rest_catalog(rest_server: str) -> None:
    cat = catalog(rest_server, name="prod", warehouse="wh")
    assert type(cat).__name__ == "RestCatalog" and cat.name == "prod"
    assert spark_conf(cat)["spark.sql.catalog.prod.type"] == "rest"


def test_a_catalog_url_without_a_warehouse_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match="needs warehouse=") as err:
        catalog("postgresql://me:secret@127.0.0.1:1/db")
    assert "secret" not in str(err.value)  # the password never lands in an error
    with pytest.raises(ValueError, match="storage location, not a catalog"):
        catalog("s3://bucket/wh")
