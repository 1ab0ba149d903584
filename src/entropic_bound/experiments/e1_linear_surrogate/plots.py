"""E1's figures: excess risk vs rank against the tail energy, and the learned spectra."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...plotting import (
    colour,
    figure_grid,
    label_spectrum_axes,
    legend_below,
    log_with_zero,
    mark_floor,
    panel_grid,
    plot_spectrum,
    sweep_colour,
)
from ...theory import tail_energy_curve
from ..framework.decision import curves_by_run


def plot_excess_vs_rank(cfg, rows: pd.DataFrame, records: list[dict]):
    """Relative excess risk vs rank, one panel per (spectrum, r*), with the tail-energy curve.

    The closed form is exactly 0 at r >= r*: a symlog axis (linear band shaded near 0) draws it at 0
    rather than at an arbitrary floor. V known / V learned sit at small x offsets; the finite-N
    optimum is an open marker over each trained (filled) one so neither hides the other.
    """
    curves = curves_by_run(records)
    spectra, r_stars = sorted(rows["task.spectrum"].unique()), sorted(rows["task.r_star"].unique())
    fig, axes = panel_grid(len(spectra) * len(r_stars), width=3.4, height=2.8)
    positive = rows["rel_excess"][rows["rel_excess"] > 0]
    smallest = float(positive.min()) if len(positive) else 1e-6
    for k, (spectrum, r_star) in enumerate((s, r) for s in spectra for r in r_stars):
        ax = axes[k]
        g = rows[(rows["task.spectrum"] == spectrum) & (rows["task.r_star"] == r_star)]
        if not len(g):
            ax.set_visible(False)
            continue
        s = np.asarray(curves[g["run_id"].iloc[0]].get("teacher_singular_values", []))
        ranks = np.arange(0, cfg.task.n + 1)
        if len(s):
            tail = tail_energy_curve(s, ranks) / np.sum(s**2)
            ax.plot(ranks, tail, "-", color=colour("closed form"), lw=1.2, label="closed form (tail energy)")
        for v, dx in (("known", -0.15), ("learned", 0.15)):
            gv = g[g["v"] == v]
            if not len(gv):
                continue
            c = colour(v)
            ax.plot(gv["rank"] + dx, gv["rel_excess"], "o", ms=4, color=c, ls="", label=f"trained, V {v}")
            opt = gv["finite_sample_optimum"] / gv["signal"]
            if np.isfinite(opt).any():
                ax.plot(
                    gv["rank"] + dx,
                    opt,
                    "D",
                    ms=6,
                    mfc="none",
                    mec=c,
                    mew=0.9,
                    ls="",
                    label=f"finite-N optimum, V {v}",
                )
        ax.axvline(r_star, color="tab:red", lw=0.8, ls=":")
        mark_floor(ax, cfg.verdict.eps_floor, "ε_floor")
        log_with_zero(ax, smallest)
        ax.set_title(f"{spectrum}, r* = {r_star}", fontsize=9)
        ax.set_xlabel("student rank r")
        ax.set_ylabel("relative excess risk")
    legend_below(fig, axes, ncol=3)
    fig.suptitle("E1: excess risk vs rank (B0); the closed form is exactly 0 at r ≥ r*", fontsize=10)
    return fig


def plot_learned_spectra(cfg, rows: pd.DataFrame, records: list[dict]):
    """Final singular values of the learned A at the largest rank, against the teacher's."""
    curves = curves_by_run(records)
    spectra = sorted(rows["task.spectrum"].unique())
    fig, axes = figure_grid(1, len(spectra), width=3.6, height=2.8)
    for j, spectrum in enumerate(spectra):
        ax = axes[0][j]
        g = rows[
            (rows["task.spectrum"] == spectrum)
            & (rows["rank"] == rows["rank"].max())
            & (rows["seed"] == rows["seed"].min())
        ]
        for _, row in g.sort_values(["task.r_star", "v"]).iterrows():
            c = curves[row["run_id"]]
            plot_spectrum(
                ax,
                c.get("spectrum_A", [[]])[-1],
                marker=".",
                lw=0.8,
                color=sweep_colour(row["task.r_star"], "r_star"),
                ls="-" if row["v"] == "known" else "--",
                label=f"r* = {row['task.r_star']}, V {row['v']}",
            )
        ax.set_title(f"learned A (r = {int(rows['rank'].max())}), {spectrum}", fontsize=9)
        label_spectrum_axes(ax, "A")
    legend_below(fig, axes, ncol=4)
    return fig
