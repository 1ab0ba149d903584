"""E5's figures: rank trajectories, final spectra and the estimator error heat map."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...plotting import (
    figure_grid,
    label_spectrum_axes,
    legend_below,
    panel_grid,
    plot_spectrum,
    sweep_colour,
)
from ...spectra import estimate_all
from .config import ENERGY, estimator_columns
from .recovery import c7_estimator


def _panels(rows: pd.DataFrame) -> list[tuple[str, str]]:
    return [
        (k, s)
        for k in ("linear", "softmax")
        for s in sorted(rows["task.spectrum"].unique())
        if k in set(rows["teacher"])
    ]


def plot_trajectories(cfg, rows: pd.DataFrame, records: list[dict], seeds):
    """Energy effective rank (solid) and the C7 estimator (dashed) of K over training, per r* and init."""
    curves = {r["run_id"]: r.get("curves") or {} for r in records}
    r_stars, panels = sorted(rows["task.r_star"].unique()), _panels(rows)
    fig, axes = panel_grid(len(r_stars) * len(panels), width=3.3, height=2.5)
    for i, r_star in enumerate(r_stars):
        for j, (kind, spectrum) in enumerate(panels):
            ax = axes[i * len(panels) + j]
            g = rows[
                (rows["task.r_star"] == r_star)
                & (rows["teacher"] == kind)
                & (rows["task.spectrum"] == spectrum)
            ]
            for _, row in g[g["seed"] == g["seed"].min()].iterrows():
                c = curves.get(row["run_id"], {})
                spectra = np.asarray(c.get("spectrum_K", []), dtype=float)  # (T, h, r)
                if spectra.size == 0:
                    continue
                est = estimate_all(spectra.mean(1), shape=(cfg.task.d, cfg.task.d))
                steps = np.maximum(np.asarray(c["step"]), 1)
                colour = sweep_colour(row["init_scale"], "init")
                ax.plot(steps, est[ENERGY], "-", color=colour, lw=1.0, label=f"init {row['init_scale']:g}")
                ax.plot(steps, est[c7_estimator(cfg, seeds)], "--", color=colour, lw=0.8)
            ax.axhline(r_star, color="k", lw=0.8, ls=":")
            ax.set_xscale("log")
            ax.set_title(f"{kind}, {spectrum}, r* = {r_star}", fontsize=8)
            ax.set_xlabel("training step")
            ax.set_ylabel("rank estimate of K")
    legend_below(fig, axes)
    fig.suptitle(
        f"E5: energy effective rank (solid) and {c7_estimator(cfg, seeds)} (dashed) of K over training",
        fontsize=10,
    )
    return fig


def plot_final_spectra(cfg, rows: pd.DataFrame, records: list[dict]):
    """Final singular values of the learned K (smallest init, first seed), r* marked per curve."""
    curves = {r["run_id"]: r.get("curves") or {} for r in records}
    panels = _panels(rows)
    fig, axes = panel_grid(len(panels), width=3.4, height=2.8)
    for j, (kind, spectrum) in enumerate(panels):
        ax = axes[j]
        g = rows[(rows["teacher"] == kind) & (rows["task.spectrum"] == spectrum)]
        g = g[(g["init_scale"] == g["init_scale"].min()) & (g["seed"] == g["seed"].min())]
        for _, row in g.sort_values("task.r_star").iterrows():
            s = np.asarray(curves.get(row["run_id"], {}).get("spectrum_K", [[[]]])[-1], dtype=float).mean(0)
            line = plot_spectrum(
                ax,
                s,
                marker=".",
                ms=3,
                lw=0.8,
                color=sweep_colour(row["task.r_star"], "r_star"),
                label=f"r* = {row['task.r_star']}",
            )
            ax.axvline(row["task.r_star"] + 0.5, color=line.get_color(), lw=0.7, ls=":")
        ax.set_title(f"learned K, {kind}, {spectrum}", fontsize=9)
        label_spectrum_axes(ax, "K")
    legend_below(fig, axes)
    fig.suptitle("E5: final spectrum of the learned K (smallest init; r* dotted)", fontsize=10)
    return fig


def plot_error_heatmap(errors: pd.DataFrame):
    """Mean |estimate − r*| per estimator (rows) and (teacher, spectrum, r*) (columns), over seeds and
    the small init scales (and V settings) of the error table, as the title says."""
    pivot = errors.pivot_table(
        index="estimator", columns=["teacher", "spectrum", "r_star"], values="mean_abs_error", aggfunc="mean"
    )
    pivot = pivot.reindex(
        [c for c in estimator_columns(pd.DataFrame(columns=errors["estimator"].unique())) if c in pivot.index]
    )
    fig, axes = figure_grid(
        1, 1, width=max(6.0, 0.8 * pivot.shape[1] + 4.5), height=max(3.0, 0.3 * pivot.shape[0] + 1.4)
    )
    ax = axes[0][0]
    values = pivot.to_numpy(dtype=float)
    im = ax.imshow(np.log10(1e-2 + values), cmap="viridis_r", aspect="auto")
    for (a, b), v in np.ndenumerate(values):
        ax.text(b, a, f"{v:.2g}", ha="center", va="center", fontsize=7, color="w" if v > 1 else "k")
    ax.set_xticks(range(pivot.shape[1]), [f"{t}\n{s}\nr* = {r}" for t, s, r in pivot.columns], fontsize=7)
    ax.set_yticks(range(pivot.shape[0]), pivot.index, fontsize=7)
    ax.xaxis.tick_top()
    fig.colorbar(im, ax=ax, label="log10(0.01 + mean |estimate − r*|)", shrink=0.6)
    fig.suptitle(
        "E5: mean |estimate − r*| per estimator\n(identified data; mean over seeds, V settings and small init scales)",
        fontsize=9,
    )
    return fig
