"""Every public entry point shows the evolution options in its signature and docstring, read
from the one table of :class:`toolkit.Options` (issue 14): ``help()`` and a notebook's
Shift+Tab list them, with defaults and accepted values, while the function still takes
``**options`` and refuses a misspelt one naming the nearest."""

from __future__ import annotations

import inspect
import pickle
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Any, get_args

import pytest

import toolkit
from toolkit.core.batch.options import (
    LATTICES,
    OPTION_TABLE,
    REWRITES_WHEN_APPROVED,
    LatticeName,
    Options,
    make_options,
    option_doc,
    takes_options,
)
from toolkit.errors import UnknownOptionError

#: every public function of ``toolkit`` that takes the evolution options, with the options
#: it refuses (what it varies itself: not shown) and the defaults it decides itself
TAKERS: dict[str, tuple[tuple[str, ...], dict[str, object]]] = {
    "make_options": ((), {}),
    "simulate": ((), {}),
    "profile": ((), {}),
    "coalesce_sql": ((), {}),
    "create_coalesce_view": ((), {}),
    "plan_preview": ((), {}),
    # RULES 5: ingest lets a rewrite run only under an approved plan that has it; a
    # stream never has one
    "ingest": ((), {"allow_rewrites": REWRITES_WHEN_APPROVED}),
    "replay": ((), {"allow_rewrites": REWRITES_WHEN_APPROVED}),
    "stream": ((), {"allow_rewrites": False}),
    "preview": ((), {}),
    "explore": ((), {}),
    "inspect_quarantine": ((), {}),
    "compare_policies": (("policy", "allow_rewrites"), {}),
}

#: public functions whose ``**keywords`` are something else than the evolution options
OTHER_KEYWORDS = {
    "catalog": "catalog properties",
    "spark_session": "Spark settings",
    "maintain": "the options of plan_maintenance",
    "plan_maintenance": "its own options (toolkit.pipeline.maintain.MaintenanceSettings)",
    "preview_maintenance": "the options of plan_maintenance",
}


def _function(name: str) -> Callable[..., Any]:
    fn = getattr(toolkit, name)
    assert inspect.isfunction(fn), name
    return fn


def _takes_keywords(fn: Callable[..., Any]) -> bool:
    """Whether the code itself takes ``**keywords`` (the shown signature no longer says)."""
    return bool(fn.__code__.co_flags & inspect.CO_VARKEYWORDS)


def test_every_public_function_taking_keywords_is_accounted_for() -> None:
    takes = {
        name for name in toolkit.__all__
        if inspect.isfunction(getattr(toolkit, name)) and _takes_keywords(getattr(toolkit, name))
    }
    assert takes == set(TAKERS) | set(OTHER_KEYWORDS)


@pytest.mark.parametrize("name", TAKERS)
def test_the_signature_shows_every_option_keyword_only_with_its_default(name: str) -> None:
    leave_out, own = TAKERS[name]
    params = inspect.signature(_function(name)).parameters
    assert not [p for p in params.values() if p.kind is inspect.Parameter.VAR_KEYWORD]
    for row in OPTION_TABLE:
        if row.name in leave_out:
            assert row.name not in params
            continue
        p = params[row.name]
        assert p.kind is inspect.Parameter.KEYWORD_ONLY
        assert p.default == own.get(row.name, row.default), row.name
        assert p.annotation == row.accepts, row.name


@pytest.mark.parametrize("name", TAKERS)
def test_the_docstring_lists_every_option_once(name: str) -> None:
    leave_out, _ = TAKERS[name]
    doc = _function(name).__doc__ or ""
    assert "Options (keyword-only" in doc
    section = doc.rsplit("Options (keyword-only", 1)[1]
    for row in OPTION_TABLE:
        bullets = section.count(f"* ``{row.name}`` (")
        assert bullets == (0 if row.name in leave_out else 1), row.name


def test_the_shown_defaults_are_the_dataclass_defaults() -> None:
    shown = make_options(**{row.name: row.default for row in OPTION_TABLE})
    assert shown == Options()
    for f in fields(Options):
        assert getattr(make_options(**{f.name: option_doc(f.name).default}), f.name) == f.default


def test_every_option_is_documented_once_in_the_dataclass() -> None:
    assert [row.name for row in OPTION_TABLE] == [f.name for f in fields(Options)]
    for f in fields(Options):
        assert f.metadata["doc"].strip() and "\n" not in f.metadata["doc"], f.name
        assert f"* ``{f.name}`` (" in (Options.__doc__ or "")


