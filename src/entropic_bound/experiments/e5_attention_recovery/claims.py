"""E5's claim C7 (C8 moved to E6; E5 keeps its control table): its declaration, criterion, report
sentence and robustness grid (its numbers in :mod:`.statistics`).

C7 is decided where the under-identified data leave room above r* (the minimum-norm kernel's rank)
and single out r* from below (no lower rank fits); the robustness map decides it again per r*, and
:func:`c7_holds_when` words the region of r* where it holds."""

from __future__ import annotations

import pandas as pd

from ..framework.claim import Claim, Formats
from ..framework.claim_slices import Setting, grid_setting, options, sliced
from ..framework.rule import Condition, Interval, Rule, Unit
from ..framework.verdict import ClaimContext, Finding
from .recovery import estimator_rule
from .statistics import DATA_SET, c7_cells, c7_decision


def _criterion(cfg, key: str) -> str:
    v = cfg.verdict
    return (
        f"implicit bias, per teacher, on runs that fit their data (train loss <= {v.c7_fit:g}·max(σ², 1e-4)), estimator "
        f"{key} of K (chosen on the ground truth, see estimator_rule); a run recovers when |estimate - r*| <= "
        f"{v.c7_tolerance:g}; the unit is the data set (each weighs the fraction of its runs). (i) On data that "
        f"identify K (N·n >= d) small init (<= {v.small_init_max:g}) recovers: refuted when the Wilson 95 % upper end "
        f"of its recovery share over data sets is below {v.c7_rate:.0%}; (ii) on under-identified data (N·n < d) "
        f"whose minimum-norm kernel has rank > r* + {v.c7_tolerance:g} (min_norm_rank, same estimator: room above) "
        f"and whose cell (r*, spectrum, V, N) no rank below r* fits (no learned run there ends below r* - "
        f"{v.c7_tolerance:g}: identified from below), small minus large init (>= {v.large_init_min:g}) recovery "
        f"share, Newcombe 95 % interval over data sets: above the boundary {v.c7_contrast:g} confirmed, at or below "
        "it refuted (the paper states a direction, no minimum effect), else inconclusive; no data set with room "
        "that r* is singled out on: inconclusive (nothing to detect). Confirmed iff every teacher is; refuted iff "
        "one is; else inconclusive. The robustness map decides it again per r*: where it holds"
    )


def verdict_c7(cfg, rows: pd.DataFrame, context: ClaimContext) -> Finding:
    rule = estimator_rule(cfg, context.seeds)
    key = cfg.verdict.c7_estimator or rule["estimator"]
    col = f"K_{key}"
    criterion = _criterion(cfg, key)
    evidence: dict = {
        "estimator": key,
        "estimator_on_truth": rule["estimator_on_truth"],
        "estimator_rule": {k: x for k, x in rule.items() if k != "estimator_on_truth"},
        "tolerance": cfg.verdict.c7_tolerance,
    }
    if cfg.verdict.c7_estimator is not None and key != rule["estimator"]:
        evidence["non_standard"] = (
            f"estimator set by verdict.c7_estimator, not the rule's {rule['estimator']}"
        )
    if not len(rows) or col not in rows:
        evidence.update(runs=0, reason="no runs")
        return Finding("inconclusive", criterion, evidence)
    if f"min_norm_{key}" not in rows:
        evidence.update(
            reason=f"min_norm_rank absent: the rows lack min_norm_{key} (E5AttentionRecovery.prepare adds it)"
        )
        return Finding("inconclusive", criterion, evidence)
    by, decisive, reasons = {}, {}, {}
    for kind, g in rows.groupby("teacher"):
        by[kind], contrast, gate = c7_cells(cfg, g, key)
        reasons[kind] = c7_decision(cfg, by[kind], contrast, gate)
        refuted_by_gate = reasons[kind][0] is False and gate is not None and gate.outcome is False
        decisive[kind] = gate if refuted_by_gate else contrast
        by[kind]["decision"] = decisive[kind].to_dict() if decisive[kind] is not None else None
    values = [o for o, _ in reasons.values()]
    contrasts = [c["contrast"] for c in by.values() if c["contrast"] is not None]
    evidence.update(
        by_teacher=by,
        decision_by_teacher={k: o for k, (o, _) in reasons.items()},
        min_contrast=min(contrasts) if contrasts else None,
        decision=_decisive(decisive, reasons),
    )
    why = "; ".join(f"{k}: {r}" for k, (_, r) in reasons.items() if r)
    if why:
        evidence["reason"] = why
    verdict = "refuted" if False in values else ("confirmed" if values and all(values) else "inconclusive")
    return Finding(verdict, criterion, evidence)


