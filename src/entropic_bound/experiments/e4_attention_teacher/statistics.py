"""The numbers E4's claims read: C5's shares of teacher draws per teacher kind (Wilson), the runs above
the floor split by the convergence rule, and C6's softmax/linear ratio per logit scale (an exact
order-statistic interval over teacher pairs, one per teacher draw) with the boundary located at r*.

Every statistic has one boundary, the same bar for confirming and refuting: C5's shares against
``c5_rate`` with ``eps_floor`` splitting "reached the floor" from "did not" on both sides of r*;
C6's ratio against ``c6_factor`` and its boundary shares against ``c6_boundary_share``."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...stats.interval_decision import IntervalDecision, decide_by_interval
from ...stats.unit_intervals import all_of, unit_share_decision
from ..framework.rule import Unit
from .analysis import median_interval, paired_ratios, transition_table, unit_ratios

#: A teacher draw: the runs of one (teacher kind, r*, spectrum, c, seed) of one draw share the teacher
#: (both V settings and every student rank).
TEACHER = ("teacher", "task.r_star", "task.spectrum", "task.c", "seed", "draw")
TEACHER_DRAW = Unit("teacher draw", TEACHER)
#: A teacher pair: the linear and the softmax teacher on the same (K*, V*, X), both V settings.
TEACHER_PAIR = Unit("teacher pair", tuple(k for k in TEACHER if k != "teacher"))


def present(rows: pd.DataFrame, keys) -> list[str]:
    """The unit's keys that ``rows`` carry (rows read outside a pooled decision have no ``draw``: one draw)."""
    return [k for k in keys if k in rows.columns]


def unfinished(g: pd.DataFrame) -> pd.Series:
    """Runs not shown converged (still improving, or no stored curve to test): they cannot refute."""
    return g["converged"].fillna(0.0) < 0.5 if "converged" in g else pd.Series(True, index=g.index)


def floor_misses(cfg, above: pd.DataFrame) -> dict:
    """Runs with r >= r* above ``eps_floor``, split by the convergence rule (``converged`` per run)."""
    miss = above[above["rel_excess"] >= cfg.verdict.eps_floor]
    improving = unfinished(miss)
    conv = miss["converged"] if "converged" in miss else pd.Series(np.nan, index=miss.index)
    return {
        "converged_above_floor": int((~improving).sum()),
        "still_improving": int(improving.sum()),
        "above_floor_runs": {
            str(r.run_id): {"rel_excess": float(r.rel_excess), "converged": None if np.isnan(c) else bool(c)}
            for r, c in zip(miss.itertuples(), conv)
        }
        if "run_id" in miss
        else {},
    }


def c5_summary(cfg, rows: pd.DataFrame) -> dict:
    """Per teacher: fractions of runs with r < r* staying above ``eps_floor`` (and, reported only, above
    ``c5_margin·eps_floor``) and with r >= r* below it; the r >= r* runs above the floor with their
    convergence."""
    out = {}
    eps = cfg.verdict.eps_floor
    for kind, g in rows.groupby("teacher"):
        below, above = g[g["rank"] < g["task.r_star"]], g[g["rank"] >= g["task.r_star"]]
        misses = floor_misses(cfg, above)
        reach = float((above["rel_excess"] < eps).mean()) if len(above) else None
        out[kind] = {
            "runs_below": int(len(below)),
            "runs_at_or_above": int(len(above)),
            "frac_below_above_floor": float((below["rel_excess"] >= eps).mean()) if len(below) else None,
            "frac_below_clearly_above_floor": float(
                (below["rel_excess"] >= cfg.verdict.c5_margin * eps).mean()
            )
            if len(below)
            else None,
            "frac_at_or_above_reaching_floor": reach,
            # the most the r >= r* runs could reach if every unfinished one went on to the floor
            "frac_at_or_above_reaching_floor_if_finished": None
            if reach is None
            else reach + misses["still_improving"] / len(above),
            "min_rel_excess_below": float(below["rel_excess"].min()) if len(below) else None,
            "max_rel_excess_at_or_above": float(above["rel_excess"].max()) if len(above) else None,
            **misses,
        }
    return out


