"""E6 figures: recovery heatmaps over (r*, N) and (r*, σ), and the paper's estimators against r*.

Pure functions of the analysis tables (:func:`.analysis.rate_table`, :func:`.analysis.estimate_table`).
Each cell of a heatmap says one of three things, each in its own colours:

- in its method's domain, the exact-recovery rate (viridis);
- outside it, the share of runs *flagged not identifiable* — the right answer there (white to grey);
- wherever some runs claim identifiability and miss r* (``confident_wrong`` > 0), that share, in
  reds and hatched, whatever the domain: a wrong answer given with confidence never looks like an
  abstention.

A panel whose every cell is outside the domain and flagged by every run (nothing to see but the right
answer) is not drawn; the figure names those settings in one line. Panels with no runs at this scale
are left out.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd
from matplotlib.colors import LinearSegmentedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ...plotting import MAX_COLUMNS, colour, legend_below, panel_grid

EXACT_CMAP = "viridis"
# White to grey: nothing like viridis, so a flagged cell never reads as a recovery rate.
FLAG_CMAP = LinearSegmentedColormap.from_list("flagged", ["#ffffff", "#8c8c8c"])
# Pink to dark red, hatched: a confidently wrong cell is neither a rate nor an abstention.
WRONG_CMAP = LinearSegmentedColormap.from_list("confidently_wrong", ["#fcbba1", "#a50f15"])
WRONG_HATCH = "xx"
#: The paper's estimators (C10), shown against r*; every estimator is in results/E6_estimates.csv.
SHOWN_ESTIMATORS = ("numerical_rank", "energy_effective_rank", "realised_mixer_energy_rank")
SCALES = (
    ("exact", EXACT_CMAP, "exact-recovery rate (r_hat = r*), in domain"),
    ("flag", FLAG_CMAP, "share flagged not identifiable, outside domain"),
    ("wrong", WRONG_CMAP, "share confidently wrong (claims identifiable, r_hat ≠ r*)"),
)


def _grid(g: pd.DataFrame, axis: str, value: str) -> pd.DataFrame:
    return g.pivot_table(index="task.r_star", columns=axis, values=value, aggfunc="mean").sort_index()


def _cells(g: pd.DataFrame, axis: str) -> dict[str, np.ndarray]:
    """The panel's (r*, axis) grids: rate, flagged and confidently-wrong shares, and the domain."""
    rate = _grid(g, axis, "rate")
    grids = {"index": rate.index, "columns": rate.columns, "rate": rate.to_numpy(float)}
    outside = _grid(g.assign(out=~g["in_domain"].astype(bool)), axis, "out").reindex_like(rate)
    grids["out"] = outside.to_numpy(float) > 0.5
    grids["flagged"] = _grid(g, axis, "flagged").reindex_like(rate).to_numpy(float)
    wrong = g["confident_wrong"] if "confident_wrong" in g else pd.Series(0.0, index=g.index)
    grids["wrong"] = _grid(g.assign(confident_wrong=wrong), axis, "confident_wrong").reindex_like(rate)
    grids["wrong"] = np.nan_to_num(grids["wrong"].to_numpy(float), nan=0.0)
    return grids


def _only_right_abstentions(g: pd.DataFrame) -> bool:
    """Every run of the panel is outside the domain and flagged not identifiable: nothing but the right answer."""
    wrong = g["confident_wrong"].fillna(0.0) if "confident_wrong" in g else 0.0
    return bool(
        (~g["in_domain"].astype(bool)).all() and np.allclose(g["flagged"], 1.0) and np.all(wrong == 0)
    )


