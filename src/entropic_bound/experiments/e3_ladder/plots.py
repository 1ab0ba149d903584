"""E3's figures — pure functions of the stored table (and, for the mixers, the stored curves)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...models.base import PlotStyle
from ...plotting import figure_grid, legend_below, mark_floor, panel_grid
from ...registry import STUDENTS
from ..framework.decision import curves_by_run
from .config import ladder_parts, positional_rungs

FLOOR = 1e-6  # plotted values are clipped here on log axes


def style(student: str) -> PlotStyle:
    """The student's colour, marker and rank-axis offset (black for a name the registry does not know)."""
    return STUDENTS.get(student).plot_style if student in STUDENTS else PlotStyle()


def _select(rows: pd.DataFrame, **where) -> pd.DataFrame:
    sel = rows
    for k, v in where.items():
        sel = sel[sel[k] == v]
    return sel


def plot_full_rank_bars(cfg, rows: pd.DataFrame):
    """Relative excess per rung at full rank: bar = median over seeds, line = min–max, dots = seeds.

    One panel per V setting; the last bar is control (b), B1 on a B1-teacher task.
    """
    settings = [v for v in cfg.v_settings if len(_select(rows, v=v))] or ["known"]
    fig, axes = figure_grid(1, len(settings), width=3.8, height=3.0)
    for j, v in enumerate(settings):
        ax = axes[0][j]
        bars = [(r, "ladder", r) for r in cfg.rungs] + [("B1\n(B1 teacher)", "control_b", "B1")]
        for i, (_label, role, name) in enumerate(bars):
            vals = _select(rows, role=role, rung=name, v=v, positional="none", rank=cfg.full_rank(name))
            vals = np.maximum(vals["rel_excess"].to_numpy(dtype=float), FLOOR)
            if not len(vals):
                continue
            colour = style(name).colour
            ax.bar(
                i,
                np.median(vals),
                color=colour,
                alpha=0.6 if role == "ladder" else 0.3,
                hatch=None if role == "ladder" else "//",
                edgecolor=colour,
            )
            ax.vlines(i, vals.min(), vals.max(), color="k", lw=1.2)
            ax.plot(np.full(len(vals), i), vals, "k.", ms=4)
        ax.set_xticks(range(len(bars)), [b[0] for b in bars], fontsize=7)
        ax.set_yscale("log")
        ax.set_ylim(FLOOR / 2, 3.0)
        mark_floor(ax, cfg.verdict.eps_floor, "ε_floor")
        ax.set_title(f"full rank, V {v}", fontsize=9)
        ax.set_ylabel("relative excess risk (held out)")
    base, attention = ladder_parts()
    fig.suptitle(
        f"E3: the ladder at full rank (r = {cfg.task.n} for {base}, r = {cfg.task.d} for "
        f"{attention[0]}–{attention[-1]})",
        fontsize=10,
    )
    return fig


def _line(ax, rows: pd.DataFrame, label: str, student: str, ls: str = "-") -> None:
    rows = rows.sort_values("rank")
    if not len(rows):
        return
    look = style(student)
    colour = look.colour
    x = rows["rank"].to_numpy(dtype=float) * look.offset
    med = np.maximum(rows["rel_excess_median"].to_numpy(dtype=float), FLOOR)
    ax.plot(
        x,
        med,
        ls,
        marker=look.marker,
        ms=4,
        mfc="none" if ls != "-" else colour,
        color=colour,
        lw=1,
        label=label,
    )
    ax.fill_between(
        x,
        np.maximum(rows["rel_excess_min"], FLOOR),
        np.maximum(rows["rel_excess_max"], FLOOR),
        color=colour,
        alpha=0.15,
        lw=0,
    )


