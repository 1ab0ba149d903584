"""C11 and C12 decided by their intervals on one domain of corpora, the other domains reported beside.

The paper's Appendix B speaks of language models trained on natural-language corpora, so the
natural corpora decide (``verdict.c11_kinds`` / ``verdict.c12_kinds``, default ``natural``); code
and the synthetic sources are decided by the same rule as side results (``evidence["domain"]``),
never counted into the verdict.

- **C11** ("the kernel rank anti-correlates with complexity"): Spearman ρ over corpora, bar 0.
  Confirmed when the interval lies below 0, refuted when it lies above; below 10 corpora the
  interval is the Fisher z interval and the exact permutation test must agree (two-sided
  p < 0.05 on the same side), else inconclusive. An exact test on n corpora cannot reach a
  p-value under 2/n! (4 corpora: 0.083), so a domain with fewer than :func:`corpora_to_decide`
  corpora is inconclusive by construction and says so (``can_decide``, ``corpora_to_decide``).
  The unit is the corpus: a draw re-windows the same texts and re-draws the seeds, so it moves each
  corpus's point but adds no corpus; only more corpora (``task.corpora``) narrow the interval.
- **C12** ("the rank tracks the loss, not complexity"): two halves, each on ``|partial ρ|`` with
  its bootstrap interval over corpora (a corpus's runs share its text, so the corpus is the unit)
  against the same bar ``min_abs_rho`` (what "tracks" means):
  *tracks progress* is confirmed when the whole |ρ| interval is at or above the bar and refuted
  when it is at or below; *not complexity* is confirmed when the |ρ_complexity| interval is at or
  below the bar and refuted when at or above. C12 is confirmed when both halves are, refuted when
  either is, inconclusive otherwise.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...stats.interval_decision import IntervalDecision, decide_by_interval
from ...stats.rank_tests import EXACT_MAX_POINTS
from ..framework.verdict import Finding, decide
from .statistics import cluster_partials, spearman_test

ALPHA = 0.05


def smallest_exact_p(n: int) -> float:
    """The smallest two-sided p-value the exact permutation test reaches on ``n`` untied points."""
    return 2.0 / math.factorial(n) if n >= 2 else 1.0


def corpora_to_decide(alpha: float = ALPHA) -> int:
    """The fewest corpora at which the exact test can reach a two-sided p below ``alpha``."""
    n = 2
    while smallest_exact_p(n) >= alpha:
        n += 1
    return n


def c11_on_corpora(
    corpora: pd.DataFrame, *, criterion_info: dict, n_boot: int, seed: int, min_corpora: int
) -> Finding:
    """C11 from one row per corpus: ``name, kind, seeds, complexity_bits, rank, seed_ranks`` (+ extras)."""
    criterion = (
        f"Spearman rho between the predicted complexity ({criterion_info['measure']}) and the final head-mean "
        f"{criterion_info['estimator']} of the {criterion_info['kernel']} kernel W_Q W_K^T over the "
        f"{'/'.join(criterion_info.get('kinds', ['natural']))} corpora (learned runs only), 95% interval over "
        f"corpora (below 10 corpora the Fisher z interval, and the exact permutation test must agree at "
        f"p < {ALPHA:g}; from 10 on a two-stage bootstrap, {n_boot} resamples of corpora then seeds): "
        f"confirmed if the interval lies below 0, refuted if above, inconclusive otherwise or with fewer "
        f"than {max(min_corpora, corpora_to_decide())} corpora"
    )
    usable = (
        corpora[np.isfinite(corpora["complexity_bits"]) & (corpora["seeds"] > 0)] if len(corpora) else corpora
    )
    n, need = int(len(usable)), max(min_corpora, corpora_to_decide())
    evidence = {"corpora": n, **criterion_info}
    evidence["corpus_table"] = [
        {k: (v if k != "seed_ranks" else list(v)) for k, v in row.items()}
        for row in corpora.to_dict("records")
    ]
    evidence.update(can_decide=n >= need, corpora_to_decide=need)
    nan = float("nan")
    if n < min_corpora or usable["complexity_bits"].nunique() < 3:
        evidence.update(rho=nan, ci_low=nan, ci_high=nan, test="none", p_value=nan, half_width=nan)
        evidence.update(points_needed=None, decision=_c11_decision(nan, nan, nan, n).to_dict())
        evidence["reason"] = _c11_reason(evidence, need)
        return Finding("inconclusive", criterion, evidence)
    test = spearman_test(
        usable["complexity_bits"].to_numpy(float),
        usable["rank"].to_numpy(float),
        seed=seed,
        replicates=list(usable["seed_ranks"]),
        n_boot=n_boot,
        expected_sign=-1,
        alpha=ALPHA,
    )
    keys = ("test", "rho", "p_value", "p_less", "p_greater", "ci_low", "ci_high", "half_width")
    evidence.update({k: test[k] for k in keys})
    decision = _c11_decision(test["rho"], test["ci_low"], test["ci_high"], n)
    ok = decision.outcome
    if test["test"] == "exact_permutation" and ok != test["decision"]:
        ok = None  # at few corpora the Fisher interval is an approximation: the exact test must agree
    if n <= EXACT_MAX_POINTS:
        evidence["smallest_p"] = smallest_exact_p(n)
    evidence["decision"] = {**decision.to_dict(), "test_decision": test["decision"]}
    # how many corpora the measured effect would need (80% power, two-sided 5%) when undecided
    evidence["points_needed"] = test["points_needed"] if ok is None else None
    if ok is None:
        evidence["reason"] = _c11_reason(evidence, need)
    return Finding(decide(ok), criterion, evidence)


def _c11_decision(rho: float, lo: float, hi: float, corpora: int) -> IntervalDecision:
    """ρ against its one boundary, 0: "anti-correlates" names a sign and no size."""
    return decide_by_interval(rho, (lo, hi), 0.0, higher_is_better=False, unit="corpus", units=corpora)


def _c11_reason(e: dict, need: int) -> str:
    """What C11 lacks, in words: corpora, or an effect its corpora can show."""
    n = e["corpora"]
    if n < need:
        return (
            f"{n} corpora: the exact test cannot reach p < {ALPHA:g} below {need}; more natural corpora "
            "(task.corpora, task.corpus_paths) decide it, more draws do not (they re-window the same texts)"
        )
    more = f"; at this rho about {e['points_needed']} corpora would" if e.get("points_needed") else ""
    return (
        f"rho = {e['rho']:.2f} over {n} corpora, interval [{e['ci_low']:.2f}, {e['ci_high']:.2f}] holds 0 "
        f"(exact p = {e['p_value']:.2g}): the sign is not shown{more}; more natural corpora "
        "(task.corpora, task.corpus_paths) decide it, more draws do not (they re-window the same texts)"
    )


def c11_sentence(e: dict, fmt) -> str:
    test = "exact permutation test" if e.get("test") == "exact_permutation" else "bootstrap"
    kinds = "/".join(e.get("kinds") or ["natural"])
    out = (
        f"Spearman ρ(rank, complexity) = {fmt.number(e['rho'])} over {e['corpora']} {kinds} corpora ({test}, "
        f"two-sided p = {fmt.number(e.get('p_value'))}; 95% CI {fmt.number(e['ci_low'])} to "
        f"{fmt.number(e['ci_high'])}, half-width {fmt.number(e.get('half_width'))}; {e['runs_set_aside']} runs "
        "set aside as not learned)"
    )
    if e.get("can_decide") is False:
        out += f"; an exact test on {e['corpora']} corpora cannot decide (it needs {e['corpora_to_decide']})"
    elif e.get("points_needed"):
        out += f"; the measured effect would need about {e['points_needed']} corpora to decide"
    return out


def abs_interval(lo: float, hi: float) -> tuple[float, float]:
    """The interval of ``|ρ|`` implied by an interval ``[lo, hi]`` of ρ."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return (float("nan"), float("nan"))
    if lo <= 0 <= hi:
        return (0.0, max(-lo, hi))
    return tuple(sorted((abs(lo), abs(hi))))


