"""E5's analysis: estimator-error table, verdicts C7 and C8, figures — pure functions of stored rows.

Errors are ``|estimate − r*|`` of the continuous estimate (integer estimators are integers), over
the ok runs from small init (``init_scale <= small_init_max``). Kernel estimators read the learned
``K``'s spectrum (``K_<key>``); the realised-mixer variants (``mixer_<key>`` per input then averaged,
``meanmixer_<key>`` on the mean mixer) are listed beside them but C8 ranks kernel estimators only.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..plotting import figure_grid, legend_below, panel_grid, sweep_colour
from ..spectra import ESTIMATOR_KEYS, estimate_all
from .base import Analysis, Verdict, decide, split_status

KEYS = list(ESTIMATOR_KEYS)
ENERGY = "energy_effective_rank"


def estimator_columns(table: pd.DataFrame) -> list[str]:
    """Kernel, then mixer, then mean-mixer estimate columns present in ``table``."""
    return [f"{p}_{k}" for p in ("K", "mixer", "meanmixer") for k in KEYS if f"{p}_{k}" in table.columns]


def error_table(small: pd.DataFrame) -> pd.DataFrame:
    """Mean and max ``|estimate − r*|`` per (estimator column, teacher, spectrum, r*)."""
    rows = []
    for col in estimator_columns(small):
        for (kind, spectrum, r_star), g in small.groupby(["teacher", "task.spectrum", "task.r_star"]):
            err = (g[col] - r_star).abs()
            rows.append(
                {
                    "estimator": col,
                    "teacher": kind,
                    "spectrum": spectrum,
                    "r_star": int(r_star),
                    "mean_abs_error": float(err.mean()),
                    "max_abs_error": float(err.max()),
                    "mean_estimate": float(g[col].mean()),
                    "runs": int(len(g)),
                }
            )
    return pd.DataFrame(rows)


def estimator_ranking(errors: pd.DataFrame, teacher: str) -> pd.Series:
    """Kernel estimators sorted by mean |error| over ``teacher``'s cells (best first)."""
    g = errors[(errors["teacher"] == teacher) & errors["estimator"].str.startswith("K_")]
    return g.groupby("estimator")["mean_abs_error"].mean().sort_values()


def analyse_e5(cfg, table: pd.DataFrame, records: list[dict]) -> Analysis:
    ok, n_diverged = split_status(table)
    small = ok[ok["init_scale"] <= cfg.small_init_max] if len(ok) else ok
    errors = error_table(small) if len(small) else pd.DataFrame()
    verdicts = [verdict_c7(cfg, small, ok, n_diverged), verdict_c8(cfg, errors, n_diverged)]
    tables, figures = {}, {}
    if len(errors):
        tables["estimator_errors"] = errors
    if len(ok):
        figures["e5_estimators_over_training"] = plot_trajectories(cfg, ok, records)
        figures["e5_final_spectra"] = plot_final_spectra(cfg, ok, records)
    if len(errors):
        figures["e5_estimator_error_heatmap"] = plot_error_heatmap(errors)
    notes = [
        f"Students of width r = d = {cfg.d} (B1 for the linear teacher, B2 for the softmax teacher), V "
        f"{'/'.join(cfg.v_settings)}, trained by {cfg.train.optimizer} (lr {cfg.train.lr:g}, {cfg.train.steps} "
        f"full-batch steps) on N = {cfg.train.n_samples} sequences (n = {cfg.n}, σ = {cfg.sigma:g}, c = {cfg.c:g}); "
        f"init scales {', '.join(f'{s:g}' for s in cfg.init_scales)} (small: <= {cfg.small_init_max:g}).",
        f"Realised-mixer ranks use {cfg.n_mixer} held-out inputs; the teacher's own realised-mixer ranks are the "
        "teacher_mixer_* / teacher_meanmixer_* columns. Gavish-Donoho returns 0 when r* >= d/2 (SPEC §4).",
    ]
    return Analysis(results=table, verdicts=verdicts, figures=figures, tables=tables, notes=notes)


def _recovery_rate(g: pd.DataFrame, col: str, tol: float) -> float | None:
    return float(((g[col] - g["task.r_star"]).abs() <= tol).mean()) if len(g) else None