def plot_excess_vs_rank(cfg, summary: pd.DataFrame):
    """Median relative excess vs rank r (band = seed min–max): ladder panels per V setting, then one
    panel per X2 operator with and without learned positions (dashed = positions)."""
    ladder = summary[summary["role"] == "ladder"]
    x2 = summary[summary["role"] == "x2"]
    panels = [("ladder", v) for v in cfg.v_settings if len(ladder[ladder["v"] == v])]
    panels += [("x2", o) for o in cfg.x2_operators if len(x2[x2["task.operator"] == o])]
    fig, axes = panel_grid(len(panels), width=3.6, height=3.0)
    for j, (role, key) in enumerate(panels):
        ax = axes[j]
        if role == "ladder":
            for name in cfg.rungs:
                _line(ax, ladder[(ladder["v"] == key) & (ladder["rung"] == name)], name, name)
            ax.set_title(f"ladder, V {key}", fontsize=9)
        else:
            sel = x2[x2["task.operator"] == key]
            for (name, pos, heads, v), g in sel.groupby(["rung", "positional", "n_heads", "v"]):
                label = f"{name}{' + pos' if pos != 'none' else ''}, h={heads}, V {v}"
                _line(ax, g, label, name, "--" if pos != "none" else "-")
            ax.set_title(f"X2, {key.replace('_', '-')} A*", fontsize=9)
        ax.axvline(cfg.task.r_star, color="tab:red", lw=0.8, ls=":")
        mark_floor(ax, cfg.verdict.eps_floor, "ε_floor")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("rank r (per head)")
        ax.set_ylabel("relative excess risk")
    legend_below(fig, axes, ncol=4)
    fig.suptitle(
        "E3: relative excess risk vs rank (r* dotted; rungs slightly offset so coinciding curves stay visible)",
        fontsize=10,
    )
    return fig


def _mixer_panels(cfg, rows: pd.DataFrame) -> list[tuple[str, list[tuple[str, dict]]]]:
    """Rows of the mixer figure: (task operator, [(column label, selection)])."""
    full = cfg.task.d
    positional = positional_rungs()
    panels = []
    for operator in ("low_rank", "row_stochastic"):
        cols = []
        for name in positional:
            role = (
                "ladder" if operator == "low_rank" and len(_select(rows, role="ladder", rung=name)) else "x2"
            )
            cols.append((f"{name}", dict(role=role, rung=name, positional="none")))
        for name in positional:
            cols.append((f"{name} + positions", dict(role="x2", rung=name, positional="learned_absolute")))
        panels.append(
            (operator, [(label, {**sel, "task.operator": operator, "rank": full}) for label, sel in cols])
        )
    return panels


def plot_mixers(cfg, rows: pd.DataFrame, records: list[dict]):
    """Mean realised mixer ``E_X M(X)`` of trained full-rank B1/B2 (first seed, V known when run)
    next to ``A*``, one row per task operator; colour scale ±max|A*| of the row."""
    curves = curves_by_run(records)
    panels = []
    for operator, cols in _mixer_panels(cfg, rows):
        found = []
        for label, sel in cols:
            g = _select(rows, **sel).sort_values(["v", "n_heads", "seed"])  # "known" sorts first
            if len(g) and "mean_mixer" in curves.get(g["run_id"].iloc[0], {}):
                c = curves[g["run_id"].iloc[0]]
                found.append(
                    (
                        f"{label} (V {g['v'].iloc[0]})\nrel. excess {g['rel_excess'].iloc[0]:.3g}",
                        np.asarray(c["mean_mixer"]),
                        np.asarray(c["target_mean_mixer"]),
                    )
                )
        if found:
            panels.append((operator, found))
    # Per operator two rows of three: A*, B1, B2 above; B1 + positions, B2 + positions below; one colour scale.
    fig, grid = figure_grid(2 * max(1, len(panels)), 3, width=2.2, height=2.1)
    positional = positional_rungs()
    for i, (operator, found) in enumerate(panels):
        target = found[0][2]
        scale = float(np.abs(target).max()) or 1.0
        cells = [(0, 0, f"A* ({operator.replace('_', '-')})", target)]
        for label, M, _ in found:
            below = "positions" in label
            column = 1 + next(i for i, n in enumerate(positional) if label.startswith(n))
            cells.append((1 if below else 0, column, label, M))
        used = set()
        image = None
        for r, c, label, M in cells:
            ax = grid[2 * i + r][c]
            image = ax.imshow(M, cmap="RdBu_r", vmin=-scale, vmax=scale)
            ax.set_title(label, fontsize=7)
            ax.set_xticks([])
            ax.set_yticks([])
            used.add((r, c))
        bar = fig.colorbar(image, ax=[grid[2 * i][2], grid[2 * i + 1][2]], shrink=0.8, pad=0.03)
        bar.set_label(f"mixer entry ({operator.replace('_', '-')} row)", fontsize=7)
        for r in range(2):
            for c in range(3):
                if (r, c) not in used:
                    grid[2 * i + r][c].set_visible(False)
    fig.suptitle("E3: mean realised mixers E_X M(X)\nof trained students next to A*", fontsize=10)
    return fig
