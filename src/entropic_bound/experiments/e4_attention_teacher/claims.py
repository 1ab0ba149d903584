"""E4's claims C5 and C6: each criterion, its report sentence and its robustness grid."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...stats.interval_decision import IntervalDecision, decide_by_interval
from ...stats.unit_intervals import all_of, unit_share_decision
from ..framework.claim import Claim, Formats
from ..framework.claim_slices import Setting, grid_setting, sliced, with_option
from ..framework.verdict import ClaimContext, Verdict
from .analysis import median_interval, paired_ratios, transition_table

#: A teacher draw: the runs of one (teacher kind, r*, spectrum, seed) share the teacher.
TEACHER = ("teacher", "task.r_star", "task.spectrum", "seed")


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


def c6_holds_when(outcomes: list[tuple[dict, Verdict]]) -> str:
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


def _unfinished(g: pd.DataFrame) -> pd.Series:
    """Runs not shown converged (still improving, or no stored curve to test): they cannot refute."""
    return g["converged"].fillna(0.0) < 0.5 if "converged" in g else pd.Series(True, index=g.index)


def floor_misses(cfg, above: pd.DataFrame) -> dict:
    """Runs with r >= r* above ``eps_floor``, split by the convergence rule (``converged`` per run)."""
    miss = above[above["rel_excess"] >= cfg.verdict.eps_floor]
    improving = _unfinished(miss)
    conv = miss["converged"] if "converged" in miss else pd.Series(np.nan, index=miss.index)
    return {
        "converged_above_floor": int((~improving).sum()),
        "still_improving": int(improving.sum()),
        "above_floor_runs": {
            str(r.run_id): {"rel_excess": float(r.rel_excess), "converged": None if np.isnan(c) else bool(c)}
            for r, c in zip(miss.itertuples(), conv)
        }
        if "run_id" in miss
        else {},
    }


def c5_summary(cfg, rows: pd.DataFrame) -> dict:
    """Per teacher: fractions of runs with r < r* above ``c5_margin·eps_floor`` and with r >= r* below
    ``eps_floor``; the r >= r* runs above the floor with their convergence."""
    out = {}
    for kind, g in rows.groupby("teacher"):
        below, above = g[g["rank"] < g["task.r_star"]], g[g["rank"] >= g["task.r_star"]]
        misses = floor_misses(cfg, above)
        reach = float((above["rel_excess"] < cfg.verdict.eps_floor).mean()) if len(above) else None
        out[kind] = {
            "runs_below": int(len(below)),
            "runs_at_or_above": int(len(above)),
            "frac_below_clearly_above_floor": float(
                (below["rel_excess"] >= cfg.verdict.c5_margin * cfg.verdict.eps_floor).mean()
            )
            if len(below)
            else None,
            "frac_at_or_above_reaching_floor": reach,
            # the most the r >= r* runs could reach if every unfinished one went on to the floor
            "frac_at_or_above_reaching_floor_if_finished": None
            if reach is None
            else reach + misses["still_improving"] / len(above),
            "frac_below_reaching_floor": float((below["rel_excess"] < cfg.verdict.eps_floor).mean())
            if len(below)
            else None,
            "min_rel_excess_below": float(below["rel_excess"].min()) if len(below) else None,
            "max_rel_excess_at_or_above": float(above["rel_excess"].max()) if len(above) else None,
            **misses,
        }
    return out


def c5_decisions(cfg, rows: pd.DataFrame) -> dict[str, dict[str, IntervalDecision]]:
    """Per teacher kind, the four shares of C5 over teacher draws (Wilson, :func:`unit_share_decision`):
    ``clearly_deficient`` (r < r* at >= c5_margin·eps_floor) and ``reaching_floor`` (r >= r*) confirm;
    ``staying_above_floor`` (r < r*) and ``reaching_floor_if_finished`` (r >= r*, unfinished counted as
    reaching) refute."""
    rate, eps = cfg.verdict.c5_rate, cfg.verdict.eps_floor
    out = {}
    for kind, g in rows.groupby("teacher"):
        below, above = g[g["rank"] < g["task.r_star"]], g[g["rank"] >= g["task.r_star"]]
        reach = above["rel_excess"] < eps
        out[str(kind)] = {
            "clearly_deficient": unit_share_decision(
                below, below["rel_excess"] >= cfg.verdict.c5_margin * eps, TEACHER, rate
            ),
            "reaching_floor": unit_share_decision(above, reach, TEACHER, rate),
            "staying_above_floor": unit_share_decision(below, below["rel_excess"] >= eps, TEACHER, rate),
            "reaching_floor_if_finished": unit_share_decision(
                above, reach | _unfinished(above), TEACHER, rate
            ),
        }
    return out


def c5_decision(decisions: dict[str, dict[str, IntervalDecision]]) -> tuple[str, str, str]:
    """``(verdict, reason, decisive condition)``: confirmed when every teacher's confirming shares clear
    c5_rate by their interval, refuted when a refuting share's interval lies below it, else inconclusive."""
    flat = {f"{k}/{name}": d for k, ds in decisions.items() for name, d in ds.items()}
    confirming = {k: d for k, d in flat.items() if k.endswith(("/clearly_deficient", "/reaching_floor"))}
    refuting = {k: d for k, d in flat.items() if k not in confirming}
    refuted = [k for k, d in refuting.items() if d.outcome is False]
    if refuted:
        key = min(refuted, key=lambda k: refuting[k].margin)
        why = {
            "staying_above_floor": "rank-deficient students reach the floor",
            "reaching_floor_if_finished": "students with r >= r* stopped improving above the floor",
        }[key.split("/", 1)[1]]
        return "refuted", why, key
    outcome, key = all_of(confirming)
    if outcome:
        return "confirmed", "", key
    if key.endswith("/reaching_floor") and confirming[key].interval[1] <= confirming[key].threshold:
        return (
            "inconclusive",
            (
                "runs with r >= r* above the floor are still improving (convergence rule): train longer before "
                "reading 'did not reach the floor'"
            ),
            key,
        )
    return (
        "inconclusive",
        (
            "a share's interval over teacher draws straddles c5_rate (deficient runs between the floor and the "
            "margin, or too few draws)"
        ),
        key,
    )


