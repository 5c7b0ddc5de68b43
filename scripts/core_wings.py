"""Move ``toolkit/core``'s modules into its wings, and every reference to them (issue 27).

The core is one package per concern (a wing), each with a one-line purpose; the engine
and the views sit on top. This script holds the one mapping old module -> new module
and applies it:

1. ``git mv`` of every mapped module still at its old path (a module already moved is
   left alone: the script can run again, e.g. after merging a branch that edited or
   added core modules, and git's rename detection carries the edits across);
2. every reference rewritten, in ``toolkit/``, ``tests/``, ``benchmarks/``, ``docs/``,
   ``notebooks/``, ``scripts/``, ``README.md`` and the build files: ``from
   toolkit.core.X import ...``, ``import toolkit.core.X``, ``from toolkit.core import
   X``, dotted paths in strings, docs and mock targets (``toolkit.core.X.name``), file
   paths (``toolkit/core/X.py``); names that moved
   to another module since (:data:`SYMBOLS`, e.g. ``Plan``) are imported from there.

It refuses to run (exit 2, listing them) when ``toolkit/core`` holds a module it has no
mapping for, e.g. one a branch added since; give it with ``--map``:

    python scripts/core_wings.py --map contracts=batch.contracts --map hints=batch.hints

``--check`` only reports what would change (exit 1 if anything would).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "toolkit" / "core"

#: each wing of the core: its one-line purpose (its ``__init__.py`` docstring)
WINGS: dict[str, str] = {
    "values": "The value model: kinds, lattice, conversions, names, families, widening, words.",
    "batch": "One batch: options, observation, profile, routing, quarantine, offsets.",
    "evolution": "Evolution as plans: layout, Iceberg's operations, plans, lineage, plan files.",
    "policies": "Evolution policies as plug-ins: one module each, one registry line each.",
    "maintenance": "Table maintenance as a plan, and the bounded logs in a table's properties.",
}

#: what stays at the core's top level besides the wings
TOP = ("__init__", "engine", "views")

#: old module (under ``toolkit.core``) -> new module (under ``toolkit.core``)
MODULES: dict[str, str] = {
    # the value model
    "types": "values.types",
    "values": "values.scalars",
    "conversions": "values.conversions",
    "lattice": "values.lattice",
    "timestamps": "values.timestamps",
    "naming": "values.naming",
    "families": "values.families",
    "widening": "values.widening",
    "wording": "values.wording",
    "jsonlines": "values.jsonlines",
    "lookalikes": "values.lookalikes",
    "secrets": "values.secrets",
    # the batch
    "options": "batch.options",
    "observe": "batch.observe",
    "observed": "batch.observed",
    "profile": "batch.profile",
    "summary": "batch.summary",
    "arrivals": "batch.arrivals",
    "quarantine": "batch.quarantine",
    "routing": "batch.routing",
    "map_routing": "batch.map_routing",
    "offsets": "batch.offsets",
    "replay_plan": "batch.replay_plan",
    "contracts": "batch.contracts",
    "contract_terms": "batch.contract_terms",
    "hints": "batch.hints",
    "hint_plans": "batch.hint_plans",
    "conversion_warnings": "batch.conversion_warnings",
    "typed_profile": "batch.typed_profile",
    # evolution
    "layout": "evolution.layout",
    "operation_base": "evolution.operation_base",
    "operations": "evolution.operations",
    "field_operations": "evolution.field_operations",
    "spec_operations": "evolution.spec_operations",
    "field_ids": "evolution.field_ids",
    "evolution": "evolution.plans",
    "union": "evolution.union",
    "state": "evolution.state",
    "lineage": "evolution.lineage",
    "destruction": "evolution.destruction",
    "export": "evolution.export",
    "view_folds": "evolution.view_folds",
    "view_types": "evolution.view_types",
    "planfile": "evolution.planfile",
    "reasons": "evolution.reasons",
    # policies
    "policies": "policies",
    "planner": "policies.upsolver_planner",
    "widen_policy": "policies.widen",
    # maintenance
    "maintenance": "maintenance.steps",
    "maintenance_rules": "maintenance.rules",
    "folding": "maintenance.folding",
}

#: names that moved from one module to another after the move: (module, name) -> the
#: module it lives in now, all under ``toolkit.core`` and by their new names
SYMBOLS: dict[tuple[str, str], str] = {
    # a batch's plan is every policy's, not the upsolver planner's
    **{("policies.upsolver_planner", name): "evolution.batch_plan" for name in (
        "AddColumn", "Retype", "Plan", "RareType", "max_field_id", "full_names",
        "struct_prefix",
    )},
    ("policies.upsolver_planner", "MakeOptional"): "evolution.operations",
    ("policies.upsolver_planner", "ColumnType"): "values.types",
    # who decided a plan is a policy's word: the registry reads it
    ("evolution.reasons", "decided_by_text"): "policies",
    ("evolution.reasons", "policy_of_reasons"): "policies",
}

TEXT_SUFFIXES = (".py", ".md", ".ipynb", ".toml", ".cfg", ".ini", ".txt", ".yml", ".yaml",
                 ".java", ".rst", ".json")
TEXT_NAMES = ("Makefile",)
SCOPE = ("toolkit", "tests", "benchmarks", "docs", "notebooks", "scripts", "binder",
         "README.md", "Makefile", "pyproject.toml")

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
LINE = 100  # ruff's line-length (pyproject.toml)


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout


def file_of(module: str) -> Path:
    """``evolution.plans`` -> toolkit/core/evolution/plans.py (a package: its __init__)."""
    path = CORE.joinpath(*module.split("."))
    return path / "__init__.py" if module in WINGS else path.with_suffix(".py")


def unmapped(modules: dict[str, str]) -> list[str]:
    """The core's top-level modules and packages neither mapped, a wing nor kept on top."""
    found = []
    for p in sorted(CORE.iterdir()):
        name = p.stem if p.suffix == ".py" else p.name
        if p.name.startswith((".", "__pycache__")) or name in TOP or name in WINGS:
            continue
        if (p.suffix == ".py" or (p.is_dir() and (p / "__init__.py").exists())) and (
            name not in modules
        ):
            found.append(p.name)
    return found