def c12_halves(
    rho: float, interval: tuple, rho_c: float, interval_c: tuple, bar: float, corpora: int | None = None
) -> tuple[IntervalDecision, IntervalDecision, bool | None]:
    """C12's two halves (tracks progress; does not track complexity) and the verdict they give, each
    over ``corpora`` units."""
    unit = {"unit": "corpus", "units": corpora}
    tracks = decide_by_interval(abs(rho), abs_interval(*interval), bar, **unit)
    not_c = decide_by_interval(abs(rho_c), abs_interval(*interval_c), bar, higher_is_better=False, **unit)
    a, b = tracks.outcome, not_c.outcome
    return tracks, not_c, (True if a and b else (False if a is False or b is False else None))


def c12_on_points(
    points: pd.DataFrame, *, controls: list[str], min_abs_rho: float, n_boot: int, seed: int, info: dict
) -> Finding:
    """C12 from pooled checkpoint points: ``run_id, corpus, rank, progress, complexity`` and the controls."""
    bar = f"{min_abs_rho:g}"
    criterion = (
        f"partial Spearman rho of the head-mean {info['estimator']} ({info['kernel']} kernel) with optimisation "
        f"progress (L0 - Lt)/(L0 - Lref) and with complexity, given {' and '.join(controls)}, pooled over the "
        f"learned {'/'.join(info.get('kinds', ['natural']))} runs' checkpoints, 95% bootstrap over corpora (a "
        f"corpus's runs share its text: the corpus is the unit): confirmed if the |rho(progress)| interval is at "
        f"or above {bar} and the |rho(complexity)| interval at or below {bar}; refuted if the |rho(progress)| "
        f"interval is at or below {bar} or the |rho(complexity)| interval at or above {bar} (one boundary, {bar}: "
        "a moderate association, what 'tracks' asks of progress and 'not' denies of complexity); inconclusive "
        f"otherwise or with fewer than {MIN_CLUSTERS} corpora"
    )
    runs = int(points["run_id"].nunique()) if len(points) else 0
    corpora = int(points["corpus"].nunique()) if len(points) else 0
    evidence = {"unit": "corpus", "corpora": corpora, "runs": runs, "points": int(len(points))}
    evidence.update(controls=list(controls), **info)
    nan = float("nan")
    if corpora < MIN_CLUSTERS:
        evidence.update(rho=nan, ci_low=nan, ci_high=nan, rho_complexity=nan, rho_complexity_ci=[nan, nan])
        evidence.update(corpora_needed=MIN_CLUSTERS)
        rho = lo = hi = rc = rc_lo = rc_hi = nan
    else:
        rho, lo, hi = cluster_partials(points, "progress", controls, n_boot, seed)
        rc, rc_lo, rc_hi = cluster_partials(points, "complexity", controls, n_boot, seed + 1)
        evidence.update(rho=rho, ci_low=lo, ci_high=hi, rho_complexity=rc, rho_complexity_ci=[rc_lo, rc_hi])
    tracks, not_c, ok = c12_halves(rho, (lo, hi), rc, (rc_lo, rc_hi), min_abs_rho, corpora)
    evidence["decision"] = tracks.to_dict()
    evidence["decision_not_complexity"] = not_c.to_dict()
    evidence["halves"] = {"tracks_progress": decide(tracks.outcome), "not_complexity": decide(not_c.outcome)}
    if ok is None:
        evidence["reason"] = _c12_reason(evidence, tracks, not_c, min_abs_rho)
    return Finding(decide(ok), criterion, evidence)


