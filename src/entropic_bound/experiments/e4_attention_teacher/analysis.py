"""E4's analysis: transition and saturation tables, figures and notes beside the verdicts of C5 and C6 (claims.py).

C6 normalisations. The size of the transition is measured by the excess at ``r* − 1``:

- ``k0``: ``ΔR(r*−1) / ΔR(K = 0)``, the fraction of what attention *can* remove that a rank
  ``r*−1`` kernel leaves. For the softmax, ``K = 0`` is uniform attention, which already explains
  part of the signal; this normalisation discounts that part (primary, default).
- ``signal``: ``ΔR(r*−1) / (E||f*||² / (n d_v))``, the relative excess risk. Under the softmax it
  looks compressed partly because uniform attention carries signal, not because the kernel's
  transition is smaller.

Both are reported; the verdict uses ``cfg.verdict.c6_normalisation`` and says so.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..framework.verdict import Analysis, ClaimContext, Verdict
from .plots import plot_excess_vs_rank, plot_transition_size

RESULT_COLUMNS = [
    "run_id",
    "seed",
    "status",
    "diverged_step",
    "teacher",
    "task.r_star",
    "task.spectrum",
    "task.c",
    "task.sigma",
    "v",
    "rank",
    "train.n_samples",
    "excess",
    "rel_excess",
    "excess_over_k0",
    "k0_excess",
    "k0_rel_excess",
    "signal",
    "noise_floor",
    "train_loss",
    "steps_run",
    "converged",
    "last_quarter_drop",
    "row_entropy_ratio",
    "mean_max_attention",
]
PAIR_KEYS = ["task.r_star", "task.spectrum", "task.c", "v", "seed", "draw"]


def pair_keys(table: pd.DataFrame) -> list[str]:
    """The keys of :data:`PAIR_KEYS` ``table`` carries (rows read outside a pooled decision have no draw)."""
    return [k for k in PAIR_KEYS if k in table.columns]


def transition_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (teacher, r* ≥ 2, spectrum, V, seed, draw): the excess at r*−1 and r*, both normalisations."""
    out, keys = [], pair_keys(rows)
    for (kind, *key), g in rows.groupby(["teacher", *keys]):
        r_star = key[0]
        below, at = g[g["rank"] == r_star - 1], g[g["rank"] == r_star]
        if r_star < 2 or not len(below) or not len(at):
            continue
        out.append(
            {
                "teacher": kind,
                **dict(zip(keys, key)),
                "rel_excess_below": float(below["rel_excess"].iloc[0]),
                "rel_excess_at": float(at["rel_excess"].iloc[0]),
                "over_k0_below": float(below["excess_over_k0"].iloc[0]),
                "k0_rel_excess": float(below["k0_rel_excess"].iloc[0]),
            }
        )
    return pd.DataFrame(out)


def paired_ratios(trans: pd.DataFrame) -> pd.DataFrame:
    """Softmax ÷ linear normalised excess at r*−1 on the same (K*, V*, X): columns ``ratio_k0``, ``ratio_signal``."""
    if not len(trans) or not {"linear", "softmax"} <= set(trans["teacher"]):
        return pd.DataFrame(columns=[*pair_keys(trans), "ratio_k0", "ratio_signal"])
    keys = pair_keys(trans)
    lin = trans[trans["teacher"] == "linear"].set_index(keys)
    soft = trans[trans["teacher"] == "softmax"].set_index(keys)
    both = lin.merge(soft, left_index=True, right_index=True, suffixes=("_linear", "_softmax"))
    out = pd.DataFrame(
        {
            "linear_over_k0": both["over_k0_below_linear"],
            "softmax_over_k0": both["over_k0_below_softmax"],
            "linear_rel": both["rel_excess_below_linear"],
            "softmax_rel": both["rel_excess_below_softmax"],
        }
    )
    out["ratio_k0"] = out["softmax_over_k0"] / out["linear_over_k0"]
    out["ratio_signal"] = out["softmax_rel"] / out["linear_rel"]
    return out.reset_index()


def unit_ratios(pairs: pd.DataFrame, norm: str) -> pd.Series:
    """One softmax/linear ratio per teacher pair (r*, spectrum, c, seed, draw): the median over its V
    settings, which share K*, V* and X and so are not independent pairs."""
    keys = [k for k in pair_keys(pairs) if k != "v"]
    return pairs.groupby(keys)[f"ratio_{norm}"].median()