def share(rows: pd.DataFrame, flag: pd.Series, bar: float, unit=TEACHER_DRAW) -> IntervalDecision:
    """The share of ``flag`` over ``unit``'s units of ``rows`` against ``bar`` (one boundary)."""
    return unit_share_decision(rows, flag, present(rows, unit.keys), bar, unit=unit.name)


def c5_decisions(cfg, rows: pd.DataFrame) -> dict[str, dict[str, IntervalDecision]]:
    """Per teacher kind, the shares of C5 over teacher draws (Wilson, :func:`unit_share_decision`), each
    against c5_rate: ``deficient`` (r < r* staying above eps_floor) confirms above the rate and refutes
    below it; ``reaching_floor`` (r >= r*) confirms, ``reaching_floor_if_finished`` (r >= r*, unfinished
    counted as reaching) refutes (a run still improving is no evidence that it cannot reach the floor)."""
    rate, eps = cfg.verdict.c5_rate, cfg.verdict.eps_floor
    out = {}
    for kind, g in rows.groupby("teacher"):
        below, above = g[g["rank"] < g["task.r_star"]], g[g["rank"] >= g["task.r_star"]]
        reach = above["rel_excess"] < eps
        out[str(kind)] = {
            "deficient": share(below, below["rel_excess"] >= eps, rate),
            "reaching_floor": share(above, reach, rate),
            "reaching_floor_if_finished": share(above, reach | unfinished(above), rate),
        }
    return out


#: Why a refuting share refutes C5, in words.
C5_REFUTED_BECAUSE = {
    "deficient": "rank-deficient students reach the floor",
    "reaching_floor_if_finished": "students with r >= r* stopped improving above the floor",
}


def c5_decision(decisions: dict[str, dict[str, IntervalDecision]]) -> tuple[str, str, str]:
    """``(verdict, reason, decisive condition)``: confirmed when every teacher's ``deficient`` and
    ``reaching_floor`` shares clear c5_rate, refuted when ``deficient`` or ``reaching_floor_if_finished``
    lies below it, else inconclusive with the reason."""
    flat = {f"{k}/{name}": d for k, ds in decisions.items() for name, d in ds.items()}
    confirming = {k: d for k, d in flat.items() if k.endswith(("/deficient", "/reaching_floor"))}
    refuting = {k: d for k, d in flat.items() if k.endswith(("/deficient", "/reaching_floor_if_finished"))}
    refuted = [k for k, d in refuting.items() if d.outcome is False]
    if refuted:
        key = min(refuted, key=lambda k: refuting[k].margin)
        return "refuted", C5_REFUTED_BECAUSE[key.split("/", 1)[1]], key
    outcome, key = all_of(confirming)
    if outcome:
        return "confirmed", "", key
    if key.endswith("/reaching_floor") and confirming[key].interval[1] <= confirming[key].threshold:
        return (
            "inconclusive",
            (
                "runs with r >= r* above the floor are still improving (convergence rule): train longer before "
                "reading 'did not reach the floor'"
            ),
            key,
        )
    d = confirming[key]
    return (
        "inconclusive",
        f"the Wilson interval of {key} over {d.units} teacher draws straddles c5_rate: too few teacher draws",
        key,
    )