def move(modules: dict[str, str], dry: bool) -> list[str]:
    done = []
    for wing, purpose in WINGS.items():
        init = CORE / wing / "__init__.py"
        if not init.exists() and wing not in modules.values():
            done.append(f"create {init.relative_to(ROOT)}")
            if not dry:
                init.parent.mkdir(exist_ok=True)
                init.write_text(f'"""{purpose}"""\n')
                git("add", str(init))
    for old, new in modules.items():
        src, dst = CORE / f"{old}.py", file_of(new)
        if not src.exists():
            continue
        if dst.exists():
            raise SystemExit(f"both {src.relative_to(ROOT)} and {dst.relative_to(ROOT)} exist")
        done.append(f"git mv {src.relative_to(ROOT)} {dst.relative_to(ROOT)}")
        if not dry:
            dst.parent.mkdir(exist_ok=True)
            git("mv", str(src), str(dst))
    return done


class Rewriter:
    """Rewrites references to old core modules into their new ones."""

    def __init__(self, modules: dict[str, str]) -> None:
        self.modules = modules
        self.new = set(modules.values()) | set(WINGS)
        # modules in the new wings found on disk (a wing's modules that were never mapped)
        for wing in WINGS:
            for p in (CORE / wing).glob("*.py"):
                if p.stem != "__init__":
                    self.new.add(f"{wing}.{p.stem}")

    def target(self, parts: list[str]) -> tuple[str, int] | None:
        """For ``toolkit.core.<parts>``: the new module and how many parts it replaces,
        or None when the reference is already new (or not a module's)."""
        if len(parts) >= 2 and f"{parts[0]}.{parts[1]}" in self.new:
            module, n = f"{parts[0]}.{parts[1]}", 2  # a new module (e.g. evolution.plans)
        elif parts[0] in self.modules:
            module, n = self.modules[parts[0]], 1
        else:
            return None
        if len(parts) > n and (module, parts[n]) in SYMBOLS:
            module = SYMBOLS[(module, parts[n])]
        if module == ".".join(parts[:n]):
            return None
        return module, n

    def dotted(self, text: str) -> str:
        def sub(m: re.Match[str]) -> str:
            parts = m.group(1).split(".")[1:]
            after = re.match(rf" import ({IDENT})", m.string[m.end():m.end() + 100])
            if len(parts) == 1 and after and f"{parts[0]}.{after.group(1)}" in self.new:
                return m.group(0)  # from toolkit.core.<wing> import <module>
            hit = self.target(parts)
            if hit is None:
                return m.group(0)
            new, n = hit
            return "toolkit.core." + ".".join([new, *parts[n:]])

        return re.sub(rf"toolkit\.core((?:\.{IDENT})+)", sub, text)

    def symbol_move(self, module: str, names: list[str]) -> dict[str, list[str]]:
        """``from toolkit.core.<module> import names``: the names by the module each now
        lives in."""
        out: dict[str, list[str]] = {}
        for entry in names:
            to = SYMBOLS.get((module, entry.split(" as ")[0].strip()), module)
            out.setdefault(to, []).append(entry)
        return out

    def from_imports(self, text: str) -> str:
        """``from toolkit.core.X import a, b`` (one line or parenthesised): the names
        split by the module each now lives in."""
        pattern = re.compile(
            rf"^(?P<indent>[ \t]*)(?P<prefix>(?:>>> |\.\.\. )?)from toolkit\.core\."
            rf"(?P<mod>{IDENT}(?:\.{IDENT})*) import "
            rf"(?:\((?P<many>[^)]*)\)|(?P<one>[^\n#]*?))(?P<tail>[ \t]*(?:#[^\n]*)?)$",
            re.M,
        )

        def sub(m: re.Match[str]) -> str:
            body = m.group("many") if m.group("many") is not None else m.group("one")
            body = re.sub(r"#[^\n]*", "", body)
            names = [n.strip() for n in body.replace("\n", " ").split(",") if n.strip()]
            if not names or "*" in names:
                return m.group(0)
            by_module = self.symbol_move(m.group("mod"), names)
            if list(by_module) == [m.group("mod")] and (
                m.group("many") is not None or len(m.group(0)) <= LINE
            ):
                return m.group(0)
            indent, prefix = m.group("indent"), m.group("prefix")
            lines = []
            for mod, got in sorted(by_module.items()):
                one = f"{indent}{prefix}from toolkit.core.{mod} import {', '.join(got)}"
                if len(one) > LINE and not prefix:
                    inner = "".join(f"{indent}    {g},\n" for g in got)
                    one = f"{indent}from toolkit.core.{mod} import (\n{inner}{indent})"
                lines.append(one)
            lines[-1] += m.group("tail") or ""
            return "\n".join(lines)

        return pattern.sub(sub, text)

    def package_imports(self, text: str) -> str:
        """``from toolkit.core import X`` for a moved module X."""
        def sub(m: re.Match[str]) -> str:
            name, alias = m.group("name"), m.group("alias") or ""
            new = self.modules.get(name)
            if new is None or new == name:
                return m.group(0)
            wing, _, leaf = new.rpartition(".")
            alias = alias or (f" as {name}" if leaf != name else "")
            return f"{m.group('lead')}from toolkit.core.{wing} import {leaf}{alias}"

        return re.sub(
            rf"^(?P<lead>[ \t]*(?:>>> )?)from toolkit\.core import (?P<name>{IDENT})"
            rf"(?P<alias> as {IDENT})?[ \t]*$",
            sub, text, flags=re.M,
        )

    def paths(self, text: str) -> str:
        def sub(m: re.Match[str]) -> str:
            new = self.modules.get(m.group(2))
            if new is None:
                return m.group(0)
            return m.group(1) + file_of(new).relative_to(CORE).as_posix()

        # toolkit/core/X.py, or core/X.py on its own (not tests/core/X.py)
        return re.sub(rf"((?:\btoolkit/|(?<![\w/]))core/)({IDENT})\.py\b", sub, text)

    def rewrite(self, text: str, path: Path) -> str:
        text = self.package_imports(text)
        text = self.paths(text)
        text = self.dotted(text)
        return self.from_imports(text)