def saturation_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per teacher, r*, spectrum, V and logit scale c: signal, K = 0 excess and the softmax saturation
    statistics (c is a grouping key: saturation depends on it, and a mean over the c sweep mixes scales)."""
    cols = ["signal", "k0_rel_excess", "row_entropy_ratio", "mean_max_attention"]
    keys = ["teacher", "task.r_star", "task.spectrum", "v", "task.c"]
    return rows.groupby(keys)[cols].mean().reset_index()


def analyse(
    cfg, table: pd.DataFrame, rows: pd.DataFrame, context: ClaimContext, verdicts: list[Verdict]
) -> Analysis:
    """The result table, extra tables, figures and notes beside the decided ``verdicts``."""
    results = table[[c for c in RESULT_COLUMNS if c in table.columns]].copy() if len(table) else table
    main = rows[np.isclose(rows["task.c"], cfg.task.c)] if len(rows) else rows  # the default logit scale
    trans = transition_table(main) if len(main) else pd.DataFrame()
    pairs = paired_ratios(trans)
    tables, figures = {}, {}
    if len(rows):
        tables = {
            "transition": trans,
            "transition_pairs": pairs,
            "c6_map": c6_map_table(rows),
            "saturation": saturation_table(rows),
        }
        figures["e4_excess_vs_rank"] = plot_excess_vs_rank(cfg, main)
        if len(pairs):
            figures["e4_transition_size"] = plot_transition_size(cfg, pairs)
    notes = [
        f"Teachers with ||K*||_F = c·√d, c = {cfg.task.c:g} (off-diagonal logit std c), n = {cfg.task.n}, d = d_v = {cfg.task.d}, "
        f"σ = {cfg.task.sigma:g}. Students B1 (linear teacher) and B2 (softmax, temperature √d) trained by "
        f"{cfg.train.optimizer} (lr {cfg.train.lr:g}"
        + (f" → {cfg.train.lr_final:g} cosine" if cfg.train.lr_final else "")
        + f", init {cfg.init_scale:g}, {cfg.train.steps} steps) on "
        f"N = {cfg.train.n_samples} fixed sequences; excess risk measured on {cfg.n_test} held-out sequences "
        "(dedicated seed) against the clean target.",
        "Linear and softmax teachers of one (r*, spectrum, seed) share K*, V* and the inputs. Softmax saturation "
        "(row entropy / log n, mean max attention) is in the 'saturation' table.",
    ]
    return Analysis(results=results, verdicts=verdicts, figures=figures, tables=tables, notes=notes)


def c6_map_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per logit scale c: median softmax/linear ratio of the normalised excess at r*-1 with its interval, both normalisations."""
    out = []
    for x, g in rows.groupby("task.c"):
        pairs = paired_ratios(transition_table(g))
        if len(pairs):
            row = {"c": float(x), "pairs": int(len(unit_ratios(pairs, "k0")))}
            for norm in ("k0", "signal"):  # the median with its order-statistic interval (claims.c6_at)
                ratios = unit_ratios(pairs, norm)
                lo, hi, coverage = median_interval(ratios)
                row.update(
                    {
                        f"ratio_{norm}": float(ratios.median()),
                        f"{norm}_lo": lo,
                        f"{norm}_hi": hi,
                    }
                )
            out.append({**row, "coverage": coverage})
    return pd.DataFrame(out)


def median_interval(values, level: float = 0.95) -> tuple[float, float, float]:
    """Distribution-free interval for the median of ``values``: ``(lo, hi, coverage)``, the order
    statistics ``[x_(k), x_(n-k+1)]`` with the largest ``k`` whose exact binomial coverage
    ``1 - 2 P(Bin(n, 1/2) <= k-1)`` is >= ``level``; below 6 values no ``k`` reaches 95 %, so the
    range ``[min, max]`` is returned with its own (lower) coverage, stated rather than inflated."""
    x = np.sort(np.asarray(values, dtype=float))
    n = len(x)
    if not n:
        return float("nan"), float("nan"), 0.0
    tail = np.cumsum([math.comb(n, j) for j in range(n + 1)]) / 2.0**n  # P(B <= j)
    k = 1
    while k + 1 <= n // 2 and 1 - 2 * tail[k] >= level:
        k += 1
    return float(x[k - 1]), float(x[n - k]), float(1 - 2 * tail[k - 1])
