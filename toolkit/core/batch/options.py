"""Options of the evolution policy (RULES 1, 2 and 5 switches): one table, documented once.

Each option is a field of :class:`Options` whose description, default and accepted values
live in that field alone (:func:`_option`). Every public entry point that takes them
(``simulate``, ``ingest``, ``preview``...) is marked with :func:`takes_options`, which
shows them in its signature and docstring from that table, so ``help()`` and a notebook's
Shift+Tab list them without a second copy that could drift.

>>> Options(detect_dates=False).detect_dates
False
>>> [(o.name, o.default) for o in OPTION_TABLE][:2]
[('detect_dates', True), ('timestamp_unit', 'ms')]
"""

from __future__ import annotations

import inspect
import textwrap
import types
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import (
    Any,
    Literal,
    TypeAlias,
    TypeVar,
    Union,
    get_args,
    get_origin,
    get_type_hints,
    overload,
)

from toolkit.core.batch.contract_terms import Contracts
from toolkit.core.batch.hints import Hint, hints_from_property, parse_hints
from toolkit.core.batch.quarantine import OnIncompatible
from toolkit.core.policies import (
    DEFAULT_POLICY,
    POLICIES,
    EvolutionPolicy,
    policy_named,
    policy_names,
)
from toolkit.core.values.conversions import Conversions, EpochUnit, LongTimestampUnit
from toolkit.core.values.lattice import STRICT, UPSOLVER, Lattice
from toolkit.core.values.wording import or_join
from toolkit.errors import UnknownOptionError

#: what ``policy=`` accepts: a policy, or the name of one (looked up in the registry)
PolicyName: TypeAlias = Literal[policy_names()]  # type: ignore[valid-type]


#: the lattices a caller may name instead of passing a :class:`Lattice` (the names of
#: :data:`LATTICES`: ``set(get_args(LatticeName)) == set(LATTICES)``, tested)
LatticeName: TypeAlias = Literal["upsolver", "strict"]
LATTICES: dict[str, Lattice] = {"upsolver": UPSOLVER, "strict": STRICT}

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


def _option(default: T, doc: str, *, accepts: object = None, given: object = None) -> T:
    """A field of :class:`Options`: its ``default`` and ``doc`` (one sentence, plain
    reST, shown in every entry point's docstring). ``accepts`` is what a caller may give
    when it is more than the field's type (a lattice by name), ``given`` the default as a
    caller would write it when the stored value reads badly in a signature."""
    metadata: dict[str, object] = {"doc": doc}
    if accepts is not None:
        metadata["accepts"] = accepts
    if given is not None:
        metadata["given"] = given
    return field(default=default, metadata=metadata)


@dataclass(frozen=True)
class Options:
    """How values are typed and converted, and what happens to the records a table cannot
    take; :func:`make_options` builds it from keyword options."""

    detect_dates: bool = _option(
        True, "type ISO-8601 date / date-time texts as date / timestamp (RULES 1)"
    )
    timestamp_unit: EpochUnit = _option(
        "ms", "unit of the epoch value a timestamp becomes in a long column (RULES 2)"
    )
    long_timestamp_unit: LongTimestampUnit = _option(
        "auto",
        "unit of a long written into a timestamp column; ``auto`` reads it from the "
        "magnitude (RULES 2)",
    )
    lattice: Lattice = _option(
        UPSOLVER,
        "the primitive lattice table (RULES 2), a :class:`~toolkit.core.values.lattice.Lattice` "
        "or its name",
        accepts=Lattice | LatticeName,
        given=UPSOLVER.name,  # the Lattice's repr is its whole table: too long to read
    )
    # the object the engine asks (toolkit.core.policies); a name is looked up once, here
    policy: EvolutionPolicy = _option(
        DEFAULT_POLICY,
        "; ".join(f"``{p.name}``: {p.does} ({p.rules})" for p in POLICIES),
        accepts=EvolutionPolicy | PolicyName,
        given=DEFAULT_POLICY.name,
    )
    on_incompatible: OnIncompatible = _option(
        "quarantine",
        "a record the table cannot take (an X cell of RULES 5, a line that is not a JSON "
        "object, a value that cannot be typed) goes to the ``quarantine``, or makes the "
        "batch ``fail`` with an error naming field, types and value",
    )
    allow_rewrites: bool = _option(
        True,
        "whether the ``widen`` policy may plan a column rewrite (RULES 5: only when "
        "approved); when not, the values needing one are treated as incompatible",
    )
    # decided per batch by toolkit.core.policies.upsolver_planner.rare_kinds (docs/rules.md)
    rare_type_percent: float | None = _option(
        None,
        "the ``upsolver`` policy's rare-type threshold in percent (``1`` is 1%), above 0 and "
        "at most 50, off when None: a type seen in fewer than this share of a top-level "
        "field's non-null values in a batch, and which would need a new column, is not "
        "evolved for; its records are set aside (reason ``rare-type``, replayable)",
    )

    # the rule: toolkit.core.batch.contracts (docs/rules.md, Contracts)
    contracts: Contracts | None = _option(
        None,
        "contracts per top-level field, ``{field: mode}`` (``*``: every field the table has "
        "no column for yet), mode ``evolve``, ``freeze`` (the batch fails), ``discard_row`` "
        "or ``discard_value`` (to the quarantine) for a value no column of the field holds; "
        "kept with the table, which later batches obey until contracts are given again "
        "(None: the table's)",
        accepts=Mapping[str, str] | Contracts | None,
    )

    # parsed by toolkit.core.batch.hints.parse_hints (docs/rules.md, Type hints)
    hints: tuple[Hint, ...] = _option(
        (),
        "type hints per top-level field, ``{\"price\": \"decimal(10,2)\", \"ts\": "
        "\"timestamp[ms]\"}`` (Iceberg type names; ``[s|ms|us|ns]``: the epoch unit of longs "
        "read as timestamps): the field's column has the hint's type from its first batch, "
        "values that convert exactly are written there, the others go where the policy "
        "puts them; a table keeps its hints until others are given (docs/rules.md)",
        accepts=Mapping[str, str],
        given={},
    )
    def __post_init__(self) -> None:
        if isinstance(self.policy, str):  # the boundary: a policy given by its name
            object.__setattr__(self, "policy", policy_named(self.policy))

    @cached_property
    def conversions(self) -> Conversions:
        return Conversions(self.timestamp_unit, self.long_timestamp_unit)


