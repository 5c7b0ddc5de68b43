"""The house: every import in ``toolkit/`` points down the layers, and none runs in a circle.

The layer order is written once, here (the README's layout section describes it):

    errors  <-  core (the pure engine)  <-  adapters (Iceberg, Spark)
        <-  orchestration (the pipeline)  <-  faces (notebook panels, the ``toolkit``
        namespace, the command line)

Every import counts: at module level, inside functions (loaded late only to keep
``import toolkit`` light), and under ``TYPE_CHECKING``, since each is a dependency a
reader must follow.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "toolkit"

#: (layer, the packages or modules in it), lowest first
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("errors", ("toolkit.errors",)),
    ("core", ("toolkit.core",)),
    ("adapters", ("toolkit.iceberg", "toolkit.spark", "toolkit.arrow", "toolkit.kafka")),
    ("orchestration", ("toolkit.pipeline",)),
    ("faces", ("toolkit", "toolkit.api", "toolkit.ops", "toolkit.notebook", "toolkit.cli")),
)

#: third-party packages the pure core must never import (STYLE.md: a pure core)
NOT_IN_CORE = ("pyspark", "pyiceberg", "pyarrow", "ipywidgets", "plotly", "anywidget", "IPython")

MAX_LINES = 800


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES: dict[str, Path] = {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def layer_of(module: str) -> int:
    """The index of the layer holding ``module`` (the longest matching prefix decides)."""
    best, best_len = -1, -1
    for i, (_, members) in enumerate(LAYERS):
        for m in members:
            if (module == m or module.startswith(m + ".")) and len(m) > best_len:
                best, best_len = i, len(m)
    assert best >= 0, f"{module} is in no layer: add it to LAYERS"
    return best


def imports_of(module: str) -> Iterator[tuple[str, int]]:
    """Every module of the toolkit (and every top-level package outside it) that
    ``module`` imports, with the line."""
    tree = ast.parse(MODULES[module].read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                yield (full if full in MODULES else node.module), node.lineno


def toolkit_edges() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {m: set() for m in MODULES}
    for m in MODULES:
        for target, _ in imports_of(m):
            if target in MODULES and target != m:
                edges[m].add(target)
    return edges


def test_every_module_is_in_a_layer() -> None:
    for m in MODULES:
        layer_of(m)


def test_no_import_points_up_a_layer() -> None:
    upward = []
    for m in MODULES:
        for target, line in imports_of(m):
            if target in MODULES and layer_of(target) > layer_of(m):
                upward.append(
                    f"{MODULES[m].relative_to(ROOT.parent)}:{line}: {m} "
                    f"({LAYERS[layer_of(m)][0]}) imports {target} ({LAYERS[layer_of(target)][0]})"
                )
    assert not upward, "imports that point up a layer:\n" + "\n".join(upward)


def test_the_core_imports_no_engine_adapter_or_widget_library() -> None:
    found = [
        f"{m} imports {target}"
        for m in MODULES
        if layer_of(m) <= 1
        for target, _ in imports_of(m)
        if target.split(".")[0] in NOT_IN_CORE
    ]
    assert not found


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components of more than one module (iteratively: no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_strongly_connected_finds_a_circle() -> None:
    """The circle finder itself finds circles (a test of the test)."""
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert strongly_connected(edges) == [["a", "b", "c"]]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []


def test_no_import_circle() -> None:
    circles = strongly_connected(toolkit_edges())
    assert not circles, "import circles: " + "; ".join(" <-> ".join(c) for c in circles)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_over_800_lines(module: str) -> None:
    lines = MODULES[module].read_text().count("\n")
    assert lines <= MAX_LINES, f"{MODULES[module]}: {lines} lines (split it by concept)"
