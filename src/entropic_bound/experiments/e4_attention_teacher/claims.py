"""E4's claims C5 and C6: each criterion, its report sentence and its robustness grid."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..base import ClaimContext, Verdict, decide
from ..claim import Claim, Formats
from ..claim_slices import Setting, grid_setting, sliced, with_option
from .analysis import paired_ratios, transition_table


def c6_holds_when(outcomes: list[tuple[dict, Verdict]]) -> str:
    """The confirmed region of the C6 map in words, per normalisation (e.g. "signal-normalised, c <= 1")."""
    parts = []
    for norm in ("k0", "signal"):
        cs = sorted({s["c"] for s, _ in outcomes if s.get("c6_normalisation") == norm})
        yes = sorted(
            {s["c"] for s, v in outcomes if s.get("c6_normalisation") == norm and v.verdict == "confirmed"}
        )
        if not yes:
            continue
        if yes == cs:
            region = f"every c tried ({', '.join(f'{x:g}' for x in cs)})"
        elif yes == cs[: len(yes)]:
            region = f"c <= {yes[-1]:g}"
        elif yes == cs[-len(yes) :]:
            region = f"c >= {yes[0]:g}"
        else:
            region = "c in {" + ", ".join(f"{x:g}" for x in yes) + "}"
        parts.append(f"{norm}-normalised, {region}")
    return "; ".join(parts) or "nowhere in the grid"


def c5_summary(cfg, ok: pd.DataFrame) -> dict:
    """Per teacher: fractions of runs with r < r* above ``c5_margin·eps_floor`` and with r >= r* below ``eps_floor``."""
    out = {}
    for kind, g in ok.groupby("teacher"):
        below, above = g[g["rank"] < g["task.r_star"]], g[g["rank"] >= g["task.r_star"]]
        out[kind] = {
            "runs_below": int(len(below)),
            "runs_at_or_above": int(len(above)),
            "frac_below_clearly_above_floor": float(
                (below["rel_excess"] >= cfg.verdict.c5_margin * cfg.verdict.eps_floor).mean()
            )
            if len(below)
            else None,
            "frac_at_or_above_reaching_floor": float((above["rel_excess"] < cfg.verdict.eps_floor).mean())
            if len(above)
            else None,
            "frac_below_reaching_floor": float((below["rel_excess"] < cfg.verdict.eps_floor).mean())
            if len(below)
            else None,
            "min_rel_excess_below": float(below["rel_excess"].min()) if len(below) else None,
            "max_rel_excess_at_or_above": float(above["rel_excess"].max()) if len(above) else None,
        }
    return out


def verdict_c5(cfg, ok: pd.DataFrame, context: ClaimContext) -> Verdict:
    """C5 on the runs at the config's logit scale ``task.c``."""
    ok = ok[np.isclose(ok["task.c"], cfg.task.c)] if len(ok) else ok
    criterion = (
        f"for each teacher (linear and softmax), at least {cfg.verdict.c5_rate:.0%} of runs with r < r* have relative "
        f"excess >= {cfg.verdict.c5_margin:g}·eps_floor = {cfg.verdict.c5_margin * cfg.verdict.eps_floor:g}, and at least {cfg.verdict.c5_rate:.0%} "
        f"of runs with r >= r* have relative excess < eps_floor = {cfg.verdict.eps_floor:g} (held-out, clean target); "
        f"refuted if more than {1 - cfg.verdict.c5_rate:.0%} of runs with r < r* reach eps_floor or fewer than "
        f"{cfg.verdict.c5_rate:.0%} with r >= r* do; otherwise inconclusive (deficient, but not by the margin)"
    )
    statement = "deficiency (r < r*) and achievability (r >= r*) hold inside the attention class"
    summary = c5_summary(cfg, ok) if len(ok) else {}
    evidence = {"by_teacher": summary}
    fracs = [
        (s["frac_below_clearly_above_floor"], s["frac_at_or_above_reaching_floor"]) for s in summary.values()
    ]
    known = [x for pair in fracs for x in pair if x is not None]
    evidence["min_frac"] = min(known) if known else None
    if not fracs or any(a is None or b is None for a, b in fracs):
        return Verdict("C5", "inconclusive", criterion, evidence, "E4", statement)
    rate = cfg.verdict.c5_rate
    if all(a >= rate and b >= rate for a, b in fracs):
        verdict = "confirmed"
    elif any(
        b < rate or s["frac_below_reaching_floor"] > 1 - rate for (_, b), s in zip(fracs, summary.values())
    ):
        verdict = "refuted"  # rank-deficient students reach the floor, or full-rank ones do not
    else:
        verdict = "inconclusive"  # deficient runs sit between the floor and the margin: not clearly apart
    return Verdict("C5", verdict, criterion, evidence, "E4", statement)