def _heatmap(ax, g: pd.DataFrame, axis: str, label: str) -> dict:
    """One panel (module docstring); returns the image drawn for each scale it uses."""
    c = _cells(g, axis)
    known = np.isfinite(c["rate"])
    wrong, out = (c["wrong"] > 0) & known, c["out"]
    layers = {
        "exact": np.where(~out & ~wrong, c["rate"], np.nan),
        "flag": np.where(out & ~wrong, c["flagged"], np.nan),
        "wrong": np.where(wrong, c["wrong"], np.nan),
    }
    kw = dict(vmin=0.0, vmax=1.0, aspect="auto", origin="lower")
    images = {
        key: ax.imshow(layers[key], cmap=cmap, **kw)
        for key, cmap, _ in SCALES
        if np.isfinite(layers[key]).any()
    }
    for (i, j), rate in np.ndenumerate(c["rate"]):
        if not known[i, j]:
            continue
        if wrong[i, j]:  # hatched: a wrong cell differs from a low rate even printed in grey
            ax.add_patch(
                Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch=WRONG_HATCH, ec="#67000d", lw=0)
            )
        text = f"wrong {c['wrong'][i, j]:.2g}" if wrong[i, j] else None
        if out[i, j]:
            text = text or f"flag {c['flagged'][i, j]:.2g}"
        else:
            text = f"{rate:.2g}" + (f"\n{text}" if text else "")
        dark = wrong[i, j] or (not out[i, j] and rate < 0.6)
        ax.text(
            j,
            i,
            text,
            ha="center",
            va="center",
            fontsize=7,
            color="w" if dark else "k",
            fontweight="bold" if wrong[i, j] else "normal",
        )
    ax.set_xticks(range(len(c["columns"])), [f"{x:g}" for x in c["columns"]])
    ax.set_yticks(range(len(c["index"])), [str(int(r)) for r in c["index"]])
    ax.set_xlabel(label)
    ax.set_ylabel("r*")
    return images


def _panel_title(method: str, v: str, n: int, spectrum: str) -> str:
    return f"{method.replace('_', ' ')}, V {v}\nn = {n}, {spectrum}"


def _abstained_line(keys: list[tuple]) -> str:
    """The settings not drawn (every run outside the domain, every one flagged), grouped by method and V."""
    by_method: dict[tuple, list[str]] = {}
    for method, v, n, spectrum in keys:
        by_method.setdefault((method, v), []).append(f"n = {int(n)} {spectrum}")
    parts = [f"{m.replace('_', ' ')}, V {v} ({', '.join(cells)})" for (m, v), cells in by_method.items()]
    return (
        "Not drawn, every run outside the domain and flagged not identifiable (the right answer): "
        + "; ".join(parts)
        + "."
    )


