"""The statistics behind E7's claims C11–C13 (claims.py) — pure functions of arrays.

- **C11** (decided on the natural corpora by :mod:`.domain_verdicts`):
  :func:`entropic_bound.stats.spearman_test` — below 10 corpora the exact permutation test
  (a percentile bootstrap collapses there: 4 corpora at ρ = −1 give [−1, −1]), from 10 on a
  two-stage bootstrap (corpora, then each corpus's seeds); the interval's half-width and the
  corpora the measured effect would need (``points_needed``).
- **C12**: :func:`cluster_partials`, the partial Spearman ρ with a bootstrap over corpora (a
  corpus's runs share its text: one unit).
- **C13**: :func:`source_share` — the unit is the **model** (a trained LM or a checkpoint): a share
  per model, every source (corpus or checkpoint) weighted equally, and a cluster bootstrap that
  resamples sources, then models within a source, then heads within a model. Heads of one model
  are not independent draws, and one model with many heads (MiniLM: 72) must not decide alone.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...stats import corpus_bootstrap, partial_spearman, spearman, spearman_test, wilson
from ...stats.rank_tests import partial_spearman_stack, percentile_interval

__all__ = [
    "cluster_partials",
    "corpus_bootstrap",
    "partial_spearman",
    "source_share",
    "spearman",
    "spearman_test",
    "two_sided",
    "wilson",
]


def two_sided(lo: float, hi: float) -> bool | None:
    """Confirmed (anti-correlation) if the interval is below 0, refuted if above, else undecided."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return None
    return True if hi < 0 else (False if lo > 0 else None)


def cluster_partials(
    points: pd.DataFrame, target: str, controls: list[str], n_boot: int, seed: int, by: str = "corpus"
):
    """Partial ρ(rank, target | controls) on ``points`` and its bootstrap interval over the clusters
    named by column ``by`` (a corpus: its runs share the text, so they are one unit), each drawn
    with all its points; a resample with nothing to correlate (one corpus drawn for complexity,
    constant within it) gives NaN and is left out of the percentiles."""
    data = points[["rank", target, *controls]].to_numpy(float)  # (N, 2 + k)
    rows = [np.flatnonzero(points[by].to_numpy() == r) for r in sorted(points[by].unique())]

    def stat(idx: np.ndarray) -> float:
        return partial_spearman(data[idx, 0], data[idx, 1], data[idx, 2:])

    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(rows), size=(n_boot, len(rows)))
    if len({len(r) for r in rows}) == 1:  # clusters of equal size: every draw at once (equal up to round-off)
        index = np.stack(rows)[draws].reshape(n_boot, -1)  # (n_boot, N)
        boots = partial_spearman_stack(data[index])
    else:
        boots = np.array([stat(np.concatenate([rows[i] for i in d])) for d in draws])
    return (stat(np.arange(len(data))), *percentile_interval(boots))


def _nested(
    sources: Sequence, models: Sequence, flags: Sequence, weights: Sequence | None = None
) -> dict[str, dict[str, np.ndarray]]:
    """``{source: {model: (heads, 2) array of [flag, weight]}}`` in first-seen order (weight 1 when
    ``weights`` is None)."""
    out: dict[str, dict[str, np.ndarray]] = {}
    values = np.asarray(flags, dtype=float)
    w = np.ones_like(values) if weights is None else np.asarray(weights, dtype=float)
    both = np.stack([values, w], axis=-1) if len(values) else np.zeros((0, 2))
    src, mod = np.asarray([str(s) for s in sources]), np.asarray([str(m) for m in models])
    for s in dict.fromkeys(src.tolist()):
        out[s] = {m: both[(src == s) & (mod == m)] for m in dict.fromkeys(mod[src == s].tolist())}
    return out


def _model_share(g: np.ndarray) -> float:
    """A model's share of flagged heads, each head weighted (NaN when its heads carry no weight)."""
    total = g[:, 1].sum()
    return float((g[:, 0] * g[:, 1]).sum() / total) if total > 0 else float("nan")


def _share(tree: list[list[np.ndarray]]) -> float:
    per_source = [np.nanmean([_model_share(g) for g in models]) for models in tree]
    return float(np.nanmean(per_source))


def _weighed(tree: dict, min_weight: float) -> tuple[dict, list[str]]:
    """The models whose heads together carry at least ``min_weight`` (a finite total), and the others."""
    kept, dropped = {}, []
    for s, models in tree.items():
        ok = {m: g for m, g in models.items() if np.isfinite(g[:, 1]).all() and g[:, 1].sum() >= min_weight}
        dropped += [m for m in models if m not in ok]
        if ok:
            kept[s] = ok
    return kept, dropped


def source_share(
    sources: Sequence,
    models: Sequence,
    flags: Sequence,
    *,
    n_boot: int,
    seed: int,
    threshold: float | None = None,
    level: float = 0.95,
    weights: Sequence | None = None,
    min_weight: float = 0.0,
) -> dict:
    """The share of flagged heads with the model as unit and every source weighted equally.

    ``sources[i]``, ``models[i]``: head ``i``'s source (corpus or checkpoint) and model (run);
    ``flags[i]``: whether it has the property. ``share`` = mean over sources of the mean over the
    source's models of the model's share of flagged heads; the interval a three-stage cluster
    bootstrap (sources, models within, heads within). ``decision``: True when the interval lies
    (strictly) above ``threshold``, False when below, None otherwise. With few sources the interval
    describes their spread (``sources`` is reported beside it).

    ``weights[i]`` (optional): head ``i``'s weight, a model's share then being its weighted share
    ``Σ w·flag / Σ w`` (heads resampled with their weights); a model whose weights are missing
    (NaN) or sum below ``min_weight`` has nothing to weigh and is left out (``models_left_out``).
    """
    tree = _nested(sources, models, flags, weights)
    dropped: list[str] = []
    if weights is not None:
        tree, dropped = _weighed(tree, min_weight)
    nan = float("nan")
    base = {"unit": "model", "sources": len(tree), "models": sum(len(m) for m in tree.values())}
    base["heads"] = int(sum(len(g) for m in tree.values() for g in m.values()))
    base["models_left_out"] = len(dropped)
    if not tree:
        return {**base, "share": nan, "ci_low": nan, "ci_high": nan, "by_source": {}, "decision": None}
    groups = [list(m.values()) for m in tree.values()]
    rng = np.random.default_rng(seed)
    boots = np.empty(n_boot)
    with warnings.catch_warnings():  # a resample of weightless heads only: that model is skipped
        warnings.simplefilter("ignore", RuntimeWarning)
        for b in range(n_boot):
            drawn = []
            for s in rng.integers(0, len(groups), len(groups)):
                picked = [groups[s][m] for m in rng.integers(0, len(groups[s]), len(groups[s]))]
                drawn.append([g[rng.integers(0, len(g), len(g))] for g in picked])
            boots[b] = _share(drawn)
    lo, hi = percentile_interval(boots, level)
    decision = None
    if threshold is not None and np.isfinite(lo):
        decision = True if lo > threshold else (False if hi < threshold else None)
    by_source = {
        s: {
            "models": len(m),
            "heads": int(sum(len(g) for g in m.values())),
            "share": float(np.mean([_model_share(g) for g in m.values()])),
            "model_shares": [_model_share(g) for g in m.values()],
        }
        for s, m in tree.items()
    }
    pooled = _model_share(np.concatenate([g for m in groups for g in m]))
    out = {**base, "share": _share(groups), "ci_low": lo, "ci_high": hi, "level": level}
    return {**out, "by_source": by_source, "pooled_share": pooled, "decision": decision}
