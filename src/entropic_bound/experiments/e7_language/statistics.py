"""The statistics behind E7's claims C11–C13 (claims.py) — pure functions of arrays.

- **C11** (decided on the natural corpora by :mod:`.domain_verdicts`):
  :func:`entropic_bound.stats.spearman_test` — below 10 corpora the exact permutation test
  (a percentile bootstrap collapses there: 4 corpora at ρ = −1 give [−1, −1]), from 10 on a
  two-stage bootstrap (corpora, then each corpus's seeds); the interval's half-width and the
  corpora the measured effect would need (``points_needed``).
- **C12**: :func:`cluster_partials`, the partial Spearman ρ with a bootstrap over runs.
- **C13**: :func:`source_share` — the unit is the **model** (a trained LM or a checkpoint): a share
  per model, every source (corpus or checkpoint) weighted equally, and a cluster bootstrap that
  resamples sources, then models within a source, then heads within a model. Heads of one model
  are not independent draws, and one model with many heads (MiniLM: 72) must not decide alone.
"""

from __future__ import annotations

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


def cluster_partials(points: pd.DataFrame, target: str, controls: list[str], n_boot: int, seed: int):
    """Partial ρ(rank, target | controls) on ``points`` and its bootstrap interval over runs."""
    data = points[["rank", target, *controls]].to_numpy(float)  # (N, 2 + k)
    rows = [np.flatnonzero(points["run_id"].to_numpy() == r) for r in sorted(points["run_id"].unique())]

    def stat(idx: np.ndarray) -> float:
        return partial_spearman(data[idx, 0], data[idx, 1], data[idx, 2:])

    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(rows), size=(n_boot, len(rows)))
    if len({len(r) for r in rows}) == 1:  # runs of equal length: every draw at once (equal up to round-off)
        index = np.stack(rows)[draws].reshape(n_boot, -1)  # (n_boot, N)
        boots = partial_spearman_stack(data[index])
    else:
        boots = np.array([stat(np.concatenate([rows[i] for i in d])) for d in draws])
    return (stat(np.arange(len(data))), *percentile_interval(boots))


def _nested(sources: Sequence, models: Sequence, flags: Sequence) -> dict[str, dict[str, np.ndarray]]:
    """``{source: {model: head flags (float)}}`` in first-seen order."""
    out: dict[str, dict[str, np.ndarray]] = {}
    values = np.asarray(flags, dtype=float)
    src, mod = np.asarray([str(s) for s in sources]), np.asarray([str(m) for m in models])
    for s in dict.fromkeys(src.tolist()):
        out[s] = {m: values[(src == s) & (mod == m)] for m in dict.fromkeys(mod[src == s].tolist())}
    return out


def _share(tree: list[list[np.ndarray]]) -> float:
    return float(np.mean([np.mean([g.mean() for g in models]) for models in tree]))


def source_share(
    sources: Sequence,
    models: Sequence,
    flags: Sequence,
    *,
    n_boot: int,
    seed: int,
    threshold: float | None = None,
    level: float = 0.95,
) -> dict:
    """The share of flagged heads with the model as unit and every source weighted equally.

    ``sources[i]``, ``models[i]``: head ``i``'s source (corpus or checkpoint) and model (run);
    ``flags[i]``: whether it has the property. ``share`` = mean over sources of the mean over the
    source's models of the model's share of flagged heads; the interval a three-stage cluster
    bootstrap (sources, models within, heads within). ``decision``: True when the interval lies
    above ``threshold``, False when below, None otherwise. With few sources the interval
    describes their spread (``sources`` is reported beside it).
    """
    tree = _nested(sources, models, flags)
    nan = float("nan")
    base = {"unit": "model", "sources": len(tree), "models": sum(len(m) for m in tree.values())}
    base["heads"] = int(sum(len(g) for m in tree.values() for g in m.values()))
    if not tree:
        return {**base, "share": nan, "ci_low": nan, "ci_high": nan, "by_source": {}, "decision": None}
    groups = [list(m.values()) for m in tree.values()]
    rng = np.random.default_rng(seed)
    boots = np.empty(n_boot)
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
            "share": float(np.mean([g.mean() for g in m.values()])),
            "model_shares": [float(g.mean()) for g in m.values()],
        }
        for s, m in tree.items()
    }
    pooled = float(np.concatenate([g for m in groups for g in m]).mean())
    out = {**base, "share": _share(groups), "ci_low": lo, "ci_high": hi, "level": level}
    return {**out, "by_source": by_source, "pooled_share": pooled, "decision": decision}
