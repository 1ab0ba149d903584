"""E7's figures: pure functions of the tables the analysis builds (a leaf: imports no analysis code)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from ...language_models.corpora.catalogue import expected_mixing
from ...plotting import figure_grid, legend_below, series_styles

_MARKERS = {"natural": "o", "code": "s", "synthetic": "^", "checkpoint": "D", "random_checkpoint": "d"}
_CATEGORY_COLOURS = {
    "content": "tab:red",
    "sink": "tab:purple",
    "local": "tab:green",
    "positional": "tab:blue",
    "averaging": "tab:gray",
}


def _key(*texts: str) -> list[Line2D]:
    """Legend entries, in black, for what a line style or marker means (``"--|dashed: reference"``)."""
    handles = []
    for text in texts:
        style, label = text.split("|")
        handles.append(Line2D([], [], color="black", lw=0.8, ms=4, label=label, **_style(style)))
    return handles


def _style(style: str) -> dict:
    marker = style.lstrip("-.:") or None
    return {"ls": style[: len(style) - len(marker or "")] or "none", "marker": marker}


def plot_loss_curves(runs: pd.DataFrame, curves: dict[str, dict]):
    """Training-batch and held-out loss (bits/token) per run against step, each corpus its own
    colour and marker, the corpus's reference dashed; a run set aside as not learned dotted."""
    fig, axes = figure_grid(1, 2, width=4.4, height=3.2)
    styles = series_styles(runs["corpus"])
    for _, run in runs.iterrows():
        c, style = curves.get(run["run_id"], {}), styles[run["corpus"]]
        ls = "-" if run["learned"] else ":"
        label = run["corpus"] if run["seed"] == runs["seed"].min() else None
        axes[0][0].plot(
            c.get("curve_step", []),
            np.asarray(c.get("batch_loss", []), float) / np.log(2),
            ls=ls,
            color=style["color"],
            marker=style["marker"],
            markevery=0.2,
            ms=3,
            lw=0.8,
            label=label,
        )
        steps = np.maximum(np.asarray(c.get("step", []), float), 1)
        val = np.asarray(c.get("val_loss", []), float) / np.log(2)
        axes[0][1].plot(steps, val, ls=ls, color=style["color"], marker=style["marker"], ms=3, lw=0.8)
        axes[0][1].axhline(run["reference_bits"], color=style["color"], ls="--", lw=0.5)
    axes[0][0].set_ylabel("training batch loss (bits/token)", fontsize=8)
    axes[0][1].set_ylabel("held-out loss (bits/token)", fontsize=8)
    axes[0][1].set_xscale("log")
    for ax in axes[0]:
        ax.set_xlabel("step", fontsize=9)
    set_aside = bool(len(runs)) and not runs["learned"].all()
    key = [
        "-|learned run",
        *([":|set aside as not learned"] if set_aside else []),
        "--|reference (bits/token)",
    ]
    axes[0][1].legend(handles=_key(*key), fontsize=8, loc="upper right", frameon=False)
    legend_below(fig, axes, ncol=4, fontsize=8)  # one entry per corpus: 26 at paper scale
    what = (
        "solid: learned runs; dotted: set aside as not learned" if set_aside else "every run learned (solid)"
    )
    fig.suptitle(
        f"E7: loss curves, one colour and marker per corpus ({what}; dashed: its reference)", fontsize=10
    )
    return fig


