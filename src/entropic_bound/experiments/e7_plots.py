"""E7's figures: pure functions of the corpus table, the run table and stored curves."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..plotting import figure_grid, legend_below, series_colours
from .base import curves_by_run


def plot_rank_vs_complexity(corpora: pd.DataFrame, estimator: str):
    """Final head-mean kernel rank (and realised-mixer rank) vs predicted complexity, one point per corpus."""
    fig, axes = figure_grid(1, 2, width=4.2, height=3.2)
    panels = (
        (f"K_{estimator}", f"static kernel {estimator}"),
        ("mixer_energy_effective_rank", "realised-mixer energy effective rank"),
    )
    colours = series_colours(corpora["corpus"])
    for ax, (col, label) in zip(axes[0], panels):
        if col not in corpora:
            continue
        for _, row in corpora.reset_index(drop=True).iterrows():
            ax.scatter(
                row["complexity_bits"], row[col], color=colours[str(row["corpus"])], label=row["corpus"], s=28
            )
        ax.set_xlabel("predicted complexity (bits/token)")
        ax.set_ylabel(label, fontsize=8)
    legend_below(fig, axes, ncol=5)
    fig.suptitle("E7: rank vs predicted complexity per corpus (final checkpoint, head mean)", fontsize=10)
    return fig


def plot_rank_vs_loss(ok: pd.DataFrame, records: list[dict], estimator: str):
    """Trajectories: kernel rank vs held-out loss, and both vs step, one line per run."""
    from .e7_analysis import trajectory

    curves = curves_by_run(records)
    fig, axes = figure_grid(1, 3, width=3.6, height=3.0)
    colours = series_colours(ok["corpus.name"])
    for _, row in ok.iterrows():
        c = curves.get(row["run_id"], {})
        rank = trajectory(c, f"K_{estimator}")
        loss = np.asarray(c.get("val_loss", []), dtype=float) / np.log(2)
        steps = np.maximum(np.asarray(c.get("step", []), dtype=float), 1)
        if not len(rank):
            continue
        colour = colours[str(row["corpus.name"])]
        label = row["corpus.name"] if row["seed"] == ok["seed"].min() else None
        axes[0][0].plot(loss, rank, "-o", color=colour, ms=2.5, lw=1, label=label)
        axes[0][0].plot(loss[-1:], rank[-1:], "s", color=colour, ms=5)
        axes[0][1].plot(steps, rank, color=colour, lw=1)
        axes[0][2].plot(steps, loss, color=colour, lw=1)
    axes[0][0].set_xlabel("held-out loss (bits/token)")
    axes[0][0].set_ylabel(f"kernel {estimator}", fontsize=8)
    axes[0][0].invert_xaxis()
    legend_below(fig, axes, ncol=5)
    for ax, label in ((axes[0][1], f"kernel {estimator}"), (axes[0][2], "held-out loss (bits/token)")):
        ax.set_xscale("log")
        ax.set_xlabel("training step")
        ax.set_ylabel(label, fontsize=8)
    fig.suptitle("E7: kernel rank over training (squares: final checkpoint; loss axis reversed)", fontsize=10)
    return fig


def plot_structural_heatmaps(heads: pd.DataFrame):
    """Layer × head heatmaps of sink score, locality mass and position-prior share, one row per corpus (first seed)."""
    first = heads[heads["seed"] == heads["seed"].min()]
    names = list(dict.fromkeys(first["corpus"]))
    stats = (
        ("sink_score", "sink score"),
        ("locality_mass", "locality mass"),
        ("positional_prior_explained", "position-prior share"),
    )
    fig, axes = figure_grid(len(names), len(stats), width=2.8, height=1.3 + 0.35 * first["layer"].nunique())
    for i, name in enumerate(names):
        g = first[
            (first["corpus"] == name) & (first["run_id"] == first[first["corpus"] == name]["run_id"].iloc[0])
        ]
        L, H = int(g["layer"].max()) + 1, int(g["head"].max()) + 1
        for j, (col, label) in enumerate(stats):
            grid = np.full((L, H), np.nan)
            grid[g["layer"].to_numpy(int), g["head"].to_numpy(int)] = g[col].to_numpy(float)
            ax = axes[i][j]
            image = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis", aspect="auto")
            for (a, b), v in np.ndenumerate(grid):
                ax.text(b, a, f"{v:.2f}", ha="center", va="center", fontsize=6, color="w" if v < 0.6 else "k")
            ax.set_xticks(range(H))
            ax.set_yticks(range(L))
            ax.set_xlabel("head", fontsize=7)
            ax.set_ylabel("layer", fontsize=7)
            ax.set_title(f"{name}: {label}", fontsize=7)
    if names:
        bar = fig.colorbar(image, ax=axes, shrink=0.8, pad=0.01)
        bar.set_label("score (0–1; sink, locality mass, position-prior share)", fontsize=7)
    fig.suptitle("E7: structural scores per layer and head (first seed, final checkpoint)", fontsize=10)
    return fig