def test_the_lattice_names_are_those_of_the_table() -> None:
    assert option_doc("lattice").choices == get_args(LatticeName)
    assert set(LATTICES) == set(option_doc("lattice").choices)


def test_a_value_outside_an_options_choices_is_refused_with_them() -> None:
    with pytest.raises(ValueError, match="unknown on_incompatible 'skip'; choose one of fail, "):
        make_options(on_incompatible="skip")
    with pytest.raises(ValueError, match="unknown lattice 'loose'; choose one of upsolver, strict"):
        make_options(lattice="loose")
    assert make_options(lattice=LATTICES["strict"]).lattice.name == "strict"


def test_the_decorator_marks_the_function_itself_without_wrapping_it() -> None:
    def count(records: list[Any], **options: Any) -> int:
        make_options(**options)
        return len(records)

    code = count.__code__
    assert takes_options(count) is count
    assert count.__code__ is code
    assert count([1, 2], policy="widen") == 2
    assert pickle.loads(pickle.dumps(toolkit.simulate)) is toolkit.simulate


def test_the_decorator_refuses_what_it_cannot_show() -> None:
    def no_options(records: list[Any]) -> int:
        return len(records)

    def clashing(policy: str, **options: Any) -> str:
        return policy

    with pytest.raises(TypeError, match="takes no"):
        takes_options(no_options)
    with pytest.raises(TypeError, match=r"named like options: \['policy'\]"):
        takes_options(clashing)
    with pytest.raises(UnknownOptionError, match="did you mean 'allow_rewrites'"):
        takes_options(leave_out=("allow_rewrite",))


# --- the functions still take their options, and refuse a misspelt one -------------------

#: a call of each entry point with ``**options``; those needing Spark (ingest, replay,
#: stream, create_coalesce_view) are run with it in their own tests, here only refused
CALLS: dict[str, Callable[[Path], Callable[..., Any]]] = {
    "make_options": lambda tmp: make_options,
    "simulate": lambda tmp: lambda **o: toolkit.simulate([[{"a": 1}]], **o),
    "profile": lambda tmp: lambda **o: toolkit.profile([{"a": 1}], **o),
    "coalesce_sql": lambda tmp: lambda **o: toolkit.coalesce_sql(
        toolkit.simulate([[{"a": 1}], [{"a": "x"}]]).schema, "db.t", **o
    ),
    "plan_preview": lambda tmp: lambda **o: toolkit.plan_preview(
        [{"a": 1}], "db.t", toolkit.catalog(tmp), **o
    ),
    "preview": lambda tmp: lambda **o: toolkit.preview(
        [{"a": 1}], "db.t", toolkit.catalog(tmp), **o
    ),
    "explore": lambda tmp: lambda **o: toolkit.explore([[{"a": 1}]], **o),
    "compare_policies": lambda tmp: lambda **o: toolkit.compare_policies([{"a": 1}], **o),
}

#: calls that fail on a misspelt option before they need Spark or a table
REFUSALS: dict[str, Callable[[Path], Callable[..., Any]]] = {
    **CALLS,
    "ingest": lambda tmp: lambda **o: toolkit.ingest([{"a": 1}], "db.t", None, None, **o),
    "replay": lambda tmp: lambda **o: toolkit.replay(None, "db.t", None, **o),
    "stream": lambda tmp: lambda **o: toolkit.stream(
        str(tmp / "landing"), "db.t", toolkit.catalog(tmp), None, **o
    ),
    "create_coalesce_view": lambda tmp: lambda **o: toolkit.create_coalesce_view(
        None, "db.t", "db.v", **o
    ),
    "inspect_quarantine": lambda tmp: lambda **o: toolkit.inspect_quarantine(
        toolkit.catalog(tmp), "db.t", **o
    ),
}


def test_every_taker_is_called() -> None:
    assert set(REFUSALS) == set(TAKERS)


@pytest.mark.parametrize("name", CALLS)
def test_an_option_still_works(name: str, tmp_path: Path) -> None:
    call = CALLS[name](tmp_path)
    call(detect_dates=False, timestamp_unit="us")


@pytest.mark.parametrize("name", REFUSALS)
def test_a_misspelt_option_is_refused_naming_the_nearest(name: str, tmp_path: Path) -> None:
    call = REFUSALS[name](tmp_path)
    with pytest.raises(UnknownOptionError, match="'detect_date'; did you mean 'detect_dates'"):
        call(detect_date=False)
