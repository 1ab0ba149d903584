"""Small plotting helpers. Plots take tables and return figures; nothing here writes files.

Figures are built with :class:`matplotlib.figure.Figure` directly (no pyplot global state), so
plotting is safe in worker processes and never opens a window.
"""

from __future__ import annotations

import io

from matplotlib.figure import Figure


def figure_grid(nrows: int, ncols: int, *, width: float = 3.4, height: float = 2.8):
    """A figure with an ``nrows × ncols`` grid of axes, returned as ``(fig, axes[row][col])``."""
    fig = Figure(figsize=(max(1, ncols) * width, max(1, nrows) * height), layout="constrained")
    axes = fig.subplots(max(1, nrows), max(1, ncols), squeeze=False)
    return fig, axes


def mark_floor(ax, value: float, label: str) -> None:
    """A horizontal dashed line at ``value`` with a small label."""
    ax.axhline(value, color="tab:gray", lw=0.8, ls="--")
    ax.annotate(
        label,
        xy=(1.0, value),
        xycoords=("axes fraction", "data"),
        ha="right",
        va="bottom",
        fontsize=6,
        color="tab:gray",
    )


def to_png(fig: Figure, dpi: int = 130) -> bytes:
    """PNG bytes of a figure."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()
