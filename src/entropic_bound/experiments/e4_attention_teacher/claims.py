"""E4's claims C5 and C6: each declaration, criterion, report sentence and robustness grid (the numbers
they read are in :mod:`.statistics`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..framework.claim import Claim, Formats
from ..framework.claim_slices import Setting, grid_setting, sliced, with_option
from ..framework.rule import Condition, Interval, Rule
from ..framework.verdict import ClaimContext, Finding
from .statistics import TEACHER_DRAW, TEACHER_PAIR, c5_decision, c5_decisions, c5_summary, c6_map


def region_words(cs: list[float], yes: list[float]) -> str:
    """The c values ``yes`` among ``cs`` in words: "every c tried (…)", "c <= x", "c >= x" or a set."""
    cs, yes = sorted(cs), sorted(yes)
    if not yes:
        return "nowhere in the grid"
    if yes == cs:
        return f"every c tried ({', '.join(f'{x:g}' for x in cs)})"
    if yes == cs[: len(yes)]:
        return f"c <= {yes[-1]:g}"
    if yes == cs[-len(yes) :]:
        return f"c >= {yes[0]:g}"
    return "c in {" + ", ".join(f"{x:g}" for x in yes) + "}"


def c6_holds_when(outcomes: list[tuple[dict, Finding]]) -> str:
    """The confirmed region of the C6 map in words, per normalisation (e.g. "signal-normalised, c <= 1")."""
    parts = []
    for norm in ("k0", "signal"):
        cs = sorted({s["c"] for s, _ in outcomes if s.get("c6_normalisation") == norm})
        yes = [
            x
            for x in cs
            if any(
                s.get("c6_normalisation") == norm and s["c"] == x and v.outcome == "confirmed"
                for s, v in outcomes
            )
        ]
        if yes:
            parts.append(f"{norm}-normalised, {region_words(cs, yes)}")
    return "; ".join(parts) or "nowhere in the grid"


def c5_criterion(cfg) -> str:
    rate, eps = cfg.verdict.c5_rate, cfg.verdict.eps_floor
    return (
        f"one boundary, eps_floor = {eps:g} (the noise floor the paper's halves are stated against: deficiency = "
        f"r < r* cannot reach it, achievability = r >= r* reaches it), and one bar on each share, c5_rate = {rate:.0%}: "
        "for each teacher (linear and softmax), the share of teacher draws (teacher, r*, spectrum, c, seed, draw; "
        "each draw weighs the fraction of its runs) whose r < r* runs stay at or above eps_floor, and the share "
        "whose r >= r* runs fall below it (held-out, clean target), each with its 95% Wilson interval: confirmed "
        f"when every share's interval lies at or above {rate:.0%}, refuted when one lies at or below it — for "
        "r >= r* counting every run still improving as reaching the floor (convergence rule on the training "
        "excess loss − σ²: converged when it falls by < 10 % over the last quarter of training) — otherwise "
        "inconclusive with the reason (too few teacher draws, or runs still improving)"
    )


def verdict_c5(cfg, rows: pd.DataFrame, context: ClaimContext) -> Finding:
    """C5 on the runs at the config's logit scale ``task.c``."""
    rows = rows[np.isclose(rows["task.c"], cfg.task.c)] if len(rows) else rows
    criterion = c5_criterion(cfg)
    summary = c5_summary(cfg, rows) if len(rows) else {}
    evidence = {"by_teacher": summary}
    fracs = [(s["frac_below_above_floor"], s["frac_at_or_above_reaching_floor"]) for s in summary.values()]
    known = [x for pair in fracs for x in pair if x is not None]
    evidence["min_frac"] = min(known) if known else None
    evidence["still_improving"] = sum(s["still_improving"] for s in summary.values())
    if not fracs or any(a is None or b is None for a, b in fracs):
        evidence["reason"] = "no runs on one side of r* for a teacher kind at this c"
        return Finding("inconclusive", criterion, evidence)
    decisions = c5_decisions(cfg, rows)
    verdict, reason, decisive = c5_decision(decisions)
    kind, name = decisive.split("/", 1)
    evidence["decision"] = {"condition": decisive, **decisions[kind][name].to_dict()}
    evidence["decisions"] = {f"{k}/{n}": d.to_dict() for k, ds in decisions.items() for n, d in ds.items()}
    evidence["teacher_draws"] = {k: ds["reaching_floor"].units for k, ds in decisions.items()}
    if reason:
        evidence["reason"] = reason
    return Finding(verdict, criterion, evidence)


