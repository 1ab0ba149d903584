"""A claim as its experiment declares it, in the experiment's ``claims.py``: one :class:`Claim` each.

A claim declares, once, its identity — ``id``, ``experiment``, the ``statement`` it makes (one
wording whatever the outcome), its ``unit`` and its decision ``rule`` (:mod:`.rule`) — beside its
criterion (``decide``), the one line the report prints from its evidence (``sentence``) and its
robustness grid (``default_setting`` and ``grid``: the settings under which the same criterion is
decided again). Every criterion has one signature and returns only what it decided::

    def decide(cfg, rows: pd.DataFrame, context: ClaimContext) -> Finding

``rows`` are the experiment's rows that did not diverge (as :meth:`Experiment.prepare` gave them);
``context`` carries the store's records and the derived tables the experiment computed once.
:meth:`Claim.judge` (run by :meth:`Experiment.analyse` for every declared claim) decides the claim at the
default and at every setting of its grid and builds the claim's :class:`Verdict`
(:meth:`Claim.verdict`, the one place a verdict is made from a finding).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import pandas as pd

from .claim_slices import Setting, most_settings_wording, robustness_entry
from .rule import Condition, Interval, Rule, Unit
from .verdict import ClaimContext, Finding, Verdict


class Formats(Protocol):
    """The report's number styles, handed to a claim's sentence function (the report owns them)."""

    def number(self, value: Any, digits: int = 3) -> str: ...

    def pct(self, value: Any) -> str: ...

    def fill(self, template: str, evidence: dict) -> str: ...


Decide = Callable[[Any, pd.DataFrame, ClaimContext], Finding]
Grid = Callable[[Any, pd.DataFrame, ClaimContext], list[Setting]]
Sentence = str | Callable[[dict, Formats], str]
HoldsWhen = Callable[[list[tuple[dict, Finding]]], str | None]


def no_grid(cfg: Any, rows: pd.DataFrame, context: ClaimContext) -> list[Setting]:
    return []


@dataclass(frozen=True, kw_only=True)
class Claim:
    """One claim: its identity (``id`` ``"C1"``, ``experiment`` ``"E1"``, ``statement``, ``unit``,
    ``rule``), its criterion, its report sentence and its robustness grid.

    ``sentence`` is a template over the evidence's top-level keys (``{key:n}`` a number, ``{key:n4}`` to 4
    digits, ``{key:pct}`` a percentage) or a function ``(evidence, formats) -> str`` for nested evidence.
    ``default_setting(cfg)`` names the setting of the main verdict; ``grid(cfg, rows, context)`` lists
    the other settings; ``statistic`` is the evidence key each setting reports; ``holds_when`` words the
    region where the claim holds from every ``(setting, finding)`` (None: the boundary lists the
    confirmed settings, ``summarise_boundary``'s own wording); ``annotate`` adds evidence to the
    main finding only (numbers that summarise several settings at once).
    """

    id: str
    experiment: str
    statement: str
    unit: Unit
    rule: Rule
    decide: Decide
    sentence: Sentence
    default_setting: Callable[[Any], dict]
    statistic: str | None
    grid: Grid = no_grid
    holds_when: HoldsWhen | None = most_settings_wording
    annotate: Callable[[Any, pd.DataFrame, ClaimContext, Finding], Finding] | None = None

    def judge(self, cfg: Any, rows: pd.DataFrame, context: ClaimContext) -> Verdict:
        """The claim decided on ``rows`` at the default, with its ``robustness`` entry over its grid."""
        main = self._decide(cfg, rows, context)
        others = [(s.setting, self._decide(s.cfg, s.rows, context)) for s in self.grid(cfg, rows, context)]
        if self.annotate is not None:
            main = self.annotate(cfg, rows, context, main)
        default = (self.default_setting(cfg), main)
        wording = self.holds_when([default, *others]) if self.holds_when is not None else None
        return self.verdict(main, robustness_entry(default, others, self.statistic, wording))

    def verdict(self, finding: Finding, robustness: dict | None = None) -> Verdict:
        """``finding`` as this claim's verdict: the one place a :class:`Verdict` is built, so its id,
        experiment and statement are always the declared ones."""
        finding = self._checked(finding)
        return Verdict(
            self.id,
            finding.outcome,
            finding.criterion,
            finding.evidence,
            self.experiment,
            self.statement,
            robustness=robustness,
        )

    def _decide(self, cfg: Any, rows: pd.DataFrame, context: ClaimContext) -> Finding:
        return self._checked(self.decide(cfg, rows, context))

    def _checked(self, finding: Any) -> Finding:
        # a criterion names no claim: only a Finding (outcome, criterion, evidence) is accepted
        if not isinstance(finding, Finding):
            raise TypeError(f"{self.id}'s criterion must return a Finding, not {type(finding).__name__}")
        return finding


def needs_rows(decide_on_rows: Decide) -> Decide:
    """``decide_on_rows`` where there are rows; "inconclusive: no runs" on an empty store (for a
    criterion whose tables need columns an empty store does not have)."""

    def decide(cfg: Any, rows: pd.DataFrame, context: ClaimContext) -> Finding:
        if not len(rows):
            return Finding("inconclusive", "no runs", {})
        return decide_on_rows(cfg, rows, context)

    return decide


__all__ = [
    "Claim",
    "ClaimContext",
    "Condition",
    "Finding",
    "Formats",
    "Interval",
    "Rule",
    "Setting",
    "Unit",
    "most_settings_wording",
    "needs_rows",
    "no_grid",
]
