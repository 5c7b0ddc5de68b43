"""toolkit.notebook.figures: plotly figures are data; their traces are checked here."""

from __future__ import annotations

from pathlib import Path

import plotly.graph_objects as go
import pytest

from tests.notebook.panel_tables import sample_day, write_batches
from toolkit.core.batch.profile import profile
from toolkit.core.engine import Engine
from toolkit.iceberg import catalog
from toolkit.iceberg.statistics import statistics
from toolkit.notebook.figures import type_color, type_drift_figure, type_mix_figure
from toolkit.notebook.panels.explore.model import StatisticsModel


@pytest.fixture(scope="module")
def days() -> StatisticsModel:
    run = Engine().run([sample_day(n) for n in (1, 2, 3)])
    return StatisticsModel.from_profile(run.profile, run.schema)


def bars(fig: go.Figure) -> dict[str, tuple[tuple[object, ...], tuple[object, ...]]]:
    assert all(isinstance(t, go.Bar) for t in fig.data)
    return {t.name: (tuple(t.x), tuple(t.y)) for t in fig.data}


def test_type_mix_stacks_counts_per_type_for_the_most_drifted_fields(
    days: StatisticsModel,
) -> None:
    fig = type_mix_figure(days, top=3)
    assert fig.layout.barmode == "stack"
    fields = ("my_field", "size", "started")
    got = bars(fig)
    assert {name: y for name, (_, y) in got.items()} == {t: fields for t in got}
    assert {name: x for name, (x, _) in got.items()} == {
        "long": (30, 20, 20),
        "double": (0, 40, 0),
        "timestamp": (0, 0, 40),
        "string": (30, 0, 0),
    }
    assert all(t.orientation == "h" for t in fig.data)
    assert fig.data[0].marker.color == type_color("long")
    assert "3 most drifted" in fig.layout.title.text


def test_type_mix_of_a_filter_and_of_nothing(days: StatisticsModel) -> None:
    fig = type_mix_figure(days.filter("device"), top=10)
    assert set(fig.data[0].y) == {"device", "device.id", "device.os", "device.os_version"}
    arrays = {t.name: t.marker.pattern.shape for t in fig.data}
    assert arrays == {"record": "", "string": "", "record[]": "/"}
    empty = type_mix_figure(days.filter("no such field"))
    assert empty.data == () and empty.layout.annotations[0].text == "no fields match"


def test_type_drift_across_batches_from_a_profile(days: StatisticsModel) -> None:
    fig = type_drift_figure(days, "my_field")
    assert bars(fig) == {
        "long": (("1", "2", "3"), (20, 10, 0)),
        "string": (("1", "2", "3"), (0, 10, 20)),
    }
    assert fig.layout.xaxis.type == "category" and fig.layout.title.text.startswith("my_field")
    # a Profile is accepted as it is
    p = profile([{"a": 1}]) + profile([{"a": "x"}, {"a": 2.5}], batch=1)
    assert bars(type_drift_figure(p, "a")) == {
        "double": (("1", "2"), (0, 1)),
        "long": (("1", "2"), (1, 0)),
        "string": (("1", "2"), (0, 1)),
    }


def test_type_drift_across_snapshots_of_a_table(tmp_path: Path) -> None:
    table = write_batches(catalog(tmp_path), "db.events", [sample_day(n) for n in (1, 2, 3)])
    stats = statistics(table)
    # from the statistics themselves, by family or by any column of it
    for name in ("size", "size_double"):
        fig = type_drift_figure(stats, name)
        assert bars(fig) == {
            "size_double (double)": (("b0", "b1", "b2"), (0, 20, 20)),
            "size (long)": (("b0", "b1", "b2"), (20, 0, 0)),
        }
    # the same numbers as history_rows(), the statistics' long form
    history = {
        (r["batch"], r["column"]): r["values"]
        for r in stats.history_rows()
        if r["family"] == "size"
    }
    assert history == {
        ("b0", "size"): 20, ("b1", "size"): 0, ("b2", "size"): 0,
        ("b0", "size_double"): 0, ("b1", "size_double"): 20, ("b2", "size_double"): 20,
    }
    assert fig.layout.xaxis.title.text == "snapshot (batch)"
    with pytest.raises(KeyError, match="no field or column 'nope'"):
        type_drift_figure(stats, "nope")
