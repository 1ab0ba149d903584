"""Small plotting helpers. Plots take tables and return figures; nothing here writes files.

Figures are built with :class:`matplotlib.figure.Figure` directly (no pyplot global state), so
plotting is safe in worker processes and never opens a window.

One palette for every figure: :func:`colour` maps a setting's value (a spectrum, a teacher, a
student, an optimiser, an estimator, ``"V known"``…) to the same colour wherever it appears, and
:func:`sweep_colour` maps a numeric sweep value (r*, init scale, N, σ) to a fixed position of one
ordered colormap (a fixed log range per quantity), so two figures that share a setting draw it alike.
"""

from __future__ import annotations

import io
import textwrap
import zlib

import numpy as np
from matplotlib.colors import LinearSegmentedColormap
from matplotlib.figure import Figure
from matplotlib.text import Text

MAX_COLUMNS = 4  # panels per row: a figure shown in a report column stays legible

# The report shows a PNG at its pixel size, shrunk to the page's content width when wider (1,320 px
# body less 2 × 16 px padding: ``report/html.py``). One PNG pixel is one CSS pixel (1/96 inch), so a
# font of ``p`` points drawn at ``DPI`` shows at ``p · DPI/96 · shrink`` points at 100 % zoom.
DPI = 130
PAGE_WIDTH_PX = 1288
MIN_DISPLAY_PT = 8.0  # smallest legible text at 100 % zoom

# Named settings → colour (Okabe–Ito based, colour-blind safe where possible).
PALETTE = {
    "known": "#0072B2",
    "learned": "#D55E00",
    "flat": "#0072B2",
    "geometric": "#E69F00",
    "linear": "#0072B2",
    "softmax": "#CC3311",
    "gd": "#009E73",
    "adam": "#CC79A7",
    "closed form": "#000000",
    # E6's data-only predictors
    "linear_v_known": "#0072B2",
    "linear_v_unknown": "#56B4E9",
    "softmax_linearised": "#D55E00",
    "softmax_log_attention": "#009E73",
}


#: Twelve colours told apart at a glance (Okabe–Ito and Tol's muted), for a figure of many series.
DISTINCT = [
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#D55E00",
    "#56B4E9",
    "#882255",
    "#999933",
    "#332288",
    "#EE3377",
    "#000000",
    "#661100",
]
#: the colours :func:`colour` hashes names and ranks into: DISTINCT's first seven, then three muted ones
_CYCLE = [*DISTINCT[:7], "#555555", "#44AA99", "#BBBB00"]
SERIES_MARKERS = ("o", "s", "^", "D", "v", "P")
SERIES_LINESTYLES = ("-", "--", "-.", ":")


def series_styles(names, markers: dict | None = None) -> dict[str, dict]:
    """A ``color``, ``marker`` and ``ls`` per distinct name, no two alike: the twelve
    :data:`DISTINCT` colours in order, then again with the next line style (and marker, unless
    ``markers`` gives a name its own, e.g. one per corpus kind)."""
    styles = {}
    for i, name in enumerate(dict.fromkeys(names)):
        lap = i // len(DISTINCT)
        marker = (markers or {}).get(name, SERIES_MARKERS[lap % len(SERIES_MARKERS)])
        styles[name] = {
            "color": DISTINCT[i % len(DISTINCT)],
            "marker": marker,
            "ls": SERIES_LINESTYLES[lap % len(SERIES_LINESTYLES)],
        }
    return styles


def colour(setting) -> str:
    """The palette colour of a named setting; unknown names get a fixed colour from their text."""
    key = str(setting)
    if key in PALETTE:
        return PALETTE[key]
    return _CYCLE[zlib.crc32(key.encode()) % len(_CYCLE)]


# Numeric sweeps: a fixed log range per quantity, so a value has one colour in every figure, on a
# map whose hue turns at every step (indigo, blue, green, gold, orange, wine): two values a decade
# apart never read as the same blue, as on viridis' long blue-teal stretch.
SWEEP_CMAP = LinearSegmentedColormap.from_list(
    "sweep", ["#332288", "#0077BB", "#009E73", "#C8A400", "#D55E00", "#882255"]
)
SWEEP_RANGES = {"init": (1e-4, 10.0), "r_star": (1.0, 64.0), "N": (1.0, 4096.0), "sigma": (1e-3, 1.0)}


def rank_colour(r: int) -> str:
    """A distinct fixed colour per rank r* (1, 2, 4, 8, 16 and the ranks between them differ)."""
    return _CYCLE[int(round(2 * np.log2(max(1, int(r))))) % len(_CYCLE)]


def sweep_colour(value: float, quantity: str) -> str:
    """Colour of a numeric sweep value (an init scale, r*, N, σ) on its quantity's fixed log scale."""
    if quantity == "r_star":
        return rank_colour(int(value))
    lo, hi = SWEEP_RANGES[quantity]
    v = min(max(float(value), lo), hi)
    t = (np.log(v) - np.log(lo)) / (np.log(hi) - np.log(lo))
    rgba = SWEEP_CMAP(t)
    return "#{:02x}{:02x}{:02x}".format(*(int(255 * c) for c in rgba[:3]))


def figure_grid(nrows: int, ncols: int, *, width: float = 3.4, height: float = 2.8):
    """A figure with an ``nrows × ncols`` grid of axes, returned as ``(fig, axes[row][col])``."""
    fig = Figure(figsize=(max(1, ncols) * width, max(1, nrows) * height), layout="constrained")
    axes = fig.subplots(max(1, nrows), max(1, ncols), squeeze=False)
    return fig, axes


