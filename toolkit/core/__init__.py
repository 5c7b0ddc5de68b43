"""The pure core: the engine that types, plans and routes a batch, in wings.

It imports neither Spark, PyIceberg nor widgets. Each wing is a package with one purpose
(its ``__init__`` says it): ``values`` (the value model), ``batch`` (one batch: options,
observation, routing, quarantine), ``evolution`` (plans of Iceberg operations, lineage,
plan files), ``policies`` (one module per evolution policy, one registry line each),
``maintenance``; ``engine`` and ``views`` sit on top. Where each rule of RULES.md lives:

- RULES 1 (observed types)            ``batch.observe``
- RULES 2 (lattice, conversions)      ``values.lattice``, ``values.conversions``
- RULES 3 (families, compatibility)   ``values.families``
- RULES 3.1 (routing)                 ``batch.routing``
- RULES 3.2-3.5 (columns a batch adds) ``policies.upsolver_planner``
- RULES 4 (names and docs)            ``values.naming``
- RULES 5 (the widening policy)       ``values.widening``, ``policies.widen``
- RULES 6 (operations and plans)      ``evolution``
- RULES 7 (COALESCE views)            ``views``
"""
