"""Orchestration: one batch from a source to a real table, with the core deciding.

- ``ingest``: profile on Spark, plan with the core, commit, route and append.
- ``preview``: plan sample records against a table without changing anything.
- ``replay``: quarantined records back through ingest, exactly once.
- ``stream``: Structured Streaming, one micro-batch per ingest.
- ``sources``: the source registry: each kind of source, one entry.

Import the functions from their modules (``from toolkit.pipeline.ingest import ingest``) or
from ``toolkit`` itself.
"""