def boundary_shares(cfg, rows: pd.DataFrame) -> tuple[float, bool | None, dict[str, IntervalDecision]]:
    """Where the softmax teacher's transition sits: the share of its teacher draws reaching eps_floor at
    r = r* and the share staying above it at r = r*-1, each against c6_boundary_share. The boundary is
    kept (True) when both clear it, lost (False) when either lies below it (at r* even counting every
    unfinished run as reaching), else undecided (None). Returns the share at r*, the state, the decisions."""
    soft = rows[rows["teacher"] == "softmax"]
    at, below = soft[soft["rank"] == soft["task.r_star"]], soft[soft["rank"] == soft["task.r_star"] - 1]
    if not len(at):
        return float("nan"), None, {}
    bar, eps = cfg.verdict.c6_boundary_share, cfg.verdict.eps_floor
    reach = at["rel_excess"] < eps
    decisions = {
        "boundary_kept": share(at, reach, bar),
        "boundary_if_finished": share(at, reach | unfinished(at), bar),
    }
    if len(below):
        decisions["deficient_below"] = share(below, below["rel_excess"] >= eps, bar)
    holding = [decisions[k] for k in ("boundary_kept", "deficient_below") if k in decisions]
    failing = [decisions[k] for k in ("boundary_if_finished", "deficient_below") if k in decisions]
    lost = any(d.outcome is False for d in failing)
    state = False if lost else (True if all(d.outcome is True for d in holding) else None)
    return float(reach.mean()), state, decisions


def c6_at(cfg, rows: pd.DataFrame, norm: str) -> dict:
    """C6 at one logit scale (``rows`` at that c): the median softmax/linear ratio over teacher pairs with
    its order-statistic interval, compressed iff the interval lies <= c6_factor, not iff it lies at or
    above, and the boundary; confirmed iff compressed and kept, refuted iff not compressed or lost."""
    pairs = paired_ratios(transition_table(rows))
    reach, kept, boundary = boundary_shares(cfg, rows)
    out = {"softmax_frac_reaching_floor_at_r_star": reach, "boundary_kept": kept}
    if not len(pairs):
        return {**out, "pairs": 0, "compressed": None, "verdict": "inconclusive"}
    ratios = unit_ratios(pairs, norm)
    out["pairs"] = int(len(ratios))
    lo, hi, coverage = median_interval(ratios)
    median = float(ratios.median())
    ratio = decide_by_interval(
        median,
        (lo, hi),
        cfg.verdict.c6_factor,
        higher_is_better=False,
        unit=TEACHER_PAIR.name,
        units=len(ratios),
    )
    compressed = ratio.outcome
    if len(ratios) < cfg.verdict.c6_min_pairs:  # one pair is one teacher draw: not a median
        compressed = None
        out["reason"] = f"{len(ratios)} teacher pair(s) < c6_min_pairs = {cfg.verdict.c6_min_pairs}"
    verdict = (
        "refuted" if False in (compressed, kept) else ("confirmed" if compressed and kept else "inconclusive")
    )
    decisions = {"compressed": ratio, **boundary}
    decisive = c6_decisive(decisions, compressed, kept)
    if verdict == "inconclusive" and "reason" not in out:
        out["reason"] = f"the interval of {decisive} straddles its boundary: too few teacher pairs"
    return {
        **out,
        "median": median,
        "interval": [round(lo, 4), round(hi, 4)],
        "coverage": round(coverage, 4),
        "compressed": compressed,
        "verdict": verdict,
        "decision": {"condition": decisive, **decisions[decisive].to_dict()},
        "decisions": {k: d.to_dict() for k, d in decisions.items()},
    }


def c6_decisive(decisions: dict[str, IntervalDecision], compressed, kept) -> str:
    """The condition that decides C6 at one c: a failing one if any, else the holding one with the
    smallest margin."""
    if compressed is False:
        return "compressed"
    if kept is False:
        failing = [k for k in ("boundary_if_finished", "deficient_below") if k in decisions]
        return next(k for k in failing if decisions[k].outcome is False)
    holding = [k for k in ("compressed", "boundary_kept", "deficient_below") if k in decisions]
    return min(holding, key=lambda k: decisions[k].margin)


def c6_map(cfg, rows: pd.DataFrame) -> dict[str, dict[float, dict]]:
    """``{normalisation: {c: c6_at}}`` over every logit scale of the rows."""
    cs = sorted(float(x) for x in rows["task.c"].unique())
    return {
        norm: {x: c6_at(cfg, rows[np.isclose(rows["task.c"], x)], norm) for x in cs}
        for norm in ("k0", "signal")
    }
