"""Real servers for tests/cluster, one of each per test run (see tests/servers.py): a
PostgreSQL database, an S3 server, and a two-worker Spark standalone cluster. A server that
cannot start fails the tests that use it (never a skip).

No SparkSession here: the test run keeps exactly one, local (tests/conftest.py); a session on
the cluster belongs in a subprocess.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests import servers


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[servers.PostgresServer]:
    """PostgreSQL on 127.0.0.1: `.url` postgresql://USER:PASSWORD@127.0.0.1:PORT/DATABASE."""
    with servers.postgres_server() as server:
        yield server


#: the buckets the S3 server has (made before it starts: see servers.s3_server)
BUCKETS = ("lake", "check")


@pytest.fixture(scope="session")
def s3_server() -> Iterator[servers.S3Server]:
    """`rclone serve s3` on 127.0.0.1: `.endpoint`, `.access_key`, `.secret_key`, `.root`,
    `.bucket(name)`, `.spark_conf()`. Sets AWS_REQUEST_CHECKSUM_CALCULATION=when_required
    for the session, which pyarrow (and so PyIceberg) needs to write to it."""
    with pytest.MonkeyPatch.context() as env, servers.s3_server(buckets=BUCKETS) as server:
        # else pyarrow's AWS SDK sends aws-chunked uploads with no Content-Length, which the
        # server refuses (HTTP 411 MissingContentLength); read when an S3FileSystem is made
        env.setenv("AWS_REQUEST_CHECKSUM_CALCULATION", "when_required")
        yield server


@pytest.fixture(scope="session")
def spark_cluster() -> Iterator[servers.SparkCluster]:
    """A Spark standalone master and two workers (1 core, 2g each): `.master`, `.webui`."""
    with servers.spark_cluster(workers=2) as cluster:
        yield cluster