def verdict_c5(cfg, rows: pd.DataFrame, context: ClaimContext) -> Verdict:
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
    statement = "deficiency (r < r*) and achievability (r >= r*) hold inside the attention class"
    summary = c5_summary(cfg, rows) if len(rows) else {}
    evidence = {"by_teacher": summary}
    fracs = [
        (s["frac_below_clearly_above_floor"], s["frac_at_or_above_reaching_floor"]) for s in summary.values()
    ]
    known = [x for pair in fracs for x in pair if x is not None]
    evidence["min_frac"] = min(known) if known else None
    evidence["still_improving"] = sum(s["still_improving"] for s in summary.values())
    if not fracs or any(a is None or b is None for a, b in fracs):
        return Verdict("C5", "inconclusive", criterion, evidence, "E4", statement)
    decisions = c5_decisions(cfg, rows)
    verdict, reason, decisive = c5_decision(decisions)
    evidence["decision"] = {
        "condition": decisive,
        **decisions[decisive.split("/")[0]][decisive.split("/", 1)[1]].to_dict(),
    }
    evidence["decisions"] = {f"{k}/{n}": d.to_dict() for k, ds in decisions.items() for n, d in ds.items()}
    if reason:
        evidence["reason"] = reason
    return Verdict("C5", verdict, criterion, evidence, "E4", statement)


def _boundary(cfg, rows: pd.DataFrame) -> tuple[float, bool | None, dict[str, IntervalDecision]]:
    """Softmax runs at r = r*: the share of teacher draws reaching eps_floor, and whether the boundary is
    kept (True: its Wilson interval lies at or above c5_rate), lost (False: even counting every unfinished
    run as reaching, the interval lies at or below it) or undecided (None)."""
    at = rows[(rows["teacher"] == "softmax") & (rows["rank"] == rows["task.r_star"])]
    if not len(at):
        return float("nan"), None, {}
    rate = cfg.verdict.c5_rate
    reach = at["rel_excess"] < cfg.verdict.eps_floor
    kept = unit_share_decision(at, reach, TEACHER, rate)
    ceiling = unit_share_decision(at, reach | _unfinished(at), TEACHER, rate)
    state = True if kept.outcome is True else (False if ceiling.outcome is False else None)
    return float(reach.mean()), state, {"boundary_kept": kept, "boundary_if_finished": ceiling}


