"""E2's claim C3: its criterion, its report sentence and its robustness grid."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...spectra import ESTIMATOR_KEYS
from ..base import ClaimContext, Verdict, decide
from ..claim import Claim
from ..claim_slices import grid_setting, options, sliced

KEYS = list(ESTIMATOR_KEYS)


def _rate(g: pd.DataFrame, key: str) -> float:
    return float((np.rint(g[f"A_{key}"]) == g["task.r_star"]).mean()) if len(g) else float("nan")


#: C3 boundary: estimators whose value on the learned A is decided again (the default among them).
C3_ESTIMATORS = ("numerical_rank", "largest_gap_rank", "energy_effective_rank")


def verdict_c3(cfg, ok: pd.DataFrame, context: ClaimContext) -> Verdict:
    key = cfg.verdict.c3_estimator
    criterion = (
        f"the {key} of the learned A equals r* in at least {cfg.verdict.c3_rate:.0%} of plain-GD runs from small init "
        f"(init scale <= {cfg.verdict.small_init_max:g}) on data that identify A (N·d_v >= n)"
    )
    if not len(ok):
        evidence = {"runs": 0}
        return Verdict("C3", "inconclusive", criterion, evidence, "E2", "GD from small init recovers rank r*")
    small = ok["init_scale"] <= cfg.verdict.small_init_max
    ident = ok["identified"] > 0.5
    gd = ok["train.optimizer"] == "gd"
    sel = ok[gd & small & ident]
    evidence = {
        "estimator": key,
        "rate_gd_small_init_identified": _rate(sel, key),
        "runs": int(len(sel)),
        "rate_every_estimator": {k: _rate(sel, k) for k in KEYS if f"A_{k}" in ok},
        "rate_gd_large_init_identified": _rate(ok[gd & ~small & ident], key),
        "rate_adam_small_init_identified": _rate(ok[~gd & small & ident], key),
        "rate_gd_small_init_under_identified": _rate(ok[gd & small & ~ident], key),
        "median_rel_error_gd_small_identified": float(sel["rel_error"].median()) if len(sel) else None,
        "median_rel_error_gd_small_under_identified": float(ok[gd & small & ~ident]["rel_error"].median())
        if len(ok[gd & small & ~ident])
        else None,
    }
    verdict = decide(
        None if not len(sel) else evidence["rate_gd_small_init_identified"] >= cfg.verdict.c3_rate
    )
    return Verdict(
        "C3",
        verdict,
        criterion,
        evidence,
        "E2",
        "gradient descent from small init on an over-parameterised A = PQᵀ concentrates at rank r*",
    )


def c3_grid(cfg, ok: pd.DataFrame, context: ClaimContext):
    """C3 decided again per r*, spectrum and seed, per estimator, and per identifying sample count."""
    axes = (("r_stars", "task.r_star"), ("spectra", "task.spectrum"), ("seed", "seed"))
    ident = ok[ok["identified"] > 0.5] if len(ok) else ok
    others = [k for k in C3_ESTIMATORS if k != cfg.verdict.c3_estimator]
    return (
        sliced(cfg, ok, axes)
        + options(cfg, ok, "verdict.c3_estimator", others)
        + sliced(cfg, ident, (("sample_counts", "train.n_samples"),))
    )


C3 = Claim(
    "C3",
    decide=verdict_c3,
    sentence="{estimator} = r* in {rate_gd_small_init_identified:pct} of identified GD small-init runs "
    "(large init {rate_gd_large_init_identified:pct}, Adam {rate_adam_small_init_identified:pct}); "
    "median relative error of A {median_rel_error_gd_small_identified:n}",
    default_setting=lambda cfg: grid_setting(
        cfg, "task.r_stars", "task.spectra", "sample_counts", "verdict.c3_estimator"
    ),
    statistic="rate_gd_small_init_identified",
    grid=c3_grid,
)
CLAIMS = (C3,)
