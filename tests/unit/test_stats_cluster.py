"""Model-clustered shares: every source weighs the same, and the interval knows heads share a model."""

import numpy as np
import pytest

from entropic_bound.stats.cluster import cluster_share, model_shares, wilson


def _heads(spec: dict[str, tuple[int, int]]) -> tuple[list[str], list[bool]]:
    """``{model: (heads, flagged)}`` → per-head model names and flags."""
    models, flags = [], []
    for name, (n, k) in spec.items():
        models += [name] * n
        flags += [True] * k + [False] * (n - k)
    return models, flags


def test_one_big_model_no_longer_decides_the_share():
    models, flags = _heads({"minilm": (72, 65), "lm_a": (8, 1), "lm_b": (8, 2)})
    out = cluster_share(models, flags, n_boot=400, seed=0, threshold=0.5)
    assert out["unit"] == "model" and out["models"] == 3 and out["heads"] == 88
    assert out["share"] == pytest.approx((65 / 72 + 1 / 8 + 2 / 8) / 3)
    assert out["pooled_share"] == pytest.approx(68 / 88)  # head-weighted: 0.77, above 0.5
    assert out["share"] < 0.5 and out["decision"] is None  # model-weighted: 0.43, undecided
    lo, _ = wilson(68, 88)
    assert lo > 0.5  # the head-level interval would have confirmed


def test_the_decision_flips_each_way_when_every_model_agrees():
    up = cluster_share(
        *_heads({"a": (12, 11), "b": (12, 12), "c": (12, 10), "d": (12, 11)}),
        n_boot=400,
        seed=1,
        threshold=0.5,
    )
    down = cluster_share(
        *_heads({"a": (12, 1), "b": (12, 0), "c": (12, 2), "d": (12, 1)}), n_boot=400, seed=1, threshold=0.5
    )
    assert up["decision"] is True and down["decision"] is False
    assert up["ci_low"] <= up["share"] <= up["ci_high"]


def test_cluster_interval_is_wider_than_wilson_when_heads_share_their_model():
    rng = np.random.default_rng(2)
    spec = {f"m{i}": (20, int(20 * p)) for i, p in enumerate(rng.uniform(0.1, 0.9, 6))}
    models, flags = _heads(spec)
    out = cluster_share(models, flags, n_boot=1000, seed=3)
    w_lo, w_hi = wilson(int(np.sum(flags)), len(flags))
    assert out["ci_high"] - out["ci_low"] > 1.5 * (w_hi - w_lo)


def test_cluster_interval_covers_the_population_share_in_simulation():
    rng = np.random.default_rng(4)
    covered = 0
    for rep in range(40):
        model_p = rng.beta(2, 2, size=8)  # population mean share 0.5
        spec = {f"m{i}": (10, int(rng.binomial(10, p))) for i, p in enumerate(model_p)}
        out = cluster_share(*_heads(spec), n_boot=300, seed=rep)
        covered += out["ci_low"] <= 0.5 <= out["ci_high"]
    assert covered >= 32  # nominal 95 %: 38 of 40; Wilson over the 80 heads covers 75 % here


def test_model_shares_and_empty_input():
    assert model_shares(["a", "b", "a"], [1, 0, 0]) == {
        "a": {"heads": 2, "share": 0.5},
        "b": {"heads": 1, "share": 0.0},
    }
    out = cluster_share([], [], n_boot=10, seed=0, threshold=0.5)
    assert out["models"] == 0 and np.isnan(out["share"]) and out["decision"] is None
