"""The numbers E4's claims read: C5's shares of teacher draws per teacher kind (Wilson), the runs above
the floor split by the convergence rule, and C6's softmax/linear ratio per logit scale (an exact
order-statistic interval over teacher pairs) with the boundary kept at r = r*."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...stats.interval_decision import IntervalDecision, decide_by_interval
from ...stats.unit_intervals import all_of, unit_share_decision
from ..framework.rule import Unit
from .analysis import PAIR_KEYS, median_interval, paired_ratios, transition_table

#: A teacher draw: the runs of one (teacher kind, r*, spectrum, seed) share the teacher.
TEACHER = ("teacher", "task.r_star", "task.spectrum", "seed")
TEACHER_DRAW = Unit("teacher draw", TEACHER)
#: A teacher pair: the linear and the softmax teacher on the same (K*, V*, X).
TEACHER_PAIR = Unit("teacher pair", tuple(PAIR_KEYS))


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
    """Per teacher: fractions of runs with r < r* above ``c5_margin·eps_floor`` and with r >= r* below
    ``eps_floor``; the r >= r* runs above the floor with their convergence."""
    out = {}
    for kind, g in rows.groupby("teacher"):
        below, above = g[g["rank"] < g["task.r_star"]], g[g["rank"] >= g["task.r_star"]]
        misses = floor_misses(cfg, above)
        reach = float((above["rel_excess"] < cfg.verdict.eps_floor).mean()) if len(above) else None
        out[kind] = {
            "runs_below": int(len(below)),
            "runs_at_or_above": int(len(above)),
            "frac_below_clearly_above_floor": float(
                (below["rel_excess"] >= cfg.verdict.c5_margin * cfg.verdict.eps_floor).mean()
            )
            if len(below)
            else None,
            "frac_at_or_above_reaching_floor": reach,
            # the most the r >= r* runs could reach if every unfinished one went on to the floor
            "frac_at_or_above_reaching_floor_if_finished": None
            if reach is None
            else reach + misses["still_improving"] / len(above),
            "frac_below_reaching_floor": float((below["rel_excess"] < cfg.verdict.eps_floor).mean())
            if len(below)
            else None,
            "min_rel_excess_below": float(below["rel_excess"].min()) if len(below) else None,
            "max_rel_excess_at_or_above": float(above["rel_excess"].max()) if len(above) else None,
            **misses,
        }
    return out


def c5_decisions(cfg, rows: pd.DataFrame) -> dict[str, dict[str, IntervalDecision]]:
    """Per teacher kind, the four shares of C5 over teacher draws (Wilson, :func:`unit_share_decision`):
    ``clearly_deficient`` (r < r* at >= c5_margin·eps_floor) and ``reaching_floor`` (r >= r*) confirm;
    ``staying_above_floor`` (r < r*) and ``reaching_floor_if_finished`` (r >= r*, unfinished counted as
    reaching) refute."""
    rate, eps = cfg.verdict.c5_rate, cfg.verdict.eps_floor
    out = {}
    for kind, g in rows.groupby("teacher"):
        below, above = g[g["rank"] < g["task.r_star"]], g[g["rank"] >= g["task.r_star"]]
        reach = above["rel_excess"] < eps
        out[str(kind)] = {
            "clearly_deficient": unit_share_decision(
                below, below["rel_excess"] >= cfg.verdict.c5_margin * eps, TEACHER_DRAW.keys, rate
            ),
            "reaching_floor": unit_share_decision(above, reach, TEACHER_DRAW.keys, rate),
            "staying_above_floor": unit_share_decision(
                below, below["rel_excess"] >= eps, TEACHER_DRAW.keys, rate
            ),
            "reaching_floor_if_finished": unit_share_decision(
                above, reach | unfinished(above), TEACHER_DRAW.keys, rate
            ),
        }
    return out


def c5_decision(decisions: dict[str, dict[str, IntervalDecision]]) -> tuple[str, str, str]:
    """``(verdict, reason, decisive condition)``: confirmed when every teacher's confirming shares clear
    c5_rate by their interval, refuted when a refuting share's interval lies below it, else inconclusive."""
    flat = {f"{k}/{name}": d for k, ds in decisions.items() for name, d in ds.items()}
    confirming = {k: d for k, d in flat.items() if k.endswith(("/clearly_deficient", "/reaching_floor"))}
    refuting = {k: d for k, d in flat.items() if k not in confirming}
    refuted = [k for k, d in refuting.items() if d.outcome is False]
    if refuted:
        key = min(refuted, key=lambda k: refuting[k].margin)
        why = {
            "staying_above_floor": "rank-deficient students reach the floor",
            "reaching_floor_if_finished": "students with r >= r* stopped improving above the floor",
        }[key.split("/", 1)[1]]
        return "refuted", why, key
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
    return (
        "inconclusive",
        (
            "a share's interval over teacher draws straddles c5_rate (deficient runs between the floor and the "
            "margin, or too few draws)"
        ),
        key,
    )


