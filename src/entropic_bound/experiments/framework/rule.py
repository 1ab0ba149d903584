"""What a claim's interval is taken over and how it is decided, as data a program can read.

Every :class:`~.claim.Claim` declares its **unit** (the independent unit its interval resamples or
counts: a teacher draw, a run, a student seed, a model, a corpus, with the row columns that name
one) and its **rule** (the config keys of the bars it is held to and the interval method). A power
calculation, a report or a reviewer reads them from the declaration, never from the criterion's text.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Interval(str, Enum):
    """How the 95 % interval of a claim's statistic is taken over its unit."""

    BOOTSTRAP = "bootstrap"  # percentile bootstrap, units resampled with replacement
    CLUSTER_BOOTSTRAP = "cluster_bootstrap"  # nested bootstrap (sources, then models, then heads)
    WILSON = "wilson"  # Wilson score interval of a share of units
    NEWCOMBE = "newcombe"  # Newcombe's interval of the difference of two shares
    ORDER_STATISTIC = "order_statistic"  # exact distribution-free interval of a median
    SPEARMAN = "spearman"  # Spearman rho: Fisher z with the exact permutation test, bootstrap from 10 points
    COUNT = "count"  # a count rule: every unit must pass, the worst decides, no sampling interval
    POINT = "point"  # the statistic itself against its bar, no sampling interval (a control's median)


@dataclass(frozen=True)
class Unit:
    """The independent unit of a claim: its name as the evidence states it (``"teacher draw"``), the
    row columns whose values together name one unit (empty where a unit is one row, or a whole model)
    and what adds more of them: ``"draws"`` where every draw brings fresh units of the same kind (its
    rows are pooled with the other draws'), else the config key whose value scales their number
    (``"corpora"``), or None where nothing a command sets adds any.

    Rows of several draws are decided together, so ``keys`` name a unit across draws: include
    ``"draw"`` unless a key is already unique across them (a run id)."""

    name: str
    keys: tuple[str, ...] = ()
    added_by: str | None = "draws"


@dataclass(frozen=True)
class Condition:
    """A further condition of a rule, decided its own way: its bars (dotted config keys), its
    interval method and, where it differs from the claim's, its unit."""

    thresholds: tuple[str, ...]
    interval: Interval
    unit: Unit | None = None


@dataclass(frozen=True)
class Rule:
    """How a claim is decided: the dotted config keys of the bars its main statistic is held to
    (``("verdict.c1_low", "verdict.c1_high")``; empty where the bar is fixed, as rho against 0), the
    interval method over the claim's unit, and any further conditions (a floor, a control, a gate)."""

    thresholds: tuple[str, ...]
    interval: Interval
    conditions: tuple[Condition, ...] = ()
