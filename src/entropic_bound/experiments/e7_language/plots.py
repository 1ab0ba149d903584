"""E7's figures: pure functions of the tables the analysis builds (a leaf: imports no analysis code)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib import colormaps

from ...lm.corpora import expected_mixing
from ...plotting import figure_grid, legend_below

_MARKERS = {"natural": "o", "code": "s", "synthetic": "^", "checkpoint": "D", "random_checkpoint": "d"}
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
        ax.set_xlabel("step", fontsize=9)
    axes[0][0].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    fig.suptitle("E7: loss curves (dotted: run set aside as not learned)", fontsize=10)
    return fig


def plot_rank_vs_complexity(corpora: pd.DataFrame, rank_label: str):
    """Final head-mean kernel rank (mean ± sd over learned seeds) vs each complexity measure."""
    measures = ("information", "compression", "mixing_known", "mixing_data")
    fig, axes = figure_grid(1, len(measures), width=3.0, height=3.0)
    for ax, m in zip(axes[0], measures):
        if not len(corpora) or m not in corpora:
            ax.text(0.5, 0.5, "no learned corpus\nof the main shape", ha="center", va="center", fontsize=8)
            ax.set_axis_off()
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
    if len(corpora):
        axes[0][-1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
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


def _source_order(heads: pd.DataFrame) -> list[str]:
    """Natural text and checkpoints first, then the other trained sources, then the controls."""
    sources = list(dict.fromkeys(heads["source"]))
    kinds = dict(zip(heads["source"], heads["kind"]))

    def rank(s: str) -> int:
        if expected_mixing(s):
            return 3
        return {"natural": 0, "checkpoint": 1, "random_checkpoint": 1}.get(kinds[s], 2)

    return sorted(sources, key=lambda s: (rank(s), sources.index(s)))


def _label(s: str) -> str:
    return f"{s.split(':')[-1]} (control)" if expected_mixing(s) else s.split(":")[-1]


def plot_structure(heads: pd.DataFrame):
    """Per source (controls on the right), the share of heads in each category (mean over the
    source's models) and every head's logit-field rank (90 %), Lee (2026)'s 2–11 shaded."""
    fig, axes = figure_grid(1, 2, width=5.2, height=3.8)
    sources = _source_order(heads)
    x = np.arange(len(sources))
    bottom = np.zeros(len(sources))
    for cat, colour in _CATEGORY_COLOURS.items():
        share = np.array(
            [
                np.mean(
                    [(m["category"] == cat).mean() for _, m in heads[heads["source"] == s].groupby("run_id")]
                )
                for s in sources
            ]
        )
        axes[0][0].bar(x, share, bottom=bottom, color=colour, label=cat)
        bottom += share
    n_controls = sum(bool(expected_mixing(s)) for s in sources)
    for ax in axes[0]:
        if 0 < n_controls < len(sources):
            ax.axvline(len(sources) - n_controls - 0.5, color="black", lw=0.8, ls="--")
        ax.set_xticks(x)
        ax.set_xticklabels([_label(s) for s in sources], rotation=60, ha="right", fontsize=8)
    axes[0][0].set_ylabel("share of heads (mean over models)", fontsize=9)
    axes[0][0].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    axes[0][1].axhspan(2, 11, color="0.9", label="Lee 2026: logit field 2-11")
    if "logit_field_rank_90" in heads:
        rng = np.random.default_rng(0)
        for i, s in enumerate(sources):
            g = heads[heads["source"] == s]
            r = g["logit_field_rank_90"].to_numpy(float)
            colours = [_CATEGORY_COLOURS.get(c, "black") for c in g["category"]]
            axes[0][1].scatter(i + rng.uniform(-0.25, 0.25, len(r)), r, s=9, c=colours)
    axes[0][1].set_ylabel("logit-field rank for 90% (per head)", fontsize=9)
    axes[0][1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    for ax in axes[0]:
        ax.tick_params(axis="y", labelsize=8)
    fig.suptitle(
        "E7: head categories and logit-field rank; natural text and checkpoints left, controls right of the dashes",
        fontsize=9,
    )
    return fig
