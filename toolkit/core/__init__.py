"""The pure core: types, lattice, observation, profile, naming, planner, router, view SQL.

It imports neither Spark, PyIceberg nor widgets. Where each rule of RULES.md lives:

- RULES 1 (observed types)            ``observe``
- RULES 2 (lattice, conversions)      ``lattice``, ``conversions``
- RULES 3 (families, compatibility)   ``families``
- RULES 3.1 (routing)                 ``routing``
- RULES 3.2-3.5 (columns a batch adds) ``planner``
- RULES 4 (names and docs)            ``naming``
- RULES 7 (COALESCE views)            ``views``
"""
