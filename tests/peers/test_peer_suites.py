"""The peers' own schema-evolution test suites, run as the project's tests (issue 26).

Each case (tests/peers/cases_*.py) is a start schema and a list of ``toolkit.ops``
operations that lead to an expected schema or to a refusal, citing the peer test it
re-expresses. Every case runs twice: on the pure path (``toolkit.ops.plan_evolution`` on
the start schema's layout) and through ``toolkit.evolve`` on a real table of an embedded
SQLite catalog, read back with ``table.schema()``. A case marked as a deliberate
difference is listed, with Iceberg's behaviour and the RULES reason, in docs/rules.md.
"""

from __future__ import annotations

import pytest
from pyiceberg.catalog import Catalog

import toolkit
from tests.peers import cases_iceberg_union, cases_iceberg_update, cases_pyiceberg
from tests.peers.differences import DIFFERENCES, NOT_RUN, docs_rows, documented_rows
from tests.peers.model import Case, assert_ids_cite_their_tests
from tests.peers.runner import run_pure, run_table

CASES: list[Case] = [
    *cases_iceberg_update.CASES,
    *cases_iceberg_union.CASES,
    *cases_pyiceberg.CASES,
]



@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    return toolkit.catalog(tmp_path_factory.mktemp("peers"))


@pytest.mark.parametrize("case", [c.param("pure") for c in CASES])
def test_pure_path(case: Case) -> None:
    run_pure(case)


@pytest.mark.parametrize("case", [c.param("table") for c in CASES])
def test_on_a_table(case: Case, catalog: Catalog) -> None:
    run_table(case, catalog)


def test_case_ids_are_unique_and_cite_their_test() -> None:
    assert_ids_cite_their_tests(CASES)


def test_the_deliberate_differences_are_the_cases_marked_so() -> None:
    marked = {c.id for c in CASES if c.differs}
    assert marked == set(DIFFERENCES) - set(NOT_RUN)
    assert not set(NOT_RUN) & {c.id for c in CASES}


def test_docs_list_every_deliberate_difference() -> None:
    # the Spark writes' table is a subsection of its own (tests/peers/test_iceberg_writer_suite.py)
    assert documented_rows("## Where we differ from Iceberg's own tests") == docs_rows()
