"""dlt's own tests of type inference, coercion and variant columns, run as the project's
tests (tests/peers/cases_dlt.py).

Every case runs through ``toolkit.simulate``: the final schema (IDs, names, types, docs),
every record where a reader of the table finds it, and the records set aside. A handful,
one of each kind of path (a nested family; JSON lines the JVM types and routes, into a new
and a declared column; typed Python values; ragged mixed arrays; items that are no
records), also run through ``toolkit.ingest`` batch by batch on a real table, read back
equal to the simulation. A case marked as a deliberate difference is listed, with dlt's
behaviour and the RULES reason, in docs/rules.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from pyiceberg.catalog import Catalog

from tests.peers.cases_dlt import CASES
from tests.peers.differences import DLT_DIFFERENCES, docs_rows, documented_rows
from tests.peers.model import DataCase, assert_ids_cite_their_tests
from tests.peers.runner import ingest_case, simulate_case

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SECTION = "## Where we differ from dlt's own tests"
BY_ID = {c.id: c for c in CASES}

#: the cases that also run on a real table: one of each path ingest takes for them
ON_A_TABLE = [
    "dlt:tests/normalize/test_normalize.py::test_schema_changes",
    "dlt:tests/common/schema/test_detections.py::test_detection_large_integer",
    "dlt:tests/common/schema/test_coercion.py::test_coerce_type_to_timestamp[ISO texts]",
    "dlt:tests/normalize/test_json_item_inference.py::"
    "test_coerce_timestamp_timezone_existing_column_preserve",
    "dlt:tests/normalize/test_normalize.py::test_normalize_typed_json",
    "dlt:tests/common/normalizers/test_json_relational.py::test_list_in_list",
    "dlt:tests/common/normalizers/test_json_relational.py::test_wrap_in_dict",
]


@pytest.mark.parametrize("case", [c.param() for c in CASES])
def test_simulate(case: DataCase, tmp_path: Path) -> None:
    simulate_case(case, tmp_path)


@pytest.mark.spark
def test_ingest_equals_simulate(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    for case_id in ON_A_TABLE:
        case = BY_ID[case_id]
        folder = tmp_path / str(ON_A_TABLE.index(case_id))
        folder.mkdir()
        sim = simulate_case(case, folder)
        assert sim is not None, case_id
        ingest_case(case, sim, lakehouse, spark, folder)


def test_case_ids_are_unique_and_cite_their_test() -> None:
    assert len(BY_ID) == len(CASES)
    assert_ids_cite_their_tests(CASES)
    for c in CASES:
        assert all(cite.startswith("dlt:tests/") and ".py::test_" in cite for cite in c.cites)


def test_the_deliberate_differences_are_the_cases_marked_so() -> None:
    assert {c.id for c in CASES if c.differs} == set(DLT_DIFFERENCES)


def test_docs_list_every_deliberate_difference() -> None:
    assert documented_rows(SECTION) == docs_rows(DLT_DIFFERENCES)
