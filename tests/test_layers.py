"""The house: every import in ``toolkit/`` points down the layers, and none runs in a circle.

The layer order is written once, here (docs/layout.md describes it):

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


#: what the face of the notebook is made of: its widgets, the module that builds panels
#: from sources, and the widget libraries (a panel's model is plain data, STYLE.md)
WIDGET_LIBRARIES = ("ipywidgets", "plotly", "anywidget", "IPython")


def panel_models() -> list[str]:
    """The view-model of each notebook panel: ``toolkit.notebook.panels.<panel>.model``."""
    return [m for m in MODULES if m.startswith("toolkit.notebook.panels.") and
            m.endswith(".model")]


def is_face_or_widget(target: str) -> bool:
    """A face (the ``toolkit`` namespace, ``toolkit.api``, ``toolkit.ops``, the command
    line), a widget of the notebook (or the module that builds them), or a widget library."""
    return (
        target in ("toolkit", "toolkit.api", "toolkit.ops", "toolkit.notebook",
                   "toolkit.notebook.build")
        or target.startswith("toolkit.cli")
        or (target.startswith("toolkit.notebook.") and target.endswith("widget"))
        or target.split(".")[0] in WIDGET_LIBRARIES
    )


def test_a_face_or_a_widget_is_told_apart() -> None:
    assert is_face_or_widget("toolkit.api") and is_face_or_widget("plotly.graph_objects")
    assert is_face_or_widget("toolkit.notebook.panels.preview.widget")
    assert is_face_or_widget("toolkit.notebook.paging_widget")
    assert not is_face_or_widget("toolkit.notebook.panels.preview.html")
    assert not is_face_or_widget("toolkit.core.engine")


def test_panel_models_import_no_face_and_no_widget() -> None:
    """A panel's model is the panel as data: the core and the adapters' readers it needs,
    never a face (``toolkit.api``, the command line, the notebook's widgets) nor a widget
    library (docs/layout.md)."""
    models = panel_models()
    assert len(models) >= 6, models
    found = [
        f"{MODULES[m].relative_to(ROOT.parent)}:{line}: {m} imports {target}"
        for m in models
        for target, line in imports_of(m)
        if is_face_or_widget(target)
    ]
    assert not found, "panel models that import a face or a widget:\n" + "\n".join(found)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_over_800_lines(module: str) -> None:
    lines = MODULES[module].read_text().count("\n")
    assert lines <= MAX_LINES, f"{MODULES[module]}: {lines} lines (split it by concept)"


# --- the shape of the house (issue 27) --------------------------------------------------

CORE = ROOT / "core"
#: the pure core in wings: the value model, the batch, evolution, policies, maintenance,
#: with the engine and views on top
MAX_CORE_ENTRIES = 8
#: the names a user passes as ``policy=``; only the policy plug-ins may spell them
POLICY_NAMES = ("upsolver", "widen")
POLICIES_PACKAGE = "toolkit.core.policies"
#: parameters a function may take before its values should travel as one value
MAX_PARAMETERS = 8
MAX_WIDE_FUNCTIONS = 3


def core_entries(core: Path) -> list[str]:
    """The modules and packages at the top of ``core`` (its ``__init__`` aside)."""
    return sorted(
        p.name
        for p in core.iterdir()
        if (p.suffix == ".py" and p.name != "__init__.py")
        or (p.is_dir() and (p / "__init__.py").exists())
    )


def test_the_core_has_at_most_eight_top_level_entries() -> None:
    entries = core_entries(CORE)
    assert len(entries) <= MAX_CORE_ENTRIES, (
        f"toolkit/core/ has {len(entries)} entries at its top level (at most "
        f"{MAX_CORE_ENTRIES}: group them in packages by concept): {', '.join(entries)}"
    )


def parents_of(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def speaks_of_a_policy(constant: ast.Constant, parents: dict[ast.AST, ast.AST],
                       source: str) -> bool:
    """Whether a literal naming a policy is used as one. ``"upsolver"`` is only ever a
    policy; ``"widen"`` is also an operation of RULES 6 (``toolkit.ops.widen``), so it
    counts where its expression, or the name it is assigned to, speaks of a policy
    (``options.policy == "widen"``, ``{"policy": "widen"}``, ``POLICIES = (..., "widen")``).
    """
    node: ast.AST = constant
    while not isinstance(parents.get(node), ast.stmt | None):
        node = parents[node]
    statement = parents.get(node)
    texts = [ast.get_source_segment(source, node) or ""]
    if isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        texts += [ast.get_source_segment(source, t) or "" for t in targets]
        if isinstance(statement, ast.AnnAssign):
            texts.append(ast.get_source_segment(source, statement.annotation) or "")
    if constant.value == "upsolver":
        # the seed's lattice table is named for Upsolver too (``Lattice("upsolver", ...)``,
        # ``lattice="upsolver"``): a name given to a lattice is not a policy's
        return not any("lattice" in text.lower() for text in texts)
    return any("polic" in text.lower() for text in texts)


def policy_names_in(module: str) -> Iterator[int]:
    """The lines of ``module`` where a policy's name is written as a string."""
    source = MODULES[module].read_text()
    tree = ast.parse(source)
    parents = parents_of(tree)
    yield from sorted({
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in POLICY_NAMES
        and speaks_of_a_policy(node, parents, source)
    })


def test_a_policy_name_as_a_string_is_found() -> None:
    """The rule finds a policy's name, and leaves the operation ``widen`` alone (a test
    of the test)."""
    def found(source: str) -> bool:
        tree = ast.parse(source)
        parents = parents_of(tree)
        return any(
            speaks_of_a_policy(n, parents, source) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and n.value in POLICY_NAMES
        )

    assert found('own = options.policy == "widen"')
    assert found('setup = {"policy": "widen", "allow_rewrites": True}')
    assert found('POLICIES: tuple[Policy, ...] = ("upsolver", "widen")')
    assert found('setup = {"policy": "upsolver"}')
    assert found('if name == "upsolver":\n    pass')
    assert not found('lattice = Lattice("upsolver", table)')
    assert not found('op: ClassVar[str] = "widen"')
    assert not found('__all__ = ["rename", "widen"]')
    assert not found('if kind == "widen":\n    pass')


def test_no_policy_name_as_a_string_outside_the_policies() -> None:
    found = [
        f"{MODULES[m].relative_to(ROOT.parent)}:{line}"
        for m in sorted(MODULES)
        if not (m == POLICIES_PACKAGE or m.startswith(POLICIES_PACKAGE + "."))
        for line in policy_names_in(m)
    ]
    assert not found, (
        "a policy's name written as a string (ask the policy object instead): "
        + ", ".join(found)
    )


def private_imports(module: str) -> Iterator[str]:
    """``from toolkit.x import _y``: a private name of another toolkit module."""
    tree = ast.parse(MODULES[module].read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (
            node.level > 0 or (node.module or "").split(".")[0] == "toolkit"
        ):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    yield f"{MODULES[module].relative_to(ROOT.parent)}:{node.lineno}: " \
                          f"{alias.name} from {node.module}"


def test_no_module_imports_a_private_name_of_another() -> None:
    found = [line for m in sorted(MODULES) for line in private_imports(m)]
    assert not found, "private names imported from another module (make them public " \
        "where they belong, or move the code that needs them):\n" + "\n".join(found)


def is_click_command(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A command of the command line: click fills its parameters, one per option."""
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Attribute) and target.attr in {"command", "group"}:
            return True
    return False


def wide_functions() -> list[str]:
    """Every function of ``toolkit/`` taking more than ``MAX_PARAMETERS`` parameters
    (``self`` and ``cls`` aside; the commands of the command line aside, whose parameters
    are their options)."""
    wide = []
    for m in sorted(MODULES):
        for node in ast.walk(ast.parse(MODULES[m].read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not is_click_command(
                node
            ):
                args = node.args
                names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
                if names[:1] in (["self"], ["cls"]):
                    names = names[1:]
                if len(names) > MAX_PARAMETERS:
                    wide.append(
                        f"{MODULES[m].relative_to(ROOT.parent)}:{node.lineno}: "
                        f"{node.name} ({len(names)})"
                    )
    return wide


def test_at_most_three_functions_take_more_than_eight_parameters() -> None:
    wide = wide_functions()
    assert len(wide) <= MAX_WIDE_FUNCTIONS, (
        f"{len(wide)} functions take more than {MAX_PARAMETERS} parameters (at most "
        f"{MAX_WIDE_FUNCTIONS}; pass the values that travel together as one):\n"
        + "\n".join(wide)
    )
