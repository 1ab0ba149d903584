"""E3's analysis: summary tables and verdicts C4 and X2 — pure functions of stored rows.

Every verdict reads *medians over seeds* of the held-out relative excess risk; the seed spread
(min, max) is in the summary table and the evidence. Diverged runs are excluded and counted.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..base import Analysis, Verdict, decide, split_status
from ..claim_slices import boundary, grid_setting, with_option
from .plots import plot_excess_vs_rank, plot_full_rank_bars, plot_mixers

SETTING = ["role", "task.kind", "task.operator", "rung", "v", "positional", "n_heads", "rank"]
RESULT_COLUMNS = [
    "run_id",
    "seed",
    "status",
    "diverged_step",
    *SETTING,
    "full_rank",
    "rel_excess",
    "rel_excess_population",
    "excess",
    "signal",
    "mixer_rel_error",
    "A_energy_effective_rank",
    "K_energy_effective_rank",
    "K_numerical_rank",
    "train_loss",
    "steps_run",
    "train.steps",
    "train.lr",
]
ATTENTION = ("B1", "B2", "B3")
REPRESENTABLE = (
    ("B1", "low_rank"),
    ("B2", "row_stochastic"),
)  # X2: rungs whose class can hold A* with positions


def _label(value) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "-"
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _fill(table: pd.DataFrame) -> pd.DataFrame:
    """Setting columns as strings (``rank`` as int); unused ones (``n_heads`` of B0, ``task.operator``
    of the teacher task) read ``"-"``."""
    out = table.copy()
    for col in SETTING:
        if col == "rank":
            out[col] = out[col].astype(int)
        else:
            out[col] = [_label(v) for v in out[col]] if col in out else "-"
    return out


def summary_table(ok: pd.DataFrame) -> pd.DataFrame:
    """Median, min and max relative excess over seeds per setting (role, task, rung, V, positions, heads, r)."""
    if not len(ok):
        return pd.DataFrame(
            columns=[*SETTING, "rel_excess_median", "rel_excess_min", "rel_excess_max", "runs"]
        )
    g = _fill(ok).groupby(SETTING, sort=True)["rel_excess"]
    out = g.agg(median="median", min="min", max="max", runs="count").reset_index()
    return out.rename(
        columns={"median": "rel_excess_median", "min": "rel_excess_min", "max": "rel_excess_max"}
    )


def analyse_e3(cfg, table: pd.DataFrame, records: list[dict]) -> Analysis:
    results = table[[c for c in RESULT_COLUMNS if c in table.columns]].copy() if len(table) else table
    ok, n_diverged = split_status(table)
    ok = _fill(ok) if len(table) else ok
    summary = summary_table(ok)
    verdicts = [c4_with_boundary(cfg, ok, n_diverged), x2_with_boundary(cfg, ok, n_diverged)]
    figures = {}
    if len(ok):
        figures["e3_full_rank_bars"] = plot_full_rank_bars(cfg, ok)
        figures["e3_excess_vs_rank"] = plot_excess_vs_rank(cfg, summary)
        figures["e3_mixers"] = plot_mixers(cfg, ok, records)
    t, x = cfg.train, cfg.x2_train
    notes = [
        f"One fixed_operator task (n = {cfg.task.n}, d = d_v = {cfg.task.d}, r* = {cfg.task.r_star}, {cfg.task.spectrum} spectrum, "
        f"σ = {cfg.task.sigma:g}, task_seed {cfg.task.seed}); every rung sees the same task and the same data stream "
        f"({'fresh batches of ' + str(t.batch_size) if not t.n_samples else 'N = ' + str(t.n_samples)}). "
        f"Seeds vary the student initialisation only ({cfg.seeds} per setting).",
        f"Ladder and control (b): {t.optimizer} lr {t.lr:g} → {t.lr_final} cosine, {t.steps} steps, {t.dtype}. "
        f"X2: {x.optimizer} lr {x.lr:g} → {x.lr_final} cosine, {x.steps} steps (SPEC §5b reached the floor "
        f"only after ≥ 6000 steps; shorter X2 runs can confirm but not refute).",
        f"Relative excess risk = held-out error against the clean target on {cfg.n_test} fresh samples / clean "
        "signal; B0 also stores the exact population value (rel_excess_population). Heads are averaged, so a "
        f"softmax model's mean mixer is row-stochastic whatever its head count. B2/B3 temperature: {cfg.temperature}.",
    ]
    return Analysis(
        results=results, verdicts=verdicts, figures=figures, tables={"summary": summary}, notes=notes
    )


def _per_seed(ok: pd.DataFrame) -> list[tuple[dict, pd.DataFrame]]:
    """``({"seed": [s]}, summary of seed s alone)`` per student initialisation."""
    if not len(ok) or ok["seed"].nunique() < 2:
        return []
    return [({"seed": [int(s)]}, summary_table(ok[ok["seed"] == s])) for s in sorted(ok["seed"].unique())]


def c4_with_boundary(cfg, ok: pd.DataFrame, n_diverged: int = 0) -> Verdict:
    """C4 on every seed's median, decided again per V setting and per student initialisation."""
    summary = summary_table(ok)
    main = verdict_c4(cfg, summary, n_diverged)
    others = (
        [
            ({"v_settings": [v]}, verdict_c4(with_option(cfg, {"v_settings": (v,)}), summary, n_diverged))
            for v in cfg.v_settings
        ]
        if len(cfg.v_settings) > 1
        else []
    )
    others += [(s, verdict_c4(cfg, sm, n_diverged)) for s, sm in _per_seed(ok)]
    return boundary((grid_setting(cfg, "v_settings", "seeds"), main), others, "min_full_rank_B1_B3")


