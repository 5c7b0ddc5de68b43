"""How spark_session() maps a PyIceberg catalog to Spark settings (no JVM started here)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.catalog.sql import SqlCatalog

from toolkit.errors import SparkSetupError
from toolkit.iceberg import catalog
from toolkit.spark import iceberg_runtime_jar, spark_conf


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


def test_sql_catalog_on_another_database_is_refused() -> None:
    cat = SqlCatalog("mem", uri="sqlite:///:memory:", warehouse="file:///tmp/unused")
    with pytest.raises(SparkSetupError, match="only SQLite files"):
        spark_conf(cat)


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
    assert conf["spark.jars"] == str(iceberg_runtime_jar())
    assert "spark.driver.extraJavaOptions" not in conf
