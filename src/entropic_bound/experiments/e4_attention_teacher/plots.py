"""E4's figures: excess vs rank per teacher, and the size of the transition at r = r*."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...plotting import colour, figure_grid, legend_below, panel_grid


def plot_excess_vs_rank(cfg, rows: pd.DataFrame):
    """Relative excess vs r: rows r*, columns linear | softmax; ε_floor, σ²/signal and K = 0 marked."""
    r_stars, kinds = (
        sorted(rows["task.r_star"].unique()),
        [k for k in ("linear", "softmax") if k in set(rows["teacher"])],
    )
    fig, axes = panel_grid(len(r_stars) * len(kinds), width=3.6, height=2.6)
    for i, r_star in enumerate(r_stars):
        for j, kind in enumerate(kinds):
            ax = axes[i * len(kinds) + j]
            g = rows[(rows["task.r_star"] == r_star) & (rows["teacher"] == kind)]
            for (spectrum, v), gv in g.groupby(["task.spectrum", "v"]):
                curve = gv.groupby("rank")["rel_excess"].median()
                ax.plot(
                    curve.index,
                    np.maximum(curve.to_numpy(), 1e-7),
                    "-" if v == "known" else "--",
                    marker="o" if v == "known" else "x",
                    color=colour(spectrum),
                    ms=4,
                    lw=0.9,
                    label=f"{spectrum}, V {v}",
                )
            # the reference levels go in the legend, each its own line style: labels written on
            # the lines sat on top of each other where the two floors are close
            ax.axvline(r_star, color="tab:red", lw=0.8, ls=":", label="r = r*")
            ax.axhline(cfg.verdict.eps_floor, color="tab:gray", lw=0.8, ls="--", label="ε_floor")
            if len(g):
                noise = float(g["noise_floor"].median() / g["signal"].median())
                ax.axhline(noise, color="#6A3D9A", lw=0.9, ls=(0, (1, 1.5)), label="noise σ² / signal")
                ax.axhline(
                    float(g["k0_rel_excess"].median()),
                    color="tab:olive",
                    lw=0.8,
                    ls="-.",
                    label="K = 0 model",
                )
            ax.set_yscale("log")
            ax.set_title(f"{kind} teacher ({'B1' if kind == 'linear' else 'B2'}), r* = {r_star}", fontsize=9)
            ax.set_xlabel("student rank r")
            ax.set_ylabel("relative excess risk (held out)")
    legend_below(fig, axes, ncol=6)
    fig.suptitle(f"E4: held-out excess risk vs rank (c = {cfg.task.c:g})", fontsize=10)
    return fig


def plot_transition_size(cfg, pairs: pd.DataFrame):
    """Normalised excess at r*−1, linear vs softmax, under both normalisations (C6)."""
    fig, axes = figure_grid(1, 2, width=3.8, height=2.8)
    for ax, (col, label) in zip(
        axes[0], (("over_k0", "excess(r*−1) / excess(K = 0)"), ("rel", "excess(r*−1) / signal"))
    ):
        by = pairs.groupby("task.r_star")[[f"linear_{col}", f"softmax_{col}"]].median()
        x = np.arange(len(by))
        ax.bar(x - 0.2, by[f"linear_{col}"], width=0.4, color=colour("linear"), label="linear teacher, B1")
        ax.bar(x + 0.2, by[f"softmax_{col}"], width=0.4, color=colour("softmax"), label="softmax teacher, B2")
        ax.set_xticks(x, [str(r) for r in by.index])
        ax.set_xlabel("r*")
        ax.set_ylabel(label)
        ax.set_title(
            label + (" [verdict]" if (col == "over_k0") == (cfg.verdict.c6_normalisation == "k0") else ""),
            fontsize=8,
        )
    legend_below(fig, axes)
    fig.suptitle("E4 / C6: size of the transition at r = r* (median over pairs)", fontsize=10)
    return fig
