"""The zoo against model size: static rank, logit-field rank, content-remainder rank and sink shares
of every zoo model (trained and its random control) against its parameter count, with intervals.

Per model, from one forward pass over the zoo's windows: each head's realised logit field taken apart
(:mod:`entropic_bound.inspect.logit_decomposition`) gives per window the field's and the content
remainder's ``energy_threshold_rank`` (τ = 0.9) and the net energy shares; the statistic is the median
over heads of each head's mean over windows. The unit is a text window: the 95 % interval resamples
windows (percentile bootstrap, :func:`~entropic_bound.stats.unit_intervals.unit_bootstrap`, seed 0),
holding each head's decomposition fitted on all windows (the position-only part is a mean over
windows; refitting it per draw would cost a decomposition per draw and head). The share of sink heads
is Gu et al.'s metric on natural text (:mod:`.sink_inputs`), its interval over windows too. The static
rank depends on no window: its interval resamples heads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..inspect.released import RANDOM_SUFFIX

#: ``(key, label)`` of the statistics, in the figure's panel order. The static rank is a share of
#: ``d_head`` (it is bounded by it, and ``d_head`` grows with these models); the field's ranks are
#: counts, all bounded by the same window of 64 tokens.
STATISTICS = (
    ("static_rank", "static energy rank 90 % / d_head"),
    ("field_rank", "logit-field energy rank 90 %"),
    ("content_rank", "content-remainder rank 90 %"),
    ("sink_heads", "share of sink heads (Gu et al., natural text)"),
    ("sink_energy", "sink share of the field's energy"),
    ("structure_energy", "structural share (sink + band + position)"),
)
LABELS = dict(STATISTICS)


@dataclass
class TrendPoint:
    """One model: its name, parameter count and ``{statistic: (value, (low, high))}``."""

    name: str
    parameters: int
    values: dict[str, tuple[float, tuple[float, float]]]

    @property
    def base(self) -> str:
        return self.name.removesuffix(RANDOM_SUFFIX)

    @property
    def trained(self) -> bool:
        return self.base == self.name


def window_values(mixers: np.ndarray, *, causal: bool, width: int) -> dict[str, np.ndarray]:
    """``mixers (B, L, H, n, n)`` → ``{statistic: (B, L*H)}`` per window and head (the decomposition's)."""
    from ..inspect.logit_decomposition import decompose

    B, L, H = mixers.shape[:3]
    out = {k: np.empty((B, L * H)) for k in ("field_rank", "content_rank", "sink_energy", "structure_energy")}
    for head in range(L * H):
        d = decompose(mixers[:, head // H, head % H], causal=causal, width=width)
        ranks, shares = d.window_ranks(), d.window_shares()  # (B,), (B, 4)
        out["field_rank"][:, head] = ranks["field"]
        out["content_rank"][:, head] = ranks["content"]
        out["sink_energy"][:, head] = shares[:, 0]
        out["structure_energy"][:, head] = 1.0 - shares[:, 3]
    return out


def _median_of_window_means(values: np.ndarray):
    """The statistic of ``values (B, heads)`` on drawn windows: median over heads of their window mean."""
    return lambda idx: float(np.median(values[idx].mean(axis=0)))


def summarise(per_window: dict[str, np.ndarray], sink_heads: np.ndarray, static_ranks: np.ndarray) -> dict:
    """``{statistic: (value, interval)}`` of one model (see the module docstring for the units) from
    :func:`window_values`, the share of sink heads per window ``(B,)`` and each head's static rank
    as a share of ``d_head`` ``(heads,)``."""
    from ..stats.unit_intervals import unit_bootstrap

    out = {
        key: unit_bootstrap(np.arange(len(v)), _median_of_window_means(v)) for key, v in per_window.items()
    }
    out["sink_heads"] = unit_bootstrap(np.arange(len(sink_heads)), lambda idx: float(sink_heads[idx].mean()))
    static = np.asarray(static_ranks, float)
    out["static_rank"] = unit_bootstrap(np.arange(len(static)), lambda idx: float(np.median(static[idx])))
    return out


def _style(point: TrendPoint, colours: dict[str, str]) -> dict:
    from ..plotting import colour

    c = colours.get(point.base, colour(point.base))
    if point.trained:
        return {"color": c, "marker": "o", "ms": 5, "mfc": c}
    return {"color": c, "marker": "s", "ms": 5, "mfc": "white"}


def _bar(style: dict) -> dict:
    """The interval bar's style: the point's colour, no marker."""
    return {"color": style["color"]}


#: Random controls are drawn this factor to the right of their trained model (same parameter count).
CONTROL_OFFSET = 1.12


#: Two tick labels closer than this share of the axis width are set on two rows.
LABEL_GAP = 0.16


def staggered_labels(sizes: list[int], low: float, high: float) -> list[str]:
    """Tick labels in millions (billions from 1e9); a label too close to the previous one on the first row (110 M beside
    135 M on a log axis) goes to a second row."""
    span, last, labels = np.log(high / low), -np.inf, []
    for size in sizes:
        x = np.log(size / low) / span
        label = f"{size / 1e9:.1f} B" if size >= 1e9 else f"{size / 1e6:.0f} M"
        if x - last < LABEL_GAP:
            label = "\n" + label
        else:
            last = x
        labels.append(label)
    return labels


def _size_axis(ax, sizes: list[int]) -> None:
    """A log axis of parameter counts ticked at the models' own sizes, in millions."""
    from matplotlib.ticker import NullFormatter, NullLocator

    low, high = sizes[0] / 1.6, sizes[-1] * 1.6 * CONTROL_OFFSET
    ax.set_xscale("log")
    ax.set_xlim(low, high)
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xticks(sizes, staggered_labels(sizes, low, high))
    ax.set_xlabel("parameters")


def trend_figure(points: list[TrendPoint], colours: dict[str, str]):
    """One panel per statistic against parameter count (log), 95 % interval bars; trained models
    joined by a solid line in order of size, their random controls (hollow squares) by a dashed one;
    ``colours`` by base model name (others get :func:`~entropic_bound.plotting.colour`)."""
    from ..plotting import figure_grid, legend_below, make_legible

    fig, axes = figure_grid(2, 3, width=3.4, height=2.8)
    for ax, (key, label) in zip(np.ravel(axes), STATISTICS):
        for trained, ls in ((True, "-"), (False, "--")):
            group = sorted((p for p in points if p.trained == trained), key=lambda p: p.parameters)
            x = [p.parameters * (1 if trained else CONTROL_OFFSET) for p in group]
            ax.plot(x, [p.values[key][0] for p in group], ls, color="0.6", lw=0.9, zorder=1)
            for xi, p in zip(x, group):
                value, (lo, hi) = p.values[key]
                style = _style(p, colours)
                # the bar is the interval as measured: a window bootstrap of a statistic fitted once
                # on all windows need not contain its point value, so the bar is not drawn around it
                ax.errorbar(xi, (lo + hi) / 2, yerr=(hi - lo) / 2, capsize=2, lw=1, fmt="none", **_bar(style))
                ax.plot(xi, value, ls="none", label=p.name, **style)
        _size_axis(ax, sorted({p.parameters for p in points}))
        ax.set_title(label, fontsize=9)
        ax.set_ylim(bottom=0)
    legend_below(fig, np.ravel(axes), ncol=min(len(points), 6))
    make_legible(fig)
    return fig
