"""E6 figures: exact-recovery heatmaps over (r*, N) and (r*, σ), and estimates against r*.

Pure functions of the analysis tables (:func:`.analysis.rate_table`, :func:`.analysis.estimate_table`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...plotting import MAX_COLUMNS, colour, figure_grid, legend_below, panel_grid

MARKERS = {"flat": "o", "geometric": "^", "power": "s"}


def _heatmap(ax, g: pd.DataFrame, axis: str, label: str):
    """Rates ``g`` (one panel) as an r* × ``axis`` image with the values written in."""
    pivot = g.pivot_table(index="task.r_star", columns=axis, values="rate", aggfunc="mean").sort_index()
    values = pivot.to_numpy(dtype=float)
    image = ax.imshow(values, cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto", origin="lower")
    for (i, j), v in np.ndenumerate(values):
        if np.isfinite(v):
            ax.text(j, i, f"{v:.2g}", ha="center", va="center", fontsize=6, color="k" if v > 0.6 else "w")
    ax.set_xticks(range(pivot.shape[1]), [f"{x:g}" for x in pivot.columns], fontsize=6)
    ax.set_yticks(range(pivot.shape[0]), [str(int(r)) for r in pivot.index], fontsize=6)
    ax.set_xlabel(label, fontsize=7)
    ax.set_ylabel("r*", fontsize=7)
    return image


def plot_rate_heatmaps(rates: pd.DataFrame, sigma_ref: float) -> dict:
    """``{e6_rate_vs_N_<teacher>, e6_rate_vs_sigma_<teacher>}``: rows (method, V), columns (n, spectrum).

    The N panels hold the cells at ``σ = sigma_ref``; the σ panels the cells at the largest N.
    """
    figures = {}
    for kind, t in rates.groupby("teacher"):
        rows = sorted({(m, v) for m, v in zip(t["method"], t["v"])})
        cols = sorted({(int(n), s) for n, s in zip(t["task.n"], t["task.spectrum"])})
        for axis, label, sel in (
            ("n_samples", "N", np.isclose(t["task.sigma"], sigma_ref)),
            ("task.sigma", "σ", t["n_samples"] == t["n_samples"].max()),
        ):
            cells = [(m, v, n, sp) for m, v in rows for n, sp in cols]
            fig, axes = panel_grid(len(cells), width=2.9, height=2.1)
            image = None
            for ax, (method, v, n, spectrum) in zip(axes, cells):
                g = t[
                    sel
                    & (t["method"] == method)
                    & (t["v"] == v)
                    & (t["task.n"] == n)
                    & (t["task.spectrum"] == spectrum)
                ]
                if len(g):
                    image = _heatmap(ax, g, axis, label)
                ax.set_title(f"{method.replace('_', ' ')}, V {v}\nn = {n}, {spectrum}", fontsize=7)
            if image is not None:
                bar = fig.colorbar(image, ax=axes, shrink=0.8, pad=0.01)
                bar.set_label("exact-recovery rate (share of runs with r_hat = r*)", fontsize=7)
            where = f"σ = {sigma_ref:g}" if axis == "n_samples" else f"N = {int(t['n_samples'].max())}"
            fig.suptitle(f"E6: exact-recovery rate (r_hat = r*), {kind} teacher, {where}", fontsize=9)
            figures[f"e6_rate_vs_{'N' if axis == 'n_samples' else 'sigma'}_{kind}"] = fig
    return figures


def plot_estimates(estimates: pd.DataFrame, sigma_ref: float):
    """Mean estimate against r* per teacher (rows) and estimator (columns), at the largest N and ``sigma_ref``.

    Colour: (method, V, n); marker: spectrum; grey crosses: the estimator on the teacher's own K* (mixers
    for the realised-mixer keys); dotted: the diagonal.
    """
    e = estimates[np.isclose(estimates["task.sigma"], sigma_ref)] if len(estimates) else estimates
    e = e[e["n_samples"] == e["n_samples"].max()] if len(e) else e
    kinds = sorted(e["teacher"].unique()) if len(e) else []
    keys = list(dict.fromkeys(e["estimator"])) if len(e) else []
    # Each teacher's estimators wrap at MAX_COLUMNS per row and start on a fresh row.
    per_kind = -(-max(1, len(keys)) // MAX_COLUMNS) * MAX_COLUMNS
    fig, grid = figure_grid(max(1, len(kinds)) * per_kind // MAX_COLUMNS, MAX_COLUMNS, width=2.7, height=2.3)
    flat_axes = [ax for row in grid for ax in row]
    used = []
    rs = sorted(e["task.r_star"].unique()) if len(e) else []
    for i, kind in enumerate(kinds):
        for j, key in enumerate(keys):
            ax, g = flat_axes[i * per_kind + j], e[(e["teacher"] == kind) & (e["estimator"] == key)]
            used.append(ax)
            ax.plot(rs, rs, "k:", lw=0.8, label="estimate = r*")
            for (m, v, n, spectrum), h in g.groupby(["method", "v", "task.n", "task.spectrum"]):
                ax.plot(
                    h["task.r_star"],
                    h["mean_estimate"],
                    MARKERS.get(spectrum, "o"),
                    ms=3.5,
                    lw=0.8,
                    ls="-" if v == "known" else "--",
                    color=colour(m),
                    label=f"{m.replace('_', ' ')}, V {v}, n={int(n)}, {spectrum}",
                )
                ax.plot(
                    h["task.r_star"],
                    h["true_value"],
                    "x",
                    ms=3,
                    color="tab:gray",
                    label="estimator on the truth",
                )
            ax.set_xscale("log", base=2)
            ax.set_title(f"{kind} teacher: {key.replace('_', ' ')}", fontsize=7)
            ax.set_xlabel("r*", fontsize=7)
            ax.set_ylabel("mean estimate of r*", fontsize=7)
    for ax in flat_axes:
        if ax not in used:
            ax.set_visible(False)
    legend_below(fig, used, ncol=3)
    fig.suptitle(
        f"E6: estimates vs r* (largest N, σ = {sigma_ref:g}); grey x: the estimator on the truth", fontsize=9
    )
    return fig
