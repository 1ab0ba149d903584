"""E6's analysis: recovery-rate tables, the frontier, verdicts C9, C10, X1 — pure functions of stored rows.

A run *recovers* r* when ``r_hat == r*`` (the predictor's noise-calibrated cut); its exact-recovery
rate is the fraction of seeds (and spectra, where pooled) that do. A run outside its method's domain
should say ``identifiable = False``; ``confident_wrong`` marks runs that claim identifiability and miss.

Domains (theory, used by the verdicts, not read from the predictor's own flags):

- ``linear_v_known``: every r* (K solved by least squares once ``N n d_v > d²``).
- ``linear_v_unknown``: every r* when ``n > d``; r* < d when ``n = d``; r* < min(n, d_v) when ``n < d``
  (``rank Y_i = min(r*, n, d_v)`` then, so larger r* are only bounded below).
- ``softmax_log_attention``: V known and ``n ≤ min(d, d_v)`` (the attention is recoverable per sample).
- ``softmax_linearised``: none (biased by the softmax's curvature; C10 measures how).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...predict.result import ESTIMATE_KEYS
from ...stats.draw_keys import DRAW
from ..framework.rule import Unit
from ..framework.verdict import Analysis, ClaimContext, Verdict
from .plots import plot_estimates, plot_rate_heatmaps

CELL = ["teacher", "method", "v", "task.n", "task.spectrum", "task.r_star", "n_samples", "task.sigma"]
PAPER_ESTIMATORS = ("numerical_rank", "energy_effective_rank", "realised_mixer_energy_rank")
ESTIMATORS = (*ESTIMATE_KEYS, "mean_mixer_energy_rank")

#: Column holding the estimator's value on the ground truth (default ``true_<key>``: on K*'s spectrum).
TRUE_COLUMN = {
    "noise_calibrated_rank": "task.r_star",
    "realised_mixer_energy_rank": "teacher_mixer_energy_rank",
    "mean_mixer_energy_rank": "teacher_meanmixer_energy_rank",
}


def in_domain(method: str, v: str, n: int, d: int, d_v: int, r_star: int) -> bool:
    """Whether ``method`` can identify ``r_star`` in this setting in principle (module docstring)."""
    if method == "linear_v_known":
        return v == "known"
    if method == "linear_v_unknown":
        return True if n > d else (r_star < d if n == d else r_star < min(n, d_v))
    if method == "softmax_log_attention":
        return v == "known" and n <= min(d, d_v)
    return False


def with_domain(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` plus a boolean ``in_domain`` column."""
    out = table.copy()
    out["in_domain"] = [
        in_domain(
            r["method"], r["v"], int(r["task.n"]), int(r["task.d"]), int(r["task.d_v"]), int(r["task.r_star"])
        )
        for _, r in out.iterrows()
    ]
    return out


def rate_table(table: pd.DataFrame) -> pd.DataFrame:
    """Per cell (spectra separate): exact-recovery rate, flagged and confident-wrong rates, mean r_hat."""
    g = table.groupby(CELL, sort=True)
    out = g.agg(
        rate=("exact", "mean"),
        flagged=("identifiable", lambda s: float((1 - s).mean())),
        confident_wrong=("confident_wrong", "mean"),
        mean_r_hat=("r_hat", "mean"),
        median_cpu_s=("cpu_s", "median"),
        runs=("exact", "size"),
    )
    return out.reset_index()


def estimate_table(table: pd.DataFrame) -> pd.DataFrame:
    """Per cell and estimator: mean estimate, the estimator on K* (``true``) and the rate of round(estimate) == r*."""
    rows = []
    for key in ESTIMATORS:
        col = f"est_{key}"
        if col not in table:
            continue
        have = table[table[col].notna()]
        for cell, g in have.groupby(CELL, sort=True):
            ref = TRUE_COLUMN.get(key, f"true_{key}")
            true = g[ref].mean() if ref in g else np.nan
            rows.append(
                {
                    **dict(zip(CELL, cell)),
                    "estimator": key,
                    "mean_estimate": float(g[col].mean()),
                    "true_value": float(true),
                    "exact_rate": float((np.floor(g[col] + 0.5) == g["task.r_star"]).mean()),
                    "runs": int(len(g)),
                }
            )
    return pd.DataFrame(rows)


def pool_spectra(rates: pd.DataFrame) -> pd.DataFrame:
    """``rates`` with the spectra pooled (run-weighted mean rate per remaining cell)."""
    keys = [c for c in CELL if c != "task.spectrum"]
    g = rates.assign(hits=rates["rate"] * rates["runs"]).groupby(keys, sort=True)[["hits", "runs"]].sum()
    return g.assign(rate=g["hits"] / g["runs"]).drop(columns="hits").reset_index()


def frontier_table(rates: pd.DataFrame, sigma_ref: float, level: float) -> pd.DataFrame:
    """Per (teacher, method, v, n, r*): smallest N with rate >= level at ``sigma_ref``, largest σ with
    rate >= level at the largest N (spectra pooled); NaN when none reaches it."""
    pooled = pool_spectra(rates)
    rows = []
    for key, g in pooled.groupby(["teacher", "method", "v", "task.n", "task.r_star"]):
        at_ref = g[np.isclose(g["task.sigma"], sigma_ref) & (g["rate"] >= level)]
        at_max = g[(g["n_samples"] == g["n_samples"].max()) & (g["rate"] >= level)]
        rows.append(
            {
                **dict(zip(["teacher", "method", "v", "task.n", "task.r_star"], key)),
                "min_N_exact": float(at_ref["n_samples"].min()) if len(at_ref) else np.nan,
                "max_sigma_exact": float(at_max["task.sigma"].max()) if len(at_max) else np.nan,
                "N_max": int(g["n_samples"].max()),
            }
        )
    return pd.DataFrame(rows)


