"""Evolution policies as plug-ins: one module each, one registry line each.

Each policy is one module of this package declaring an :class:`EvolutionPolicy` (its name,
words, RULES section and capabilities; its plan and routing), registered by one line of
:data:`POLICIES`. ``Options.policy`` holds the object (a name given at the boundary,
``policy="widen"``, is looked up here once, by :func:`policy_named`); everything else asks
the object what it can do, never its name.

>>> [(p.name, p.sets_aside, p.jvm_routes, p.widens) for p in POLICIES]
[('upsolver', False, True, False), ('widen', True, False, True)]
>>> policy_named("widen") is WIDEN, WIDEN.title
(True, 'the widen policy')

Adding a policy: a module here with a frozen subclass of :class:`EvolutionPolicy` and its
instance, its line in :data:`POLICIES`, and a test module (README, *Adding a policy*).
"""

from __future__ import annotations

from collections.abc import Iterable

from toolkit.core.evolution.reasons import read_reason
from toolkit.core.policies.base import Columns, ComparisonRun, EvolutionPolicy
from toolkit.core.policies.upsolver import UPSOLVER, UpsolverPolicy
from toolkit.core.policies.widen import WIDEN, WidenPolicy

__all__ = [
    "DEFAULT_POLICY",
    "POLICIES",
    "UPSOLVER",
    "WIDEN",
    "Columns",
    "ComparisonRun",
    "EvolutionPolicy",
    "UpsolverPolicy",
    "WidenPolicy",
    "decided_by_text",
    "policy_named",
    "policy_names",
    "policy_of_reasons",
    "register",
]

#: every policy, in the order texts list them: the registry, one line each
POLICIES: list[EvolutionPolicy] = [
    UPSOLVER,
    WIDEN,
]

#: the policy ``Options`` hold unless told otherwise
DEFAULT_POLICY = UPSOLVER


def register(policy: EvolutionPolicy) -> EvolutionPolicy:
    """Add ``policy`` to :data:`POLICIES` (a plug-in defined outside this package, e.g. by
    a test); a name already taken is refused."""
    if policy.name in policy_names():
        raise ValueError(f"a policy named {policy.name!r} is registered already")
    POLICIES.append(policy)
    return policy


def policy_names() -> tuple[str, ...]:
    """The names ``policy=`` takes, in order.

    >>> policy_names()
    ('upsolver', 'widen')
    """
    return tuple(p.name for p in POLICIES)


def policy_named(name: str) -> EvolutionPolicy:
    """The policy of a name ``policy=`` takes (the one place a name is looked up).

    >>> policy_named("upsolver") is UPSOLVER
    True
    """
    for p in POLICIES:
        if p.name == name:
            return p
    raise ValueError(f"unknown policy {name!r}; choose one of {', '.join(policy_names())}")


def policy_of_reasons(reasons: Iterable[str | None]) -> str:
    """Which policy's rule decided a plan, read from its changes' reasons: the rule of the
    first policy other than the default whose section a reason is of, else the default's.

    >>> policy_of_reasons(["RULES 5: old", None]), policy_of_reasons([])
    ('RULES 5', 'RULES 3')
    """
    others = {p.rule: p for p in POLICIES if p != DEFAULT_POLICY}
    for r in reasons:
        section = None if r is None else read_reason(r).section
        rule = None if section is None else f"RULES {section.split('.')[0]}"
        if rule in others:
            return others[rule].rule
    return DEFAULT_POLICY.rule


def decided_by_text(decided_by: str) -> str:
    """Who decided a logged plan, in words: a policy by its name and its rule (``the widen
    policy (RULES 5)``); anyone else (``user``, a job's name) as logged.

    >>> decided_by_text(UPSOLVER.rule), decided_by_text("user")
    ('the upsolver policy (RULES 3)', 'user')
    """
    for p in POLICIES:
        if p.rule == decided_by:
            return f"{p.title} ({decided_by})"
    return decided_by
