"""E7's figures: pure functions of the tables the analysis builds (a leaf: imports no analysis code)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib import colormaps

from ...plotting import figure_grid, legend_below

_MARKERS = {"natural": "o", "code": "s", "synthetic": "^", "checkpoint": "D"}
_CATEGORY_COLOURS = {
    "content": "tab:red",
    "sink": "tab:purple",
    "local": "tab:green",
    "positional": "tab:blue",
    "averaging": "tab:gray",
}


def _colour(i: int):
    return colormaps["tab10"](i % 10)


def plot_loss_curves(runs: pd.DataFrame, curves: dict[str, dict]):
    """Training-batch and held-out loss (bits/token) per run against step, reference dashed."""
    fig, axes = figure_grid(1, 2, width=4.4, height=3.2)
    names = list(dict.fromkeys(runs["corpus"]))
    for _, run in runs.iterrows():
        c, colour = curves.get(run["run_id"], {}), _colour(names.index(run["corpus"]))
        style = "-" if run["learned"] else ":"
        label = run["corpus"] if run["seed"] == runs["seed"].min() else None
        axes[0][0].plot(
            c.get("curve_step", []),
            np.asarray(c.get("batch_loss", []), float) / np.log(2),
            style,
            color=colour,
            lw=0.8,
            label=label,
        )
        steps = np.maximum(np.asarray(c.get("step", []), float), 1)
        axes[0][1].plot(
            steps,
            np.asarray(c.get("val_loss", []), float) / np.log(2),
            style + "o",
            color=colour,
            ms=2,
            lw=0.8,
        )
        axes[0][1].axhline(run["reference_bits"], color=colour, ls="--", lw=0.5)
    axes[0][0].set_ylabel("training batch loss (bits/token)", fontsize=8)
    axes[0][1].set_ylabel("held-out loss (bits/token); dashed: reference", fontsize=8)
    axes[0][1].set_xscale("log")
    for ax in axes[0]:
        ax.set_xlabel("step")
    legend_below(fig, axes, ncol=4, fontsize=7)  # below the panels: a legend inside covers curves
    fig.suptitle("E7: loss curves (dotted: run set aside as not learned)", fontsize=10)
    return fig


def plot_rank_vs_complexity(corpora: pd.DataFrame, rank_label: str):
    """Final head-mean kernel rank (mean ± sd over learned seeds) vs each complexity measure."""
    measures = ("information", "compression", "mixing_known", "mixing_data")
    fig, axes = figure_grid(1, len(measures), width=3.0, height=3.0)
    for ax, m in zip(axes[0], measures):
        if not len(corpora) or m not in corpora:
            continue
        for i, row in corpora.reset_index(drop=True).iterrows():
            ax.errorbar(
                row[m],
                row["rank"],
                yerr=row["rank_sd"],
                fmt=_MARKERS.get(row["kind"], "o"),
                color=_colour(i),
                label=row["name"],
                ms=5,
                capsize=2,
            )
        ax.set_xlabel(
            f"{m} ({'bits/token' if m in ('information', 'compression') else 'tokens'})", fontsize=8
        )
    axes[0][0].set_ylabel(rank_label, fontsize=8)
    legend_below(fig, axes, ncol=5, fontsize=7)
    fig.suptitle("E7: kernel rank vs predicted complexity (o natural, s code, ^ synthetic)", fontsize=10)
    return fig


def plot_rank_vs_progress(points: pd.DataFrame):
    """Kernel rank against optimisation progress and against log step, one line per run."""
    fig, axes = figure_grid(1, 2, width=4.0, height=3.0)
    names = list(dict.fromkeys(points["corpus"])) if len(points) else []
    labelled = set()
    for _, g in points.groupby("run_id", sort=False):
        corpus = g["corpus"].iloc[0]
        colour, label = _colour(names.index(corpus)), None if corpus in labelled else corpus
        labelled.add(corpus)
        axes[0][0].plot(g["progress"], g["rank"], "-o", color=colour, ms=2, lw=0.8, label=label)
        axes[0][1].plot(np.exp(g["step"]), g["rank"], "-", color=colour, lw=0.8)
    axes[0][0].set_xlabel("optimisation progress (L0 - Lt)/(L0 - Lref)")
    axes[0][1].set_xlabel("step")
    axes[0][1].set_xscale("log")
    for ax in axes[0]:
        ax.set_ylabel("head-mean kernel rank", fontsize=8)
    legend_below(fig, axes, ncol=4, fontsize=7)
    fig.suptitle("E7: kernel rank over training (learned runs)", fontsize=10)
    return fig


def plot_structure(heads: pd.DataFrame):
    """Per source, the share of heads in each category; and every head's content vs structure TV."""
    fig, axes = figure_grid(1, 2, width=4.6, height=3.2)
    sources = list(dict.fromkeys(heads["source"]))
    bottom = np.zeros(len(sources))
    for cat, colour in _CATEGORY_COLOURS.items():
        share = np.array([(heads[heads["source"] == s]["category"] == cat).mean() for s in sources])
        axes[0][0].bar(range(len(sources)), share, bottom=bottom, color=colour, label=cat)
        bottom += share
    axes[0][0].set_xticks(range(len(sources)))
    axes[0][0].set_xticklabels(sources, rotation=60, ha="right", fontsize=6)
    axes[0][0].set_ylabel("share of heads")
    for cat, colour in _CATEGORY_COLOURS.items():
        g = heads[heads["category"] == cat]
        axes[0][1].scatter(g["uniform_tv"], g["content_tv"], s=10, color=colour, label=cat)
    axes[0][1].set_xlabel(
        "distance from uniform (TV); content TV: from the position-only mean mixer", fontsize=7
    )
    axes[0][1].set_ylabel("content TV", fontsize=8)
    legend_below(fig, axes, ncol=5, fontsize=7)  # outside the axes: a legend inside hid a bar
    fig.suptitle(
        "E7: content routing vs content-independent structure per head (final checkpoint)", fontsize=10
    )
    return fig
