"""A share whose statistical unit is the model, not the head (C13, issue 19 item 7; issue 20 item 5).

Heads of one model are not independent draws (they share training, data and architecture), and one
model with many heads (MiniLM: 72 of 88) would otherwise decide the verdict alone. So:

- each model (source) gets its own share, the fraction of its heads with the property;
- the headline share is the **mean of the model shares**: every source weighs the same;
- its interval is a two-stage **cluster bootstrap**: models resampled with replacement, then heads
  within each drawn model (heads nested in models), the statistic recomputed on every draw.

With few models the bootstrap can only move between the models' own shares, so its interval is
reported beside ``models``: with 2–3 models it is a description of their spread, not a population
interval. :func:`wilson` (a head-level binomial interval) stays available for a single model's heads.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.stats import norm

from .rank_tests import percentile_interval


def wilson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a binomial share ``k / n``."""
    if n == 0:
        return float("nan"), float("nan")
    z, p = norm.ppf(0.5 + level / 2), k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return float(centre - half), float(centre + half)


def _groups(models: Sequence, flags: Sequence) -> tuple[list[str], list[np.ndarray]]:
    """Model names in first-seen order and each model's head flags (float 0/1)."""
    models = [str(m) for m in models]
    values = np.asarray(flags, dtype=float)
    names = list(dict.fromkeys(models))
    index = np.asarray(models)
    return names, [values[index == name] for name in names]


def model_shares(models: Sequence, flags: Sequence) -> dict[str, dict]:
    """``{model: {"heads": count, "share": fraction of its heads flagged}}``, models in first-seen order."""
    names, groups = _groups(models, flags)
    return {name: {"heads": int(len(g)), "share": float(g.mean())} for name, g in zip(names, groups)}


def cluster_share(
    models: Sequence,
    flags: Sequence,
    *,
    n_boot: int,
    seed: int,
    level: float = 0.95,
    threshold: float | None = None,
) -> dict:
    """The model-weighted share of flagged heads and its cluster-bootstrap interval.

    ``models[i]`` names head ``i``'s model (its source), ``flags[i]`` says whether head ``i`` has the
    property (e.g. a structural category). Returns ``{unit: "model", models, heads, share, ci_low,
    ci_high, level, n_boot, by_model, pooled_share, decision}``: ``share`` is the mean of the per-model
    shares, ``pooled_share`` the head-weighted one (for contrast only), ``decision`` True when the
    interval lies above ``threshold``, False when below, None otherwise or without a threshold.
    """
    names, groups = _groups(models, flags)
    if not names:
        nan = float("nan")
        return {
            "unit": "model",
            "models": 0,
            "heads": 0,
            "share": nan,
            "ci_low": nan,
            "ci_high": nan,
            "level": level,
            "n_boot": n_boot,
            "by_model": {},
            "pooled_share": nan,
            "decision": None,
        }
    shares = np.array([g.mean() for g in groups])
    rng = np.random.default_rng(seed)
    boots = np.empty(n_boot)
    for b in range(n_boot):
        picked = rng.integers(0, len(groups), len(groups))
        boots[b] = np.mean(
            [groups[m][rng.integers(0, len(groups[m]), len(groups[m]))].mean() for m in picked]
        )
    lo, hi = percentile_interval(boots, level)
    decision = None
    if threshold is not None and np.isfinite(lo):
        decision = True if lo > threshold else (False if hi < threshold else None)
    return {
        "unit": "model",
        "models": len(names),
        "heads": int(sum(len(g) for g in groups)),
        "share": float(shares.mean()),
        "ci_low": lo,
        "ci_high": hi,
        "level": level,
        "n_boot": n_boot,
        "by_model": model_shares(models, flags),
        "pooled_share": float(np.concatenate(groups).mean()),
        "decision": decision,
    }
