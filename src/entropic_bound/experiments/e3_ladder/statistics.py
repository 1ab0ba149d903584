"""The numbers E3's claims read: the convergence rule on the runs above the floor, the seed medians of
the summary table, the jump and ratio (c) of C4 with their bootstrap intervals over student seeds (the
independent unit: E3 has one teacher per draw), and X2's best setting per pair with the share of its
student seeds reaching the floor (Wilson)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...stats.interval_decision import IntervalDecision, decide_by_interval
from ...stats.unit_intervals import unit_bootstrap, unit_share_decision
from ..framework.rule import Unit
from .config import ladder_parts

#: The independent unit of every E3 interval: a student seed of one draw (E3 has one teacher per draw).
STUDENT_SEED = Unit("student seed", ("seed", "draw"))


def seed_keys(rows: pd.DataFrame) -> list[str]:
    """The unit's keys ``rows`` carry (rows read outside a pooled decision have no ``draw``: one draw)."""
    return [k for k in STUDENT_SEED.keys if k in rows.columns]


REPRESENTABLE = (
    ("B1", "low_rank"),
    ("B2", "row_stochastic"),
)  # X2: rungs whose class can hold A* with positions


def improving(cfg, rows: pd.DataFrame | None) -> dict:
    """The convergence rule on ``rows`` (stats.convergence, stored per run as ``converged`` from the held-out
    excess curve): runs above the floor that are still improving, or whose convergence is unknown (no
    curve stored), cannot count as "did not reach the floor"."""
    if rows is None or not len(rows):
        return {"runs": 0, "converged": 0, "still_improving": 0, "unknown": 0}
    if "relative_drop" in rows:  # the stored drop over the last quarter, against the config's tolerance
        drop = pd.to_numeric(rows["relative_drop"], errors="coerce")
        conv = (drop < cfg.verdict.convergence_tol).astype(float).where(drop.notna())
    else:
        conv = rows["converged"] if "converged" in rows else pd.Series(np.nan, index=rows.index)
    above = rows["rel_excess"] >= cfg.verdict.eps_floor
    return {
        "runs": int(len(rows)),
        "converged": int((conv == 1.0).sum()),
        "still_improving": int((above & (conv == 0.0)).sum()),
        "unknown": int((above & conv.isna()).sum()),
        "relative_drop": [round(float(x), 4) for x in rows.get("relative_drop", pd.Series(dtype=float))],
    }


def _undecidable(counts: dict, tol: float) -> str:
    """The reason a "did not reach the floor" reading is not allowed ('' when it is)."""
    if counts["still_improving"] or counts["unknown"]:
        return (
            f"{counts['still_improving']} of {counts['runs']} runs above the floor are still improving (held-out "
            f"excess fell by >= {tol:.0%} over the last quarter of training) and {counts['unknown']} have no stored "
            "curve: train longer before reading 'did not reach the floor'"
        )
    return ""


def convergence(cfg, rows: pd.DataFrame | None) -> tuple[dict, str]:
    """The convergence counts of ``rows`` and the reason a "did not reach the floor" reading is not
    allowed ('' when it is; ``rows`` None: no runs were given, so convergence is unknown)."""
    counts = improving(cfg, rows)
    if rows is None:
        return counts, "no runs given: convergence unknown"
    return counts, _undecidable(counts, cfg.verdict.convergence_tol)


def seed_median(summary: pd.DataFrame, **where) -> float | None:
    """The seed-median of the one setting matching ``where`` (None if absent)."""
    sel = summary
    for k, v in where.items():
        sel = sel[sel[k] == v]
    return float(sel["rel_excess_median"].iloc[0]) if len(sel) else None


def full_rank_median(cfg, summary: pd.DataFrame, role: str, rung: str, v: str) -> float | None:
    return seed_median(summary, role=role, rung=rung, v=v, rank=cfg.full_rank(rung))


def seed_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per student seed (the independent unit: E3 has one teacher), one column per
    (V, rung) cell of ``rows``, the seed's relative excess."""
    return rows.pivot_table(
        index=seed_keys(rows), columns=["v", "rung"], values="rel_excess", aggfunc="median"
    )


def seed_bootstrap(table: pd.DataFrame, statistic) -> tuple[float, tuple[float, float]]:
    """``statistic(medians over seeds)`` and its bootstrap interval, seeds resampled with replacement;
    ``statistic`` reads the medians by the table's column keys."""
    values, columns = table.to_numpy(float), list(table.columns)

    def medians(picked: np.ndarray) -> dict:
        return dict(zip(columns, np.median(values[picked], axis=0)))

    return unit_bootstrap(values, lambda picked: statistic(medians(picked)))


def c4_decisions(
    cfg, runs: pd.DataFrame, base: str, attention: tuple[str, ...]
) -> dict[str, IntervalDecision]:
    """The jump (smallest full-rank median of the attention rungs against c4_fail) and the ratio (c)
    (largest over V against c4_ratio), each with its bootstrap interval over student seeds."""
    full = runs[(runs["role"] == "ladder") & runs["v"].isin(cfg.v_settings)]
    full = full[full["rank"].astype(float) == full["rung"].map(lambda r: float(cfg.full_rank(r)))]
    table = seed_table(full)

    def jump(med: dict) -> float:
        return float(min(med[(v, r)] for v in cfg.v_settings for r in attention))

    def ratio(med: dict) -> float:
        capped = {v: {r: min(med[(v, r)], 1.0) for r in (base, *attention)} for v in cfg.v_settings}
        return float(max(ratio_c(capped[v], base, attention) for v in cfg.v_settings))

    j, j_ci = seed_bootstrap(table, jump)
    q, q_ci = seed_bootstrap(table, ratio)
    n = len(table)
    return {
        "jump": decide_by_interval(j, j_ci, cfg.verdict.c4_fail, unit=STUDENT_SEED.name, units=n),
        "ratio_c": decide_by_interval(
            q, q_ci, cfg.verdict.c4_ratio, higher_is_better=False, unit=STUDENT_SEED.name, units=n
        ),
    }