#: Fewest corpora C12's interval is taken over (a bootstrap over fewer clusters has nothing to resample).
MIN_CLUSTERS = 3


def _c12_reason(e: dict, tracks: IntervalDecision, not_c: IntervalDecision, bar: float) -> str:
    if e["corpora"] < MIN_CLUSTERS:
        return f"{e['corpora']} corpora with learned runs: the interval over corpora needs {MIN_CLUSTERS}"
    half = "|rho(progress)|" if tracks.outcome is None else "|rho(complexity)|"
    lo, hi = (tracks if tracks.outcome is None else not_c).interval
    return (
        f"the {half} interval [{lo:.2f}, {hi:.2f}] over {e['corpora']} corpora holds the boundary {bar:g}: "
        "more corpora (task.corpora) decide it; a draw re-windows the same texts and adds none"
    )


def c12_sentence(e: dict, fmt) -> str:
    halves = e.get("halves") or {}
    return (
        f"partial ρ(rank, loss | drifting controls) = {fmt.number(e['rho'])} (95% CI {fmt.number(e['ci_low'])} "
        f"to {fmt.number(e['ci_high'])}) over {e['points']} checkpoints of {e['runs']} learned "
        f"{'/'.join(e.get('kinds') or ['natural'])} runs{_of_corpora(e)} ({e['runs_set_aside']} set aside); "
        "ρ(rank, complexity) = "
        f"{fmt.number(e.get('rho_complexity'))}; tracks progress: {halves.get('tracks_progress')}, not "
        f"complexity: {halves.get('not_complexity')}"
    )


def _of_corpora(e: dict) -> str:
    """The words naming the corpora counted (the unit); none for evidence stored before they were."""
    return f" of {e['corpora']} corpora (the unit)" if e.get("corpora") is not None else ""


def side_summary(v: Finding, keys: tuple[str, ...]) -> dict:
    """A side domain's verdict and its numbers (the verdict of the same rule on those corpora)."""
    return {"verdict": v.outcome} | {k: v.evidence.get(k) for k in keys}
