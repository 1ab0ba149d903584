"""``predict --plot``: the spectrum ``r_hat`` was read from, with the cut ``τ`` and the largest gap."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from ..plotting import label_spectrum_axes, plot_spectrum
from .result import Prediction

SPECTRUM_COLOUR = "#1f4e79"
CUT_COLOUR = "#c0392b"
GAP_COLOUR = "#7f7f7f"
KEPT_COLOUR = "#e8eef6"
# The matrix whose singular values each method reads r* from.
OPERATOR = {"linear_v_unknown": "stack", "softmax_linearised": "K̂_lin"}


def spectrum_figure(pred: Prediction) -> Figure:
    """Singular values (log scale) of the recovered matrix, the null threshold ``τ`` (horizontal),
    the largest gap after ``s_{r_gap}`` (vertical) and the kept values ``s_1..s_{r_hat}`` (shaded); the title
    states ``r_hat`` and how it was chosen. Needs a fitted prediction (``singular_values`` non-empty)."""
    s = np.asarray(pred.singular_values, dtype=float)
    floor = max(float(s[0]) * 1e-12, 1e-300)
    fig = Figure(figsize=(6.4, 4.2), layout="constrained")
    ax = fig.subplots()
    plot_spectrum(ax, s, floor=floor, color=SPECTRUM_COLOUR, marker="o", ms=4, lw=1.2, label="σ_i of the fit")
    tau = pred.cut.get("null_threshold", pred.threshold)
    ax.axhline(
        tau, color=CUT_COLOUR, ls="--", lw=1.2, label=f"cut τ = {tau:.3g} (null rank {pred.cut['null_rank']})"
    )
    r_gap, ratio = pred.cut.get("gap_rank", -1), pred.cut.get("gap_ratio")
    if 1 <= r_gap < s.size:
        ax.axvline(
            r_gap + 0.5,
            color=GAP_COLOUR,
            ls=":",
            lw=1.4,
            label=f"r_gap = {r_gap} (largest gap, {ratio:.3g}×)",
        )
    if 0 <= pred.r_hat <= s.size:
        ax.axvspan(
            0.5, pred.r_hat + 0.5, color=KEPT_COLOUR, lw=0, zorder=0, label=f"kept: r_hat = {pred.r_hat}"
        )
    label_spectrum_axes(ax, OPERATOR.get(pred.method, "K̂"))
    trust = "identifiable" if pred.identifiable else "NOT identifiable"
    where = "the largest gap" if pred.cut.get("chosen") == "gap" else "the noise threshold τ"
    ax.set_title(f"r_hat = {pred.r_hat} ({trust}, read at {where})\nmethod: {pred.method}")
    ax.set_xlim(0.5, s.size + 0.5)
    ax.legend(loc="upper right", frameon=False)
    return fig
