"""E2's claim C3: its criterion, its report sentence and its robustness grid.

C3 is an implicit-bias claim, so it is decided where the data leave room for a bias: on
under-identified data (``N·d_v < n``) many operators fit, and GD from small init must find a low-rank
one more often than GD from large init. On identified data the least-squares minimiser is unique, so
every init that fits the data recovers; those runs are the control, reported beside the verdict.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..claim import Claim, Formats
from ..claim_slices import grid_setting, options, sliced
from ..verdict import ClaimContext, Verdict
from .recovery import estimator_rule, rank_over_training, rank_statuses, status_counts

#: C3 boundary: estimators decided again as explicit (non-standard) overrides of the rule's choice.
C3_ESTIMATORS = (
    "numerical_rank",
    "energy_threshold_rank_90",
    "energy_threshold_rank_99",
    "energy_effective_rank",
)
STATEMENT = "gradient descent from small init on an over-parameterised A = PQᵀ concentrates at rank r*"


def learned(cfg, rows: pd.DataFrame) -> pd.Series:
    """Runs that fit their data (train loss <= c3_fit·max(σ², 1e-4)): an unfitted model says nothing about rank."""
    return rows["train_loss"] <= cfg.verdict.c3_fit * np.maximum(rows["task.sigma"] ** 2, 1e-4)


def _share(mask: pd.Series) -> float | None:
    return float(mask.mean()) if len(mask) else None


def _low_rank(g: pd.DataFrame, col: str, tol: float) -> pd.Series:
    """A low-rank answer: estimate <= r* + tol, or a transient (rank was r*, rose late by fitting noise)."""
    return (g[col] <= g["task.r_star"] + tol) | (g["status_rank"] == "transient")


def _recovered(g: pd.DataFrame, col: str, tol: float) -> pd.Series:
    return ((g[col] - g["task.r_star"]).abs() <= tol) | (g["status_rank"] == "transient")


def c3_cells(cfg, fit: pd.DataFrame, col: str) -> dict:
    """The numbers of the decision (learned GD runs only) and of the identified control."""
    tol = cfg.verdict.c3_tolerance
    small = fit["init_scale"] <= cfg.verdict.small_init_max
    large = fit["init_scale"] >= cfg.verdict.large_init_min
    ident = fit["identified"] > 0.5
    groups = {
        "small_under": fit[small & ~ident],
        "large_under": fit[large & ~ident],
        "small_identified": fit[small & ident],
        "large_identified": fit[large & ident],
    }
    low_small = _share(_low_rank(groups["small_under"], col, tol))
    low_large = _share(_low_rank(groups["large_under"], col, tol))
    return {
        "small_init_under_identified_low_rank": low_small,
        "large_init_under_identified_low_rank": low_large,
        "contrast": None if low_small is None or low_large is None else low_small - low_large,
        "small_init_identified_recovery": _share(_recovered(groups["small_identified"], col, tol)),
        "large_init_identified_recovery": _share(_recovered(groups["large_identified"], col, tol)),
        "runs": {k: int(len(g)) for k, g in groups.items()},
        "status_counts": {k: status_counts(g) for k, g in groups.items()},
        "median_estimate": {k: float(g[col].median()) if len(g) else None for k, g in groups.items()},
    }


def c3_decision(cfg, cells: dict) -> tuple[bool | None, str]:
    """(True / False / None, reason): the under-identified contrast against ``c3_contrast``."""
    v, runs = cfg.verdict, cells["runs"]
    if min(runs["small_under"], runs["large_under"]) < v.c3_min_runs:
        return None, (
            f"too few learned GD runs on under-identified data (N·d_v < n): small init {runs['small_under']}, "
            f"large init {runs['large_under']}; {v.c3_min_runs} each needed"
        )
    contrast, large = cells["contrast"], cells["large_init_under_identified_low_rank"]
    if large > 1 - v.c3_contrast:
        return (
            None,
            f"large init is itself low rank in {large:.0%} of runs: no room for a contrast of {v.c3_contrast:g}",
        )
    if contrast >= v.c3_contrast:
        return True, ""
    if contrast <= 0:
        return False, ""
    return None, f"contrast {contrast:.2f} is positive but below {v.c3_contrast:g}"


def _criterion(cfg, key: str) -> str:
    v = cfg.verdict
    return (
        f"estimator {key} (chosen on the ground truth, see estimator_rule); GD runs that fit their data (train loss "
        f"<= {v.c3_fit:g}·max(σ², 1e-4)); on under-identified data (N·d_v < n) the share of small-init runs "
        f"(<= {v.small_init_max:g}) with a low-rank answer (estimate <= r* + {v.c3_tolerance:g}, or transient: rank "
        f"was r* and rose late while the loss fell into the noise floor) exceeds large init's (>= {v.large_init_min:g}) "
        f"by >= {v.c3_contrast:g}: confirmed; no larger (contrast <= 0): refuted; else, fewer than {v.c3_min_runs} runs "
        "per group, or large init itself low rank: inconclusive. Identified data (N·d_v >= n) are the control where "
        "every init recovers"
    )


def verdict_c3(cfg, rows: pd.DataFrame, context: ClaimContext) -> Verdict:
    rule = estimator_rule(cfg)
    key = cfg.verdict.c3_estimator or rule["estimator"]
    col = f"A_{key}"
    criterion = _criterion(cfg, key)
    evidence: dict = {
        "estimator": key,
        "estimator_on_truth": rule["estimator_on_truth"],
        "estimator_rule": {k: v for k, v in rule.items() if k != "estimator_on_truth"},
    }
    if cfg.verdict.c3_estimator is not None and key != rule["estimator"]:
        evidence["non_standard"] = (
            f"estimator set by verdict.c3_estimator, not the rule's {rule['estimator']}"
        )
    if not len(rows) or col not in rows:
        evidence.update(runs=0, reason="no runs")
        return Verdict("C3", "inconclusive", criterion, evidence, "E2", STATEMENT)
    ranked = rank_statuses(cfg, rows, key, context.records)
    gd = ranked[ranked["train.optimizer"] == "gd"]
    fit = gd[learned(cfg, gd)]
    cells = c3_cells(cfg, fit, col)
    decision, reason = c3_decision(cfg, cells)
    adam = ranked[(ranked["train.optimizer"] != "gd") & learned(cfg, ranked)]
    adam_small = adam[(adam["init_scale"] <= cfg.verdict.small_init_max) & (adam["identified"] < 0.5)]
    evidence.update(
        cells,
        set_aside_not_learned=int(len(gd) - len(fit)),
        adam_small_init_under_identified_low_rank=_share(
            _low_rank(adam_small, col, cfg.verdict.c3_tolerance)
        ),
        rank_over_training=rank_over_training(fit),
        rank_curves_stored=int(ranked["rank_curve"].notna().sum()),
    )
    if reason:
        evidence["reason"] = reason
    verdict = {True: "confirmed", False: "refuted", None: "inconclusive"}[decision]
    return Verdict("C3", verdict, criterion, evidence, "E2", STATEMENT)


def c3_grid(cfg, rows: pd.DataFrame, context: ClaimContext):
    """C3 decided again per r*, spectrum and seed, per under-identified N, and with other estimators
    (explicit overrides: non-standard settings)."""
    axes = (("r_stars", "task.r_star"), ("spectra", "task.spectrum"), ("seed", "seed"))
    under = rows[rows["identified"] < 0.5] if len(rows) else rows
    chosen = cfg.verdict.c3_estimator or estimator_rule(cfg)["estimator"]
    others = [k for k in C3_ESTIMATORS if k != chosen]
    return (
        sliced(cfg, rows, axes)
        + sliced(cfg, under, (("sample_counts", "train.n_samples"),))
        + options(cfg, rows, "verdict.c3_estimator", others)
    )


def c3_sentence(e: dict, fmt: Formats) -> str:
    lead = f"{e['reason']}; " if e.get("reason") else ""
    if "contrast" not in e:
        return f"{lead}estimator {e['estimator']}"
    counts = e["status_counts"]["small_under"]
    return (
        f"{lead}{e['estimator']} (rule on the truth): under-identified data, low-rank answer small init "
        f"{fmt.pct(e['small_init_under_identified_low_rank'])} vs large {fmt.pct(e['large_init_under_identified_low_rank'])} "
        f"({counts['transient']} transient); identified control: small {fmt.pct(e['small_init_identified_recovery'])}, "
        f"large {fmt.pct(e['large_init_identified_recovery'])} recover"
    )


C3 = Claim(
    "C3",
    decide=verdict_c3,
    sentence=c3_sentence,
    default_setting=lambda cfg: grid_setting(
        cfg, "task.r_stars", "task.spectra", "sample_counts", "verdict.c3_estimator"
    ),
    statistic="contrast",
    grid=c3_grid,
)
CLAIMS = (C3,)
