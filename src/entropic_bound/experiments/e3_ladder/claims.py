"""E3's claims C4 and X2: each criterion, its report sentence and its robustness grid.

Every criterion reads *medians over seeds* of the held-out relative excess risk (summary_table); the
seed spread (min, max) is in the summary table and the evidence."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...stats.interval_decision import IntervalDecision, decide_by_interval
from ...stats.unit_intervals import record, unit_bootstrap
from ..framework.claim import Claim, Formats
from ..framework.claim_slices import Setting, grid_setting, sliced, with_option
from ..framework.verdict import ClaimContext, Verdict, decide
from .analysis import summary_table
from .config import OPERATORS, ladder_parts, positional_rungs


def _and(names) -> str:
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]


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


def _convergence(cfg, rows: pd.DataFrame | None) -> tuple[dict, str]:
    """The convergence counts of ``rows`` and the reason a "did not reach the floor" reading is not
    allowed ('' when it is; ``rows`` None: no runs were given, so convergence is unknown)."""
    counts = improving(cfg, rows)
    if rows is None:
        return counts, "no runs given: convergence unknown"
    return counts, _undecidable(counts, cfg.verdict.convergence_tol)


def _median(summary: pd.DataFrame, **where) -> float | None:
    """The seed-median of the one setting matching ``where`` (None if absent)."""
    sel = summary
    for k, v in where.items():
        sel = sel[sel[k] == v]
    return float(sel["rel_excess_median"].iloc[0]) if len(sel) else None


def _full(cfg, summary: pd.DataFrame, role: str, rung: str, v: str) -> float | None:
    return _median(summary, role=role, rung=rung, v=v, rank=cfg.full_rank(rung))


def c4_on_summary(cfg, summary: pd.DataFrame, runs: pd.DataFrame | None = None) -> Verdict:
    """C4 from the full-rank medians of every rung and V setting, with controls (a), (b) and (c); ``runs``
    (the runs, with ``converged``) decide whether the attention rungs' failure may be read (convergence
    rule). The rungs are the registry's ladder (:func:`ladder_parts`)."""
    base, attention = ladder_parts()
    span = f"{attention[0]}–{attention[-1]}"
    steps = ", ".join(f"|{b}−{a}|" for a, b in zip(attention, attention[1:]))
    criterion = (
        f"at full rank (r = n for {base}, r = d for {span}), for every V setting: {_and(attention)} have relative excess "
        f">= {cfg.verdict.c4_fail:g}; (c) max({steps}) / ({attention[0]} − {base}) <= {cfg.verdict.c4_ratio:g}, each value capped at 1 "
        f"(the zero predictor; a fixed V* can push {'/'.join(attention[1:])} above it). Located only when "
        f"(a) {base} and (b) B1 on a B1-teacher task both reach the floor (< eps_floor = {cfg.verdict.eps_floor:g}); "
        f"otherwise inconclusive. Medians over seeds. A full-rank {span} run above the floor that is still improving "
        f"(held-out excess fell by >= {cfg.verdict.convergence_tol:.0%} over the last quarter of training time; "
        "stats.convergence) cannot count as "
        "failing: the jump then reads inconclusive. The jump (smallest attention-rung median) and (c) (largest over V) "
        "are decided by their 95% bootstrap intervals over student seeds (the independent unit; E3 has one teacher): "
        "holding when the interval lies on the claimed side of its bar, failing when it lies on the other side, "
        "else inconclusive. The controls are floor rules on their medians."
    )
    statement = (
        f"excess risk jumps at {attention[0]} even at full rank and stays at {', '.join(attention[1:])}: "
        "the cause is input conditioning"
    )
    ladder = summary[summary["role"] == "ladder"] if len(summary) else summary
    ev: dict = {
        "full_rank": {},
        "control_a_B0": {},
        "control_b_B1_teacher": {},
        "ratio_c": {},
    }
    missing = []
    for v in cfg.v_settings:
        rows = {r: _full(cfg, summary, "ladder", r, v) for r in (base, *attention)}
        ev["full_rank"][v] = rows
        ev["control_a_B0"][v] = rows[base]
        ev["control_b_B1_teacher"][v] = _full(cfg, summary, "control_b", "B1", v)
        missing += [f"{r} (V {v})" for r, x in rows.items() if x is None]
        if ev["control_b_B1_teacher"][v] is None:
            missing.append(f"control (b) (V {v})")
        if None not in rows.values():
            cap = {r: min(x, 1.0) for r, x in rows.items()}  # above 1 = worse than predicting 0: no signal
            ev["ratio_c"][v] = _ratio_c(cap, base, attention)
            ev.setdefault("ratio_c_uncapped", {})[v] = _ratio_c(rows, base, attention)
    full_attention = [
        x for v in cfg.v_settings for r, x in ev["full_rank"][v].items() if r != base and x is not None
    ]
    ev["min_full_rank_B1_B3"] = min(full_attention) if full_attention else None
    if len(ladder):
        swept = ladder[ladder["rung"].isin(attention)]
        ev["min_over_ranks_B1_B3"] = float(swept["rel_excess_median"].min()) if len(swept) else None
    if missing or not cfg.v_settings:
        ev["reason"] = "missing runs: " + ", ".join(missing or ["no V setting"])
        return Verdict("C4", "inconclusive", criterion, ev, "E3", statement)
    controls = all(
        ev["control_a_B0"][v] < cfg.verdict.eps_floor
        and ev["control_b_B1_teacher"][v] < cfg.verdict.eps_floor
        for v in cfg.v_settings
    )
    if not controls:
        ev["reason"] = (
            "a control did not reach the floor, so a failure at B1 cannot be attributed to the task"
        )
        return Verdict("C4", "inconclusive", criterion, ev, "E3", statement)
    if runs is None:
        ev["reason"] = "no runs given: the seed intervals cannot be computed"
        return Verdict("C4", "inconclusive", criterion, ev, "E3", statement)
    decisions = c4_decisions(cfg, runs, base, attention)
    outcome = record(ev, decisions)
    ev["jump_holds"], ev["ratio_holds"] = decisions["jump"].outcome, decisions["ratio_c"].outcome
    failing = runs[_full_rank_attention(cfg, runs)]
    ev["convergence_B1_B3_full_rank"], reason = _convergence(cfg, failing)
    if outcome and reason:
        ev["reason"] = reason
        return Verdict("C4", "inconclusive", criterion, ev, "E3", statement)
    return Verdict("C4", decide(outcome), criterion, ev, "E3", statement)


