"""The numbers E1's claims read: the transition ratio per teacher draw, the floor rule's margin, and the
median a bootstrap over teacher draws recomputes."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...stats.draw_keys import DRAW, with_draw


def median_of(units: list[np.ndarray]):
    """The median of the pooled runs of the units an index array picks."""
    return lambda picked: float(np.median(np.concatenate([units[i] for i in picked])))


def transition_ratios(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (draw, r*, spectrum, V, seed): excess(r*-1) / excess(r*), excess(0) being the clean
    signal."""
    out = []
    keys = [DRAW, "task.r_star", "task.spectrum", "v", "seed"]
    for key, g in with_draw(rows).groupby(keys):
        r_star = key[1]
        at = g[g["rank"] == r_star]["excess"]
        below = g[g["rank"] == r_star - 1]["excess"] if r_star > 1 else g["signal"].iloc[:1]
        if len(at) and len(below):
            out.append(
                {
                    "draw": key[0],
                    "r_star": r_star,
                    "spectrum": key[2],
                    "v": key[3],
                    "seed": key[4],
                    "ratio": float(below.iloc[0] / max(at.iloc[0], 1e-300)),
                }
            )
    return pd.DataFrame(out)


def floor_boundary(above: pd.DataFrame, eps_floor: float) -> dict:
    """How close the floor rule sits to flipping: the worst run against eps_floor, and the runs within
    a factor of 3 of it (a fresh draw moves these across the floor)."""
    rel = above["rel_excess"].to_numpy()
    near = (rel >= eps_floor / 3) & (rel < eps_floor * 3)
    return {
        "worst_over_eps_floor": float(rel.max() / eps_floor),
        "runs_within_factor_3": int(near.sum()),
        "eps_floor_that_flips": float(rel.max()),
    }