def panel_grid(n_panels: int, *, width: float = 3.4, height: float = 2.8, max_cols: int = MAX_COLUMNS):
    """``n_panels`` axes wrapped at ``max_cols`` per row; returns ``(fig, flat list of axes)``.

    Axes beyond ``n_panels`` in the last row are hidden.
    """
    ncols = max(1, min(n_panels, max_cols))
    nrows = max(1, -(-n_panels // ncols))
    fig, axes = figure_grid(nrows, ncols, width=width, height=height)
    flat = [ax for row in axes for ax in row]
    for ax in flat[n_panels:]:
        ax.set_visible(False)
    return fig, flat[: max(1, n_panels)]


def legend_below(fig: Figure, axes, ncol: int | None = None, fontsize: float = 7) -> None:
    """One legend for the whole figure, below the panels (off the data), with every labelled series."""
    handles, labels = [], []
    for ax in np.ravel(axes):
        for h, label in zip(*ax.get_legend_handles_labels()):
            if label not in labels and not label.startswith("_"):
                handles.append(h)
                labels.append(label)
    if handles:
        ncol = ncol or min(len(labels), 4)
        rows = -(-len(labels) // ncol)
        fig.set_figheight(fig.get_figheight() + 0.2 + 0.16 * rows * fontsize / 7)  # room for the legend
        fig.legend(handles, labels, loc="outside lower center", ncol=ncol, fontsize=fontsize, frameon=False)


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


def plot_spectrum(ax, s, *, floor: float = 1e-12, **style):
    """Singular values ``s_1 ≥ s_2 ≥ …`` against their index ``i = 1, 2, …`` on a log axis.

    Values below ``floor`` (exact zeros of a padded or rank-deficient spectrum) are drawn at
    ``floor`` so the line shows where the spectrum drops instead of vanishing. Returns the line.
    """
    s = np.asarray(s, dtype=float)
    (line,) = ax.semilogy(np.arange(1, len(s) + 1), np.maximum(s, floor), **style)
    return line


def label_spectrum_axes(ax, operator: str) -> None:
    """Axis labels of a :func:`plot_spectrum` panel of ``operator``'s singular values."""
    ax.set_xlabel("index i")
    ax.set_ylabel(f"singular value σ_i({operator})")


def log_with_zero(ax, smallest_positive: float) -> float:
    """A symlog y axis whose linear band below ``smallest_positive`` shows exact zeros at 0 honestly.

    Returns the linear threshold used; call after plotting.
    """
    linthresh = 10 ** np.floor(np.log10(max(smallest_positive, 1e-300)))
    ax.set_yscale("symlog", linthresh=linthresh, linscale=0.5)
    ax.set_ylim(bottom=0)
    ax.axhspan(0, linthresh, color="#f2f2f2", zorder=0, lw=0)
    ax.text(
        0.99,
        linthresh / 2,
        f"linear below {linthresh:g}",
        transform=ax.get_yaxis_transform(),
        ha="right",
        va="center",
        fontsize=5.5,
        color="#777777",
    )
    return float(linthresh)


def display_scale(fig: Figure, dpi: int = DPI) -> float:
    """Displayed points per figure point of ``fig`` saved at ``dpi`` and shown in the report."""
    width_px = fig.get_figwidth() * dpi
    return dpi / 96 * min(1.0, PAGE_WIDTH_PX / width_px)


def _visible_texts(fig: Figure):
    """Every visible, non-empty text ``fig`` holds now (titles, labels, legends, annotations; tick
    labels only once drawn)."""
    for t in fig.findobj(Text):
        if t.get_visible() and t.get_text().strip() and (t.axes is None or t.axes.get_visible()):
            yield t


def make_legible(fig: Figure, dpi: int = DPI, min_pt: float = MIN_DISPLAY_PT) -> None:
    """Raise every text of ``fig`` that would show below ``min_pt`` at 100 % zoom in the report.

    Plot code picks sizes relative to each other; this one pass guarantees the floor whatever the
    figure's width, so no figure needs its own arithmetic. It does not draw the figure (a draw costs
    as much as the PNG): tick labels and offset texts, which exist only once drawn, are sized
    through their axis, every other text as it is.
    """
    need = min_pt / display_scale(fig, dpi) + 1e-6
    for ax in fig.axes:
        for which, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            for kind, ticks in (("major", axis.get_major_ticks(1)), ("minor", axis.get_minor_ticks(1))):
                if any(min(t.label1.get_fontsize(), t.label2.get_fontsize()) < need for t in ticks):
                    ax.tick_params(axis=which, which=kind, labelsize=need)
            if axis.offsetText.get_fontsize() < need:
                axis.offsetText.set_fontsize(need)
    for t in _visible_texts(fig):
        if t.get_fontsize() < need:
            t.set_fontsize(need)
    _fit_figure_texts(fig)


def _fit_figure_texts(fig: Figure) -> None:
    """Wrap figure-level texts (the suptitle) wider than the figure, which the PNG would cut off."""
    for t in fig.texts:
        original = " ".join(t.get_text().split())
        chars = len(original)
        while chars > 20 and t.get_window_extent().width > 0.98 * fig.bbox.width:
            chars = int(chars * 0.9)  # a few narrowing steps: glyph widths vary
            t.set_text(textwrap.fill(original, chars))


def to_png(fig: Figure | bytes, dpi: int = DPI) -> bytes:
    """PNG bytes of a figure, every text at least ``MIN_DISPLAY_PT`` at the size the report shows
    (bytes pass through: a figure the pipeline drew while others trained)."""
    if isinstance(fig, bytes):
        return fig
    make_legible(fig, dpi)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()
