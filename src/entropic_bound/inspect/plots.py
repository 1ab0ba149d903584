"""Figures of an inspection: pure functions of tables that return figures, and :func:`write_figures`
that saves an inspection's set as PNG files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..plotting import plot_spectrum, to_png
from .mixers import SINK_THRESHOLD


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def head_heatmap(
    table: pd.DataFrame, value: str = "energy_effective_rank", *, title: str | None = None, threshold=None
):
    """Layer × head heatmap of the column ``value`` of a per-head ``table`` (columns layer, head, value).

    ``(level, name)`` as ``threshold`` marks ``level`` on the colour bar and outlines every head
    above it (the sink heads above ε = 0.3 of a sink-score map)."""
    grid = table.pivot(index="layer", columns="head", values=value).astype(float)  # (layers, heads)
    plt = _pyplot()
    fig, ax = plt.subplots(
        figsize=(1.6 + 0.4 * grid.shape[1], 1.2 + 0.4 * grid.shape[0]), constrained_layout=True
    )
    im = ax.imshow(grid.to_numpy(), aspect="auto", cmap="viridis", origin="upper")
    ax.set_xlabel("head")
    ax.set_ylabel("layer")
    ax.set_xticks(range(grid.shape[1]), [str(h) for h in grid.columns])
    ax.set_yticks(range(grid.shape[0]), [str(layer) for layer in grid.index])
    ax.set_title(title or value.replace("_", " "))
    bar = fig.colorbar(im, ax=ax, label=value)
    if threshold is not None:
        _mark_threshold(ax, bar, grid.to_numpy(), *threshold)
    return fig


THRESHOLD_COLOUR = "#D55E00"


def _mark_threshold(ax, bar, values: np.ndarray, level: float, name: str) -> None:
    """``level`` as a line across the colour bar and an outline round every cell above it."""
    from matplotlib.patches import Rectangle

    bar.ax.axhline(level, color=THRESHOLD_COLOUR, lw=2)
    lo, hi = bar.ax.get_ylim()
    ticks = [t for t in bar.get_ticks() if lo <= t <= hi and abs(t - level) > 0.06 * (hi - lo)]
    bar.set_ticks(sorted([*ticks, level]))
    for label in bar.ax.get_yticklabels():
        if np.isclose(float(label.get_position()[1]), level):
            label.set(color=THRESHOLD_COLOUR, fontweight="bold")
    for (i, j), v in np.ndenumerate(values):
        if np.isfinite(v) and v > level:
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, ec=THRESHOLD_COLOUR, lw=2))
    ax.set_xlabel(f"head (outlined: {name}, score > {level:g})")


def spectra_table(singular_values: np.ndarray) -> pd.DataFrame:
    """Long table ``layer, head, index, singular_value`` of kernel spectra ``(layers, heads, k)``."""
    L, H, k = singular_values.shape
    layer, head, index = np.meshgrid(np.arange(L), np.arange(H), np.arange(1, k + 1), indexing="ij")
    return pd.DataFrame(
        {
            "layer": layer.ravel(),
            "head": head.ravel(),
            "index": index.ravel(),
            "singular_value": singular_values.ravel(),
        }
    )


def spectra_figure(spectra: pd.DataFrame, *, max_cols: int = 4):
    """One panel per layer, one line per head: ``σ_i / σ_1`` against ``i`` on a log scale.

    A head's colour is its index on one discrete colour bar (a legend of 12 heads per panel would
    cover the lines), so head h reads alike in every layer.
    """
    from matplotlib import colormaps
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import BoundaryNorm

    layers = sorted(spectra["layer"].unique())
    heads = sorted(spectra["head"].unique())
    cmap = colormaps["viridis"].resampled(max(2, len(heads)))
    norm = BoundaryNorm(np.arange(len(heads) + 1) - 0.5, cmap.N)
    cols = min(max_cols, len(layers))
    rows = -(-len(layers) // cols)
    plt = _pyplot()
    fig, axes = plt.subplots(
        rows, cols, figsize=(3.2 * cols, 2.6 * rows), squeeze=False, sharey=True, constrained_layout=True
    )
    for ax, layer in zip(axes.ravel(), layers):
        for head, group in spectra[spectra["layer"] == layer].groupby("head"):
            s = group.sort_values("index")["singular_value"].to_numpy()
            style = dict(lw=0.9, color=cmap(norm(heads.index(head))))
            plot_spectrum(ax, s / s[0] if s[0] > 0 else np.zeros(len(s)), floor=1e-16, **style)
        ax.set_title(f"layer {layer}")
        ax.set_xlabel("i")
    for ax in axes.ravel()[len(layers) :]:
        ax.set_visible(False)
    axes[0, 0].set_ylabel("σ_i / σ_1")
    bar = fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=axes, shrink=0.9, pad=0.01)
    bar.set_ticks(range(len(heads)), labels=[str(h) for h in heads])
    bar.set_label("head h")
    fig.suptitle("static kernel spectra W_Q^h W_K^hᵀ per layer (colour: head)")
    return fig


def write_figures(result, out) -> list[Path]:
    """Save the inspection's figures as PNG files in the claimed output folder ``out``
    (:class:`~entropic_bound.store.ownership.OutputFolder`, which refuses files it did not write);
    returns their paths.

    Always the energy-effective-rank heatmap and the kernel spectra; with realised mixers also the
    sink-score and locality-mass heatmaps.
    """
    figures = {
        "energy_effective_rank_heatmap.png": head_heatmap(
            result.table, "energy_effective_rank", title="static kernel energy effective rank"
        ),
        "kernel_spectra.png": spectra_figure(spectra_table(result.singular_values)),
    }
    if "sink_score" in result.table:
        definition = (result.text_info or {}).get("sink_definition", "ours")
        figures["sink_score_heatmap.png"] = head_heatmap(
            result.table,
            "sink_score",
            title=f"attention-sink score ({definition})",
            threshold=(SINK_THRESHOLD, "sink head"),
        )
        figures["locality_mass_heatmap.png"] = head_heatmap(
            result.table, "locality_mass", title="locality mass"
        )
    plt = _pyplot()
    paths = []
    for name, fig in figures.items():
        paths.append(out.write_bytes(name, to_png(fig)))  # the report's DPI and legible-font floor
        plt.close(fig)
    return paths