def x2_with_boundary(cfg, ok: pd.DataFrame, n_diverged: int = 0) -> Verdict:
    """X2 on the seed medians, decided again per student initialisation and per head count."""
    summary = summary_table(ok)
    main = verdict_x2(cfg, summary, n_diverged)
    others = [(s, verdict_x2(cfg, sm, n_diverged)) for s, sm in _per_seed(ok)]
    if len(cfg.x2_heads) > 1:
        for h in cfg.x2_heads:
            keep = summary[(summary["role"] != "x2") | (summary["n_heads"] == str(h))]
            others.append(({"x2_heads": [h]}, verdict_x2(cfg, keep, n_diverged)))
    return boundary((grid_setting(cfg, "x2_heads", "seeds"), main), others, "worst_best_rel_excess")


def _median(summary: pd.DataFrame, **where) -> float | None:
    """The seed-median of the one setting matching ``where`` (None if absent)."""
    sel = summary
    for k, v in where.items():
        sel = sel[sel[k] == v]
    return float(sel["rel_excess_median"].iloc[0]) if len(sel) else None


def _full(cfg, summary: pd.DataFrame, role: str, rung: str, v: str) -> float | None:
    return _median(summary, role=role, rung=rung, v=v, rank=cfg.full_rank(rung))


def verdict_c4(cfg, summary: pd.DataFrame, n_diverged: int = 0) -> Verdict:
    """C4 from the full-rank medians of every rung and V setting, with controls (a), (b) and (c)."""
    criterion = (
        f"at full rank (r = n for B0, r = d for B1–B3), for every V setting: B1, B2 and B3 have relative excess "
        f">= {cfg.verdict.c4_fail:g}; (c) max(|B2−B1|, |B3−B2|) / (B1 − B0) <= {cfg.verdict.c4_ratio:g}, each value capped at 1 "
        "(the zero predictor; a fixed V* can push B2/B3 above it). Located only when "
        f"(a) B0 and (b) B1 on a B1-teacher task both reach the floor (< eps_floor = {cfg.verdict.eps_floor:g}); "
        "otherwise inconclusive. Medians over seeds."
    )
    statement = (
        "excess risk jumps at B1 even at full rank and stays at B2, B3: the cause is input conditioning"
    )
    ladder = summary[summary["role"] == "ladder"] if len(summary) else summary
    ev: dict = {
        "excluded_diverged": n_diverged,
        "full_rank": {},
        "control_a_B0": {},
        "control_b_B1_teacher": {},
        "ratio_c": {},
    }
    missing = []
    for v in cfg.v_settings:
        rows = {r: _full(cfg, summary, "ladder", r, v) for r in ("B0", *ATTENTION)}
        ev["full_rank"][v] = rows
        ev["control_a_B0"][v] = rows["B0"]
        ev["control_b_B1_teacher"][v] = _full(cfg, summary, "control_b", "B1", v)
        missing += [f"{r} (V {v})" for r, x in rows.items() if x is None]
        if ev["control_b_B1_teacher"][v] is None:
            missing.append(f"control (b) (V {v})")
        if None not in rows.values():
            cap = {r: min(x, 1.0) for r, x in rows.items()}  # above 1 = worse than predicting 0: no signal
            jump = cap["B1"] - cap["B0"]
            ev["ratio_c"][v] = max(abs(cap["B2"] - cap["B1"]), abs(cap["B3"] - cap["B2"])) / max(jump, 1e-12)
            raw = max(abs(rows["B2"] - rows["B1"]), abs(rows["B3"] - rows["B2"])) / max(
                rows["B1"] - rows["B0"], 1e-12
            )
            ev.setdefault("ratio_c_uncapped", {})[v] = raw
    full_attention = [
        x for v in cfg.v_settings for r, x in ev["full_rank"][v].items() if r != "B0" and x is not None
    ]
    ev["min_full_rank_B1_B3"] = min(full_attention) if full_attention else None
    if len(ladder):
        swept = ladder[ladder["rung"].isin(ATTENTION)]
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
    jump_ok = all(ev["full_rank"][v][r] >= cfg.verdict.c4_fail for v in cfg.v_settings for r in ATTENTION)
    ratio_ok = all(ev["ratio_c"][v] <= cfg.verdict.c4_ratio for v in cfg.v_settings)
    ev["jump_holds"], ev["ratio_holds"] = jump_ok, ratio_ok
    return Verdict("C4", decide(jump_ok and ratio_ok), criterion, ev, "E3", statement)


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