def files() -> list[Path]:
    listed = git("ls-files", "-z", *SCOPE).split("\0")
    me = Path(__file__).resolve()
    out = []
    for name in listed:
        p = ROOT / name
        if not name or not p.is_file() or p.resolve() == me:
            continue
        if p.suffix in TEXT_SUFFIXES or p.name in TEXT_NAMES:
            out.append(p)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--map", action="append", default=[], metavar="OLD=NEW",
                    help="an extra mapping, e.g. contracts=batch.contracts")
    ap.add_argument("--check", action="store_true", help="report only; exit 1 on changes")
    args = ap.parse_args(argv)
    modules = dict(MODULES)
    for m in args.map:
        old, sep, new = m.partition("=")
        if not sep or new.split(".")[0] not in (*WINGS, *TOP):
            ap.error(f"--map {m!r}: give OLD=WING.NAME with WING one of {', '.join(WINGS)}")
        modules[old.strip()] = new.strip()
    missing = unmapped(modules)
    if missing:
        print("toolkit/core holds modules with no mapping; give each with --map OLD=WING.NAME:",
              file=sys.stderr)
        for name in missing:
            print(f"  {name}", file=sys.stderr)
        return 2
    changes = move(modules, args.check)
    rewriter = Rewriter(modules)
    for p in files():
        text = p.read_text(encoding="utf-8")
        new = rewriter.rewrite(text, p)
        if new != text:
            changes.append(f"rewrite {p.relative_to(ROOT)}")
            if not args.check:
                p.write_text(new, encoding="utf-8")
    print("\n".join(changes) if changes else "nothing to do: every core module is in its wing")
    if not args.check:  # imports sorted again under their new names
        python = [str(p.relative_to(ROOT)) for p in files() if p.suffix == ".py"]
        subprocess.run([sys.executable, "-m", "ruff", "check", "--select", "I001", "--fix",
                        "--quiet", *python], cwd=ROOT, check=False)
    if args.check:
        return 1 if changes else 0
    top = sorted(p.name for p in CORE.iterdir() if p.name != "__pycache__")
    if len(top) > 8:
        print(f"warning: toolkit/core has {len(top)} top-level entries: {top}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
