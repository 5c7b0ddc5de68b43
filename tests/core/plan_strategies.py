"""Hypothesis strategies for plans: the plans the engine makes for random drifting batches
(``tests.core.strategies``), under either policy, on a new table or on a declared one whose
int, float and required columns the widening policy widens in place or makes optional."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import strategies as st

from tests.core import strategies
from toolkit.core.batch.options import make_options
from toolkit.core.engine import simulate_batches
from toolkit.core.evolution.batch_plan import Plan
from toolkit.core.values.types import Column, ListOf, Struct

#: a table declared before any batch, numbered as Iceberg numbers a new table (top-level
#: fields first): ``a`` and ``b`` receive the strategies' keys of the same names
DECLARED = Struct((
    Column(1, "a", "int", required=True),
    Column(2, "b", "float", "declared by hand"),
    Column(3, "x y", ListOf(4, "int")),
))  # fmt: skip


@st.composite
def plans(draw: st.DrawFn) -> Plan:
    """One plan of a random run (any of its batches)."""
    batches = draw(strategies.batches)
    policy = draw(st.sampled_from(["upsolver", "widen"]))
    declared = draw(st.sampled_from([None, DECLARED]))
    options = make_options(policy=policy, **draw(strategies.options))
    run = simulate_batches(batches, declared, options)
    return draw(st.sampled_from(run.plans))


@st.composite
def costed_plans(draw: st.DrawFn) -> Plan:
    """A plan whose rewrites say what they touch, as a preview of a real table fills in."""
    plan = draw(plans())
    sizes = st.integers(0, 2**40)
    retypes = tuple(
        r if r.in_place else replace(r, rows=draw(sizes), bytes=draw(sizes))
        for r in plan.retypes
    )
    return replace(plan, retypes=retypes)