def verdict_c6(cfg, rows: pd.DataFrame, context: ClaimContext) -> Finding:
    """C6 at the config's logit scale ``task.c`` (the SPEC's regime) and normalisation, with the region
    of c where it holds in each normalisation (the map over every c of the rows)."""
    norm, factor = cfg.verdict.c6_normalisation, cfg.verdict.c6_factor
    what = "the K = 0 (uniform-attention) excess" if norm == "k0" else "the total signal E||f*||²/(n d_v)"
    bar = cfg.verdict.c6_boundary_share
    criterion = (
        f"normalisation: excess at r = r*-1 divided by {what}. At each logit scale c, over >= {cfg.verdict.c6_min_pairs} "
        "teacher pairs (r*, spectrum, seed, draw: the linear and the softmax teacher on one K*, V*, X; its V settings "
        "share them, so the pair's ratio is their median): the median softmax/linear ratio with its exact order-"
        f"statistic interval; compressed if the interval lies <= {factor:g}, not compressed if it lies at or above. "
        f"The boundary stays at r* (a transition sits where half its draws have crossed): kept if the Wilson intervals "
        f"of the share of softmax teacher draws reaching eps_floor at r = r* and of the share staying above it at "
        f"r = r*-1 both lie at or above {bar:g}, lost if either lies at or below it (at r* even counting runs still "
        "improving). Confirmed iff compressed and kept, refuted iff not compressed or lost, else "
        f"inconclusive; the verdict is the one at c = {cfg.task.c:g} (the SPEC's regime: neither nearly linear nor "
        "saturated), the region of c where it holds is named per normalisation"
    )
    if not len(rows):
        return Finding("inconclusive", criterion, {"pairs": 0})
    full = c6_map(cfg, rows)
    here = {n: next((e for x, e in m.items() if np.isclose(x, cfg.task.c)), None) for n, m in full.items()}
    if here[norm] is None or "median" not in here[norm]:
        pairs = here[norm]["pairs"] if here[norm] else 0
        reason = f"no (linear, softmax) teacher pair with r* >= 2 at c = {cfg.task.c:g}"
        return Finding("inconclusive", criterion, {"pairs": pairs, "map": full, "reason": reason})
    main = here[norm]
    evidence = {
        "normalisation": norm,
        "c": float(cfg.task.c),
        "median_ratio": main["median"],
        "interval": main["interval"],
        "interval_coverage": main["coverage"],
        "median_ratio_k0": here["k0"].get("median"),
        "median_ratio_signal": here["signal"].get("median"),
        "softmax_frac_reaching_floor_at_r_star": main["softmax_frac_reaching_floor_at_r_star"],
        "pairs": main["pairs"],
        "other_normalisation_verdict": here["signal" if norm == "k0" else "k0"]["verdict"],
        "holds_where": {
            n: region_words(list(m), [x for x, e in m.items() if e["verdict"] == "confirmed"])
            for n, m in full.items()
        },
        "map": {n: {f"{x:g}": e for x, e in m.items()} for n, m in full.items()},
        "decision": main["decision"],
        "decisions": main["decisions"],
    }
    if "reason" in main:
        evidence["reason"] = main["reason"]
    return Finding(main["verdict"], criterion, evidence)


#: C5 boundary axes: (config key, result column).
C5_AXES = (("spectra", "task.spectrum"), ("v_settings", "v"), ("r_stars", "task.r_star"))


