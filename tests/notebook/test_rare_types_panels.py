"""The rare-type threshold in the notebook: the preview says which field and type it sets
aside, why, and the threshold in force; the policy comparison shows the upsolver policy
with the threshold as its own column, beside the upsolver policy without it."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyiceberg.catalog import Catalog

from toolkit.core.batch.options import make_options
from toolkit.iceberg import catalog
from toolkit.notebook.panels.policies.html import comparison_html
from toolkit.notebook.panels.policies.model import policy_comparison
from toolkit.notebook.panels.policies.widget import PolicyComparisonPanel
from toolkit.notebook.panels.preview.html import landings_html, plan_header_html
from toolkit.notebook.panels.preview.model import PlanModel
from toolkit.pipeline.preview import plan_preview

#: 400 amounts: 396 longs, 4 texts (1%, rare under 2%)
BATCH = [{"id": i, "amount": "unknown" if i % 100 == 3 else i} for i in range(400)]
SENTENCE = (
    "4 of 400 values of `amount` arrived as strings (1%, under the 2% rare-type threshold); "
    "set aside instead of adding amount as string and amount_long"
)


@pytest.fixture
def lake(tmp_path: Path) -> Catalog:
    return catalog(tmp_path / "lake")


def model_of(lake: Catalog, **options: float) -> PlanModel:
    preview = plan_preview(BATCH, "db.amounts", lake, **options)
    return PlanModel.from_preview(preview, make_options(**options), sample=5)


def test_the_preview_shows_what_the_threshold_sets_aside_and_why(lake: Catalog) -> None:
    model = model_of(lake, rare_type_percent=2)
    assert model.rare_type_percent == 2 and model.rare_types == (SENTENCE,)
    assert [(c.name, c.type) for c in model.new_columns] == [("amount", "long"), ("id", "long")]
    assert model.summary == (
        "400 records planned; db.amounts does not exist yet: it will be created; "
        "2 columns to add; 4 records to quarantine; rare-type threshold 2%: " + SENTENCE
    )
    q = model.quarantine
    assert q is not None and q.by_reason == (("rare-type", 4),)
    assert [(s.index, s.field, s.observed, s.table_type, s.detail) for s in q.samples] == [
        (i, "amount", "string", "long", SENTENCE) for i in (3, 103, 203, 303)
    ]
    # the sample record holding a rare type is shown set aside whole, with the sentence
    assert [s.quarantined for s in model.samples] == [None, None, None, SENTENCE, None]
    assert "quarantined: " + SENTENCE in landings_html(model.landings)
    assert "rare-type threshold 2%" in plan_header_html(model)


def test_the_preview_tells_the_threshold_also_when_nothing_is_rare(lake: Catalog) -> None:
    model = model_of(lake, rare_type_percent=0.5)
    assert model.rare_types == () and model.quarantine is None
    assert model.summary.endswith(
        "; rare-type threshold 0.5%: no type of this batch is rare, nothing set aside for it"
    )
    assert [c.name for c in model.new_columns] == ["amount", "amount_long", "id"]


def test_without_the_threshold_the_preview_says_nothing_of_it(lake: Catalog) -> None:
    model = model_of(lake)
    assert model.rare_type_percent is None and "rare-type" not in model.summary


def test_the_comparison_shows_the_threshold_as_its_own_policy() -> None:
    later = [{"id": 1, "amount": 5}]
    c = policy_comparison([BATCH, later], rare_type_percent=2)
    assert [(o.key, o.label) for o in c.outcomes] == [
        ("upsolver", "upsolver (suffixed columns)"),
        ("upsolver-rare", "upsolver, rare types (<2%) set aside"),
        ("widen", "widen, rewrites approved"),
        ("widen-no-rewrites", "widen, no rewrites"),
    ]
    auto, rare = c.outcome("upsolver"), c.outcome("upsolver-rare")
    assert auto.columns_added == ("amount", "amount_long", "id")
    assert rare.columns_added == ("amount", "id")
    assert (rare.records_written, rare.quarantined, rare.quarantined_by_reason) == (
        397, 4, (("rare-type", 4),)
    )
    assert rare.rare_types == ("batch 1: amount as string (4 of 400 values)",)
    rows = dict(c.rows())
    assert rows["rare types set aside"] == (
        "threshold off", "1: batch 1: amount as string (4 of 400 values)",
        "threshold off", "threshold off",
    )
    html = comparison_html(c)
    assert "upsolver, rare types (&lt;2%) set aside" in html and "rare types set aside" in html
    panel = PolicyComparisonPanel(c)
    panel.show("upsolver-rare")
    assert "- " + SENTENCE in panel.detail.value  # the batch's plan, in the details


def test_without_the_threshold_the_comparison_is_as_before() -> None:
    c = policy_comparison([BATCH])
    assert [o.key for o in c.outcomes] == ["upsolver", "widen", "widen-no-rewrites"]
    assert "rare types set aside" not in dict(c.rows())
    with pytest.raises(ValueError, match="rare_type_percent=60 is out of range"):
        policy_comparison([BATCH], rare_type_percent=60)