def verdict_x2(cfg, summary: pd.DataFrame, n_diverged: int = 0) -> Verdict:
    """X2: do learned absolute positions make the fixed operator learnable by B1 (signed A*) and B2
    (row-stochastic A*)?"""
    steps = cfg.x2_train.steps
    criterion = (
        f"confirmed when, for each representable pair (B1 on a signed low-rank A*, B2 on a row-stochastic A*), "
        f"some rank/head setting with learned_absolute positions has median relative excess < eps_floor = "
        f"{cfg.verdict.eps_floor:g}; refuted when one does not and the runs had >= x2_min_steps = {cfg.verdict.x2_min_steps} steps; "
        "otherwise inconclusive (runs too short to refute). Gap closed = 1 − excess(positions)/excess(none)."
    )
    statement = "learned absolute positions make the fixed operator learnable by attention"
    x2 = summary[summary["role"] == "x2"] if len(summary) else summary
    ev: dict = {
        "steps": steps,
        "x2_min_steps": cfg.verdict.x2_min_steps,
        "excluded_diverged": n_diverged,
        "pairs": {},
    }
    for rung in ("B1", "B2"):
        for operator in ("low_rank", "row_stochastic"):
            res = _x2_pair(cfg, x2, rung, operator) if len(x2) else None
            if res is not None:
                res["decides_verdict"] = (rung, operator) in REPRESENTABLE
                ev["pairs"][f"{rung}/{operator}"] = res
    decisive = [ev["pairs"].get(f"{r}/{o}") for r, o in REPRESENTABLE]
    if any(p is None for p in decisive):
        ev["reason"] = "missing learned_absolute runs of B1 on low_rank or B2 on row_stochastic"
        return Verdict("X2", "inconclusive", criterion, ev, "E3", statement)
    ev["worst_best_rel_excess"] = max(p["best_rel_excess"] for p in decisive)
    reached = all(p["best_rel_excess"] < cfg.verdict.eps_floor for p in decisive)
    if reached:
        return Verdict("X2", "confirmed", criterion, ev, "E3", statement)
    if steps >= cfg.verdict.x2_min_steps:
        return Verdict("X2", "refuted", criterion, ev, "E3", statement)
    ev["reason"] = (
        f"positional runs had {steps} < {cfg.verdict.x2_min_steps} steps and did not reach the floor yet; "
        "see gap_closed for how far they got"
    )
    return Verdict("X2", "inconclusive", criterion, ev, "E3", statement)


def seed_spread(ok: pd.DataFrame, role: str, rung: str, v: str, rank: int) -> np.ndarray:
    """The per-seed relative excess of one setting (for the bar chart)."""
    sel = ok[(ok["role"] == role) & (ok["rung"] == rung) & (ok["v"] == v) & (ok["rank"] == rank)]
    sel = sel[sel["positional"] == "none"]
    return sel["rel_excess"].to_numpy(dtype=float)