def c5_grid(cfg, rows: pd.DataFrame, context: ClaimContext) -> list[Setting]:
    """C5 decided again per spectrum, V and r* at the default c (not per seed: a seed is one teacher
    draw, the unit), and at every other c of the C6 map (whose runs are r*-1 and r* only)."""
    main = rows[np.isclose(rows["task.c"], cfg.task.c)] if len(rows) else rows
    other_c = [
        float(x)
        for x in (sorted(rows["task.c"].unique()) if len(rows) else ())
        if not np.isclose(x, cfg.task.c)
    ]
    return sliced(cfg, main, C5_AXES) + [
        Setting({"c": x}, with_option(cfg, {"task.c": x}), rows) for x in other_c
    ]


def c6_grid(cfg, rows: pd.DataFrame, context: ClaimContext) -> list[Setting]:
    """C6 mapped over the logit scale c and both normalisations (the default setting left out)."""
    out = []
    for x in sorted(rows["task.c"].unique()) if len(rows) else ():
        for norm in ("k0", "signal"):
            if np.isclose(x, cfg.task.c) and norm == cfg.verdict.c6_normalisation:
                continue
            changes = {"task.c": float(x), "verdict.c6_normalisation": norm}
            out.append(Setting({"c": float(x), "c6_normalisation": norm}, with_option(cfg, changes), rows))
    return out


def c5_sentence(e: dict, fmt: Formats) -> str:
    parts = []
    for teacher, t in e["by_teacher"].items():
        below = (
            "{frac_below_above_floor:pct} of {runs_below} below r* stay above it (relative excess ≥ "
            "{min_rel_excess_below:n})"
            if "frac_below_above_floor" in t
            else "below r* relative excess ≥ {min_rel_excess_below:n}"  # evidence stored before the key
        )
        reach = "{frac_at_or_above_reaching_floor:pct} of {runs_at_or_above} runs at r ≥ r* reach the floor, "
        parts.append(f"{teacher}: " + fmt.fill(reach + below, t))
    text = "; ".join(parts)
    return text + (f"; {e['still_improving']} run(s) still improving" if e.get("still_improving") else "")


def c6_sentence(e: dict, fmt: Formats) -> str:
    lo, hi = e["interval"]
    where = "; ".join(f"{n}-normalised {w}" for n, w in e["holds_where"].items())
    return (
        f"at c = {fmt.number(e['c'])}, softmax / linear excess at r = r*−1: median {fmt.number(e['median_ratio_k0'])} "
        f"normalised by the K = 0 excess, {fmt.number(e['median_ratio_signal'])} by the signal ({e['pairs']} pairs; "
        f"{e['normalisation']} interval {fmt.number(lo)}–{fmt.number(hi)}); "
        f"{fmt.pct(e['softmax_frac_reaching_floor_at_r_star'])} of softmax runs reach the floor at r = r*; "
        f"holds {where}"
    )


C5 = Claim(
    id="C5",
    experiment="E4",
    statement="deficiency (r < r*) and achievability (r >= r*) hold inside the attention class",
    unit=TEACHER_DRAW,
    rule=Rule(thresholds=("verdict.c5_rate", "verdict.eps_floor"), interval=Interval.WILSON),
    decide=verdict_c5,
    sentence=c5_sentence,
    default_setting=lambda cfg: {
        "c": cfg.task.c,
        **grid_setting(cfg, "task.spectra", "v_settings", "task.r_stars"),
    },
    statistic="min_frac",
    grid=c5_grid,
)
C6 = Claim(
    id="C6",
    experiment="E4",
    statement="softmax compresses the size of the transition at r = r* but keeps the boundary",
    unit=TEACHER_PAIR,
    rule=Rule(
        thresholds=("verdict.c6_factor",),
        interval=Interval.ORDER_STATISTIC,
        conditions=(
            Condition(("verdict.c6_boundary_share", "verdict.eps_floor"), Interval.WILSON, TEACHER_DRAW),
        ),
    ),
    decide=verdict_c6,
    sentence=c6_sentence,
    default_setting=lambda cfg: {"c": float(cfg.task.c), "c6_normalisation": cfg.verdict.c6_normalisation},
    statistic="median_ratio",
    grid=c6_grid,
    holds_when=c6_holds_when,
)
CLAIMS = (C5, C6)
