"""E3's figures — pure functions of the stored table (and, for the mixers, the stored curves)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..plotting import figure_grid, mark_floor
from .base import curves_by_run

RUNG_COLOURS = {"B0": "tab:gray", "B1": "tab:blue", "B2": "tab:orange", "B3": "tab:green"}
FLOOR = 1e-6  # plotted values are clipped here on log axes


def _select(ok: pd.DataFrame, **where) -> pd.DataFrame:
    sel = ok
    for k, v in where.items():
        sel = sel[sel[k] == v]
    return sel


def plot_full_rank_bars(cfg, ok: pd.DataFrame):
    """Relative excess per rung at full rank: bar = median over seeds, line = min–max, dots = seeds.

    One panel per V setting; the last bar is control (b), B1 on a B1-teacher task.
    """
    settings = [v for v in cfg.v_settings if len(_select(ok, v=v))] or ["known"]
    fig, axes = figure_grid(1, len(settings), width=3.8, height=3.0)
    for j, v in enumerate(settings):
        ax = axes[0][j]
        bars = [(r, "ladder", r) for r in cfg.rungs] + [("B1\n(B1 teacher)", "control_b", "B1")]
        for i, (_label, role, rung) in enumerate(bars):
            vals = _select(ok, role=role, rung=rung, v=v, positional="none", rank=cfg.full_rank(rung))
            vals = np.maximum(vals["rel_excess"].to_numpy(dtype=float), FLOOR)
            if not len(vals):
                continue
            colour = RUNG_COLOURS.get(rung, "k")
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
        mark_floor(ax, cfg.eps_floor, "ε_floor")
        ax.set_title(f"full rank, V {v}", fontsize=9)
        ax.set_ylabel("relative excess risk (held out)")
    fig.suptitle(f"E3: the ladder at full rank (r = {cfg.n} for B0, r = {cfg.d} for B1–B3)", fontsize=10)
    return fig


def _line(ax, rows: pd.DataFrame, label: str, colour: str, ls: str = "-") -> None:
    rows = rows.sort_values("rank")
    if not len(rows):
        return
    med = np.maximum(rows["rel_excess_median"].to_numpy(dtype=float), FLOOR)
    ax.plot(rows["rank"], med, ls, marker="o", ms=3, color=colour, label=label)
    ax.fill_between(
        rows["rank"],
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
    fig, axes = figure_grid(1, max(1, len(panels)), width=3.6, height=3.0)
    for j, (role, key) in enumerate(panels):
        ax = axes[0][j]
        if role == "ladder":
            for rung in cfg.rungs:
                _line(ax, ladder[(ladder["v"] == key) & (ladder["rung"] == rung)], rung, RUNG_COLOURS[rung])
            ax.set_title(f"ladder, V {key}", fontsize=9)
        else:
            sel = x2[x2["task.operator"] == key]
            for (rung, pos, heads, v), g in sel.groupby(["rung", "positional", "n_heads", "v"]):
                label = f"{rung}{' + pos' if pos != 'none' else ''}, h={heads}, V {v}"
                _line(ax, g, label, RUNG_COLOURS[rung], "--" if pos != "none" else "-")
            ax.set_title(f"X2, {key.replace('_', '-')} A*", fontsize=9)
        ax.axvline(cfg.r_star, color="tab:red", lw=0.8, ls=":")
        mark_floor(ax, cfg.eps_floor, "ε_floor")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("rank r (per head)")
        ax.set_ylabel("relative excess risk")
        ax.legend(fontsize=5.5, loc="lower left")
    fig.suptitle("E3: relative excess risk vs rank (r* dotted)", fontsize=10)
    return fig


def _mixer_panels(cfg, ok: pd.DataFrame) -> list[tuple[str, list[tuple[str, dict]]]]:
    """Rows of the mixer figure: (task operator, [(column label, selection)])."""
    full = cfg.d
    rows = []
    for operator in ("low_rank", "row_stochastic"):
        cols = []
        for rung in ("B1", "B2"):
            role = "ladder" if operator == "low_rank" and len(_select(ok, role="ladder", rung=rung)) else "x2"
            cols.append((f"{rung}", dict(role=role, rung=rung, positional="none")))
        for rung in ("B1", "B2"):
            cols.append((f"{rung} + positions", dict(role="x2", rung=rung, positional="learned_absolute")))
        rows.append(
            (operator, [(label, {**sel, "task.operator": operator, "rank": full}) for label, sel in cols])
        )
    return rows


def plot_mixers(cfg, ok: pd.DataFrame, records: list[dict]):
    """Mean realised mixer ``E_X M(X)`` of trained full-rank B1/B2 (first seed, V known when run)
    next to ``A*``, one row per task operator; colour scale ±max|A*| of the row."""
    curves = curves_by_run(records)
    rows = []
    for operator, cols in _mixer_panels(cfg, ok):
        found = []
        for label, sel in cols:
            g = _select(ok, **sel).sort_values(["v", "n_heads", "seed"])  # "known" sorts first
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
            rows.append((operator, found))
    fig, axes = figure_grid(
        max(1, len(rows)), 1 + max([len(f) for _, f in rows] or [0]), width=2.3, height=2.3
    )
    for i, (operator, found) in enumerate(rows):
        target = found[0][2]
        scale = float(np.abs(target).max()) or 1.0
        panels = [(f"A* ({operator.replace('_', '-')})", target)] + [(label, M) for label, M, _ in found]
        for j, (label, M) in enumerate(panels):
            ax = axes[i][j]
            ax.imshow(M, cmap="RdBu_r", vmin=-scale, vmax=scale)
            ax.set_title(label, fontsize=6.5)
            ax.set_xticks([])
            ax.set_yticks([])
        for j in range(len(panels), len(axes[i])):
            axes[i][j].set_visible(False)
    fig.suptitle("E3: mean realised mixers E_X M(X) of trained students next to A*", fontsize=10)
    return fig
