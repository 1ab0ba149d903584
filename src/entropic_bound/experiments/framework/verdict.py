"""What deciding a claim produces: a criterion's :class:`Finding`, the claim's :class:`Verdict` (the
finding under the claim's declared identity), the :class:`ClaimContext` a criterion reads, and the
:class:`Analysis` the report shows for one experiment.

Verdicts are computed from stored numbers with a stated criterion and can come out refuted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from ...jsonable import json_safe

VERDICTS = ("confirmed", "refuted", "inconclusive")


@dataclass(frozen=True)
class Finding:
    """What a criterion decides: the outcome, the criterion that decided it (with its thresholds) and
    the numbers behind it. Whose claim it is, the claim says (:meth:`~.claim.Claim.verdict`)."""

    outcome: str  # one of VERDICTS
    criterion: str
    evidence: dict

    def __post_init__(self) -> None:
        assert self.outcome in VERDICTS, self.outcome


@dataclass(frozen=True)
class Verdict:
    """The outcome of one claim, with the criterion that decided it and the numbers behind it."""

    claim: str
    outcome: str  # one of VERDICTS
    criterion: str
    evidence: dict
    experiment: str
    statement: str = ""
    robustness: dict | None = None  # see experiments/robustness.py: the claim's boundary
    replication: dict | None = None  # see experiments/replication.py: the verdict of every draw
    # CPU seconds of the runs the claim was decided on (shared by the claims of one experiment)
    cpu_seconds: float | None = None

    def __post_init__(self) -> None:
        assert self.outcome in VERDICTS, self.outcome

    def with_robustness(self, robustness: dict) -> Verdict:
        """This verdict with its boundary (a ``robustness.summarise_boundary`` entry) attached."""
        return replace(self, robustness=robustness)

    def to_dict(self) -> dict:
        """The verdict as ``verdicts.json`` holds it (the outcome under the key ``"verdict"``)."""
        out = {
            "verdict": self.outcome,
            "criterion": self.criterion,
            "evidence": json_safe(self.evidence),
            "experiment": self.experiment,
            "statement": self.statement,
        }
        if self.robustness is not None:
            out["robustness"] = json_safe(self.robustness)
        if self.replication is not None:
            out["replication"] = json_safe(self.replication)
        if self.cpu_seconds is not None:
            out["cpu_seconds"] = round(float(self.cpu_seconds), 3)
        return out


def decide(holds: bool | None) -> str:
    """``True`` → confirmed, ``False`` → refuted, ``None`` (not enough data) → inconclusive."""
    return "inconclusive" if holds is None else ("confirmed" if holds else "refuted")


@dataclass
class Analysis:
    """What the report shows for one experiment."""

    results: pd.DataFrame
    verdicts: list[Verdict]
    figures: dict[str, Any] = field(default_factory=dict)  # name → matplotlib Figure
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)  # extra tables shown in the report
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ClaimContext:
    """What a criterion reads besides the config and the rows: the store's records and the tables
    (or numbers) the experiment derived once from all its rows (:meth:`Decision.prepare`)."""

    records: list[dict] = field(default_factory=list)
    tables: Mapping[str, Any] = field(default_factory=dict)
    seeds: Any = None  # the draw's :class:`~.draws.Seeds` (a verdict's bootstrap, a rule's noise cases)


#: the keys of a verdict (and of its ``evidence["power"]``) that measure time, not the science: a rerun
#: of the same config and draw reproduces every other number of verdicts.json
TIMING_KEYS = ("cpu_seconds", "cpu_s_per_unit", "cpu_s_needed")


def without_timings(verdicts: Any) -> Any:
    """``verdicts`` (verdicts.json, parsed) without :data:`TIMING_KEYS`, at any depth."""
    if isinstance(verdicts, dict):
        return {k: without_timings(v) for k, v in verdicts.items() if k not in TIMING_KEYS}
    if isinstance(verdicts, list):
        return [without_timings(v) for v in verdicts]
    return verdicts
