"""E4's analysis: transition and saturation tables, verdicts C5 and C6, figures — pure functions of rows.

C6 normalisations (SPEC §5b). The size of the transition is measured by the excess at ``r* − 1``:

- ``k0``: ``ΔR(r*−1) / ΔR(K = 0)``, the fraction of what attention *can* remove that a rank
  ``r*−1`` kernel leaves. For the softmax, ``K = 0`` is uniform attention, which already explains
  part of the signal; this normalisation discounts that part (primary, default).
- ``signal``: ``ΔR(r*−1) / (E||f*||² / (n d_v))``, the relative excess risk. Under the softmax it
  looks compressed partly because uniform attention carries signal, not because the kernel's
  transition is smaller.

Both are reported; the verdict uses ``cfg.verdict.c6_normalisation`` and says so.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..base import Analysis, Verdict, decide, split_status
from ..claim_slices import boundary, grid_setting, sliced_boundary, with_option
from .plots import plot_excess_vs_rank, plot_transition_size

RESULT_COLUMNS = [
    "run_id",
    "seed",
    "status",
    "diverged_step",
    "teacher",
    "task.r_star",
    "task.spectrum",
    "task.c",
    "task.sigma",
    "v",
    "rank",
    "train.n_samples",
    "excess",
    "rel_excess",
    "excess_over_k0",
    "k0_excess",
    "k0_rel_excess",
    "signal",
    "noise_floor",
    "train_loss",
    "steps_run",
    "row_entropy_ratio",
    "mean_max_attention",
]
PAIR_KEYS = ["task.r_star", "task.spectrum", "task.c", "v", "seed"]


def transition_table(ok: pd.DataFrame) -> pd.DataFrame:
    """One row per (teacher, r* ≥ 2, spectrum, V, seed): the excess at r*−1 and r*, both normalisations."""
    rows = []
    for (kind, *key), g in ok.groupby(["teacher", *PAIR_KEYS]):
        r_star = key[0]
        below, at = g[g["rank"] == r_star - 1], g[g["rank"] == r_star]
        if r_star < 2 or not len(below) or not len(at):
            continue
        rows.append(
            {
                "teacher": kind,
                **dict(zip(PAIR_KEYS, key)),
                "rel_excess_below": float(below["rel_excess"].iloc[0]),
                "rel_excess_at": float(at["rel_excess"].iloc[0]),
                "over_k0_below": float(below["excess_over_k0"].iloc[0]),
                "k0_rel_excess": float(below["k0_rel_excess"].iloc[0]),
            }
        )
    return pd.DataFrame(rows)


def paired_ratios(trans: pd.DataFrame) -> pd.DataFrame:
    """Softmax ÷ linear normalised excess at r*−1 on the same (K*, V*, X): columns ``ratio_k0``, ``ratio_signal``."""
    if not len(trans) or not {"linear", "softmax"} <= set(trans["teacher"]):
        return pd.DataFrame(columns=[*PAIR_KEYS, "ratio_k0", "ratio_signal"])
    lin = trans[trans["teacher"] == "linear"].set_index(PAIR_KEYS)
    soft = trans[trans["teacher"] == "softmax"].set_index(PAIR_KEYS)
    both = lin.merge(soft, left_index=True, right_index=True, suffixes=("_linear", "_softmax"))
    out = pd.DataFrame(
        {
            "linear_over_k0": both["over_k0_below_linear"],
            "softmax_over_k0": both["over_k0_below_softmax"],
            "linear_rel": both["rel_excess_below_linear"],
            "softmax_rel": both["rel_excess_below_softmax"],
        }
    )
    out["ratio_k0"] = out["softmax_over_k0"] / out["linear_over_k0"]
    out["ratio_signal"] = out["softmax_rel"] / out["linear_rel"]
    return out.reset_index()


def saturation_table(ok: pd.DataFrame) -> pd.DataFrame:
    """Per teacher, r* and spectrum: c, signal, K = 0 excess and the softmax saturation statistics."""
    cols = ["task.c", "signal", "k0_rel_excess", "row_entropy_ratio", "mean_max_attention"]
    return ok.groupby(["teacher", "task.r_star", "task.spectrum", "v"])[cols].mean().reset_index()


def analyse_e4(cfg, table: pd.DataFrame, records: list[dict]) -> Analysis:
    results = table[[c for c in RESULT_COLUMNS if c in table.columns]].copy() if len(table) else table
    ok, n_diverged = split_status(table)
    main = ok[np.isclose(ok["task.c"], cfg.task.c)] if len(ok) else ok  # the default logit scale
    trans = transition_table(main) if len(main) else pd.DataFrame()
    pairs = paired_ratios(trans)
    verdicts = [c5_with_boundary(cfg, ok, n_diverged), c6_with_boundary(cfg, ok, n_diverged)]
    tables, figures = {}, {}
    if len(ok):
        tables = {
            "transition": trans,
            "transition_pairs": pairs,
            "c6_map": c6_map_table(ok),
            "saturation": saturation_table(ok),
        }
        figures["e4_excess_vs_rank"] = plot_excess_vs_rank(cfg, main)
        if len(pairs):
            figures["e4_transition_size"] = plot_transition_size(cfg, pairs)
    notes = [
        f"Teachers with ||K*||_F = c·√d, c = {cfg.task.c:g} (off-diagonal logit std c), n = {cfg.task.n}, d = d_v = {cfg.task.d}, "
        f"σ = {cfg.task.sigma:g}. Students B1 (linear teacher) and B2 (softmax, temperature √d) trained by "
        f"{cfg.train.optimizer} (lr {cfg.train.lr:g}"
        + (f" → {cfg.train.lr_final:g} cosine" if cfg.train.lr_final else "")
        + f", init {cfg.init_scale:g}, {cfg.train.steps} steps) on "
        f"N = {cfg.train.n_samples} fixed sequences; excess risk measured on {cfg.n_test} held-out sequences "
        "(dedicated seed) against the clean target.",
        "Linear and softmax teachers of one (r*, spectrum, seed) share K*, V* and the inputs. Softmax saturation "
        "(row entropy / log n, mean max attention) is in the 'saturation' table.",
    ]
    return Analysis(results=results, verdicts=verdicts, figures=figures, tables=tables, notes=notes)


def c5_with_boundary(cfg, ok: pd.DataFrame, n_diverged: int = 0) -> Verdict:
    """C5 at the default logit scale, decided again per spectrum, V, r*, seed and at every other c
    of the C6 map (whose runs are r*-1 and r* only)."""
    main = ok[np.isclose(ok["task.c"], cfg.task.c)] if len(ok) else ok
    axes = (("spectra", "task.spectrum"), ("v_settings", "v"), ("r_stars", "task.r_star"), ("seed", "seed"))
    others = [
        ({"c": float(x)}, lambda g=g: verdict_c5(cfg, g, n_diverged))
        for x, g in (ok.groupby("task.c") if len(ok) else ())
        if not np.isclose(x, cfg.task.c)
    ]
    default = {"c": cfg.task.c, **grid_setting(cfg, "task.spectra", "v_settings", "task.r_stars")}
    return sliced_boundary(lambda r: verdict_c5(cfg, r, n_diverged), main, default, axes, "min_frac", others)


def c6_map_table(ok: pd.DataFrame) -> pd.DataFrame:
    """Per logit scale c: median softmax/linear ratio of the normalised excess at r*-1, both normalisations."""
    rows = []
    for x, g in ok.groupby("task.c"):
        pairs = paired_ratios(transition_table(g))
        if len(pairs):
            rows.append(
                {
                    "c": float(x),
                    "ratio_k0": float(pairs["ratio_k0"].median()),
                    "ratio_signal": float(pairs["ratio_signal"].median()),
                    "pairs": int(len(pairs)),
                }
            )
    return pd.DataFrame(rows)


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


def c6_with_boundary(cfg, ok: pd.DataFrame, n_diverged: int = 0) -> Verdict:
    """C6 mapped over the logit scale c and both normalisations (the default: cfg.task.c, cfg.verdict.c6_normalisation)."""
    outcomes = []
    for x, g in ok.groupby("task.c") if len(ok) else ():
        pairs = paired_ratios(transition_table(g))
        for norm in ("k0", "signal"):
            v = verdict_c6(with_option(cfg, {"verdict.c6_normalisation": norm}), g, pairs, n_diverged)
            outcomes.append(({"c": float(x), "c6_normalisation": norm}, v))
    default = [
        o
        for o in outcomes
        if np.isclose(o[0]["c"], cfg.task.c) and o[0]["c6_normalisation"] == cfg.verdict.c6_normalisation
    ]
    if not default:
        empty = verdict_c6(cfg, ok.iloc[:0] if len(ok) else ok, pd.DataFrame(), n_diverged)
        default = [({"c": cfg.task.c, "c6_normalisation": cfg.verdict.c6_normalisation}, empty)]
    others = [o for o in outcomes if o is not default[0]]
    return boundary(default[0], others, "median_ratio", c6_holds_when(outcomes))


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


def verdict_c5(cfg, ok: pd.DataFrame, n_diverged: int) -> Verdict:
    criterion = (
        f"for each teacher (linear and softmax), at least {cfg.verdict.c5_rate:.0%} of runs with r < r* have relative "
        f"excess >= {cfg.verdict.c5_margin:g}·eps_floor = {cfg.verdict.c5_margin * cfg.verdict.eps_floor:g}, and at least {cfg.verdict.c5_rate:.0%} "
        f"of runs with r >= r* have relative excess < eps_floor = {cfg.verdict.eps_floor:g} (held-out, clean target); "
        f"refuted if more than {1 - cfg.verdict.c5_rate:.0%} of runs with r < r* reach eps_floor or fewer than "
        f"{cfg.verdict.c5_rate:.0%} with r >= r* do; otherwise inconclusive (deficient, but not by the margin)"
    )
    statement = "deficiency (r < r*) and achievability (r >= r*) hold inside the attention class"
    summary = c5_summary(cfg, ok) if len(ok) else {}
    evidence = {"by_teacher": summary, "excluded_diverged": n_diverged}
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


def verdict_c6(cfg, ok: pd.DataFrame, pairs: pd.DataFrame, n_diverged: int) -> Verdict:
    norm = cfg.verdict.c6_normalisation
    what = "the K = 0 (uniform-attention) excess" if norm == "k0" else "the total signal E||f*||²/(n d_v)"
    criterion = (
        f"normalisation: excess at r = r*-1 divided by {what}. Compressed if the median over paired "
        f"(r*, spectrum, V, seed) of softmax/linear normalised excess is <= {cfg.verdict.c6_factor:g}; the boundary is "
        f"kept if at least {cfg.verdict.c5_rate:.0%} of softmax runs at r = r* reach eps_floor. Confirmed iff both."
    )
    statement = "softmax compresses the size of the transition at r = r* but keeps the boundary"
    if not len(pairs):
        return Verdict(
            "C6", "inconclusive", criterion, {"pairs": 0, "excluded_diverged": n_diverged}, "E4", statement
        )
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
        "excluded_diverged": n_diverged,
    }
    compressed = med[norm] <= cfg.verdict.c6_factor
    other = "signal" if norm == "k0" else "k0"
    evidence["other_normalisation_agrees"] = bool((med[other] <= cfg.verdict.c6_factor) == compressed)
    return Verdict(
        "C6", decide(compressed and boundary >= cfg.verdict.c5_rate), criterion, evidence, "E4", statement
    )
