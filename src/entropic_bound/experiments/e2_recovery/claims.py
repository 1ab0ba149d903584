"""E2's claim C3: its criterion, its report sentence and its robustness grid.

C3 is an implicit-bias claim, so it is decided where the data leave room for a bias: on
under-identified data (``N·d_v < n``) whose minimum-norm interpolant is above ``r*`` (the data alone
do not force the low rank), GD from small init must recover ``r*`` more often than GD from large init
(``implicit_bias``). On identified data the least-squares minimiser is unique, so every init that fits
the data recovers; those runs are the control, reported beside the verdict.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..framework.claim import Claim, Formats
from ..framework.claim_slices import grid_setting, options, sliced
from ..framework.verdict import ClaimContext, Verdict
from ..science.implicit_bias import bias_contrast, contrast_outcome, detectable
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


def _recovered(g: pd.DataFrame, col: str, tol: float) -> pd.Series:
    """Two-sided: |estimate − r*| <= tol, or a transient (rank was r*, rose late by fitting noise)."""
    return ((g[col] - g["task.r_star"]).abs() <= tol) | (g["status_rank"] == "transient")


def c3_cells(cfg, fit: pd.DataFrame, col: str, min_norm_col: str) -> tuple[dict, object]:
    """The numbers of the decision (learned GD runs on under-identified data whose minimum-norm
    interpolant is above r* + tol) and of the identified control; and the interval decision (or None)."""
    tol = cfg.verdict.c3_tolerance
    small = fit["init_scale"] <= cfg.verdict.small_init_max
    large = fit["init_scale"] >= cfg.verdict.large_init_min
    ident = fit["identified"] > 0.5
    room = detectable(fit, min_norm_col, tol) & ~ident
    groups = {
        "small_under": fit[small & room],
        "large_under": fit[large & room],
        "small_identified": fit[small & ident],
        "large_identified": fit[large & ident],
    }
    under = fit[~ident]
    contrast = bias_contrast(
        groups["small_under"],
        groups["large_under"],
        _recovered(groups["small_under"], col, tol),
        _recovered(groups["large_under"], col, tol),
        cfg.verdict.c3_contrast,
    )
    decision = contrast.pop("decision")
    return {
        "small_init_under_identified_recovery": _share(_recovered(groups["small_under"], col, tol)),
        "large_init_under_identified_recovery": _share(_recovered(groups["large_under"], col, tol)),
        **contrast,
        "small_init_identified_recovery": _share(_recovered(groups["small_identified"], col, tol)),
        "large_init_identified_recovery": _share(_recovered(groups["large_identified"], col, tol)),
        "min_norm_rank": _min_norm_by_data_set(under, min_norm_col),
        "under_identified_data_sets": int(len(_min_norm_by_data_set(under, min_norm_col))),
        "data_sets_with_room": int(under[detectable(under, min_norm_col, tol)].groupby(DATA_SET).ngroups)
        if len(under)
        else 0,
        "runs": {k: int(len(g)) for k, g in groups.items()},
        "status_counts": {k: status_counts(g) for k, g in groups.items()},
        "median_estimate": {k: float(g[col].median()) if len(g) else None for k, g in groups.items()},
    }, decision


DATA_SET = ["task.r_star", "task.spectrum", "train.n_samples", "seed"]


def _min_norm_by_data_set(under: pd.DataFrame, min_norm_col: str) -> dict:
    """``{"r*=…, <spectrum>, N=…, seed …": min-norm rank}`` of every under-identified data set."""
    if not len(under):
        return {}
    first = under.groupby(DATA_SET)[min_norm_col].first()
    return {f"r*={r}, {sp}, N={N}, seed {s}": round(float(v), 4) for (r, sp, N, s), v in first.items()}


def c3_decision(cfg, cells: dict, decision) -> tuple[bool | None, str]:
    """(True / False / None, reason): Newcombe's interval of the small-minus-large recovery shares."""
    v, runs = cfg.verdict, cells["runs"]
    if not cells["data_sets_with_room"]:
        ranks = ", ".join(f"{x:g}" for x in cells["min_norm_rank"].values()) or "none"
        return None, (
            f"nothing to detect: no under-identified data set has a minimum-norm interpolant above r* + "
            f"{v.c3_tolerance:g} (min_norm_rank {ranks})"
        )
    if min(runs["small_under"], runs["large_under"]) < v.c3_min_runs:
        return None, (
            f"too few learned GD runs on under-identified data with room for a bias: small init "
            f"{runs['small_under']}, large init {runs['large_under']}; {v.c3_min_runs} each needed"
        )
    return contrast_outcome(decision, v.c3_contrast)


