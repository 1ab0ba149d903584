"""The statistics behind E7's claims C11–C13 (claims.py): rank correlations, bootstrap intervals, Wilson
intervals — pure functions of arrays.

- **C11** (paper, App. B: the measured static kernel rank *anti*-correlates with predicted task
  complexity). One point per corpus: complexity (the chosen measure) and the final head-mean
  kernel rank averaged over the corpus's learned seeds. Spearman ρ with a two-stage bootstrap
  interval (corpora resampled, then each corpus's seeds). Two-sided: confirmed if the interval
  lies below 0, refuted if it lies above 0, inconclusive otherwise or with too few corpora.
- **C12** (the rank tracks optimisation progress, the loss, not complexity). Pooled over learned
  runs and checkpoints ``t ≥ 1``: the partial Spearman correlation of the kernel rank with the
  optimisation progress ``(L_0 − L_t)/(L_0 − L_ref)`` given controls that also drift over training
  (the step, the QK weight norm), with a bootstrap interval over runs. Confirmed when the interval
  excludes 0, ``|ρ|`` reaches ``min_abs_rho`` and exceeds ``|ρ(rank, complexity | controls)|``;
  refuted when the interval lies inside ``(−min_abs_rho, min_abs_rho)`` (no tracking beyond the
  controls) or complexity is tracked more strongly; inconclusive otherwise.
- **C13** (structural priors dominate the realised mixers). Heads categorised by
  :func:`entropic_bound.lm.structure.head_categories`; the share of content-independent heads with
  a Wilson 95% interval: confirmed if the interval lies above ``share``, refuted if below,
  inconclusive otherwise.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import norm, rankdata


def spearman(x, y) -> float:
    """Spearman ρ (Pearson correlation of average ranks); NaN when either side is constant."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if len(x) < 2:
        return float("nan")
    rx, ry = rankdata(x) - (len(x) + 1) / 2, rankdata(y) - (len(y) + 1) / 2
    denom = np.sqrt((rx**2).sum() * (ry**2).sum())
    return float((rx * ry).sum() / denom) if denom > 0 else float("nan")


def partial_spearman(x, y, controls) -> float:
    """Spearman ρ of ``x`` and ``y`` given ``controls (N, k)``: ranks of every variable, ``x`` and
    ``y`` residualised on ``[1, ranks of controls]`` by least squares, Pearson of the residuals."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    Z = np.asarray(controls, dtype=float).reshape(len(x), -1)
    keep = np.isfinite(x) & np.isfinite(y) & np.isfinite(Z).all(axis=1)
    if keep.sum() < Z.shape[1] + 3:
        return float("nan")
    A = np.column_stack([np.ones(keep.sum()), *(rankdata(z) for z in Z[keep].T)])
    rx, ry = rankdata(x[keep]), rankdata(y[keep])
    ex = rx - A @ np.linalg.lstsq(A, rx, rcond=None)[0]
    ey = ry - A @ np.linalg.lstsq(A, ry, rcond=None)[0]
    denom = np.sqrt((ex**2).sum() * (ey**2).sum())
    return float((ex * ey).sum() / denom) if denom > 1e-9 * len(ex) else float("nan")


def _interval(boots: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    boots = boots[np.isfinite(boots)]
    if not len(boots):
        return float("nan"), float("nan")
    tail = (1 - level) / 2 * 100
    return float(np.percentile(boots, tail)), float(np.percentile(boots, 100 - tail))


def corpus_bootstrap(complexity, seed_ranks: list, n_boot: int, seed: int) -> tuple[float, float, float]:
    """ρ(complexity, mean rank) over corpora and a two-stage percentile bootstrap interval."""
    c = np.asarray(complexity, dtype=float)
    ranks = [np.asarray(r, dtype=float) for r in seed_ranks]
    rho = spearman(c, [r.mean() for r in ranks])
    rng = np.random.default_rng(seed)
    boots = np.empty(n_boot)
    for b in range(n_boot):
        pick = rng.integers(0, len(c), len(c))
        means = [ranks[i][rng.integers(0, len(ranks[i]), len(ranks[i]))].mean() for i in pick]
        boots[b] = spearman(c[pick], means)
    return (rho, *_interval(boots)) if np.isfinite(rho) else (rho, float("nan"), float("nan"))


def two_sided(lo: float, hi: float) -> bool | None:
    """Confirmed (anti-correlation) if the interval is below 0, refuted if above, else undecided."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return None
    return True if hi < 0 else (False if lo > 0 else None)


def cluster_partials(points: pd.DataFrame, target: str, controls: list[str], n_boot: int, seed: int):
    """Partial ρ(rank, target | controls) on ``points`` and its bootstrap interval over runs."""
    data = points[["rank", target, *controls]].to_numpy(float)  # (N, 2 + k)
    rows = [np.flatnonzero(points["run_id"].to_numpy() == r) for r in sorted(points["run_id"].unique())]

    def stat(idx: np.ndarray) -> float:
        return partial_spearman(data[idx, 0], data[idx, 1], data[idx, 2:])

    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(rows), size=(n_boot, len(rows)))
    boots = np.array([stat(np.concatenate([rows[i] for i in d])) for d in draws])
    return (stat(np.arange(len(data))), *_interval(boots))


def wilson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a binomial share ``k / n``."""
    if n == 0:
        return float("nan"), float("nan")
    z, p = norm.ppf(0.5 + level / 2), k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return float(centre - half), float(centre + half)