def _rate_figure(t: pd.DataFrame, axis: str, label: str, where: str, kind: str):
    """One heatmap per (method, V, n, spectrum) with runs in ``t`` and anything but right abstentions;
    below them a colour bar per scale drawn (the wrong one hatched, as its cells) and the settings not drawn."""
    cells, abstained = [], []
    for key, g in t.groupby(["method", "v", "task.n", "task.spectrum"], sort=True):
        (abstained if _only_right_abstentions(g) else cells).append((key, g))
    ncols, n_rows = max(1, min(len(cells), MAX_COLUMNS)), max(1, -(-len(cells) // MAX_COLUMNS))
    note = textwrap.fill(_abstained_line([key for key, _ in abstained]), 150) if abstained else ""
    fig = Figure(
        figsize=(2.9 * ncols + 0.4, 2.3 * n_rows + 1.2 + 0.16 * note.count("\n")), layout="constrained"
    )
    grid = fig.add_gridspec(n_rows + 1, ncols, height_ratios=[2.3] * n_rows + [1.0])
    images: dict = {}
    for k, ((method, v, n, spectrum), g) in enumerate(cells):
        ax = fig.add_subplot(grid[k // ncols, k % ncols])
        images.update(_heatmap(ax, g, axis, label))
        ax.set_title(_panel_title(method, v, int(n), spectrum), fontsize=8)
    _scale_bars(fig, grid, images)
    if abstained:
        fig.supxlabel(note, fontsize=8)
    fig.suptitle(
        f"E6: r* recovery, {kind} teacher, {where}; panels without runs at this scale omitted", fontsize=9
    )
    return fig


def _scale_bars(fig, grid, images: dict) -> None:
    """A colour bar per scale drawn, in the grid's last row (none when every setting abstained)."""
    shown = [(key, text) for key, _, text in SCALES if key in images]
    if not shown:
        return
    gaps = [1.0, 0.15] * len(shown)  # a spacer between two bars keeps their end labels apart
    bars = grid[-1, :].subgridspec(1, 2 * len(shown) - 1, width_ratios=gaps[: 2 * len(shown) - 1])
    for k, (key, text) in enumerate(shown):
        cax = fig.add_subplot(bars[0, 2 * k])
        bar = fig.colorbar(images[key], cax=cax, orientation="horizontal")
        bar.set_label(text + (", hatched" if key == "wrong" else ""), fontsize=8)
        if key == "wrong":
            cax.add_patch(
                Rectangle(
                    (0, 0), 1, 1, transform=cax.transAxes, fill=False, hatch=WRONG_HATCH, ec="#67000d", lw=0
                )
            )


def plot_rate_heatmaps(rates: pd.DataFrame, sigma_ref: float) -> dict:
    """``{e6_rate_vs_N_<teacher>, e6_rate_vs_sigma_<teacher>}``; ``rates`` needs an ``in_domain`` column.

    The N panels hold the cells at ``σ = sigma_ref``; the σ panels the cells at the largest N.
    """
    figures = {}
    for kind, t in rates.groupby("teacher"):
        n_max = int(t["n_samples"].max())
        for axis, label, sel, where in (
            ("n_samples", "N", np.isclose(t["task.sigma"], sigma_ref), f"σ = {sigma_ref:g}"),
            ("task.sigma", "σ", t["n_samples"] == n_max, f"N = {n_max}"),
        ):
            if sel.any():
                name = f"e6_rate_vs_{'N' if axis == 'n_samples' else 'sigma'}_{kind}"
                figures[name] = _rate_figure(t[sel], axis, label, where, kind)
    return figures


def _estimate_panel(ax, g: pd.DataFrame, key: str, rs: list) -> None:
    """Mean estimate against r*, one line per (method, V); grey crosses: the estimator on the truth."""
    ax.plot(rs, rs, "k:", lw=0.8, label="estimate = r*")
    for (method, v), h in g.groupby(["method", "v"], sort=True):
        h = h.sort_values("task.r_star")
        style = dict(ms=4, lw=1.0, ls="-" if v == "known" else "--", color=colour(method))
        ax.plot(
            h["task.r_star"], h["mean_estimate"], "o", label=f"{method.replace('_', ' ')}, V {v}", **style
        )
    truth = g.groupby("task.r_star")["true_value"].mean()
    ax.plot(truth.index, truth.to_numpy(), "x", ms=5, color="tab:gray", label="estimator on the truth")
    ax.set_xscale("log", base=2)
    ax.set_xticks(rs, [str(int(r)) for r in rs])
    ax.set_title(key.replace("_", " "), fontsize=8)
    ax.set_xlabel("r*")
    ax.set_ylabel("mean estimate")


def plot_estimates(estimates: pd.DataFrame, sigma_ref: float) -> dict:
    """``{e6_estimates_vs_r_star_<teacher>[_n<n>]}``: the paper's estimators (columns) per spectrum (rows)
    at the largest N and ``sigma_ref``, one line per (method, V); a suffix ``_n<n>`` when a teacher has
    several n. At most 3 × (spectra) panels and 4 method lines each, so every series can be told apart.
    """
    e = estimates[np.isclose(estimates["task.sigma"], sigma_ref)] if len(estimates) else estimates
    e = e[(e["n_samples"] == e["n_samples"].max()) & e["estimator"].isin(SHOWN_ESTIMATORS)] if len(e) else e
    figures = {}
    for kind, t in e.groupby("teacher", sort=True):
        ns = sorted(int(n) for n in t["task.n"].unique())
        for n in ns:
            tn = t[t["task.n"] == n]
            keys = [k for k in SHOWN_ESTIMATORS if k in set(tn["estimator"])]
            spectra = sorted(tn["task.spectrum"].unique())
            rs = sorted(int(r) for r in tn["task.r_star"].unique())
            fig, axes = panel_grid(len(keys) * len(spectra), width=3.0, height=2.4, max_cols=len(keys))
            for ax, (spectrum, key) in zip(axes, [(s, k) for s in spectra for k in keys]):
                g = tn[(tn["task.spectrum"] == spectrum) & (tn["estimator"] == key)]
                _estimate_panel(ax, g, f"{key}, {spectrum}", rs)
            legend_below(fig, axes, ncol=3, fontsize=8)
            fig.suptitle(
                f"E6: the paper's estimators vs r*, {kind} teacher, n = {n}, N = {int(t['n_samples'].max())}, "
                f"σ = {sigma_ref:g} (every estimator: results/E6_estimates.csv)",
                fontsize=9,
            )
            figures[f"e6_estimates_vs_r_star_{kind}" + (f"_n{n}" if len(ns) > 1 else "")] = fig
    return figures
