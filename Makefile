# Developer entry points; CI runs `make test` (.ci/run).
#   make test    system packages + venv, then lint, type-check, tests
#   make lab     JupyterLab on the quickstart notebook
#   make bench   the benchmarks (pure engine, Spark on 1M records, typed sources)
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
# Reinstall only when pyproject.toml changes (or the venv is new).
STAMP := $(VENV)/.installed

.PHONY: venv install sysdeps test lab bench

venv: $(BIN)/python

install: $(STAMP)

$(BIN)/python:
	@command -v $(PYTHON) >/dev/null || { echo "$(PYTHON) not found: install Python 3.11 or pass PYTHON=..." >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e '.[spark,notebook,dev,formats]'
	touch $@

sysdeps:
	@scripts/sysdeps.sh

test: sysdeps install
	$(BIN)/ruff check $(wildcard toolkit tests benchmarks)
	$(BIN)/mypy
	$(BIN)/pytest

# JUPYTER_PATH: use the venv's kernelspec even if the user has another "python3" one.
lab: sysdeps install
	JUPYTER_PATH=$(CURDIR)/$(VENV)/share/jupyter $(BIN)/jupyter lab \
		$(if $(filter 0,$(shell id -u)),--allow-root) notebooks/quickstart.ipynb

# the pure engine, then Spark and Iceberg on 1M generated records: three timed runs with
# alternating order (the first big job in a fresh JVM is slower, whichever it is), medians;
# then a Parquet file and a pandas frame of 200k typed rows, ingested vs plain Spark appends
bench: sysdeps install
	$(BIN)/python -m benchmarks
	$(BIN)/python -m benchmarks --spark --repeat 3
	$(BIN)/python -m benchmarks --sources --repeat 3
