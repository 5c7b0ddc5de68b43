"""Benchmarks of the evolution engine: ``python -m benchmarks --help``.

``benchmarks.generate`` makes deterministic drifting event records;
``benchmarks.bench_simulate`` compares ``toolkit.simulate`` with plain orjson parsing.
"""
