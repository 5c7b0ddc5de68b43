"""Field contracts in the notebook's preview: its summary says what each contract refuses
and does, the records it sets aside are in its quarantine part, and a table's kept
contracts hold in a preview that gives none (docs/rules.md, *Contracts*)."""

from __future__ import annotations

from pathlib import Path

from toolkit.core.batch.contracts import CONTRACTS_PROPERTY
from toolkit.core.batch.options import make_options
from toolkit.core.values.types import Column, Struct
from toolkit.iceberg import catalog
from toolkit.iceberg.schema import to_iceberg
from toolkit.notebook.panels.preview.model import PlanModel
from toolkit.pipeline.preview import plan_preview

BATCH = [{"id": i, "quantity": "two" if i == 3 else i} for i in range(6)]
SENTENCE = ("1 of 6 values of `quantity` arrived as a string; no column of `quantity` holds it "
            "(quantity long): its contract discard_row sets its record aside (reason contract)")


def test_the_preview_says_what_a_contract_refuses_and_sets_aside(tmp_path: Path) -> None:
    lake = catalog(tmp_path / "lake")
    lake.create_namespace("db")
    lake.create_table("db.orders", schema=to_iceberg(Struct((
        Column(1, "id", "long"), Column(2, "quantity", "long")))),
        properties={CONTRACTS_PROPERTY: '{"quantity":"discard_row"}'})
    preview = plan_preview(BATCH, "db.orders", lake)  # no contracts given: the table's
    model = PlanModel.from_preview(preview, make_options(), sample=6)
    assert model.contracts == (SENTENCE,)
    assert model.new_columns == ()
    assert model.summary.endswith("no schema change; 1 record to quarantine; contract: "
                                  + SENTENCE)
    q = model.quarantine
    assert q is not None and q.by_reason == (("contract", 1),)
    assert [s.quarantined is not None for s in model.samples] == [
        False, False, False, True, False, False]
