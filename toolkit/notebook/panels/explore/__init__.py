"""Fields and their types, batch by batch: how they drift (toolkit.explore)."""