def _criterion(cfg, key: str) -> str:
    v = cfg.verdict
    return (
        f"estimator {key} (chosen on the ground truth, see estimator_rule); GD runs that fit their data (train loss "
        f"<= {v.c3_fit:g}·max(σ², 1e-4)) on under-identified data (N·d_v < n) whose minimum-norm interpolant has "
        f"rank > r* + {v.c3_tolerance:g} (min_norm_rank, same estimator: there the data alone do not force r*); "
        f"a run recovers when |estimate - r*| <= {v.c3_tolerance:g} (or transient: rank was r* and rose late while "
        f"the loss fell into the noise floor); small init (<= {v.small_init_max:g}) minus large init (>= "
        f"{v.large_init_min:g}) recovery share, Newcombe 95 % interval over runs: lower end >= {v.c3_contrast:g} "
        f"confirmed, upper end <= 0 refuted, else inconclusive; no data set with room: inconclusive (nothing to "
        f"detect); fewer than {v.c3_min_runs} runs per group: inconclusive. Identified data (N·d_v >= n) are the "
        "control where every init recovers"
    )


def verdict_c3(cfg, rows: pd.DataFrame, context: ClaimContext) -> Verdict:
    rule = estimator_rule(cfg, context.seeds)
    key = cfg.verdict.c3_estimator or rule["estimator"]
    col, min_norm_col = f"A_{key}", f"min_norm_{key}"
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
    if min_norm_col not in rows:
        evidence.update(
            reason=f"min_norm_rank absent: the rows lack {min_norm_col} (E2Recovery.prepare adds it)"
        )
        return Verdict("C3", "inconclusive", criterion, evidence, "E2", STATEMENT)
    ranked = rank_statuses(cfg, rows, key, context.records)
    gd = ranked[ranked["train.optimizer"] == "gd"]
    fit = gd[learned(cfg, gd)]
    cells, decision = c3_cells(cfg, fit, col, min_norm_col)
    outcome, reason = c3_decision(cfg, cells, decision)
    adam = ranked[(ranked["train.optimizer"] != "gd") & learned(cfg, ranked)]
    adam_small = adam[(adam["init_scale"] <= cfg.verdict.small_init_max) & (adam["identified"] < 0.5)]
    evidence.update(
        cells,
        decision=decision.to_dict() if decision is not None else None,
        set_aside_not_learned=int(len(gd) - len(fit)),
        adam_small_init_under_identified_recovery=_share(
            _recovered(adam_small, col, cfg.verdict.c3_tolerance)
        ),
        rank_over_training=rank_over_training(fit),
        rank_curves_stored=int(ranked["rank_curve"].notna().sum()),
    )
    if reason:
        evidence["reason"] = reason
    verdict = {True: "confirmed", False: "refuted", None: "inconclusive"}[outcome]
    return Verdict("C3", verdict, criterion, evidence, "E2", STATEMENT)


def c3_grid(cfg, rows: pd.DataFrame, context: ClaimContext):
    """C3 decided again per r*, spectrum and seed, per under-identified N, and with other estimators
    (explicit overrides: non-standard settings)."""
    axes = (("r_stars", "task.r_star"), ("spectra", "task.spectrum"), ("seed", "seed"))
    under = rows[rows["identified"] < 0.5] if len(rows) else rows
    chosen = cfg.verdict.c3_estimator or estimator_rule(cfg, context.seeds)["estimator"]
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
        f"{lead}{e['estimator']} (rule on the truth): under-identified data with room for a bias "
        f"({e['data_sets_with_room']} of {e['under_identified_data_sets']} data sets), recovery small init "
        f"{fmt.pct(e['small_init_under_identified_recovery'])} vs large {fmt.pct(e['large_init_under_identified_recovery'])} "
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
