"""Why a policy changes a table, and who decided it, as every face shows it.

A reason is a sentence, then the section of ``spec/RULES.md`` that decided it as a
footnote: ``The first batch had `size` as a list of lists of longs ... (RULES 3.2)``.
It is stored as that very text (in plans, plan files and the lineage), so every face
shows it alike; :func:`because` writes it, and :func:`read_reason` is the one parser that
splits a stored reason into its sentence and section: today's form, and the form older
versions stored (``RULES 3.2: first batch saw long[][][]``), so an old plan file or
lineage entry reads the same way (:func:`reason_text`).

>>> text = because("The first batch had `size` as a long", "3.2")
>>> text
'The first batch had `size` as a long (RULES 3.2)'
>>> read_reason(text)
RuleReason(sentence='The first batch had `size` as a long', section='3.2')
>>> reason_text("RULES 3.2: first batch saw long[][][]")
'first batch saw long[][][] (RULES 3.2)'

A policy's plans are logged as decided by its rule (``EvolutionPolicy.rule``, RULES 3 or
5); :func:`toolkit.core.policies.decided_by_text` names the policy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["RuleReason", "because", "read_reason", "reason_text"]

_SECTION = r"\d+(?:\.\d+)*"
#: today's form: the sentence, then its section as a footnote
_FOOTNOTE = re.compile(rf"(?P<sentence>.*\S) \(RULES (?P<section>{_SECTION})\)", re.DOTALL)
#: the form older versions stored: the section first, then a lower-case phrase
_PREFIXED = re.compile(rf"RULES (?P<section>{_SECTION}): (?P<sentence>.*)", re.DOTALL)


@dataclass(frozen=True)
class RuleReason:
    """A reason read back: its sentence, and the RULES section that decided it (None for
    a reason no rule gave, a user's)."""

    sentence: str
    section: str | None = None

    @property
    def rule(self) -> str | None:
        """``RULES 3.2``."""
        return None if self.section is None else f"RULES {self.section}"

    def __str__(self) -> str:
        return self.sentence if self.section is None else f"{self.sentence} ({self.rule})"


def because(sentence: str, section: str) -> str:
    """The stored reason for ``sentence`` decided by RULES ``section`` (``"3.2"``)."""
    return str(RuleReason(sentence, section))


def read_reason(text: str) -> RuleReason:
    """A stored reason as its sentence and section, in either form (see the module)."""
    found = _FOOTNOTE.fullmatch(text)
    if found is None:
        found = _PREFIXED.fullmatch(text)
        if found is not None:  # an older version's phrase (kept as it is: it may start
            return RuleReason(found["sentence"], found["section"])  # with a field's name)
        return RuleReason(text)
    return RuleReason(found["sentence"], found["section"])


def reason_text(text: str) -> str:
    """A stored reason as today's faces show it: the sentence, then the rule."""
    return str(read_reason(text))