def _seed_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per student seed (the independent unit: E3 has one teacher), one column per
    (V, rung) cell of ``rows``, the seed's relative excess."""
    return rows.pivot_table(index="seed", columns=["v", "rung"], values="rel_excess", aggfunc="median")


def _seed_bootstrap(table: pd.DataFrame, statistic) -> tuple[float, tuple[float, float]]:
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
    table = _seed_table(full)

    def jump(med: dict) -> float:
        return float(min(med[(v, r)] for v in cfg.v_settings for r in attention))

    def ratio(med: dict) -> float:
        capped = {v: {r: min(med[(v, r)], 1.0) for r in (base, *attention)} for v in cfg.v_settings}
        return float(max(_ratio_c(capped[v], base, attention) for v in cfg.v_settings))

    j, j_ci = _seed_bootstrap(table, jump)
    q, q_ci = _seed_bootstrap(table, ratio)
    return {
        "jump": decide_by_interval(j, j_ci, cfg.verdict.c4_fail, unit="student seed"),
        "ratio_c": decide_by_interval(
            q, q_ci, cfg.verdict.c4_ratio, higher_is_better=False, unit="student seed"
        ),
    }


def _ratio_c(values: dict, base: str, attention: tuple[str, ...]) -> float:
    """(c): the largest step between neighbouring attention rungs over the jump from the base rung."""
    steps = [abs(values[b] - values[a]) for a, b in zip(attention, attention[1:])]
    return max(steps, default=0.0) / max(values[attention[0]] - values[base], 1e-12)


