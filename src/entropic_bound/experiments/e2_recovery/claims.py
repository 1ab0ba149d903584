"""E2's claim C3: its declaration, criterion, report sentence and robustness grid (its numbers in
:mod:`.statistics`).

C3 is an implicit-bias claim, so it is decided where the data leave room for a bias: on
under-identified data (``N·d_v < n``) whose minimum-norm interpolant is above ``r*`` (the data alone
do not force the low rank), GD from small init must end at ``r*`` more often than GD from large init
(``implicit_bias``: over data sets, one boundary at 0). On identified data the least-squares minimiser is unique, so every init that fits
the data recovers; those runs are the control, reported beside the verdict.
"""

from __future__ import annotations

import pandas as pd

from ..framework.claim import Claim, Formats
from ..framework.claim_slices import grid_setting, options, sliced
from ..framework.rule import Interval, Rule, Unit
from ..framework.verdict import ClaimContext, Finding
from .recovery import estimator_rule, rank_over_training, rank_statuses
from .statistics import DATA_SET, c3_cells, c3_decision, learned, recovered, share

#: C3 boundary: estimators decided again as explicit (non-standard) overrides of the rule's choice.
C3_ESTIMATORS = (
    "numerical_rank",
    "energy_threshold_rank_90",
    "energy_threshold_rank_99",
    "energy_effective_rank",
)


def _criterion(cfg, key: str) -> str:
    v = cfg.verdict
    return (
        f"estimator {key} (chosen on the ground truth, see estimator_rule); GD runs that fit their data (train loss "
        f"<= {v.c3_fit:g}·max(σ², 1e-4)) on under-identified data (N·d_v < n) whose minimum-norm interpolant has "
        f"rank > r* + {v.c3_tolerance:g} (min_norm_rank, same estimator: there the data alone do not force r*); "
        f"a run recovers when its final estimate is within {v.c3_tolerance:g} of r* (a transient — r* reached, "
        f"then left upward — is no recovery: the statement is about the solution GD converges to; transients "
        f"are reported); small init (<= {v.small_init_max:g}) minus large init (>= {v.large_init_min:g}) recovery "
        f"share over data sets (each weighs the fraction of its runs that recover), Newcombe 95 % interval over "
        f"data sets: above the boundary {v.c3_contrast:g} confirmed, at or below it refuted (the paper states a "
        f"direction, no minimum effect), else inconclusive; no data set with room: inconclusive (nothing to "
        f"detect); fewer than {v.c3_min_runs} runs per group: inconclusive. Identified data (N·d_v >= n) are the "
        "control where every init recovers"
    )


def verdict_c3(cfg, rows: pd.DataFrame, context: ClaimContext) -> Finding:
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
        return Finding("inconclusive", criterion, evidence)
    if min_norm_col not in rows:
        evidence.update(
            reason=f"min_norm_rank absent: the rows lack {min_norm_col} (E2Recovery.prepare adds it)"
        )
        return Finding("inconclusive", criterion, evidence)
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
        adam_small_init_under_identified_recovery=share(recovered(adam_small, col, cfg.verdict.c3_tolerance)),
        rank_over_training=rank_over_training(fit),
        rank_curves_stored=int(ranked["rank_curve"].notna().sum()),
    )
    if reason:
        evidence["reason"] = reason
    verdict = {True: "confirmed", False: "refuted", None: "inconclusive"}[outcome]
    return Finding(verdict, criterion, evidence)


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
    # evidence of the rule over data sets (final ranks decide) says so; older evidence counted transients
    over = f"over {e['data_sets']} data sets " if e.get("data_sets") else ""
    aside = ", not counted" if "data_sets" in e else ""
    return (
        f"{lead}{e['estimator']} (rule on the truth): under-identified data with room for a bias "
        f"({e['data_sets_with_room']} of {e['under_identified_data_sets']} data sets), recovery small init "
        f"{fmt.pct(e['small_init_under_identified_recovery'])} vs large {fmt.pct(e['large_init_under_identified_recovery'])} "
        f"{over}({counts['transient']} transient{aside}); identified control: small {fmt.pct(e['small_init_identified_recovery'])}, "
        f"large {fmt.pct(e['large_init_identified_recovery'])} recover"
    )


C3 = Claim(
    id="C3",
    experiment="E2",
    statement="gradient descent from small init on an over-parameterised A = PQᵀ concentrates at rank r*",
    unit=Unit("data set", keys=("draw", *DATA_SET)),
    rule=Rule(thresholds=("verdict.c3_contrast",), interval=Interval.NEWCOMBE),
    decide=verdict_c3,
    sentence=c3_sentence,
    default_setting=lambda cfg: grid_setting(
        cfg, "task.r_stars", "task.spectra", "sample_counts", "verdict.c3_estimator"
    ),
    statistic="contrast",
    grid=c3_grid,
)
CLAIMS = (C3,)