@dataclass(frozen=True)
class OptionDoc:
    """One option as a caller sees it: a row of :data:`OPTION_TABLE`.

    >>> print(OPTION_TABLE[0].line)
    ``detect_dates`` (True or False; default True): type ISO-8601 date / date-time texts
    as date / timestamp (RULES 1)
    >>> option_doc("lattice").accepted, option_doc("lattice").default
    ("Lattice, 'upsolver' or 'strict'", 'upsolver')
    """

    name: str
    default: object  # as a caller writes it: make_options(name=default) gives the field's
    accepts: object  # the annotation of what a caller may give
    doc: str

    @property
    def accepted(self) -> str:
        """The accepted values, for reading: ``'s', 'ms' or 'us'``, ``float or None``."""
        return or_join(_alternatives(self.accepts))

    @property
    def choices(self) -> tuple[object, ...]:
        """The values a ``Literal`` in :attr:`accepts` allows (empty: not a closed set)."""
        return tuple(v for arm in _arms(self.accepts) if get_origin(arm) is Literal
                     for v in get_args(arm))

    @property
    def line(self) -> str:
        """Name, accepted values, default and description, on one (long) line."""
        return f"``{self.name}`` ({self.accepted}; default {_shown(self.default)}): {self.doc}"


def _arms(annotation: object) -> tuple[object, ...]:
    """The members of a union (``a | b`` or ``Union[a, b]``), or the annotation alone."""
    if get_origin(annotation) in (Union, types.UnionType):
        return tuple(a for arm in get_args(annotation) for a in _arms(arm))
    return (annotation,)


def _alternatives(annotation: object) -> list[str]:
    shown: list[str] = []
    for arm in _arms(annotation):
        if get_origin(arm) is Literal:
            shown += [repr(v) for v in get_args(arm)]
        elif arm is bool:
            shown += ["True", "False"]
        elif arm is type(None):
            shown.append("None")
        else:
            shown.append(getattr(arm, "__name__", str(arm)))
    return shown


def _shown(default: object) -> str:
    return default.how if isinstance(default, Decided) else repr(default)


def _option_table() -> tuple[OptionDoc, ...]:
    hints = get_type_hints(Options)  # the annotations are strings (future import)
    rows = []
    for f in fields(Options):
        if "doc" not in f.metadata:
            raise TypeError(f"Options.{f.name} has no description: declare it with _option()")
        rows.append(OptionDoc(
            f.name, f.metadata.get("given", f.default), f.metadata.get("accepts", hints[f.name]),
            f.metadata["doc"],
        ))
    return tuple(rows)


#: every option, in order: the one table that signatures, docstrings and checks read
OPTION_TABLE: tuple[OptionDoc, ...] = _option_table()

#: the options every entry point takes (``simulate``, ``ingest``, ``preview``...), in order
OPTION_NAMES: tuple[str, ...] = tuple(o.name for o in OPTION_TABLE)


def option_doc(name: str) -> OptionDoc:
    """The row of option ``name``; a misspelt name is refused with the nearest one.

    >>> option_doc("policy").choices
    ('upsolver', 'widen')
    """
    for o in OPTION_TABLE:
        if o.name == name:
            return o
    raise UnknownOptionError(name, OPTION_NAMES)