def _full_rank_attention(cfg, rows: pd.DataFrame) -> pd.Series:
    full = rows["rank"].astype(float) == float(cfg.task.d)
    attention = ladder_parts()[1]
    return (rows["role"] == "ladder") & rows["rung"].isin(attention) & full & rows["v"].isin(cfg.v_settings)


def _x2_pair(cfg, x2: pd.DataFrame, rung: str, operator: str) -> dict | None:
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


def _x2_positional(rows: pd.DataFrame, pairs: list[str]) -> pd.Series:
    pair = rows["rung"].astype(str) + "/" + rows["task.operator"].astype(str)
    return (rows["role"] == "x2") & (rows["positional"] == "learned_absolute") & pair.isin(pairs)


def x2_on_summary(cfg, summary: pd.DataFrame, rows: pd.DataFrame | None = None) -> Verdict:
    """X2: do learned absolute positions make the fixed operator learnable by B1 (signed A*) and B2
    (row-stochastic A*)?"""
    steps = cfg.x2_train.steps
    criterion = (
        f"confirmed when, for each representable pair (B1 on a signed low-rank A*, B2 on a row-stochastic A*), "
        f"some rank/head setting with learned_absolute positions has median relative excess < eps_floor = "
        f"{cfg.verdict.eps_floor:g}; refuted when one does not, the runs had >= x2_min_steps = {cfg.verdict.x2_min_steps} steps "
        "and every learned_absolute run of that pair above the floor has converged (held-out excess fell by < "
        f"{cfg.verdict.convergence_tol:.0%} over the last quarter of training time, the summed learning rate; "
        "stats.convergence); otherwise inconclusive (runs too short or still improving). "
        "Gap closed = 1 − excess(positions)/excess(none). 'Below the floor' is decided by the 95% bootstrap interval "
        "over student seeds of the worst pair's best-setting median: confirmed when it lies at or below eps_floor, "
        "a failure when it lies at or above it, inconclusive when it straddles it."
    )
    statement = "learned absolute positions make the fixed operator learnable by attention"
    x2 = summary[summary["role"] == "x2"] if len(summary) else summary
    ev: dict = {
        "steps": steps,
        "x2_min_steps": cfg.verdict.x2_min_steps,
        "pairs": {},
    }
    for student in positional_rungs():  # every rung that takes positions; REPRESENTABLE decides
        for operator in OPERATORS:
            res = _x2_pair(cfg, x2, student, operator) if len(x2) else None
            if res is not None:
                res["decides_verdict"] = (student, operator) in REPRESENTABLE
                ev["pairs"][f"{student}/{operator}"] = res
    decisive = [ev["pairs"].get(f"{r}/{o}") for r, o in REPRESENTABLE]
    if any(p is None for p in decisive):
        ev["reason"] = "missing learned_absolute runs of B1 on low_rank or B2 on row_stochastic"
        return Verdict("X2", "inconclusive", criterion, ev, "E3", statement)
    ev["worst_best_rel_excess"] = max(p["best_rel_excess"] for p in decisive)
    floor = x2_decision(cfg, rows, ev["pairs"]) if rows is not None else None
    if floor is not None:
        ev["decision"] = floor.to_dict()
    if floor is not None and floor.outcome is True:
        return Verdict("X2", "confirmed", criterion, ev, "E3", statement)
    if floor is not None and floor.outcome is None:
        ev["reason"] = "the seed interval of a pair's best setting straddles eps_floor"
        return Verdict("X2", "inconclusive", criterion, ev, "E3", statement)
    failing = [
        f"{r}/{o}"
        for r, o in REPRESENTABLE
        if ev["pairs"][f"{r}/{o}"]["best_rel_excess"] >= cfg.verdict.eps_floor
    ]
    pos = None if rows is None else rows[_x2_positional(rows, failing)]
    ev["convergence_failing_pairs"], reason = _convergence(cfg, pos)
    if steps >= cfg.verdict.x2_min_steps and not reason:
        return Verdict("X2", "refuted", criterion, ev, "E3", statement)
    if steps >= cfg.verdict.x2_min_steps:
        ev["reason"] = reason
        return Verdict("X2", "inconclusive", criterion, ev, "E3", statement)
    ev["reason"] = (
        f"positional runs had {steps} < {cfg.verdict.x2_min_steps} steps and did not reach the floor yet; "
        f"see gap_closed for how far they got{'; ' + reason if reason else ''}"
    )
    return Verdict("X2", "inconclusive", criterion, ev, "E3", statement)


