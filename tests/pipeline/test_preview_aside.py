"""A preview sets aside what ingest sets aside (records that are no records, values with no
type), says so in its summary line, and names a field every value of which is set aside:
it gets no column, which the schema alone never says (issue 12)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pytest

import toolkit
from toolkit.errors import UnsupportedValueError
from toolkit.notebook.panels.preview.model import PlanModel
from toolkit.pipeline.preview import plan_preview


def test_a_field_every_value_of_which_is_set_aside_is_named_in_the_summary(
    tmp_path: Path,
) -> None:
    cat = toolkit.catalog(tmp_path)
    records = [{"t": dt.timedelta(1), "a": 1}, {"a": np.int64(2)}, 5]
    preview = plan_preview(records, "db.t", cat)
    assert [(i, q.reason, q.field) for i, q in preview.aside] == [
        (0, "invalid-value", "t"), (2, "not-a-record", None),
    ]
    assert preview.records == ({"a": 2},)
    model = PlanModel.from_preview(preview)
    assert model.records == 3
    assert model.summary.startswith(
        "3 records planned; db.t does not exist yet: it will be created; 1 column "
        "to add; 2 records to quarantine; every value of field 't' is set aside, so it "
        "gets no column: field 't': value datetime.timedelta(days=1)"
    )
    assert model.quarantine is not None
    assert dict(model.quarantine.by_reason) == {"invalid-value": 1, "not-a-record": 1}


def test_a_preview_of_clean_records_sets_nothing_aside(tmp_path: Path) -> None:
    preview = plan_preview([{"a": np.int32(1)}], "db.t", toolkit.catalog(tmp_path))
    model = PlanModel.from_preview(preview)
    assert preview.aside == () and model.quarantine is None and model.unlanded == ()
    assert "set aside" not in model.summary


def test_failing_is_configured_the_preview_raises_naming_field_and_value(
    tmp_path: Path,
) -> None:
    with pytest.raises(UnsupportedValueError, match=r"field 't': value datetime.timedelta"):
        plan_preview([{"t": dt.timedelta(1)}], "db.t", toolkit.catalog(tmp_path),
                     on_incompatible="fail")
