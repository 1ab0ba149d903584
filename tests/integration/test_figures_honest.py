"""Every figure as the report shows it: no empty panel, no text below 8 pt at 100 % zoom, no title
wider than the figure.

:func:`figure_problems` is the check; ``test_experiment_smoke`` applies it to every figure of every
experiment's tiny run (the store it already made), and the tests here show the check can fail.
The displayed size is computed from the PNG the report embeds (its pixel width, shrunk to the
page's content width when wider), independently of :mod:`entropic_bound.plotting`'s own arithmetic.
"""

from __future__ import annotations

import struct

import numpy as np
from matplotlib.figure import Figure
from matplotlib.text import Text

from entropic_bound.plotting import DPI, PAGE_WIDTH_PX, figure_grid, to_png

MIN_PT = 8.0


def _has_data(ax) -> bool:
    """Lines with points, scatter/mesh collections, images or bars: something drawn from data."""
    lines = any(len(np.atleast_1d(line.get_xdata())) for line in ax.lines)
    return lines or bool(ax.collections or ax.images or ax.patches)


def _says_not_run(ax) -> bool:
    return any("not run" in t.get_text() for t in ax.texts)


def _png_width(png: bytes) -> int:
    return struct.unpack(">I", png[16:20])[0]


def figure_problems(name: str, fig: Figure) -> list[str]:
    """Empty visible axes and texts smaller than ``MIN_PT`` at the size the report shows ``fig``."""
    png = to_png(fig)  # what the report writes (and the size it lays the figure out at)
    shrink = min(1.0, PAGE_WIDTH_PX / _png_width(png))
    problems = [
        f"{name}: empty panel '{ax.get_title()}'"
        for ax in fig.axes
        if ax.get_visible() and not _has_data(ax) and not _says_not_run(ax)
    ]
    for t in fig.findobj(Text):
        visible = t.get_visible() and t.get_text().strip() and (t.axes is None or t.axes.get_visible())
        shown_pt = t.get_fontsize() * DPI / 72 * shrink * 72 / 96  # figure pt → PNG px → CSS px → pt
        if visible and shown_pt < MIN_PT - 1e-6:
            problems.append(f"{name}: '{t.get_text()[:30]}' shows at {shown_pt:.1f} pt")
    fig.draw_without_rendering()  # lay out again at the figure's own dpi, as fig.bbox is measured
    problems += [
        f"{name}: '{t.get_text()[:30]}' is cut off at the figure's edge"
        for t in fig.texts
        if t.get_window_extent().width > fig.bbox.width
    ]
    return problems


def test_an_empty_panel_is_found_and_a_not_run_note_accepted():
    fig, axes = figure_grid(1, 2)
    axes[0][0].plot([1, 2], [3, 4])
    assert [p for p in figure_problems("f", fig) if "empty panel" in p]
    axes[0][1].text(0.5, 0.5, "not run at this scale", ha="center")
    assert figure_problems("f", fig) == []


def test_small_text_on_a_wide_figure_is_raised_to_8_pt_as_shown():
    fig, axes = figure_grid(1, 6, width=3.4)  # 20 in: the report shrinks it to the page
    for ax in axes[0]:
        ax.plot([1, 2], [3, 4], label="x")
        ax.set_title("tiny", fontsize=4)
        ax.tick_params(labelsize=4)
    assert figure_problems("wide", fig) == []
    shown = axes[0][0].title.get_fontsize() * DPI / 96 * PAGE_WIDTH_PX / (20.4 * DPI)
    assert abs(shown - MIN_PT) < 0.01  # raised exactly to the floor, not beyond


def test_text_left_small_is_reported(monkeypatch):
    monkeypatch.setattr("entropic_bound.plotting.make_legible", lambda fig, dpi=DPI: None)
    fig, axes = figure_grid(1, 1)
    axes[0][0].plot([1, 2], [3, 4])
    axes[0][0].set_title("small", fontsize=5)  # 5 pt × 130/96 = 6.8 pt as shown
    assert figure_problems("f", fig) == ["f: 'small' shows at 6.8 pt"]


def test_a_long_suptitle_is_wrapped_to_the_figure():
    fig, axes = figure_grid(1, 1)
    axes[0][0].plot([1, 2], [3, 4])
    fig.suptitle("a title much longer than one narrow panel can hold on a single line, " * 2)
    assert figure_problems("f", fig) == [] and "\n" in fig.texts[0].get_text()