def x2_decision(cfg, rows: pd.DataFrame, pairs: dict) -> IntervalDecision:
    """The worst representable pair's best-setting median against eps_floor (lower is better), with its
    bootstrap interval over student seeds; the best setting is the one the seed medians chose."""
    cells = []
    for r, o in REPRESENTABLE:
        best = pairs[f"{r}/{o}"]["best_setting"]
        sel = rows[
            (rows["role"] == "x2")
            & (rows["rung"] == r)
            & (rows["task.operator"] == o)
            & (rows["positional"] == "learned_absolute")
            & (rows["v"] == best["v"])
            & (pd.to_numeric(rows["n_heads"], errors="coerce") == float(best["n_heads"]))
            & (rows["rank"].astype(int) == best["rank"])
        ]
        cells.append(sel.assign(v=f"{r}/{o}", rung="best"))
    table = _seed_table(pd.concat(cells))
    worst, ci = _seed_bootstrap(table, lambda med: float(max(med.values())))
    return decide_by_interval(worst, ci, cfg.verdict.eps_floor, higher_is_better=False, unit="student seed")


def verdict_c4(cfg, rows: pd.DataFrame, context: ClaimContext) -> Verdict:
    """C4 on the seed medians of ``rows`` (the kept rows, with their setting columns filled by ``prepare``)."""
    return c4_on_summary(cfg, summary_table(rows), rows)


def verdict_x2(cfg, rows: pd.DataFrame, context: ClaimContext) -> Verdict:
    """X2 on the seed medians of ``rows``."""
    return x2_on_summary(cfg, summary_table(rows), rows)


def c4_grid(cfg, rows: pd.DataFrame, context: ClaimContext) -> list[Setting]:
    """C4 decided again per V setting and per student initialisation (seed)."""
    per_v = (
        [Setting({"v_settings": [v]}, with_option(cfg, {"v_settings": (v,)}), rows) for v in cfg.v_settings]
        if len(cfg.v_settings) > 1
        else []
    )
    return per_v + sliced(cfg, rows, (("seed", "seed"),))


def x2_grid(cfg, rows: pd.DataFrame, context: ClaimContext) -> list[Setting]:
    """X2 decided again per student initialisation (seed) and per head count of the X2 runs."""
    per_heads = (
        [
            Setting({"x2_heads": [h]}, cfg, rows[(rows["role"] != "x2") | (rows["n_heads"] == str(h))])
            for h in cfg.x2_heads
        ]
        if len(cfg.x2_heads) > 1
        else []
    )
    return sliced(cfg, rows, (("seed", "seed"),)) + per_heads


def c4_sentence(e: dict, fmt: Formats) -> str:
    parts = []
    for v, by_student in e["full_rank"].items():
        rungs = ", ".join(f"{k} {fmt.number(x)}" for k, x in by_student.items())
        parts.append(f"V {v}: {rungs}")
    return f"relative excess at full rank — {'; '.join(parts)}; jump holds: {fmt.number(e['jump_holds'])}"


def x2_sentence(e: dict, fmt: Formats) -> str:
    gaps = ", ".join(f"{pair} {fmt.number(p['gap_closed'])}" for pair, p in e["pairs"].items())
    lead = f"{e['reason']}; " if e.get("reason") else ""
    return f"{lead}gap closed by positions: {gaps}"


C4 = Claim(
    "C4",
    decide=verdict_c4,
    sentence=c4_sentence,
    default_setting=lambda cfg: grid_setting(cfg, "v_settings", "seeds"),
    statistic="min_full_rank_B1_B3",
    grid=c4_grid,
)
X2 = Claim(
    "X2",
    decide=verdict_x2,
    sentence=x2_sentence,
    default_setting=lambda cfg: grid_setting(cfg, "x2_heads", "seeds"),
    statistic="worst_best_rel_excess",
    grid=x2_grid,
)
CLAIMS = (C4, X2)