@dataclass(frozen=True)
class Decided:
    """The default of an option that a function decides itself, said in words (shown in
    its signature as ``<how>``).

    >>> Decided("only when approved")
    <only when approved>
    """

    how: str

    def __repr__(self) -> str:
        return f"<{self.how}>"


#: ``allow_rewrites`` as an entry point that commits (``ingest``, ``replay``) decides it
#: when not given: RULES 5, a rewrite runs only when approved
REWRITES_WHEN_APPROVED = Decided("True only if the approved plan has rewrites")


@overload
def takes_options(fn: F, /) -> F: ...


@overload
def takes_options(
    *, leave_out: Collection[str] = (), defaults: Mapping[str, object] | None = None
) -> Callable[[F], F]: ...


def takes_options(
    fn: F | None = None,
    /,
    *,
    leave_out: Collection[str] = (),
    defaults: Mapping[str, object] | None = None,
) -> F | Callable[[F], F]:
    """Mark ``fn``, which takes the options as ``**options``, so that its signature shows
    each option as a keyword-only parameter with its default and accepted type, and its
    docstring ends with an "Options" section listing them (both from :data:`OPTION_TABLE`).

    The function itself is untouched and returned as it is, not wrapped (only
    ``__signature__`` and ``__doc__`` are set): it still takes ``**options`` and checks
    them with :func:`make_options`, so a misspelt option is refused naming the nearest.
    ``leave_out`` names options the function refuses (they are not shown); ``defaults``
    gives the function's own default of an option, a value or a :class:`Decided`.

    >>> @takes_options
    ... def count(records: list[object], **options: Any) -> int:
    ...     '''How many ``records``.'''
    ...     make_options(**options)
    ...     return len(records)
    >>> list(inspect.signature(count).parameters)[:3]
    ['records', 'detect_dates', 'timestamp_unit']
    >>> inspect.signature(count).parameters["timestamp_unit"]
    <Parameter "timestamp_unit: Literal['s', 'ms', 'us'] = 'ms'">
    >>> print(count.__doc__)
    How many ``records``.
    <BLANKLINE>
    Options (keyword-only; :class:`~toolkit.core.batch.options.Options`):
    <BLANKLINE>
    * ``detect_dates`` (True or False; default True): type ISO-8601 date / date-time texts
      as date / timestamp (RULES 1)
    ...
    >>> count([{}], policy="widen"), count.__name__
    (1, 'count')
    >>> count([], detect_date=False)
    Traceback (most recent call last):
    ...
    toolkit.errors.UnknownOptionError: unknown option 'detect_date'; did you mean...
    """
    own = dict(defaults or {})
    for name in (*leave_out, *own):
        option_doc(name)  # a misspelt name here is a bug of the caller: refuse it now

    def mark(fn: F) -> F:
        sig = inspect.signature(fn)
        kept = [p for p in sig.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
        if len(kept) == len(sig.parameters):
            raise TypeError(f"{fn.__qualname__} takes no **options to show")
        taken = [o for o in OPTION_TABLE if o.name not in leave_out]
        clash = sorted({p.name for p in kept} & {o.name for o in taken})
        if clash:
            raise TypeError(f"{fn.__qualname__} has parameters named like options: {clash}")
        shown = [
            OptionDoc(o.name, own.get(o.name, o.default), o.accepts, o.doc) for o in taken
        ]
        params = [
            inspect.Parameter(
                o.name, inspect.Parameter.KEYWORD_ONLY, default=o.default, annotation=o.accepts
            )
            for o in shown
        ]
        # set, not wrapped: the same object keeps its identity, pickling and static type
        fn.__signature__ = sig.replace(parameters=[*kept, *params])  # type: ignore[attr-defined]
        head = inspect.cleandoc(fn.__doc__) + "\n\n" if fn.__doc__ else ""
        fn.__doc__ = head + options_section(shown)
        return fn

    return mark if fn is None else mark(fn)


def options_section(
    rows: Collection[OptionDoc] = OPTION_TABLE,
    title: str = "Options (keyword-only; :class:`~toolkit.core.batch.options.Options`):",
    width: int = 88,
) -> str:
    """The "Options" section a docstring ends with: one bullet per option."""
    bullets = [
        textwrap.fill(o.line, width, initial_indent="* ", subsequent_indent="  ",
                      break_long_words=False, break_on_hyphens=False)
        for o in rows
    ]
    return "\n".join([title, "", *bullets])


# help(Options) lists the fields from the same table as every entry point
Options.__doc__ = (
    f"{inspect.cleandoc(Options.__doc__ or '')}\n\n"
    f"{options_section(title='Fields (the keyword options of every entry point):')}"
)


#: the accepted range of ``rare_type_percent``: above 0, at most 50 (so a type that holds
#: most of a field's values is never rare)
RARE_TYPE_PERCENT_MAX = 50.0


def checked_rare_type_percent(value: object) -> float | None:
    """``rare_type_percent`` validated: None (off) or a number of percent in (0, 50].

    >>> checked_rare_type_percent(1)
    1.0
    >>> checked_rare_type_percent(0.01)
    0.01
    >>> checked_rare_type_percent(75)
    Traceback (most recent call last):
    ...
    ValueError: rare_type_percent=75 is out of range: give a share in percent above 0 and \
at most 50 (1 means 1%), or None to switch the rare-type threshold off
    """
    if value is None:
        return None
    accepted = (
        f"give a share in percent above 0 and at most {RARE_TYPE_PERCENT_MAX:g} (1 means 1%), "
        "or None to switch the rare-type threshold off"
    )
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"rare_type_percent={value!r} is not a number: {accepted}")
    if not 0 < value <= RARE_TYPE_PERCENT_MAX:  # NaN fails both comparisons
        raise ValueError(f"rare_type_percent={value!r} is out of range: {accepted}")
    return float(value)


