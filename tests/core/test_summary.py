"""Summaries: partitions observed apart, merged, plan exactly as the whole batch does."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core import strategies
from toolkit.core.batch.observe import observe_struct
from toolkit.core.batch.options import Options
from toolkit.core.batch.summary import merge, summarize
from toolkit.core.policies.upsolver_planner import plan_batch
from toolkit.core.values.types import Struct


@settings(max_examples=150, deadline=None)
@given(strategies.batches, st.data())
def test_plans_from_merged_partition_summaries_equal_plans_from_whole_batches(
    batches: list[list[dict[str, Any]]], data: st.DataObject
) -> None:
    opts = Options()
    whole_schema = parts_schema = Struct()
    for i, batch in enumerate(batches):
        cuts = sorted(data.draw(st.lists(st.integers(0, len(batch)), max_size=3)))
        pieces = [batch[a:b] for a, b in zip([0, *cuts], [*cuts, len(batch)], strict=True)]
        merged = merge(summarize(observe_struct(p, opts)) for p in pieces)
        whole = plan_batch(whole_schema, observe_struct(batch, opts), opts, i)
        parts = plan_batch(parts_schema, merged, opts, i)
        assert parts == whole
        whole_schema, parts_schema = whole.after, parts.after
        assert merged.rows == len(batch)


def test_summary_keeps_records_apart_by_dimension() -> None:
    s = summarize(observe_struct([{"d": {"x": 1}}, {"d": [{"y": 2}]}], Options()))
    assert sorted(s.fields["d"].nested(0).fields) == ["x"]
    assert sorted(s.fields["d"].nested(1).fields) == ["x", "y"]