def ratio_c(values: dict, base: str, attention: tuple[str, ...]) -> float:
    """(c): the largest step between neighbouring attention rungs over the jump from the base rung."""
    steps = [abs(values[b] - values[a]) for a, b in zip(attention, attention[1:])]
    return max(steps, default=0.0) / max(values[attention[0]] - values[base], 1e-12)


def full_rank_attention(cfg, rows: pd.DataFrame) -> pd.Series:
    full = rows["rank"].astype(float) == float(cfg.task.d)
    attention = ladder_parts()[1]
    return (rows["role"] == "ladder") & rows["rung"].isin(attention) & full & rows["v"].isin(cfg.v_settings)


def x2_pair(cfg, x2: pd.DataFrame, rung: str, operator: str) -> dict | None:
    """Best setting with learned positions for one (rung, operator), against the matching no-position run."""
    sel = x2[(x2["rung"] == rung) & (x2["task.operator"] == operator)]
    pos, none = sel[sel["positional"] == "learned_absolute"], sel[sel["positional"] == "none"]
    if not len(pos):
        return None
    keys = ["v", "n_heads", "rank"]
    merged = pos.merge(none[keys + ["rel_excess_median"]], on=keys, how="left", suffixes=("", "_none"))
    merged["closure"] = 1.0 - merged["rel_excess_median"] / merged["rel_excess_median_none"]
    best = merged.loc[merged["rel_excess_median"].idxmin()]
    floor = merged[merged["rel_excess_median"] < cfg.verdict.eps_floor]
    return {
        "best_rel_excess": float(best["rel_excess_median"]),
        "best_setting": {"v": best["v"], "n_heads": best["n_heads"], "rank": int(best["rank"])},
        "without_positions": None
        if pd.isna(best["rel_excess_median_none"])
        else float(best["rel_excess_median_none"]),
        "gap_closed": None if pd.isna(best["closure"]) else float(best["closure"]),
        "by_rank_and_heads": {
            f"r={int(r['rank'])},h={r['n_heads']},V {r['v']}": round(float(r["rel_excess_median"]), 5)
            for _, r in merged.iterrows()
        },
        "min_rank_reaching_floor": int(floor["rank"].min()) if len(floor) else None,
    }


def x2_positional(rows: pd.DataFrame, pairs: list[str]) -> pd.Series:
    pair = rows["rung"].astype(str) + "/" + rows["task.operator"].astype(str)
    return (rows["role"] == "x2") & (rows["positional"] == "learned_absolute") & pair.isin(pairs)


def best_setting_rows(rows: pd.DataFrame, rung: str, operator: str, best: dict) -> pd.DataFrame:
    """The learned-position runs of one (rung, operator) at its best setting (chosen by the seed medians)."""
    return rows[
        (rows["role"] == "x2")
        & (rows["rung"] == rung)
        & (rows["task.operator"] == operator)
        & (rows["positional"] == "learned_absolute")
        & (rows["v"] == best["v"])
        & (pd.to_numeric(rows["n_heads"], errors="coerce") == float(best["n_heads"]))
        & (rows["rank"].astype(int) == best["rank"])
    ]


def x2_decisions(cfg, rows: pd.DataFrame, pairs: dict) -> dict[str, IntervalDecision]:
    """Per representable pair, the share of student seeds whose run at the pair's best setting reaches
    eps_floor, against x2_seed_share (Wilson, one boundary): a stuck seed lowers the share by one seed's
    weight, it does not block the decision."""
    out = {}
    for r, o in REPRESENTABLE:
        sel = best_setting_rows(rows, r, o, pairs[f"{r}/{o}"]["best_setting"])
        reach = sel["rel_excess"] < cfg.verdict.eps_floor
        out[f"{r}/{o}"] = unit_share_decision(
            sel, reach, seed_keys(sel), cfg.verdict.x2_seed_share, unit=STUDENT_SEED.name
        )
    return out


#: What the ladder confounds: B0 -> B1 adds input conditioning and removes positional information at once.
CONFOUND = (
    "B0's fixed A indexes token positions; B1-B3 have no positional information, so their mixers are "
    "permutation-equivariant and cannot hold a position-indexed A* whatever their rank. The step B0 -> B1 adds "
    "input conditioning and removes positions at once: the jump does not say which causes it"
)
#: The runs that would separate the two causes (a 2 x 2 of input conditioning x positions).
SEPARATES = (
    "input conditioning with positions is X2 (B1/B2 with learned absolute positions): if it reaches the floor, "
    "input conditioning alone does not break the bound; the missing cell, a fixed mixer without positions (the "
    "permutation-equivariant A = a I + b 11^T/n), failing like B1 would put the cause on the missing positions"
)


def positional_confound(cfg, summary: pd.DataFrame) -> dict:
    """C4's cause as the ladder leaves it: the confound in words, the fraction of the B1-B3 gap X2's
    learned positions close (where the run has X2 rows), and what would separate the two causes."""
    x2 = summary[summary["role"] == "x2"] if len(summary) else summary
    closed = {}
    for rung, operator in REPRESENTABLE:
        pair = x2_pair(cfg, x2, rung, operator) if len(x2) else None
        if pair is not None and pair["gap_closed"] is not None:
            closed[f"{rung}/{operator}"] = round(pair["gap_closed"], 4)
    return {
        "separated": False,
        "confound": CONFOUND,
        "gap_closed_with_positions": closed,
        "would_separate": SEPARATES,
    }
