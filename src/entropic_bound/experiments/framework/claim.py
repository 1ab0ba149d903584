"""A claim as its experiment declares it, in the experiment's ``claims.py``: one :class:`Claim` each.

A claim is its criterion (``decide``), the one line the report prints from its evidence
(``sentence``) and its robustness grid (``default_setting`` and ``grid``: the settings under which
the same criterion is decided again). Every criterion has one signature::

    def decide(cfg, rows: pd.DataFrame, context: ClaimContext) -> Verdict

``rows`` are the experiment's rows that did not diverge (as :meth:`Experiment.prepare` gave them);
``context`` carries the store's records and the derived tables the experiment computed once.
:meth:`Claim.judge` (run by :meth:`Experiment.analyse` for every declared claim) decides the claim at the
default and at every setting of its grid and attaches the ``robustness`` entry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import pandas as pd

from .claim_slices import Setting, boundary, most_settings_wording
from .verdict import ClaimContext, Verdict


class Formats(Protocol):
    """The report's number styles, handed to a claim's sentence function (the report owns them)."""

    def number(self, value: Any, digits: int = 3) -> str: ...

    def pct(self, value: Any) -> str: ...

    def fill(self, template: str, evidence: dict) -> str: ...


Decide = Callable[[Any, pd.DataFrame, ClaimContext], Verdict]
Grid = Callable[[Any, pd.DataFrame, ClaimContext], list[Setting]]
Sentence = str | Callable[[dict, Formats], str]
HoldsWhen = Callable[[list[tuple[dict, Verdict]]], str | None]


def no_grid(cfg: Any, rows: pd.DataFrame, context: ClaimContext) -> list[Setting]:
    return []


@dataclass(frozen=True)
class Claim:
    """One claim: ``id`` (``"C1"``), its criterion, its report sentence and its robustness grid.

    ``sentence`` is a template over the evidence's top-level keys (``{key:n}`` a number, ``{key:n4}`` to 4
    digits, ``{key:pct}`` a percentage) or a function ``(evidence, formats) -> str`` for nested evidence.
    ``default_setting(cfg)`` names the setting of the main verdict; ``grid(cfg, rows, context)`` lists
    the other settings; ``statistic`` is the evidence key each setting reports; ``holds_when`` words the
    region where the claim holds from every ``(setting, verdict)`` (None: the boundary lists the
    confirmed settings, ``summarise_boundary``'s own wording); ``annotate`` adds evidence to the
    main verdict only (numbers that summarise several settings at once).
    """

    id: str
    decide: Decide
    sentence: Sentence
    default_setting: Callable[[Any], dict]
    statistic: str | None
    grid: Grid = no_grid
    holds_when: HoldsWhen | None = most_settings_wording
    annotate: Callable[[Any, pd.DataFrame, ClaimContext, Verdict], Verdict] | None = None

    def judge(self, cfg: Any, rows: pd.DataFrame, context: ClaimContext) -> Verdict:
        """The claim decided on ``rows`` at the default, with its ``robustness`` entry over its grid."""
        main = self.decide(cfg, rows, context)
        others = [(s.setting, self.decide(s.cfg, s.rows, context)) for s in self.grid(cfg, rows, context)]
        if self.annotate is not None:
            main = self.annotate(cfg, rows, context, main)
        default = (self.default_setting(cfg), main)
        wording = self.holds_when([default, *others]) if self.holds_when is not None else None
        return boundary(default, others, self.statistic, wording)


def needs_rows(claim: str, experiment: str, decide_on_rows: Decide) -> Decide:
    """``decide_on_rows`` where there are rows; "inconclusive: no runs" on an empty store (for a
    criterion whose tables need columns an empty store does not have)."""

    def decide(cfg: Any, rows: pd.DataFrame, context: ClaimContext) -> Verdict:
        if not len(rows):
            return Verdict(claim, "inconclusive", "no runs", {}, experiment)
        return decide_on_rows(cfg, rows, context)

    return decide


__all__ = [
    "Claim",
    "ClaimContext",
    "Formats",
    "Setting",
    "most_settings_wording",
    "needs_rows",
    "no_grid",
]