def verdict_c7(cfg, small: pd.DataFrame, ok: pd.DataFrame, n_diverged: int) -> Verdict:
    col = f"K_{cfg.c7_estimator}"
    criterion = (
        f"for each teacher, at least {cfg.c7_rate:.0%} of GD runs from small init (<= {cfg.small_init_max:g}) "
        f"have |{cfg.c7_estimator}(K) - r*| <= {cfg.c7_tolerance:g}"
    )
    statement = "GD from small init on an over-parameterised attention student learns a kernel of rank r*"
    if not len(small) or col not in small:
        return Verdict(
            "C7", "inconclusive", criterion, {"runs": 0, "excluded_diverged": n_diverged}, "E5", statement
        )
    by = {}
    for kind, g in small.groupby("teacher"):
        by[kind] = {
            "rate": _recovery_rate(g, col, cfg.c7_tolerance),
            "runs": int(len(g)),
            "rate_by_r_star": {
                int(r): _recovery_rate(h, col, cfg.c7_tolerance) for r, h in g.groupby("task.r_star")
            },
            "rate_energy_effective_rank": _recovery_rate(g, f"K_{ENERGY}", cfg.c7_tolerance),
            "median_rel_excess": float(g["rel_excess"].median()),
            "median_kernel_rel_error": float(g["kernel_rel_error"].median()),
        }
    large = ok[ok["init_scale"] > cfg.small_init_max]
    evidence = {
        "estimator": cfg.c7_estimator,
        "tolerance": cfg.c7_tolerance,
        "by_teacher": by,
        "rate_large_init": _recovery_rate(large, col, cfg.c7_tolerance),
        "excluded_diverged": n_diverged,
    }
    return Verdict(
        "C7", decide(all(b["rate"] >= cfg.c7_rate for b in by.values())), criterion, evidence, "E5", statement
    )


def verdict_c8(cfg, errors: pd.DataFrame, n_diverged: int) -> Verdict:
    criterion = (
        "rank the kernel estimators by mean |estimate - r*| over the softmax teacher's (spectrum, r*) cells "
        f"(small init); confirmed iff the energy effective rank is within {cfg.c8_margin:g} of the best"
    )
    statement = "the energy effective rank is the estimator robust to softmax"
    if not len(errors) or "softmax" not in set(errors["teacher"]):
        return Verdict(
            "C8", "inconclusive", criterion, {"cells": 0, "excluded_diverged": n_diverged}, "E5", statement
        )
    soft = estimator_ranking(errors, "softmax")
    lin = (
        estimator_ranking(errors, "linear") if "linear" in set(errors["teacher"]) else pd.Series(dtype=float)
    )
    energy = soft.get(f"K_{ENERGY}", np.nan)
    best = soft.index[0]
    evidence = {
        "best_under_softmax": best.removeprefix("K_"),
        "best_error": float(soft.iloc[0]),
        "tied_best": [k.removeprefix("K_") for k, v in soft.items() if v <= soft.iloc[0] + 1e-9],
        "energy_effective_rank_error_softmax": float(energy),
        "energy_is_best": best == f"K_{ENERGY}",
        "softmax_errors": {k.removeprefix("K_"): round(float(v), 4) for k, v in soft.items()},
        "linear_errors": {k.removeprefix("K_"): round(float(v), 4) for k, v in lin.items()},
        "softmax_minus_linear": {
            k.removeprefix("K_"): round(float(soft[k] - lin[k]), 4) for k in soft.index if k in lin
        },
        "excluded_diverged": n_diverged,
    }
    ok_flag = None if not np.isfinite(energy) else bool(energy <= soft.iloc[0] + cfg.c8_margin)
    return Verdict("C8", decide(ok_flag), criterion, evidence, "E5", statement)


def _panels(ok: pd.DataFrame) -> list[tuple[str, str]]:
    return [
        (k, s)
        for k in ("linear", "softmax")
        for s in sorted(ok["task.spectrum"].unique())
        if k in set(ok["teacher"])
    ]