def _decisive(decisive: dict, reasons: dict) -> dict | None:
    """The decision record that decides: a refuted teacher's, else the one with the smallest margin."""
    refuted = [k for k, (o, _) in reasons.items() if o is False and decisive[k] is not None]
    pool = refuted or [k for k, d in decisive.items() if d is not None]
    if not pool:
        return None
    kind = min(pool, key=lambda k: decisive[k].margin)
    return {"teacher": kind, **decisive[kind].to_dict()}


def c7_holds_when(outcomes: list[tuple[dict, Finding]]) -> str | None:
    """The region of r* where C7 is confirmed, in words, with the r* the data do not decide and why
    (e.g. "r* in {2, 4}; r* = 8 nothing to detect"); None (list the confirmed settings) without an r* map."""
    by_r = {s["r_stars"][0]: v for s, v in outcomes if len(s) == 1 and "r_stars" in s}
    if not by_r:
        return None
    yes = [r for r, v in sorted(by_r.items()) if v.outcome == "confirmed"]
    words = "r* in {" + ", ".join(map(str, yes)) + "}" if yes else "at no r*"
    others = [
        f"r* = {r} {v.outcome}"
        + (" (nothing to detect)" if "nothing to detect" in v.evidence.get("reason", "") else "")
        for r, v in sorted(by_r.items())
        if v.outcome != "confirmed"
    ]
    return "; ".join([words, *others])


C7_ESTIMATORS = ("energy_threshold_rank_99", "energy_effective_rank", "numerical_rank", "largest_gap_rank")


AXES = (("spectra", "task.spectrum"), ("r_stars", "task.r_star"), ("seed", "seed"))


def c7_grid(cfg, rows: pd.DataFrame, context: ClaimContext) -> list[Setting]:
    """C7 decided again per spectrum, r*, seed and with the other estimators of K's rank (explicit
    overrides: non-standard settings)."""
    chosen = cfg.verdict.c7_estimator or estimator_rule(cfg, context.seeds)["estimator"]
    others = [k for k in C7_ESTIMATORS if k != chosen]
    return sliced(cfg, rows, AXES) + options(cfg, rows, "verdict.c7_estimator", others)


def c7_sentence(e: dict, fmt: Formats) -> str:
    lead = f"{e['reason']}; " if e.get("reason") else ""
    if "by_teacher" not in e:
        return f"{lead}estimator {e['estimator']}"
    parts = [
        f"{t} {fmt.pct(v['small_init_under_identified_recovery'])} vs {fmt.pct(v['large_init_under_identified_recovery'])}"
        for t, v in e["by_teacher"].items()
    ]
    recovery = ", ".join(
        f"{t} {fmt.pct(v['small_init_identified_recovery'])}" for t, v in e["by_teacher"].items()
    )
    units = ""  # evidence over data sets, with the filter from below, says what it counted
    if all("data_sets" in v for v in e["by_teacher"].values()):
        aside = sum(len(v["cells_fit_below"]) for v in e["by_teacher"].values())
        counts = ", ".join(f"{t} {v['data_sets']}" for t, v in e["by_teacher"].items())
        units = f"; data sets {counts}; {aside} cells set aside where a rank below r* fits"
    return (
        f"{lead}{e['estimator']} (rule on the truth): under-identified data with room for a bias, recovery from small "
        f"vs large init: {', '.join(parts)} (smallest contrast {fmt.number(e['min_contrast'])}{units}); identified "
        f"data, small init recovers r*: {recovery}"
    )


C7 = Claim(
    id="C7",
    experiment="E5",
    statement=(
        "GD from small init on an over-parameterised attention student learns a kernel of rank r* (implicit bias: "
        "where the data do not force a low-rank kernel, small init still recovers r* and large init does not)"
    ),
    unit=Unit("data set", keys=("draw", "teacher", *DATA_SET)),
    rule=Rule(
        thresholds=("verdict.c7_contrast",),
        interval=Interval.NEWCOMBE,
        conditions=(Condition(("verdict.c7_rate",), Interval.WILSON),),
    ),
    decide=verdict_c7,
    sentence=c7_sentence,
    default_setting=lambda cfg: grid_setting(cfg, "task.spectra", "task.r_stars", "verdict.c7_estimator"),
    statistic="min_contrast",
    grid=c7_grid,
    holds_when=c7_holds_when,
)
# C8 (the energy rank's robustness to the softmax) is decided in E6, where the softmax contaminates the
# estimate; E5's learned kernels equal K* under both teachers, so its
# c8_softmax_vs_linear table (analysis.c8_table) stays as the control where there is nothing to detect.
CLAIMS = (C7,)