def c6_at(cfg, rows: pd.DataFrame, norm: str) -> dict:
    """C6 at one logit scale (``rows`` at that c): the median softmax/linear ratio over pairs with its
    order-statistic interval, compressed iff the interval lies <= c6_factor (not iff it lies at or above),
    and the boundary; confirmed iff compressed and kept, refuted iff not compressed or lost."""
    pairs = paired_ratios(transition_table(rows))
    reach, kept, boundary = _boundary(cfg, rows)
    out = {"pairs": int(len(pairs)), "softmax_frac_reaching_floor_at_r_star": reach, "boundary_kept": kept}
    if not len(pairs):
        return {**out, "compressed": None, "verdict": "inconclusive"}
    lo, hi, coverage = median_interval(pairs[f"ratio_{norm}"])
    median = float(pairs[f"ratio_{norm}"].median())
    ratio = decide_by_interval(
        median, (lo, hi), cfg.verdict.c6_factor, higher_is_better=False, unit="teacher pair"
    )
    compressed = ratio.outcome
    if len(pairs) < cfg.verdict.c6_min_pairs:  # one pair is one teacher draw: not a median
        compressed = None
        out["reason"] = f"{len(pairs)} pair(s) < c6_min_pairs = {cfg.verdict.c6_min_pairs}"
    verdict = (
        "refuted" if False in (compressed, kept) else ("confirmed" if compressed and kept else "inconclusive")
    )
    decisions = {"compressed": ratio, **boundary}
    if verdict == "refuted":
        decisive = "compressed" if compressed is False else "boundary_if_finished"
    else:
        decisive = min(
            ("compressed", "boundary_kept"), key=lambda k: decisions[k].margin if k in decisions else np.inf
        )
    return {
        **out,
        "median": median,
        "interval": [round(lo, 4), round(hi, 4)],
        "coverage": round(coverage, 4),
        "compressed": compressed,
        "verdict": verdict,
        "decision": {"condition": decisive, **decisions[decisive].to_dict()},
        "decisions": {k: d.to_dict() for k, d in decisions.items()},
    }


def c6_map(cfg, rows: pd.DataFrame) -> dict[str, dict[float, dict]]:
    """``{normalisation: {c: c6_at}}`` over every logit scale of the rows."""
    cs = sorted(float(x) for x in rows["task.c"].unique())
    return {
        norm: {x: c6_at(cfg, rows[np.isclose(rows["task.c"], x)], norm) for x in cs}
        for norm in ("k0", "signal")
    }


def verdict_c6(cfg, rows: pd.DataFrame, context: ClaimContext) -> Verdict:
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
    statement = "softmax compresses the size of the transition at r = r* but keeps the boundary"
    if not len(rows):
        return Verdict("C6", "inconclusive", criterion, {"pairs": 0}, "E4", statement)
    full = c6_map(cfg, rows)
    here = {n: next((e for x, e in m.items() if np.isclose(x, cfg.task.c)), None) for n, m in full.items()}
    if here[norm] is None or "median" not in here[norm]:
        pairs = here[norm]["pairs"] if here[norm] else 0
        return Verdict("C6", "inconclusive", criterion, {"pairs": pairs, "map": full}, "E4", statement)
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
    return Verdict("C6", main["verdict"], criterion, evidence, "E4", statement)


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
    sentence=c6_sentence,
    default_setting=lambda cfg: {"c": float(cfg.task.c), "c6_normalisation": cfg.verdict.c6_normalisation},
    statistic="median_ratio",
    grid=c6_grid,
    holds_when=c6_holds_when,
)
CLAIMS = (C5, C6)
