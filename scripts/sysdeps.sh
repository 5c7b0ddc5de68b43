#!/usr/bin/env bash
# Install the Debian packages the project needs outside Python, only those missing:
#   Java 17 (JDK: Spark, and javac for JVM-side helpers)  -> openjdk-17-jdk-headless
#   the SQLite JDBC driver (Spark on the embedded catalog) -> libxerial-sqlite-jdbc-java
#   Chromium (real-browser notebook tests)                 -> chromium
#   PostgreSQL 15 (throwaway catalog DB in tests/cluster)  -> postgresql
#     (its initdb/pg_ctl live in /usr/lib/postgresql/*/bin, off PATH)
#   the PostgreSQL JDBC driver (Spark, Postgres catalog)   -> libpostgresql-jdbc-java
set -euo pipefail

SQLITE_JDBC_JAR=/usr/share/java/sqlite-jdbc.jar
CHROMIUM=/usr/bin/chromium
PG_JDBC_JAR=/usr/share/java/postgresql.jar

# Debian keeps initdb/pg_ctl off PATH, under /usr/lib/postgresql/<major>/bin.
pg_initdb() {
  compgen -G '/usr/lib/postgresql/*/bin/initdb' | head -n 1
}

missing() {
  local pkgs=()
  if ! { command -v java && command -v javac; } >/dev/null 2>&1 \
      || ! java -version 2>&1 | grep -q 'version "17'; then
    pkgs+=(openjdk-17-jdk-headless)
  fi
  [[ -f $SQLITE_JDBC_JAR ]] || pkgs+=(libxerial-sqlite-jdbc-java)
  [[ -x $CHROMIUM ]] || pkgs+=(chromium)
  [[ -n $(pg_initdb) ]] || pkgs+=(postgresql)
  [[ -f $PG_JDBC_JAR ]] || pkgs+=(libpostgresql-jdbc-java)
  echo "${pkgs[@]}"
}

read -r -a pkgs <<<"$(missing)"
if [[ ${#pkgs[@]} -eq 0 ]]; then
  echo "sysdeps: ok (java 17, $SQLITE_JDBC_JAR, $CHROMIUM, $(pg_initdb), $PG_JDBC_JAR)"
  exit 0
fi

echo "sysdeps: missing, installing with apt-get: ${pkgs[*]}"
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo=(sudo)
  else
    echo "sysdeps: ERROR: not root and no password-less sudo. As root, run:" >&2
    echo "  apt-get update && apt-get install -y ${pkgs[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
if ! { "${sudo[@]}" apt-get update -q && \
       "${sudo[@]}" apt-get install -y -q --no-install-recommends --no-upgrade "${pkgs[@]}"; }; then
  echo "sysdeps: ERROR: apt-get could not install: ${pkgs[*]}" >&2
  echo "  (is this Debian/Ubuntu with its package mirrors reachable?)" >&2
  exit 1
fi

read -r -a still <<<"$(missing)"
if [[ ${#still[@]} -ne 0 ]]; then
  echo "sysdeps: ERROR: still missing after apt-get: ${still[*]}" >&2
  echo "  (for Java: is 'java' on PATH version 17? see update-alternatives --config java)" >&2
  echo "  (for PostgreSQL: initdb is looked for as /usr/lib/postgresql/*/bin/initdb)" >&2
  exit 1
fi
echo "sysdeps: ok (installed ${pkgs[*]})"