def verdict_c6(cfg, ok: pd.DataFrame, context: ClaimContext) -> Verdict:
    """C6 on the runs at the config's logit scale ``task.c``, normalised by ``verdict.c6_normalisation``."""
    ok = ok[np.isclose(ok["task.c"], cfg.task.c)] if len(ok) else ok
    pairs = paired_ratios(transition_table(ok)) if len(ok) else pd.DataFrame()
    norm = cfg.verdict.c6_normalisation
    what = "the K = 0 (uniform-attention) excess" if norm == "k0" else "the total signal E||f*||²/(n d_v)"
    criterion = (
        f"normalisation: excess at r = r*-1 divided by {what}. Compressed if the median over paired "
        f"(r*, spectrum, V, seed) of softmax/linear normalised excess is <= {cfg.verdict.c6_factor:g}; the boundary is "
        f"kept if at least {cfg.verdict.c5_rate:.0%} of softmax runs at r = r* reach eps_floor. Confirmed iff both."
    )
    statement = "softmax compresses the size of the transition at r = r* but keeps the boundary"
    if not len(pairs):
        return Verdict("C6", "inconclusive", criterion, {"pairs": 0}, "E4", statement)
    soft_at = ok[(ok["teacher"] == "softmax") & (ok["rank"] == ok["task.r_star"])]
    boundary = float((soft_at["rel_excess"] < cfg.verdict.eps_floor).mean()) if len(soft_at) else float("nan")
    med = {k: float(pairs[f"ratio_{k}"].median()) for k in ("k0", "signal")}
    evidence = {
        "normalisation": norm,
        "c": sorted(float(x) for x in ok["task.c"].unique()) if "task.c" in ok else None,
        "median_ratio": med[norm],
        "median_ratio_k0": med["k0"],
        "median_ratio_signal": med["signal"],
        "median_linear_over_k0": float(pairs["linear_over_k0"].median()),
        "median_softmax_over_k0": float(pairs["softmax_over_k0"].median()),
        "median_linear_rel": float(pairs["linear_rel"].median()),
        "median_softmax_rel": float(pairs["softmax_rel"].median()),
        "ratio_k0_by_r_star": pairs.groupby("task.r_star")["ratio_k0"].median().round(3).to_dict(),
        "ratio_signal_by_r_star": pairs.groupby("task.r_star")["ratio_signal"].median().round(3).to_dict(),
        "softmax_frac_reaching_floor_at_r_star": boundary,
        "pairs": int(len(pairs)),
    }
    compressed = med[norm] <= cfg.verdict.c6_factor
    other = "signal" if norm == "k0" else "k0"
    evidence["other_normalisation_agrees"] = bool((med[other] <= cfg.verdict.c6_factor) == compressed)
    return Verdict(
        "C6", decide(compressed and boundary >= cfg.verdict.c5_rate), criterion, evidence, "E4", statement
    )


#: C5 boundary axes: (config key, result column).
C5_AXES = (("spectra", "task.spectrum"), ("v_settings", "v"), ("r_stars", "task.r_star"), ("seed", "seed"))


def c5_grid(cfg, ok: pd.DataFrame, context: ClaimContext) -> list[Setting]:
    """C5 decided again per spectrum, V, r* and seed at the default c, and at every other c of the
    C6 map (whose runs are r*-1 and r* only)."""
    main = ok[np.isclose(ok["task.c"], cfg.task.c)] if len(ok) else ok
    other_c = [
        float(x) for x in (sorted(ok["task.c"].unique()) if len(ok) else ()) if not np.isclose(x, cfg.task.c)
    ]
    return sliced(cfg, main, C5_AXES) + [
        Setting({"c": x}, with_option(cfg, {"task.c": x}), ok) for x in other_c
    ]


def c6_grid(cfg, ok: pd.DataFrame, context: ClaimContext) -> list[Setting]:
    """C6 mapped over the logit scale c and both normalisations (the default setting left out)."""
    out = []
    for x in sorted(ok["task.c"].unique()) if len(ok) else ():
        for norm in ("k0", "signal"):
            if np.isclose(x, cfg.task.c) and norm == cfg.verdict.c6_normalisation:
                continue
            changes = {"task.c": float(x), "verdict.c6_normalisation": norm}
            out.append(Setting({"c": float(x), "c6_normalisation": norm}, with_option(cfg, changes), ok))
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
    return "; ".join(parts)


C5 = Claim(
    "C5",
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
    "C6",
    decide=verdict_c6,
    sentence="softmax / linear excess at r = r*−1: median {median_ratio_k0:n} normalised by the K = 0 "
    "excess, {median_ratio_signal:n} by the signal ({pairs} pairs); "
    "{softmax_frac_reaching_floor_at_r_star:pct} of softmax runs reach the floor at r = r*",
    default_setting=lambda cfg: {"c": float(cfg.task.c), "c6_normalisation": cfg.verdict.c6_normalisation},
    statistic="median_ratio",
    grid=c6_grid,
    holds_when=c6_holds_when,
)
CLAIMS = (C5, C6)
