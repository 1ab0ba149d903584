"""One readable line of key evidence per claim, for the report's summary and the terminal table.

Each claim's sentence is declared with the claim, in its experiment's ``claims.py``
(:class:`entropic_bound.experiments.framework.claim.Claim`): a template over the evidence's keys, or a function
of the evidence and the report's number styles (:data:`FORMATS`) where the evidence is nested. A line
that meets evidence of another shape (a key renamed, an inconclusive verdict with only a reason)
raises, and :func:`entropic_bound.report.evidence.evidence_line` falls back to the evidence's own
``summary`` or its first numbers.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from types import SimpleNamespace

from ..experiments import declared_claims
from .format import number


def _pct(x) -> str:
    return "—" if x is None else f"{100 * float(x):.0f}%"


class _EvidenceFormatter(string.Formatter):
    """``str.format`` over an evidence dict with the report's number styles as format specs:
    ``{key:n}`` → :func:`number`, ``{key:n4}`` → :func:`number` to 4 digits, ``{key:pct}`` → a whole
    percentage. A missing key raises ``KeyError``, which sends the caller to its fallback line."""

    def format_field(self, value, format_spec: str) -> str:
        if format_spec == "pct":
            return _pct(value)
        if format_spec == "n" or (format_spec[:1] == "n" and format_spec[1:].isdigit()):
            return number(value, int(format_spec[1:] or 3))
        return super().format_field(value, format_spec)


_FORMATTER = _EvidenceFormatter()


def fill(template: str, evidence: dict) -> str:
    """``template`` with its ``{key:spec}`` fields filled from ``evidence`` (see :class:`_EvidenceFormatter`)."""
    return _FORMATTER.vformat(template, (), evidence)


#: The number styles a claim's sentence function receives (:class:`entropic_bound.experiments.framework.claim.Formats`).
FORMATS = SimpleNamespace(number=number, pct=_pct, fill=fill)


def line_of(sentence) -> Callable[[dict], str]:
    """A claim's declared sentence as a function of its evidence."""
    if isinstance(sentence, str):
        return lambda e: fill(sentence, e)
    return lambda e: sentence(e, FORMATS)


CLAIM_LINES: dict[str, Callable[[dict], str]] = {
    claim.id: line_of(claim.sentence) for claim in declared_claims()
}
