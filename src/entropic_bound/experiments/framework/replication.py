"""Replication: an experiment's claims decided on the pooled units of every draw it ran, with the
draws' agreement checked and the power to decide stated.

A draw re-draws every seed (teacher, data, init, corpus windows), so for a claim whose unit a draw
adds (:attr:`~.rule.Unit.added_by` ``"draws"``) it brings more units of the same kind, not a
different experiment. Each claim is therefore decided once on the rows of all draws together
(:meth:`~.decision.Decision.analyse` with ``draws``); every draw is also decided on its own rows, and
the draws' statistics are tested for heterogeneity (Cochran's Q, :mod:`...stats.pooling`). Only a
significant disagreement in direction makes a decided claim inconclusive ("draws disagree"): Q is
significant and some draw's own statistic lies on the other side of the bar the pooled verdict
cleared. Draws that differ in size but all point the same way leave the verdict standing, their Q
reported. The tables, figures
and notes come from the first draw.

Every verdict carries ``replication = {"draws", "verdicts", "agree", "decisions", "pooled",
"heterogeneity"}`` — each draw's verdict and decision record, the pooled statistic, interval and units,
and the test — ``evidence["power"]`` (:mod:`.claim_power`) and ``cpu_seconds``, the summed seconds of the
runs it was decided on (every draw's; the claims of one experiment share them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import pandas as pd

from ...stats.pooling import cochran_q
from .claim_power import claim_power
from .draws import Seeds
from .rule import Interval
from .verdict import Analysis, Verdict

DISAGREE = "draws disagree"

#: rules whose statistic has no sampling interval: their draws are not compared by Cochran's Q
_NO_INTERVAL = (Interval.COUNT, Interval.POINT)


def heterogeneity(claim, per_draw: Sequence[Verdict]) -> dict | None:
    """Cochran's Q over the draws' decision records (None: one draw, or a rule without an interval)."""
    if len(per_draw) < 2 or (claim is not None and claim.rule.interval in _NO_INTERVAL):
        return None
    records = [v.evidence.get("decision") for v in per_draw]
    if not all(isinstance(r, dict) and "interval" in r for r in records):
        return None
    return cochran_q([r["statistic"] for r in records], [r["interval"] for r in records])


def combine(pooled: Verdict, per_draw: Sequence[Verdict], draws: Sequence[int], claim=None) -> Verdict:
    """One claim's verdict: ``pooled`` (decided on every draw's rows), inconclusive where the draws'
    statistics disagree; ``per_draw`` are the verdicts of ``draws`` in the same order."""
    assert len(per_draw) == len(draws) > 0, (len(per_draw), len(draws))
    outcomes = [v.outcome for v in per_draw]
    replication = {
        "draws": [int(d) for d in draws],
        "verdicts": outcomes,
        "agree": len(set(outcomes)) == 1,
        "decisions": [v.evidence.get("decision") for v in per_draw],
        "pooled": _pooled_record(pooled),
        "heterogeneity": heterogeneity(claim, per_draw),
    }
    test = replication["heterogeneity"]
    if not (test and test["disagree"]) or pooled.outcome == "inconclusive" or _same_side(pooled, per_draw):
        return replace(pooled, replication=replication)
    replication["reason"] = DISAGREE
    evidence = {**pooled.evidence, "reason": f"{DISAGREE} (Cochran's Q p = {test['p']:.2g})"}
    if "reason" in pooled.evidence:
        evidence["pooled_reason"] = pooled.evidence["reason"]
    return replace(pooled, outcome="inconclusive", evidence=evidence, replication=replication)


def _same_side(pooled: Verdict, per_draw: Sequence[Verdict]) -> bool:
    """Every draw's statistic lies on the pooled verdict's side of its bar: draws that differ in size
    but not in direction do not put the verdict in doubt (their Q is reported all the same)."""
    decision = pooled.evidence.get("decision") or {}
    bar = decision.get("threshold" if pooled.outcome == "confirmed" else "refute_threshold")
    if bar is None:
        return False
    sign = (1 if decision.get("direction", "higher") == "higher" else -1) * (
        1 if pooled.outcome == "confirmed" else -1
    )
    stats = [(v.evidence.get("decision") or {}).get("statistic") for v in per_draw]
    return all(x is not None and sign * (x - bar) > 0 for x in stats)


def _pooled_record(pooled: Verdict) -> dict:
    decision = pooled.evidence.get("decision")
    record = {"verdict": pooled.outcome}
    if isinstance(decision, dict):
        record.update({k: decision.get(k) for k in ("statistic", "interval", "units", "unit")})
    return record


def analyse_draws(
    exp, table: pd.DataFrame, records: list[dict], draws: Sequence[int], scale: str = "quick"
) -> Analysis:
    """``exp``'s analysis with every claim decided on the pooled rows of ``draws`` (:func:`combine`),
    the first draw's tables, figures and notes, and each claim's ``evidence["power"]``."""
    draws = list(draws) or [exp.draw]
    first_seeds = Seeds(exp.name, draws[0])
    analyses = [exp.analyse(table, records, Seeds(exp.name, d)) for d in draws]
    pooled = exp.analyse(table, records, first_seeds, tuple(draws)) if len(draws) > 1 else analyses[0]
    claims = {c.id: c for c in getattr(exp, "declared_claims", ())}
    rows, _ = exp.select(table, records, first_seeds, tuple(draws))
    cost = {
        "experiment": exp.name,
        "scale": scale,
        "draws": draws,
        "seconds": float(rows["wall_s"].sum()) if "wall_s" in rows else 0.0,
        "cfg": exp.cfg,
    }
    first = analyses[0]
    by_claim = zip(pooled.verdicts, *[a.verdicts for a in analyses], strict=True)
    first.verdicts = [
        _with_power(combine(p, per, draws, claims.get(p.claim)), claims.get(p.claim), cost)
        for p, *per in by_claim
    ]
    if len(draws) > 1:
        first.notes.append(
            f"Verdicts decided on the pooled runs of draws {', '.join(map(str, draws))}; "
            f"tables and figures show draw {draws[0]}."
        )
    return first


def _with_power(verdict: Verdict, claim, cost: Mapping) -> Verdict:
    if claim is None:
        return verdict
    power = claim_power(verdict.evidence.get("decision"), claim.rule, claim.unit, dict(cost))
    evidence = {**verdict.evidence, "power": power}
    return replace(verdict, evidence=evidence, cpu_seconds=cost["seconds"])
