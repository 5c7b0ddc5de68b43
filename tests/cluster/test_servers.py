"""The test servers come up, listen on 127.0.0.1 and do their job."""

from __future__ import annotations

import uuid

import psycopg2
import pytest
from pyarrow import fs

from tests import servers


def test_postgres_needs_the_password(postgres_server: servers.PostgresServer) -> None:
    pg = postgres_server
    assert pg.url == f"postgresql://{pg.user}:{pg.password}@127.0.0.1:{pg.port}/{pg.database}"
    with psycopg2.connect(pg.url) as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE t_servers (id int PRIMARY KEY, name text)")
        cur.execute("INSERT INTO t_servers VALUES (1, 'a')")
        cur.execute("SELECT name, current_user, current_database() FROM t_servers")
        assert cur.fetchall() == [("a", pg.user, pg.database)]
    conn.close()
    with pytest.raises(psycopg2.OperationalError, match="password authentication failed"):
        psycopg2.connect(host=pg.host, port=pg.port, user=pg.user, dbname=pg.database,
                         password="wrong")


def test_s3_write_and_read(s3_server: servers.S3Server) -> None:
    # (the fixture sets AWS_REQUEST_CHECKSUM_CALCULATION=when_required: without it rclone
    # refuses pyarrow's uploads)
    s3 = s3_server
    bucket = f"{s3.bucket('check')}/{uuid.uuid4().hex[:8]}"
    s3fs = fs.S3FileSystem(endpoint_override=s3.endpoint, scheme="http",
                           access_key=s3.access_key, secret_key=s3.secret_key)
    with s3fs.open_output_stream(f"{bucket}/dir/hello.txt") as out:
        out.write(b"hello s3")
    with s3fs.open_input_stream(f"{bucket}/dir/hello.txt") as src:
        assert src.read() == b"hello s3"
    assert (s3.root / bucket / "dir" / "hello.txt").read_bytes() == b"hello s3"
    with pytest.raises(OSError):
        fs.S3FileSystem(endpoint_override=s3.endpoint, scheme="http", access_key=s3.access_key,
                        secret_key="wrong").get_file_info(f"{bucket}/dir/hello.txt")


def test_spark_cluster_has_two_alive_workers(spark_cluster: servers.SparkCluster) -> None:
    assert spark_cluster.master.startswith("spark://127.0.0.1:")
    status = spark_cluster.status()
    assert status["status"] == "ALIVE"
    workers = [w for w in status["workers"] if w["state"] == "ALIVE"]
    assert len(workers) == 2
    assert all(w["host"] == "127.0.0.1" and w["cores"] == 1 for w in workers)
