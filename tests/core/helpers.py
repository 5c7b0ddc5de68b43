"""Small readers over a simulation, so tests read like the rules they check."""

from __future__ import annotations

from typing import Any

import toolkit
from toolkit.core.evolution.layout import field_at
from toolkit.core.values.types import Column, Struct, type_to_str


def run(*batches: list[dict[str, Any]], **options: Any) -> toolkit.Simulation:
    return toolkit.simulate(list(batches), **options)


def columns(struct: Struct) -> dict[str, str]:
    """name -> compact type, in schema order."""
    return {c.name: type_to_str(c.type) for c in struct.fields}


def docs(struct: Struct) -> dict[str, str | None]:
    return {c.name: c.doc for c in struct.fields}


def column(struct: Struct, *path: str) -> Column:
    """The column at a path of names (through list levels)."""
    return field_at(struct, path)[0]