def boundary_at_r_star(cfg, rows: pd.DataFrame) -> tuple[float, bool | None, dict[str, IntervalDecision]]:
    """Softmax runs at r = r*: the share of teacher draws reaching eps_floor, and whether the boundary is
    kept (True: its Wilson interval lies at or above c5_rate), lost (False: even counting every unfinished
    run as reaching, the interval lies at or below it) or undecided (None)."""
    at = rows[(rows["teacher"] == "softmax") & (rows["rank"] == rows["task.r_star"])]
    if not len(at):
        return float("nan"), None, {}
    rate = cfg.verdict.c5_rate
    reach = at["rel_excess"] < cfg.verdict.eps_floor
    kept = unit_share_decision(at, reach, TEACHER_DRAW.keys, rate)
    ceiling = unit_share_decision(at, reach | unfinished(at), TEACHER_DRAW.keys, rate)
    state = True if kept.outcome is True else (False if ceiling.outcome is False else None)
    return float(reach.mean()), state, {"boundary_kept": kept, "boundary_if_finished": ceiling}


def c6_at(cfg, rows: pd.DataFrame, norm: str) -> dict:
    """C6 at one logit scale (``rows`` at that c): the median softmax/linear ratio over pairs with its
    order-statistic interval, compressed iff the interval lies <= c6_factor (not iff it lies at or above),
    and the boundary; confirmed iff compressed and kept, refuted iff not compressed or lost."""
    pairs = paired_ratios(transition_table(rows))
    reach, kept, boundary = boundary_at_r_star(cfg, rows)
    out = {"pairs": int(len(pairs)), "softmax_frac_reaching_floor_at_r_star": reach, "boundary_kept": kept}
    if not len(pairs):
        return {**out, "compressed": None, "verdict": "inconclusive"}
    lo, hi, coverage = median_interval(pairs[f"ratio_{norm}"])
    median = float(pairs[f"ratio_{norm}"].median())
    ratio = decide_by_interval(
        median, (lo, hi), cfg.verdict.c6_factor, higher_is_better=False, unit=TEACHER_PAIR.name
    )
    compressed = ratio.outcome
    if len(pairs) < cfg.verdict.c6_min_pairs:  # one pair is one teacher draw: not a median
        compressed = None
        out["reason"] = f"{len(pairs)} pair(s) < c6_min_pairs = {cfg.verdict.c6_min_pairs}"
    verdict = (
        "refuted" if False in (compressed, kept) else ("confirmed" if compressed and kept else "inconclusive")
    )
    decisions = {"compressed": ratio, **boundary}
    if verdict == "refuted":
        decisive = "compressed" if compressed is False else "boundary_if_finished"
    else:
        decisive = min(
            ("compressed", "boundary_kept"), key=lambda k: decisions[k].margin if k in decisions else np.inf
        )
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


def c6_map(cfg, rows: pd.DataFrame) -> dict[str, dict[float, dict]]:
    """``{normalisation: {c: c6_at}}`` over every logit scale of the rows."""
    cs = sorted(float(x) for x in rows["task.c"].unique())
    return {
        norm: {x: c6_at(cfg, rows[np.isclose(rows["task.c"], x)], norm) for x in cs}
        for norm in ("k0", "signal")
    }
