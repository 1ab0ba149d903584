"""E2's figures: effective rank over training and the final spectra."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...plotting import label_spectrum_axes, legend_below, panel_grid, plot_spectrum, sweep_colour
from ...spectra import estimate_all
from ..framework.decision import curves_by_run


def _trajectory(curves: dict, key: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    spectra = np.asarray(curves.get("spectrum_A", []), dtype=float)
    if spectra.size == 0:
        return np.array([]), np.array([])
    values = estimate_all(spectra, shape=(n, n))[key]
    return np.asarray(curves["step"]), values


def plot_rank_trajectories(cfg, rows: pd.DataFrame, records: list[dict]):
    """Energy effective rank and the C3 estimator of A over training, per r* and N."""
    curves = curves_by_run(records)
    r_stars, counts = sorted(rows["task.r_star"].unique()), sorted(rows["train.n_samples"].unique())
    fig, axes = panel_grid(len(r_stars) * len(counts), width=3.6, height=2.8)
    for i, r_star in enumerate(r_stars):
        for j, n_samples in enumerate(counts):
            ax = axes[i * len(counts) + j]
            g = rows[
                (rows["task.r_star"] == r_star)
                & (rows["train.n_samples"] == n_samples)
                & (rows["seed"] == rows["seed"].min())
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


def plot_final_spectra(cfg, rows: pd.DataFrame, records: list[dict]):
    """Final singular values of A (log scale) per init scale, identified data, r* marked."""
    curves = curves_by_run(records)
    r_stars = sorted(rows["task.r_star"].unique())
    fig, axes = panel_grid(len(r_stars), width=3.6, height=2.8)
    for j, r_star in enumerate(r_stars):
        ax = axes[j]
        g = rows[
            (rows["task.r_star"] == r_star)
            & (rows["identified"] > 0.5)
            & (rows["seed"] == rows["seed"].min())
        ]
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