def _with_reasons(table: pd.DataFrame, records: list[dict]) -> pd.DataFrame:
    reasons = {r["run_id"]: (r.get("curves") or {}).get("reason", "") for r in records}
    return table.assign(reason=table["run_id"].map(reasons).fillna(""))


def prepare(cfg, rows: pd.DataFrame, records: list[dict]) -> tuple[pd.DataFrame, ClaimContext]:
    """The predictions with each run's domain and reason; the recovery rates and frontier over all of them."""
    if not len(rows):
        return rows, ClaimContext(records)
    rows = with_domain(_with_reasons(rows, records))
    rates = rate_table(rows)
    frontier = frontier_table(rates, cfg.task.sigma_ref, cfg.verdict.rate)
    return rows, ClaimContext(records, {"rates": rates, "frontier": frontier})


def analyse(
    cfg, table: pd.DataFrame, rows: pd.DataFrame, context: ClaimContext, verdicts: list[Verdict]
) -> Analysis:
    """The result table, extra tables, figures and notes beside the decided ``verdicts``."""
    if not len(rows):
        return Analysis(results=table, verdicts=verdicts)
    rates, frontier = context.tables["rates"], context.tables["frontier"]
    estimates = estimate_table(rows)
    domain = [
        in_domain(m, v, n, cfg.task.d, cfg.task.d_v, r)
        for m, v, n, r in rates[["method", "v", "task.n", "task.r_star"]].itertuples(index=False)
    ]
    figures = {
        **plot_rate_heatmaps(rates.assign(in_domain=domain), cfg.task.sigma_ref),
        **plot_estimates(estimates, cfg.task.sigma_ref),
    }
    cpu = rows.groupby("method")["cpu_s"].median()
    sat = rows[rows["teacher"] == "softmax"]["row_entropy_ratio"]
    notes = [
        "No training: r_hat is the predictor's noise-calibrated cut (predict.cut): the number of singular values of "
        "K_hat above 1.5 × the 95% quantile of the top singular value of a simulated null (fresh noise pushed through "
        "the same equations and weights), cross-checked against the largest gap of the spectrum. "
        f"d = {cfg.task.d}, d_v = {cfg.task.d_v}, n = {', '.join(str(n) for n in cfg.task.ns)}, c = {cfg.task.c:g}, "
        f"spectra {', '.join(cfg.task.spectra)} (geometric decay {cfg.task.decay:g}), {cfg.seeds} seed(s) per cell; (N, σ) "
        f"cells: {'full grid' if cfg.full_grid else f'an N sweep at σ = {cfg.task.sigma_ref:g} and a σ sweep at the largest N'}.",
        "Median CPU seconds per prediction: " + ", ".join(f"{m} {v:.3f}" for m, v in cpu.items()) + ".",
        "Runs outside a method's domain are kept (they should answer 'not identifiable'); 'confident_wrong' counts runs "
        "that claim identifiability and miss r*. The reason of every prediction is the 'reason' column of results/E6.csv.",
    ]
    if cfg.c10_ns and rows["task.n"].isin(cfg.c10_ns).any():
        notes.append(
            f"C10 (d) cells: n = {', '.join(str(n) for n in cfg.c10_ns)} with r* = "
            f"{', '.join(str(r) for r in cfg.c10_r_stars)} (r* >> n), softmax_linearised only, at the largest N and "
            f"every σ <= {cfg.verdict.sigma_max:g}; (b) and (c) are decided on n = {', '.join(str(n) for n in cfg.task.ns)}."
        )
    if len(sat) and sat.notna().any():
        notes.append(
            f"Softmax teacher saturation: row entropy / log n = {sat.mean():.2f} (mean over softmax runs)."
        )
    return Analysis(
        results=rows,
        verdicts=verdicts,
        figures=figures,
        tables={"recovery_rates": rates, "frontier": frontier, "estimates": estimates},
        notes=notes,
    )


#: A teacher draw: the runs of one (draw, teacher kind, n, r*, spectrum, seed) share the teacher (its
#: noise levels and sample sizes are fits of the same draw; every draw re-draws the seeds' teachers).
TEACHER = (DRAW, "teacher", "task.n", "task.r_star", "task.spectrum", "seed")
TEACHER_DRAW = Unit("teacher draw", TEACHER)


def rates_by_r(g: pd.DataFrame, col: str = "exact") -> dict[int, float]:
    return {int(r): float(h[col].mean()) for r, h in g.groupby("task.r_star")}


def at_scale(table: pd.DataFrame, sigma_max: float) -> pd.DataFrame:
    """Runs at the largest N with σ <= sigma_max (where 'sufficient scale' is judged)."""
    if not len(table):
        return table
    return table[
        (table["n_samples"] == table["n_samples"].max()) & (table["task.sigma"] <= sigma_max + 1e-12)
    ]


def undecided_reason(evidence: dict, what: str) -> str:
    """Why a finding is inconclusive, in words: the decisive statistic's interval reaches its boundary
    (more ``what`` move it off), or nothing was decided at all."""
    d = evidence.get("decision")
    if not d or d.get("units") is None:
        return f"no statistic was decided: the rows hold no {what} in the cells the rule reads"
    lo, hi = d["interval"]
    return (
        f"{d.get('condition', 'the statistic')}: {d['statistic']:.3g} over {d['units']} {what}, 95% interval "
        f"[{lo:.3g}, {hi:.3g}] reaches its boundary {d['threshold']:g}; more {what} decide it"
    )
