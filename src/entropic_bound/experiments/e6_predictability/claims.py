"""E6's claims C8, C9, C10 and X1: their declarations and robustness grids; C9's and X1's criteria and
sentences (C8's in :mod:`.contamination`, C10's in :mod:`.estimator_bias`)."""

from __future__ import annotations

import pandas as pd

from ...stats.draw_keys import with_draw
from ...stats.interval_decision import IntervalDecision
from ...stats.unit_intervals import record, unit_share_decision
from ..framework.claim import Claim, Formats, needs_rows
from ..framework.claim_slices import Setting, grid_setting, options, sliced
from ..framework.rule import Condition, Interval, Rule
from ..framework.verdict import ClaimContext, Finding, decide
from .analysis import TEACHER_DRAW, at_scale, rates_by_r, undecided_reason
from .contamination import PAIRED_DRAW, c8_sentence, verdict_c8
from .estimator_bias import band, c10_sentence, verdict_c10  # noqa: F401  (band: the tests' C10 bands)


def _rate_decisions(g: pd.DataFrame, rate: float, prefix: str) -> dict[str, IntervalDecision]:
    """Per r*: the exact-recovery share over teacher draws against ``rate`` (Wilson)."""
    return {
        f"{prefix}r*={int(r)}": unit_share_decision(h, h["exact"].astype(bool), TEACHER_DRAW.keys, rate)
        for r, h in g.groupby("task.r_star")
    }


def _flag_decision(outside: pd.DataFrame, flag_rate: float) -> IntervalDecision:
    """The share of teacher draws flagged not identifiable outside the domain against ``flag_rate``."""
    return unit_share_decision(outside, outside["identifiable"] == 0, TEACHER_DRAW.keys, flag_rate)


def verdict_c9(cfg, rows: pd.DataFrame, context: ClaimContext) -> Finding:
    criterion = (
        f"linear teacher, both linear methods (V known: linear_v_known; V unknown: linear_v_unknown): at the largest N "
        f"and every sigma <= {cfg.verdict.sigma_max:g}, the exact-recovery rate (r_hat == r*) is >= {cfg.verdict.rate:g} for every r* in "
        f"the method's domain (spectra, seeds pooled); r* outside it (V unknown, n < d: r* >= min(n, d_v)) are flagged "
        f"not identifiable in >= {cfg.verdict.flag_rate:g} of runs. Each rate is a share of teacher draws (teacher, n, "
        "r*, spectrum, seed, draw; every draw weighs the fraction of its runs) decided by its 95% Wilson interval "
        "against one boundary, its bar (the paper's 'exact': at least the bar's share of teacher draws recovered): "
        "confirmed when every interval lies at or above its bar, refuted when one lies at or below it, else inconclusive"
    )
    rows = with_draw(rows)
    lin = rows[(rows["teacher"] == "linear") & rows["method"].isin(["linear_v_known", "linear_v_unknown"])]
    evidence, decisions = {}, {}
    for method in ("linear_v_known", "linear_v_unknown"):
        for n, g in at_scale(lin[lin["method"] == method], cfg.verdict.sigma_max).groupby("task.n"):
            inside, outside = g[g["in_domain"]], g[~g["in_domain"]]
            rates = rates_by_r(inside)
            flagged = float((outside["identifiable"] == 0).mean()) if len(outside) else None
            cell = _rate_decisions(inside, cfg.verdict.rate, f"{method}/n={int(n)}/")
            if len(outside):
                cell[f"{method}/n={int(n)}/flagged"] = _flag_decision(outside, cfg.verdict.flag_rate)
            decisions.update(cell)
            holds = bool(cell) and all(d.outcome is True for d in cell.values())
            evidence[f"{method}/n={int(n)}"] = {
                "N": int(g["n_samples"].max()),
                "rate_by_r_star": rates,
                "ok": holds,
                "out_of_domain_r_stars": sorted(int(r) for r in outside["task.r_star"].unique()),
                "out_of_domain_flagged": flagged,
                "out_of_domain_rate": float(outside["exact"].mean()) if len(outside) else None,
                "confident_wrong_in_domain": float(inside["confident_wrong"].mean()) if len(inside) else None,
            }
    methods = {k.split("/")[0] for k in evidence}
    rates_in = [min(e["rate_by_r_star"].values()) for e in evidence.values() if e["rate_by_r_star"]]
    evidence["min_rate_in_domain"] = min(rates_in) if rates_in else None
    if methods != {"linear_v_known", "linear_v_unknown"}:
        evidence["missing"] = sorted({"linear_v_known", "linear_v_unknown"} - methods)
        evidence["reason"] = f"no runs of {', '.join(evidence['missing'])}: C9 needs both linear methods"
        return Finding("inconclusive", criterion, evidence)
    return _finding(criterion, evidence, decisions)


