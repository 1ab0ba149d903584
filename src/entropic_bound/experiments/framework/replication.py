"""Replication: an experiment's claims decided on every draw it ran, and combined in one place.

Each draw (:mod:`.draws`) is analysed on its own rows — the run ids of its own grid — with the same
criteria (:meth:`~.decision.Decision.analyse`). A claim is confirmed or refuted only when every draw
gives that verdict; when the draws disagree it is inconclusive, with the reason "draws disagree"
and each draw's verdict. The tables, figures, notes and the evidence shown come from the first draw.
Every verdict carries ``replication = {"draws", "verdicts", "agree"}``, also with a single draw, and
``decisions``, each draw's ``evidence.decision`` (statistic, interval, threshold, margin) where the
claim has one, so a reader sees how far every draw is from its bar, not only the first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pandas as pd

from .draws import Seeds
from .verdict import Analysis, Verdict

DISAGREE = "draws disagree"


def combine(per_draw: Sequence[Verdict], draws: Sequence[int]) -> Verdict:
    """One claim's verdict from its verdicts on ``draws`` (in the same order; the first draw's
    criterion and evidence are kept)."""
    assert len(per_draw) == len(draws) > 0, (len(per_draw), len(draws))
    outcomes = [v.outcome for v in per_draw]
    agree = len(set(outcomes)) == 1
    replication = {"draws": [int(d) for d in draws], "verdicts": outcomes, "agree": agree}
    decisions = [v.evidence.get("decision") for v in per_draw]
    if any(d is not None for d in decisions):
        replication["decisions"] = decisions
    first = per_draw[0]
    if agree:
        return replace(first, replication=replication)
    replication["reason"] = DISAGREE
    evidence = {**first.evidence, "reason": DISAGREE}
    if "reason" in first.evidence:
        evidence["first_draw_reason"] = first.evidence["reason"]
    return replace(first, outcome="inconclusive", evidence=evidence, replication=replication)


def combine_all(per_draw: Sequence[Sequence[Verdict]], draws: Sequence[int]) -> list[Verdict]:
    """Every claim's combined verdict; ``per_draw[k]`` are draw ``draws[k]``'s verdicts in claim order."""
    by_claim = list(zip(*per_draw, strict=True))
    for verdicts in by_claim:
        assert len({v.claim for v in verdicts}) == 1, [v.claim for v in verdicts]
    return [combine(verdicts, draws) for verdicts in by_claim]


def analyse_draws(exp, table: pd.DataFrame, records: list[dict], draws: Sequence[int]) -> Analysis:
    """``exp``'s analysis with every draw of ``draws`` decided on its own rows: the first draw's
    tables, figures and notes, and every claim's verdict combined over the draws (:func:`combine`)."""
    draws = list(draws) or [exp.draw]
    analyses = [exp.analyse(table, records, Seeds(exp.name, d)) for d in draws]
    first = analyses[0]
    first.verdicts = combine_all([a.verdicts for a in analyses], draws)
    if len(draws) > 1:
        first.notes.append(
            f"Verdicts combined over draws {', '.join(map(str, draws))}; tables and figures show draw {draws[0]}."
        )
    return first
