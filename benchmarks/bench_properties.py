"""What a table's properties cost each commit (issue 25): the per-commit time of
``commit_plan`` (one column added, the growth benchmark's commit) on a narrow table that
already logged ``N`` schema changes, and optionally one batch that added 10,000 columns.

``python -m benchmarks.bench_properties [N] [--huge]``. Run it on two trees to compare
(``PYTHONPATH=<tree>``): a tree without ``toolkit.iceberg.folds`` keeps every lineage
entry in the properties; one with it keeps a bounded window and fold files. No Spark.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence

from pyiceberg.table import Table
from pyiceberg.table.update import RemovePropertiesUpdate, SetPropertiesUpdate, TableUpdate

from toolkit.core.engine import Engine
from toolkit.core.evolution.lineage import _entry_properties, lineage_properties
from toolkit.core.evolution.operations import AddField, DropField, rename
from toolkit.core.evolution.plans import plan_evolution
from toolkit.core.evolution.state import TableState
from toolkit.core.values.types import Struct
from toolkit.iceberg import catalog
from toolkit.iceberg.commit import commit_plan, commit_updates
from toolkit.iceberg.operations import layout_of
from toolkit.iceberg.schema import from_iceberg, to_iceberg

try:
    from toolkit.iceberg.folds import bounded_updates
except ImportError:  # a tree from before fold files
    bounded_updates = None  # type: ignore[assignment]

COMMITS = 30


def _log(table: Table, props: dict[str, str]) -> None:
    """Set lineage properties as the commit path of the tree at hand sets them."""
    sets, removes = bounded_updates(table, props) if bounded_updates else (props, ())
    updates: list[TableUpdate] = [SetPropertiesUpdate(updates=sets)]
    if removes:
        updates.append(RemovePropertiesUpdate(removals=list(removes)))
    commit_updates(table, (), tuple(updates))


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    huge = "--huge" in args
    changes = int(next((a for a in args if a.isdigit()), "1000"))
    cat = catalog(tempfile.mkdtemp())
    cat.create_namespace("db")
    engine = Engine()
    first = engine.plan(Struct(), engine.observe([{"id": 1, "c0": "x"}]))
    table = cat.create_table("db.t", schema=to_iceberg(first.after))
    # a realistic entry (about 250 bytes), logged `changes` times
    evo = plan_evolution(layout_of(table), [rename("c0", "c1")], batch=f"orders/{uuid.uuid4()}")
    for _ in range(changes):
        _log(table, lineage_properties(evo, table.properties))
    if huge:  # the entry of a batch that added 10,000 columns (about 2.2 MB)
        adds = [AddField((f"f{i:05d}",), "string", f"upsolver_evolved_from:f{i:05d}")
                for i in range(10_000)]
        _log(table, _entry_properties(
            table.properties, at_ms=0, decided_by="RULES 3", batch="huge", reason=None,
            operations=adds,
            reasons=["This batch had `f` as a string, which none of its columns holds "
                     "(RULES 3.3)"] * len(adds),
            inverse=[DropField(a.path) for a in adds], irreversible=(),
            guard=list(range(3, 3 + len(adds))), schema_id=None,
        ))
    size = sum(len(k) + len(v) for k, v in table.properties.items())
    times = []
    for k in range(1, COMMITS + 1):
        plan = engine.plan(from_iceberg(table.schema()), engine.observe([{f"n{k:02d}": 1}], k), k)
        t0 = time.perf_counter()
        table = commit_plan(table, plan, TableState.of(table))
        times.append(time.perf_counter() - t0)
    kind = "bounded (fold files)" if bounded_updates else "every entry in properties"
    print(f"{kind}: {changes:,} schema changes{' and a 10,000-column batch' if huge else ''}; "
          f"properties {size:,} bytes; commit_plan median "
          f"{statistics.median(times) * 1e3:.1f} ms, min {min(times) * 1e3:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