def _finding(criterion: str, evidence: dict, decisions: dict[str, IntervalDecision]) -> Finding:
    """Every decision must hold (stats.unit_intervals.all_of); an inconclusive one says why."""
    outcome = decide(record(evidence, decisions))
    if outcome == "inconclusive":
        evidence["reason"] = undecided_reason(evidence, "teacher draws")
    return Finding(outcome, criterion, evidence)


def verdict_x1(cfg, rows: pd.DataFrame, context: ClaimContext) -> Finding:
    """X1 on the softmax_log_attention runs; the recovery frontier (``context.tables["frontier"]``) is
    computed once from every run."""
    frontier = context.tables["frontier"]
    criterion = (
        f"softmax teacher, softmax_log_attention: inside its domain (V known, n <= min(d, d_v)) the exact-recovery rate "
        f"at the largest N is >= {cfg.verdict.rate:g} for every r* and every sigma <= {cfg.verdict.sigma_max:g}; outside it (V unknown "
        f"or n > min(d, d_v)) >= {cfg.verdict.flag_rate:g} of runs are flagged not identifiable. Each rate is a share of "
        "teacher draws (teacher, n, r*, spectrum, seed, draw) decided by its 95% Wilson interval against one boundary, "
        "its bar: confirmed when every interval lies at or above its bar, refuted when one lies at or below it, else inconclusive"
    )
    rows = with_draw(rows)
    soft = rows[(rows["teacher"] == "softmax") & (rows["method"] == "softmax_log_attention")]
    inside, outside = soft[soft["in_domain"]], soft[~soft["in_domain"]]
    scale = at_scale(inside, cfg.verdict.sigma_max)
    by_sigma = {f"{s:g}": rates_by_r(g) for s, g in scale.groupby("task.sigma")}
    N_max = int(inside["n_samples"].max()) if len(inside) else None
    all_sigma = inside[inside["n_samples"] == N_max] if len(inside) else inside
    evidence = {
        "N": N_max,
        "rate_by_sigma_and_r_star": by_sigma,
        "rate_by_sigma_at_N_max_all": {
            f"{s:g}": float(g["exact"].mean()) for s, g in all_sigma.groupby("task.sigma")
        },
        "confident_wrong_in_domain_by_sigma": {
            f"{s:g}": float(g["confident_wrong"].mean()) for s, g in inside.groupby("task.sigma")
        },
        "out_of_domain_flagged": {
            f"n={int(n)}/V {v}": float((g["identifiable"] == 0).mean())
            for (n, v), g in outside.groupby(["task.n", "v"])
        },
    }
    f = (
        frontier[(frontier["method"] == "softmax_log_attention") & (frontier["v"] == "known")]
        if len(frontier)
        else frontier
    )
    evidence["frontier"] = {
        f"n={int(r['task.n'])}/r*={int(r['task.r_star'])}": {
            "min_N_exact": r["min_N_exact"],
            "max_sigma_exact": r["max_sigma_exact"],
        }
        for _, r in f.iterrows()
    }
    if not by_sigma:
        evidence["reason"] = (
            "no softmax_log_attention runs inside the domain at the largest N and sigma <= sigma_max"
        )
        return Finding("inconclusive", criterion, evidence)
    evidence["min_rate_inside"] = min(min(r.values()) for r in by_sigma.values())
    decisions = {}
    for sigma, g in scale.groupby("task.sigma"):
        decisions.update(_rate_decisions(g, cfg.verdict.rate, f"sigma={sigma:g}/"))
    exact = _all_hold(decisions.values())
    for (n, v), g in outside.groupby(["task.n", "v"]):
        decisions[f"flagged/n={int(n)}/V {v}"] = _flag_decision(g, cfg.verdict.flag_rate)
    flags = [d for k, d in decisions.items() if k.startswith("flagged/")]
    evidence["exact_inside"], evidence["flagged_outside"] = exact, _all_hold(flags)
    return _finding(criterion, evidence, decisions)


def _all_hold(decisions) -> bool | None:
    """True when every decision confirms, False when one refutes, else None."""
    outcomes = [d.outcome for d in decisions]
    return False if False in outcomes else (True if outcomes and all(outcomes) else None)


#: E6 boundary axes: (config key, result column).
AXES = (("ns", "task.n"), ("spectra", "task.spectrum"), ("seed", "seed"))


LINEAR_METHODS = ["linear_v_known", "linear_v_unknown"]


def _sigma_options(cfg, rows: pd.DataFrame) -> list[Setting]:
    """The verdict judged at every other noise level of the grid (``sigma_max``)."""
    levels = sorted(set(cfg.task.sigmas) | {cfg.task.sigma_ref})
    return options(cfg, rows, "verdict.sigma_max", [s for s in levels if s != cfg.verdict.sigma_max])


def c9_grid(cfg, table: pd.DataFrame, context: ClaimContext) -> list[Setting]:
    """C9 decided again per n, spectrum and seed, and at every noise level of the grid."""
    rows = table[table["method"].isin(LINEAR_METHODS)] if len(table) else table
    return sliced(cfg, rows, AXES) + _sigma_options(cfg, rows)


