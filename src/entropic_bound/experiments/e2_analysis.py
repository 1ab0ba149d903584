"""E2's analysis: recovery table, verdict C3 and figures — pure functions of stored rows."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..plotting import label_spectrum_axes, legend_below, panel_grid, plot_spectrum, sweep_colour
from ..spectra import ESTIMATOR_KEYS, estimate_all
from .base import Analysis, Verdict, curves_by_run, decide, draw_figures, split_status
from .claim_slices import grid_setting, row_slices, sliced_boundary, with_option

KEYS = list(ESTIMATOR_KEYS)


def recovery_table(ok: pd.DataFrame) -> pd.DataFrame:
    """Exact-recovery rate of every estimator by optimiser, init scale and sample count."""
    rows = []
    for (opt, init, n_samples), g in ok.groupby(["train.optimizer", "init_scale", "train.n_samples"]):
        row = {
            "optimizer": opt,
            "init_scale": init,
            "n_samples": n_samples,
            "identified": bool(g["identified"].iloc[0]),
            "runs": len(g),
            "median_rel_error": float(g["rel_error"].median()),
        }
        for key in KEYS:
            col = f"A_{key}"
            if col in g:
                row[f"exact_{key}"] = float((np.rint(g[col]) == g["task.r_star"]).mean())
        rows.append(row)
    return pd.DataFrame(rows)


def analyse_e2(cfg, table: pd.DataFrame, records: list[dict]) -> Analysis:
    ok, n_diverged = split_status(table)
    tables = {"recovery": recovery_table(ok)} if len(ok) else {}
    plots = {
        "e2_effective_rank_over_training": plot_rank_trajectories,
        "e2_final_spectra": plot_final_spectra,
    }
    figures = draw_figures(plots, cfg, ok, records)
    notes = [
        f"Over-parameterised B0 (r = n = {cfg.task.n}), V known, d = d_v = {cfg.task.d}, σ = {cfg.task.sigma:g}; plain GD lr "
        f"{cfg.train.lr:g} and Adam lr {cfg.adam_lr:g}, {cfg.train.steps} full-batch steps. A data set of N "
        f"sequences identifies A when N·d_v ≥ n (here N ≥ {int(np.ceil(cfg.task.n / cfg.task.d))}).",
        "Estimates are rounded to the nearest integer for the exact-recovery rates.",
    ]
    results = (
        table.drop(
            columns=[
                c
                for c in table.columns
                if c.startswith("train.") and c not in ("train.optimizer", "train.n_samples", "train.lr")
            ]
        )
        if len(table)
        else table
    )
    return Analysis(
        results=results,
        verdicts=[c3_with_boundary(cfg, ok, n_diverged)],
        figures=figures,
        tables=tables,
        notes=notes,
    )


def _rate(g: pd.DataFrame, key: str) -> float:
    return float((np.rint(g[f"A_{key}"]) == g["task.r_star"]).mean()) if len(g) else float("nan")


#: C3 boundary: estimators whose value on the learned A is decided again (the default among them).
C3_ESTIMATORS = ("numerical_rank", "largest_gap_rank", "energy_effective_rank")


def c3_with_boundary(cfg, ok: pd.DataFrame, n_diverged: int = 0) -> Verdict:
    """C3, decided again per r*, spectrum, seed, identifying sample count and estimator."""
    axes = (("r_stars", "task.r_star"), ("spectra", "task.spectrum"), ("seed", "seed"))
    ident = ok[ok["identified"] > 0.5] if len(ok) else ok
    options = [
        (
            {"c3_estimator": k},
            lambda k=k: _verdict_c3(with_option(cfg, {"verdict.c3_estimator": k}), ok, n_diverged),
        )
        for k in C3_ESTIMATORS
        if k != cfg.verdict.c3_estimator
    ]
    options += [
        (s, lambda r=r: _verdict_c3(cfg, r, n_diverged))
        for s, r in row_slices(ident, (("sample_counts", "train.n_samples"),))
    ]
    default = grid_setting(cfg, "task.r_stars", "task.spectra", "sample_counts", "verdict.c3_estimator")
    return sliced_boundary(
        lambda r: _verdict_c3(cfg, r, n_diverged), ok, default, axes, "rate_gd_small_init_identified", options
    )


def _verdict_c3(cfg, ok: pd.DataFrame, n_diverged: int) -> Verdict:
    key = cfg.verdict.c3_estimator
    criterion = (
        f"the {key} of the learned A equals r* in at least {cfg.verdict.c3_rate:.0%} of plain-GD runs from small init "
        f"(init scale <= {cfg.verdict.small_init_max:g}) on data that identify A (N·d_v >= n)"
    )
    if not len(ok):
        evidence = {"runs": 0, "excluded_diverged": n_diverged}
        return Verdict("C3", "inconclusive", criterion, evidence, "E2", "GD from small init recovers rank r*")
    small = ok["init_scale"] <= cfg.verdict.small_init_max
    ident = ok["identified"] > 0.5
    gd = ok["train.optimizer"] == "gd"
    sel = ok[gd & small & ident]
    evidence = {
        "estimator": key,
        "rate_gd_small_init_identified": _rate(sel, key),
        "runs": int(len(sel)),
        "rate_every_estimator": {k: _rate(sel, k) for k in KEYS if f"A_{k}" in ok},
        "rate_gd_large_init_identified": _rate(ok[gd & ~small & ident], key),
        "rate_adam_small_init_identified": _rate(ok[~gd & small & ident], key),
        "rate_gd_small_init_under_identified": _rate(ok[gd & small & ~ident], key),
        "median_rel_error_gd_small_identified": float(sel["rel_error"].median()) if len(sel) else None,
        "median_rel_error_gd_small_under_identified": float(ok[gd & small & ~ident]["rel_error"].median())
        if len(ok[gd & small & ~ident])
        else None,
        "excluded_diverged": n_diverged,
    }
    verdict = decide(
        None if not len(sel) else evidence["rate_gd_small_init_identified"] >= cfg.verdict.c3_rate
    )
    return Verdict(
        "C3",
        verdict,
        criterion,
        evidence,
        "E2",
        "gradient descent from small init on an over-parameterised A = PQᵀ concentrates at rank r*",
    )


def _trajectory(curves: dict, key: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    spectra = np.asarray(curves.get("spectrum_A", []), dtype=float)
    if spectra.size == 0:
        return np.array([]), np.array([])
    values = estimate_all(spectra, shape=(n, n))[key]
    return np.asarray(curves["step"]), values


def plot_rank_trajectories(cfg, ok: pd.DataFrame, records: list[dict]):
    """Energy effective rank and the C3 estimator of A over training, per r* and N."""
    curves = curves_by_run(records)
    r_stars, counts = sorted(ok["task.r_star"].unique()), sorted(ok["train.n_samples"].unique())
    fig, axes = panel_grid(len(r_stars) * len(counts), width=3.6, height=2.8)
    for i, r_star in enumerate(r_stars):
        for j, n_samples in enumerate(counts):
            ax = axes[i * len(counts) + j]
            g = ok[
                (ok["task.r_star"] == r_star)
                & (ok["train.n_samples"] == n_samples)
                & (ok["seed"] == ok["seed"].min())
            ]
            for _, row in g.sort_values(["train.optimizer", "init_scale"]).iterrows():
                steps, values = _trajectory(curves[row["run_id"]], "energy_effective_rank", cfg.task.n)
                ls = "-" if row["train.optimizer"] == "gd" else "--"
                ax.plot(
                    np.maximum(steps, 1),
                    values,
                    ls,
                    color=sweep_colour(row["init_scale"], "init"),
                    lw=1.1,
                    label=f"{row['train.optimizer']}, init {row['init_scale']:g}",
                )
            ax.axhline(r_star, color="k", lw=0.8, ls=":")
            ax.set_xscale("log")
            ident = "identified" if cfg.identified(int(n_samples)) else "under-identified"
            ax.set_title(f"r* = {r_star}, N = {n_samples} ({ident})", fontsize=9)
            ax.set_xlabel("training step")
            ax.set_ylabel("energy effective rank of A")
    legend_below(fig, axes)
    fig.suptitle("E2: effective rank of the learned A over training (GD solid, Adam dashed)", fontsize=10)
    return fig


def plot_final_spectra(cfg, ok: pd.DataFrame, records: list[dict]):
    """Final singular values of A (log scale) per init scale, identified data, r* marked."""
    curves = curves_by_run(records)
    r_stars = sorted(ok["task.r_star"].unique())
    fig, axes = panel_grid(len(r_stars), width=3.6, height=2.8)
    for j, r_star in enumerate(r_stars):
        ax = axes[j]
        g = ok[(ok["task.r_star"] == r_star) & (ok["identified"] > 0.5) & (ok["seed"] == ok["seed"].min())]
        g = g[g["train.n_samples"] == g["train.n_samples"].max()]
        for _, row in g.sort_values(["train.optimizer", "init_scale"]).iterrows():
            plot_spectrum(
                ax,
                curves[row["run_id"]].get("spectrum_A", [[]])[-1],
                floor=1e-14,
                ls="-" if row["train.optimizer"] == "gd" else "--",
                color=sweep_colour(row["init_scale"], "init"),
                marker=".",
                lw=0.9,
                label=f"{row['train.optimizer']}, init {row['init_scale']:g}",
            )
        ax.axvline(r_star + 0.5, color="tab:red", lw=0.8, ls=":")
        ax.set_title(f"final spectrum of A, r* = {r_star}", fontsize=9)
        label_spectrum_axes(ax, "A")
    legend_below(fig, axes)
    fig.suptitle("E2: final spectrum of A, identified data (GD solid, Adam dashed)", fontsize=10)
    return fig
