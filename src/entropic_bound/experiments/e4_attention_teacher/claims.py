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


def verdict_c5(cfg, rows: pd.DataFrame, context: ClaimContext) -> Finding:
    """C5 on the runs at the config's logit scale ``task.c``."""
    rows = rows[np.isclose(rows["task.c"], cfg.task.c)] if len(rows) else rows
    criterion = (
        f"for each teacher (linear and softmax), at least {cfg.verdict.c5_rate:.0%} of runs with r < r* have relative "
        f"excess >= {cfg.verdict.c5_margin:g}·eps_floor = {cfg.verdict.c5_margin * cfg.verdict.eps_floor:g}, and at least {cfg.verdict.c5_rate:.0%} "
        f"of runs with r >= r* have relative excess < eps_floor = {cfg.verdict.eps_floor:g} (held-out, clean target); "
        f"refuted if more than {1 - cfg.verdict.c5_rate:.0%} of runs with r < r* reach eps_floor, or if fewer than "
        f"{cfg.verdict.c5_rate:.0%} with r >= r* would reach it even counting every run still improving as reaching it "
        "(convergence rule on the training excess loss − σ²: converged when it falls by < 10 % over the last quarter of "
        "training); otherwise inconclusive, with the reason (runs still improving, or deficient but not by the margin). "
        "Every share is counted on teacher draws (teacher, r*, spectrum, seed; each draw weighs the fraction of its runs) "
        "and decided by its 95% Wilson interval: 'at least' means the interval lies at or above the rate, 'more than' / "
        "'fewer than' that it lies wholly beyond it"
    )
    summary = c5_summary(cfg, rows) if len(rows) else {}
    evidence = {"by_teacher": summary}
    fracs = [
        (s["frac_below_clearly_above_floor"], s["frac_at_or_above_reaching_floor"]) for s in summary.values()
    ]
    known = [x for pair in fracs for x in pair if x is not None]
    evidence["min_frac"] = min(known) if known else None
    evidence["still_improving"] = sum(s["still_improving"] for s in summary.values())
    if not fracs or any(a is None or b is None for a, b in fracs):
        return Finding("inconclusive", criterion, evidence)
    decisions = c5_decisions(cfg, rows)
    verdict, reason, decisive = c5_decision(decisions)
    evidence["decision"] = {
        "condition": decisive,
        **decisions[decisive.split("/")[0]][decisive.split("/", 1)[1]].to_dict(),
    }
    evidence["decisions"] = {f"{k}/{n}": d.to_dict() for k, ds in decisions.items() for n, d in ds.items()}
    if reason:
        evidence["reason"] = reason
    return Finding(verdict, criterion, evidence)


def verdict_c6(cfg, rows: pd.DataFrame, context: ClaimContext) -> Finding:
    """C6 at the config's logit scale ``task.c`` (the SPEC's regime) and normalisation, with the region
    of c where it holds in each normalisation (the map over every c of the rows)."""
    norm, factor = cfg.verdict.c6_normalisation, cfg.verdict.c6_factor
    what = "the K = 0 (uniform-attention) excess" if norm == "k0" else "the total signal E||f*||²/(n d_v)"
    criterion = (
        f"normalisation: excess at r = r*-1 divided by {what}. At each logit scale c, over >= {cfg.verdict.c6_min_pairs} "
        "paired (r*, spectrum, V, seed) linear/softmax teachers: the median softmax/linear ratio with its exact order-"
        f"statistic interval; compressed if the interval lies <= {factor:g}, not compressed if it lies above; the boundary "
        f"is kept if >= {cfg.verdict.c5_rate:.0%} of softmax teacher draws at r = r* reach eps_floor (95% Wilson interval "
        "at or above the rate), lost if the interval lies below it even counting runs still improving. Confirmed iff compressed and kept, refuted iff not compressed or lost, else "
        f"inconclusive; the verdict is the one at c = {cfg.task.c:g} (the SPEC's regime: neither nearly linear nor "
        "saturated), the region of c where it holds is named per normalisation"
    )
    if not len(rows):
        return Finding("inconclusive", criterion, {"pairs": 0})
    full = c6_map(cfg, rows)
    here = {n: next((e for x, e in m.items() if np.isclose(x, cfg.task.c)), None) for n, m in full.items()}
    if here[norm] is None or "median" not in here[norm]:
        pairs = here[norm]["pairs"] if here[norm] else 0
        return Finding("inconclusive", criterion, {"pairs": pairs, "map": full})
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
    return Finding(main["verdict"], criterion, evidence)


#: C5 boundary axes: (config key, result column).
C5_AXES = (("spectra", "task.spectrum"), ("v_settings", "v"), ("r_stars", "task.r_star"), ("seed", "seed"))


def c5_grid(cfg, rows: pd.DataFrame, context: ClaimContext) -> list[Setting]:
    """C5 decided again per spectrum, V, r* and seed at the default c, and at every other c of the
    C6 map (whose runs are r*-1 and r* only)."""
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
        parts.append(
            f"{teacher}: "
            + fmt.fill(
                "{frac_at_or_above_reaching_floor:pct} of {runs_at_or_above} runs at r ≥ r* reach the floor, "
                "below r* relative excess ≥ {min_rel_excess_below:n}",
                t,
            )
        )
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
    rule=Rule(
        thresholds=("verdict.c5_rate", "verdict.c5_margin", "verdict.eps_floor"), interval=Interval.WILSON
    ),
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
        conditions=(Condition(("verdict.c5_rate", "verdict.eps_floor"), Interval.WILSON, TEACHER_DRAW),),
    ),
    decide=verdict_c6,
    sentence=c6_sentence,
    default_setting=lambda cfg: {"c": float(cfg.task.c), "c6_normalisation": cfg.verdict.c6_normalisation},
    statistic="median_ratio",
    grid=c6_grid,
    holds_when=c6_holds_when,
)
CLAIMS = (C5, C6)