def c10_grid(cfg, table: pd.DataFrame, context: ClaimContext) -> list[Setting]:
    """C10 decided again per n, spectrum and seed, and in the other V setting."""
    rows = table[table["method"] == "softmax_linearised"] if len(table) else table
    others = [v for v in cfg.v_settings if v != cfg.verdict.c10_v]
    return sliced(cfg, rows, AXES) + options(cfg, rows, "verdict.c10_v", others)


def x1_grid(cfg, table: pd.DataFrame, context: ClaimContext) -> list[Setting]:
    """X1 decided again per n (where users work: n = d = d_v), spectrum and seed, and at every noise level."""
    rows = table[table["method"] == "softmax_log_attention"] if len(table) else table
    return sliced(cfg, rows, AXES) + _sigma_options(cfg, rows)


def c9_sentence(e: dict, fmt: Formats) -> str:
    parts = []
    for cell, v in e.items():
        if not isinstance(v, dict) or "rate_by_r_star" not in v:
            continue
        rates = list(v["rate_by_r_star"].values())
        text = f"{cell.replace('_', ' ')} (N = {v['N']}): exact rate ≥ {fmt.number(min(rates))} on {len(rates)} r*"
        if v.get("out_of_domain_flagged") is not None:
            text += f", outside the domain flagged {fmt.pct(v['out_of_domain_flagged'])}"
        parts.append(text)
    if not parts:
        raise KeyError("rate_by_r_star")
    return "; ".join(parts)


def x1_sentence(e: dict, fmt: Formats) -> str:
    rates = ", ".join(f"σ {s}: {fmt.number(r)}" for s, r in e["rate_by_sigma_at_N_max_all"].items())
    return (
        f"exact inside the domain: {fmt.number(e['exact_inside'])}; flagged outside: {fmt.number(e['flagged_outside'])}; "
        f"exact rate at N = {e['N']}: {rates}"
    )


def c8_grid(cfg, table: pd.DataFrame, context: ClaimContext) -> list[Setting]:
    """C8 decided again per n, spectrum and seed, and in the other V setting (as C10)."""
    return c10_grid(cfg, table, context)


def _ns_setting(cfg, *keys: str) -> dict:
    """The default setting with ``ns`` every n the softmax_linearised rows have (task.ns and c10_ns)."""
    return {**grid_setting(cfg, *keys), "ns": sorted({*cfg.task.ns, *cfg.c10_ns})}


#: C9's and X1's rule: exact-recovery and flagged shares of teacher draws against their rates (Wilson).
RATES = Rule(thresholds=("verdict.rate", "verdict.flag_rate"), interval=Interval.WILSON)

C8 = Claim(
    id="C8",
    experiment="E6",
    statement="the energy effective rank is robust to softmax-induced noise, against the paper's numerical rank",
    unit=PAIRED_DRAW,
    rule=Rule(
        thresholds=("verdict.c8_ratio",),
        interval=Interval.BOOTSTRAP,
        conditions=(Condition(("verdict.c8_min_contamination",), Interval.BOOTSTRAP),),
    ),
    decide=needs_rows(verdict_c8),
    sentence=c8_sentence,
    default_setting=lambda cfg: _ns_setting(cfg, "task.spectra", "verdict.c10_v"),
    statistic="energy_to_numerical_ratio",
    grid=c8_grid,
)
C9 = Claim(
    id="C9",
    experiment="E6",
    statement="r* of a linear QK teacher is predicted exactly from data at sufficient N, with V known and unknown",
    unit=TEACHER_DRAW,
    rule=RATES,
    decide=needs_rows(verdict_c9),
    sentence=c9_sentence,
    default_setting=lambda cfg: grid_setting(cfg, "task.ns", "task.spectra", "verdict.sigma_max"),
    statistic="min_rate_in_domain",
    grid=c9_grid,
)
C10 = Claim(
    id="C10",
    experiment="E6",
    statement="the paper's data-only estimators recover r* of a softmax teacher only partially",
    unit=TEACHER_DRAW,
    rule=Rule(thresholds=("verdict.c10_tolerance",), interval=Interval.BOOTSTRAP),
    decide=needs_rows(verdict_c10),
    sentence=c10_sentence,
    default_setting=lambda cfg: _ns_setting(cfg, "task.spectra", "verdict.c10_v"),
    statistic="sub_claims_holding",
    grid=c10_grid,
)
X1 = Claim(
    id="X1",
    experiment="E6",
    statement="a data-only predictor is exact for softmax teachers wherever r* is identifiable",
    unit=TEACHER_DRAW,
    rule=RATES,
    decide=needs_rows(verdict_x1),
    sentence=x1_sentence,
    default_setting=lambda cfg: {
        **grid_setting(cfg, "task.spectra", "verdict.sigma_max"),
        "ns": sorted({*cfg.task.ns, *cfg.x1_ns}),
    },
    statistic="min_rate_inside",
    grid=x1_grid,
)
CLAIMS = (C8, C9, C10, X1)