def plot_trajectories(cfg, ok: pd.DataFrame, records: list[dict]):
    """Energy effective rank (solid) and the C7 estimator (dashed) of K over training, per r* and init."""
    curves = {r["run_id"]: r.get("curves") or {} for r in records}
    r_stars, panels = sorted(ok["task.r_star"].unique()), _panels(ok)
    fig, axes = panel_grid(len(r_stars) * len(panels), width=3.3, height=2.5)
    for i, r_star in enumerate(r_stars):
        for j, (kind, spectrum) in enumerate(panels):
            ax = axes[i * len(panels) + j]
            g = ok[
                (ok["task.r_star"] == r_star) & (ok["teacher"] == kind) & (ok["task.spectrum"] == spectrum)
            ]
            for _, row in g[g["seed"] == g["seed"].min()].iterrows():
                c = curves.get(row["run_id"], {})
                spectra = np.asarray(c.get("spectrum_K", []), dtype=float)  # (T, h, r)
                if spectra.size == 0:
                    continue
                est = estimate_all(spectra.mean(1), shape=(cfg.d, cfg.d))
                steps = np.maximum(np.asarray(c["step"]), 1)
                colour = sweep_colour(row["init_scale"], "init")
                ax.plot(steps, est[ENERGY], "-", color=colour, lw=1.0, label=f"init {row['init_scale']:g}")
                ax.plot(steps, est[cfg.c7_estimator], "--", color=colour, lw=0.8)
            ax.axhline(r_star, color="k", lw=0.8, ls=":")
            ax.set_xscale("log")
            ax.set_title(f"{kind}, {spectrum}, r* = {r_star}", fontsize=8)
            ax.set_xlabel("training step")
            ax.set_ylabel("rank estimate of K")
    legend_below(fig, axes)
    fig.suptitle(
        f"E5: energy effective rank (solid) and {cfg.c7_estimator} (dashed) of K over training", fontsize=10
    )
    return fig


def plot_final_spectra(cfg, ok: pd.DataFrame, records: list[dict]):
    """Final singular values of the learned K (smallest init, first seed), r* marked per curve."""
    curves = {r["run_id"]: r.get("curves") or {} for r in records}
    panels = _panels(ok)
    fig, axes = panel_grid(len(panels), width=3.4, height=2.8)
    for j, (kind, spectrum) in enumerate(panels):
        ax = axes[j]
        g = ok[(ok["teacher"] == kind) & (ok["task.spectrum"] == spectrum)]
        g = g[(g["init_scale"] == g["init_scale"].min()) & (g["seed"] == g["seed"].min())]
        for _, row in g.sort_values("task.r_star").iterrows():
            s = np.asarray(curves.get(row["run_id"], {}).get("spectrum_K", [[[]]])[-1], dtype=float).mean(0)
            (line,) = ax.semilogy(
                np.arange(1, len(s) + 1),
                np.maximum(s, 1e-12),
                marker=".",
                ms=3,
                lw=0.8,
                color=sweep_colour(row["task.r_star"], "r_star"),
                label=f"r* = {row['task.r_star']}",
            )
            ax.axvline(row["task.r_star"] + 0.5, color=line.get_color(), lw=0.7, ls=":")
        ax.set_title(f"learned K, {kind}, {spectrum}", fontsize=9)
        ax.set_xlabel("index i")
        ax.set_ylabel("singular value σ_i(K)")
    legend_below(fig, axes)
    fig.suptitle("E5: final spectrum of the learned K (smallest init; r* dotted)", fontsize=10)
    return fig


def plot_error_heatmap(errors: pd.DataFrame):
    """Mean |estimate − r*| per estimator (rows) and (teacher, r*) (columns), averaged over spectra."""
    pivot = (
        errors.groupby(["estimator", "teacher", "r_star"])["mean_abs_error"]
        .mean()
        .unstack(["teacher", "r_star"])
    )
    pivot = pivot.reindex(
        [c for c in estimator_columns(pd.DataFrame(columns=errors["estimator"].unique())) if c in pivot.index]
    )
    fig, axes = figure_grid(
        1, 1, width=max(4.0, 0.7 * pivot.shape[1] + 3), height=max(3.0, 0.28 * pivot.shape[0] + 1)
    )
    ax = axes[0][0]
    values = pivot.to_numpy(dtype=float)
    im = ax.imshow(np.log10(1e-2 + values), cmap="viridis_r", aspect="auto")
    for (a, b), v in np.ndenumerate(values):
        ax.text(b, a, f"{v:.2g}", ha="center", va="center", fontsize=5, color="w" if v > 1 else "k")
    ax.set_xticks(
        range(pivot.shape[1]), [f"{t[:3]} r*={r}" for t, r in pivot.columns], fontsize=6, rotation=45
    )
    ax.set_yticks(range(pivot.shape[0]), pivot.index, fontsize=6)
    fig.colorbar(im, ax=ax, label="log10(0.01 + mean |estimate − r*|)")
    ax.set_title("E5: estimator error (small init, mean over spectra and seeds)", fontsize=9)
    return fig
