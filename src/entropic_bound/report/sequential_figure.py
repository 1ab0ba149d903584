"""Each ``--until-decided`` claim decided by a confidence sequence: its interval against its units,
look by look (the sequence narrowing onto or away from its bar)."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from ..plotting import legend_below, panel_grid


def sequential_figure(verdicts: Sequence) -> Figure | None:
    """One panel per claim decided by a confidence sequence: its 95 % interval at each look against
    the units so far, with its bars (None: no such claim)."""
    shown = [v for v in verdicts if "intervals" in (v.evidence.get("sequential") or {})]
    if not shown:
        return None
    fig, axes = panel_grid(len(shown))
    for ax, v in zip(axes, shown):
        record, decision = v.evidence["sequential"], v.evidence.get("decision") or {}
        units = record["units"]
        lower, upper = zip(*record["intervals"])
        ax.fill_between(units, lower, upper, alpha=0.3, color="tab:blue", label="95 % interval")
        ax.plot(units, lower, "o-", color="tab:blue", ms=3, lw=1)
        ax.plot(units, upper, "o-", color="tab:blue", ms=3, lw=1)
        ax.axhline(decision.get("threshold"), color="tab:green", ls="--", lw=1, label="confirmation bar")
        if decision.get("refute_threshold") != decision.get("threshold"):
            ax.axhline(
                decision.get("refute_threshold"), color="tab:red", ls=":", lw=1, label="refutation bar"
            )
        ax.set_ylim(0, 1)
        ax.set_xlabel(f"units so far ({decision.get('unit', 'unit')})")
        ax.set_ylabel("share")
        ax.set_title(f"{v.claim}: {v.outcome} ({record.get('stop') or 'open'})", fontsize=9)
    legend_below(fig, axes)
    return fig
