"""E6 figures: recovery heatmaps over (r*, N) and (r*, σ), and the paper's estimators against r*.

Pure functions of the analysis tables (:func:`.analysis.rate_table`, :func:`.analysis.estimate_table`).
A cell outside its method's domain (``in_domain`` False) is drawn as the share of runs *flagged not
identifiable* — the right answer there — in its own colour scale, never as an exact-recovery failure.
Panels with no runs at this scale are left out rather than drawn empty.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.colors import LinearSegmentedColormap

from ...plotting import colour, legend_below, panel_grid

EXACT_CMAP = "viridis"
# White to grey: nothing like viridis, so a flagged cell never reads as a recovery rate.
FLAG_CMAP = LinearSegmentedColormap.from_list("flagged", ["#ffffff", "#8c8c8c"])
#: The paper's estimators (C10), shown against r*; every estimator is in results/E6_estimates.csv.
SHOWN_ESTIMATORS = ("numerical_rank", "energy_effective_rank", "realised_mixer_energy_rank")


def _grid(g: pd.DataFrame, axis: str, value: str) -> pd.DataFrame:
    return g.pivot_table(index="task.r_star", columns=axis, values=value, aggfunc="mean").sort_index()


def _heatmap(ax, g: pd.DataFrame, axis: str, label: str):
    """One panel: exact-recovery rate where in domain, flagged rate (grey scale, "flag …") where not."""
    inside = _grid(g, axis, "rate")
    outside = _grid(g.assign(out=~g["in_domain"].astype(bool)), axis, "out").reindex_like(inside)
    flags = _grid(g, axis, "flagged").reindex_like(inside).to_numpy(float)
    is_out = outside.to_numpy(float) > 0.5
    rate = np.where(is_out, np.nan, inside.to_numpy(float))
    kw = dict(vmin=0.0, vmax=1.0, aspect="auto", origin="lower")
    images = [
        ax.imshow(rate, cmap=EXACT_CMAP, **kw),
        ax.imshow(np.where(is_out, flags, np.nan), cmap=FLAG_CMAP, **kw),
    ]
    for (i, j), v in np.ndenumerate(np.where(is_out, flags, rate)):
        if np.isfinite(v):
            dark = not is_out[i, j] and v < 0.6
            text = f"flag {v:.2g}" if is_out[i, j] else f"{v:.2g}"
            ax.text(j, i, text, ha="center", va="center", fontsize=7, color="w" if dark else "k")
    ax.set_xticks(range(inside.shape[1]), [f"{x:g}" for x in inside.columns])
    ax.set_yticks(range(inside.shape[0]), [str(int(r)) for r in inside.index])
    ax.set_xlabel(label)
    ax.set_ylabel("r*")
    return images, bool(is_out.any()), bool((~is_out & np.isfinite(rate)).any())


def _panel_title(method: str, v: str, n: int, spectrum: str, inside: bool, outside: bool) -> str:
    what = (
        "exact recovery"
        if inside and not outside
        else "flagged not identifiable"
        if outside and not inside
        else "exact recovery / flagged"
    )
    return f"{method.replace('_', ' ')}, V {v}\nn = {n}, {spectrum}: {what}"


def _rate_figure(t: pd.DataFrame, axis: str, label: str, where: str, kind: str):
    """One heatmap per (method, V, n, spectrum) with runs in ``t``; two colour bars when both kinds show."""
    cells = [key for key, _ in t.groupby(["method", "v", "task.n", "task.spectrum"], sort=True)]
    fig, axes = panel_grid(len(cells), width=2.9, height=2.2)
    exact = flag = None
    for ax, (method, v, n, spectrum) in zip(axes, cells):
        g = t[(t["method"] == method) & (t["v"] == v) & (t["task.n"] == n) & (t["task.spectrum"] == spectrum)]
        (im_in, im_out), has_out, has_in = _heatmap(ax, g, axis, label)
        exact, flag = (im_in if has_in else exact), (im_out if has_out else flag)
        ax.set_title(_panel_title(method, v, int(n), spectrum, has_in, has_out), fontsize=7)
    for image, text in (
        (exact, "exact-recovery rate (r_hat = r*), in domain"),
        (flag, "flagged not identifiable, outside domain"),
    ):
        if image is not None:
            fig.colorbar(image, ax=axes, shrink=0.8, pad=0.01).set_label(text, fontsize=7)
    fig.suptitle(
        f"E6: r* recovery, {kind} teacher, {where}; panels without runs at this scale omitted", fontsize=9
    )
    return fig


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