def _check_choice(o: OptionDoc, value: object) -> None:
    """Refuse a value outside an option's closed set (a ``Literal``), unless it is an
    instance of a class the option also accepts (a :class:`Lattice`)."""
    if not o.choices or value in o.choices:
        return
    if any(isinstance(arm, type) and isinstance(value, arm) for arm in _arms(o.accepts)):
        return
    raise ValueError(
        f"unknown {o.name} {value!r}; choose one of {', '.join(map(str, o.choices))}"
    )


@takes_options
def make_options(**options: Any) -> Options:
    """Options from keyword arguments (see :class:`~toolkit.core.batch.options.Options`);
    ``lattice`` may be a name (``upsolver``, ``strict``). An unknown name is refused with
    the nearest known one, a value outside an option's choices with the choices:

    >>> make_options(lattice="strict").lattice.name
    'strict'
    >>> make_options(detect_date=False)
    Traceback (most recent call last):
    ...
    toolkit.errors.UnknownOptionError: unknown option 'detect_date'; did you mean
    'detect_dates'? The options are: detect_dates, timestamp_unit, long_timestamp_unit,
    lattice, policy, on_incompatible, allow_rewrites, rare_type_percent, contracts,
    hints
    >>> make_options(timestamp_unit="ns")
    Traceback (most recent call last):
    ...
    ValueError: unknown timestamp_unit 'ns'; choose one of s, ms, us
    """
    for name in options:
        if name not in OPTION_NAMES:
            raise UnknownOptionError(name, OPTION_NAMES)
    given = {o.name: options.get(o.name, o.default) for o in OPTION_TABLE}
    if isinstance(given["policy"], str):  # (a plug-in registered since is a choice too)
        given["policy"] = policy_named(given["policy"])
    for o in OPTION_TABLE:
        _check_choice(o, given[o.name])
    policy: EvolutionPolicy = given["policy"]
    percent = given["rare_type_percent"] = checked_rare_type_percent(given["rare_type_percent"])
    if percent is not None and not policy.takes_rare_type_threshold:
        takers = [p for p in POLICIES if p.takes_rare_type_threshold]
        raise ValueError(
            f"rare_type_percent={percent:g} is an option of "
            f"{' or '.join(f'{p.title} (policy={p.name!r})' for p in takers)}, "
            f"not of policy={policy.name!r}; leave it out"
        )
    given["hints"] = parse_hints(given["hints"])
    if isinstance(given["lattice"], str):
        given["lattice"] = LATTICES[given["lattice"]]
    if given["contracts"] is not None:  # None: what the table keeps (an empty one: none)
        given["contracts"] = Contracts.of(given["contracts"])
    return Options(**given)


def obeyed(options: Options, properties: Mapping[str, str] | None) -> Options:
    """The options a batch of a table runs under: the field contracts and the hints the
    table keeps (its ``properties``; None for a table not created yet) hold when none are
    given; given ones replace them, for this batch and every later one (docs/rules.md,
    Contracts, Type hints).

    >>> from toolkit.core.batch.hints import hints_property, parse_hints
    >>> kept = hints_property(parse_hints({"ts": "timestamp"}))
    >>> [h.field for h in obeyed(Options(), kept).hints]
    ['ts']
    >>> [h.field for h in obeyed(Options(hints=parse_hints({"p": "long"})), kept).hints]
    ['p']
    """
    if options.contracts is None:
        contracts = Contracts() if properties is None else Contracts.of_table(properties)
        options = replace(options, contracts=contracts)
    if options.hints or properties is None:
        return options
    kept = hints_from_property(properties)
    return replace(options, hints=kept) if kept else options