def plot_rank_vs_complexity(corpora: pd.DataFrame, rank_label: str):
    """Final head-mean kernel rank (mean ± sd over learned seeds) vs each complexity measure."""
    measures = ("information", "compression", "mixing_known", "mixing_data")
    # a measure no corpus has (natural text's mixing demand is not known) gets no panel, only a word
    unknown = [m for m in measures if len(corpora) and m in corpora and corpora[m].isna().all()]
    measures = tuple(m for m in measures if m not in unknown)
    fig, axes = figure_grid(1, len(measures), width=3.0, height=3.0)
    names = list(corpora["name"]) if len(corpora) else []
    kinds = dict(zip(names, corpora["kind"])) if len(corpora) else {}
    styles = series_styles(names, markers={n: _MARKERS.get(k, "o") for n, k in kinds.items()})
    for ax, m in zip(axes[0], measures):
        if not len(corpora) or m not in corpora:
            ax.text(0.5, 0.5, "no learned corpus\nof the main shape", ha="center", va="center", fontsize=8)
            ax.set_axis_off()
            continue
        for _, row in corpora.iterrows():
            style = styles[row["name"]]
            ax.errorbar(
                row[m],
                row["rank"],
                yerr=row["rank_sd"],
                fmt=style["marker"],
                color=style["color"],
                label=row["name"],
                ms=5,
                capsize=2,
            )
        ax.set_xlabel(
            f"{m} ({'bits/token' if m in ('information', 'compression') else 'tokens'})", fontsize=8
        )
    axes[0][0].set_ylabel(f"{rank_label}\n(mean; error bar ± 1 sd over learned seeds)", fontsize=8)
    if len(corpora):
        axes[0][-1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    shown = [f"{marker} {kind}" for kind, marker in _MARKERS.items() if kind in set(kinds.values())]
    fig.suptitle(
        f"E7: kernel rank vs predicted complexity, one colour per corpus ({', '.join(shown)}); "
        "error bars ± 1 sd over learned seeds"
        + (f"; not known for these corpora: {', '.join(unknown)}" if unknown else ""),
        fontsize=10,
    )
    return fig


def plot_rank_vs_progress(points: pd.DataFrame):
    """Kernel rank against optimisation progress and against log step, one line per run, one
    colour and marker per corpus."""
    fig, axes = figure_grid(1, 2, width=4.0, height=3.0)
    styles = series_styles(points["corpus"]) if len(points) else {}
    labelled = set()
    for _, g in points.groupby("run_id", sort=False):
        corpus = g["corpus"].iloc[0]
        style, label = styles[corpus], None if corpus in labelled else corpus
        labelled.add(corpus)
        common = dict(color=style["color"], marker=style["marker"], ls=style["ls"], ms=3, lw=0.8)
        axes[0][0].plot(g["progress"], g["rank"], label=label, **common)
        axes[0][1].plot(np.exp(g["step"]), g["rank"], **common)
    axes[0][0].set_xlabel("optimisation progress (L0 - Lt)/(L0 - Lref)")
    axes[0][1].set_xlabel("step")
    axes[0][1].set_xscale("log")
    for ax in axes[0]:
        ax.set_ylabel("head-mean kernel rank", fontsize=8)
    legend_below(fig, axes, ncol=4, fontsize=7)
    fig.suptitle("E7: kernel rank over training (learned runs; one line per seed)", fontsize=10)
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
    sources = _source_order(heads)
    # one column per source, the panels stacked on one shared axis: names stay apart at any count
    fig, ((shares_ax,), (ranks_ax,)) = figure_grid(2, 1, width=max(6.4, 0.3 * len(sources) + 2.8), height=3.3)
    ranks_ax.sharex(shares_ax)
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
        shares_ax.bar(x, share, bottom=bottom, color=colour, label=cat)
        bottom += share
    n_controls = sum(bool(expected_mixing(s)) for s in sources)
    for ax in (shares_ax, ranks_ax):
        ax.tick_params(axis="y", labelsize=8)
        if 0 < n_controls < len(sources):
            ax.axvline(len(sources) - n_controls - 0.5, color="black", lw=0.8, ls="--")
    ranks_ax.set_xticks(x)
    ranks_ax.set_xticklabels([_label(s) for s in sources], rotation=50, ha="right", fontsize=8)
    shares_ax.tick_params(axis="x", labelbottom=False)
    shares_ax.set_ylabel("share of heads (mean over models)", fontsize=9)
    shares_ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    ranks_ax.axhspan(2, 11, color="0.9", label="Lee 2026: logit field 2-11")
    if "logit_field_rank_90" in heads:
        rng = np.random.default_rng(0)
        for i, s in enumerate(sources):
            g = heads[heads["source"] == s]
            r = g["logit_field_rank_90"].to_numpy(float)
            colours = [_CATEGORY_COLOURS.get(c, "black") for c in g["category"]]
            ranks_ax.scatter(i + rng.uniform(-0.25, 0.25, len(r)), r, s=9, c=colours)
    ranks_ax.set_ylabel("logit-field rank for 90% (per head)", fontsize=9)
    shown = set(heads["category"]) if "category" in heads else set()
    dots = [
        Line2D([], [], ls="none", marker="o", ms=4, color=c, label=f"{cat} head")
        for cat, c in _CATEGORY_COLOURS.items()
        if cat in shown
    ]
    band = ranks_ax.get_legend_handles_labels()[0]
    ranks_ax.legend(
        handles=band + dots, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False
    )
    split = ""
    if 0 < n_controls < len(sources):
        kinds = dict(zip(heads["source"], heads["kind"]))
        left = dict.fromkeys(kinds[s].replace("_", " ") for s in sources if not expected_mixing(s))
        split = f"; left of the dashed line: {', '.join(left)} sources, right: controls"
    fig.suptitle(f"E7: head categories and logit-field rank per source{split}", fontsize=9)
    return fig
