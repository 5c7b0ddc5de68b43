#!/usr/bin/env bash
# Put Spark's s3a jars into DEST (default .venv/share/toolkit/jars), only when missing:
#   hadoop-aws-3.3.1.jar, aws-java-sdk-bundle-1.11.901.jar
# No wheel ships them; the sagemaker-pyspark source package (an sdist on PyPI) does. We
# download that sdist and extract just the two jars: sagemaker-pyspark is NOT installed.
# The toolkit looks for them in <sys.prefix>/share/toolkit/jars/, or $TOOLKIT_S3A_JARS.
# Usage: scripts/s3a_jars.sh [DEST]   (PYTHON=... picks the pip to download with)
set -euo pipefail

DEST=${1:-.venv/share/toolkit/jars}
PYTHON=${PYTHON:-.venv/bin/python}
SDIST=sagemaker-pyspark==1.4.5
JARS=(hadoop-aws-3.3.1.jar aws-java-sdk-bundle-1.11.901.jar)

have_all() {
  local jar
  for jar in "${JARS[@]}"; do
    [[ -s $DEST/$jar ]] || return 1
  done
}

if have_all; then
  echo "s3a_jars: ok ($DEST: ${JARS[*]})"
  exit 0
fi

if ! "$PYTHON" -m pip --version >/dev/null 2>&1; then
  echo "s3a_jars: ERROR: no pip at $PYTHON (run 'make venv' first, or pass PYTHON=...)" >&2
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "s3a_jars: missing, downloading the $SDIST source package to extract ${JARS[*]}"
if ! "$PYTHON" -m pip download -q --no-deps --no-binary :all: "$SDIST" -d "$tmp"; then
  echo "s3a_jars: ERROR: pip could not download $SDIST (is PyPI reachable?)" >&2
  exit 1
fi
shopt -s nullglob
archives=("$tmp"/sagemaker_pyspark-*.tar.gz "$tmp"/sagemaker-pyspark-*.tar.gz)
if [[ ${#archives[@]} -ne 1 ]]; then
  echo "s3a_jars: ERROR: expected one sdist archive in $tmp, found: $(ls "$tmp")" >&2
  exit 1
fi

mkdir -p "$DEST" "$tmp/x"
members=()
for jar in "${JARS[@]}"; do
  members+=("*/deps/jars/$jar")
done
if ! tar -xzf "${archives[0]}" -C "$tmp/x" --wildcards --no-anchored "${members[@]}"; then
  echo "s3a_jars: ERROR: ${archives[0]##*/} lacks deps/jars/{${JARS[*]}}" >&2
  exit 1
fi
for jar in "${JARS[@]}"; do
  found=("$tmp"/x/*/deps/jars/"$jar")
  # copy then rename: a half-written jar never looks present
  cp "${found[0]}" "$DEST/.$jar.part"
  mv "$DEST/.$jar.part" "$DEST/$jar"
done

if ! have_all; then
  echo "s3a_jars: ERROR: still missing in $DEST after extraction" >&2
  exit 1
fi
echo "s3a_jars: ok (extracted ${JARS[*]} into $DEST)"
