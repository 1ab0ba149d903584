"""C8 where the softmax contaminates the estimate: E6's data-only linearised kernels, linear vs softmax teacher.

The linear and the softmax teacher of one data set share ``K*``, ``V*`` and ``X`` (experiment.py), so a
pair of ``softmax_linearised`` predictions differs only in the softmax. The linearised kernel of the
softmax teacher carries the softmax's curvature as structured residue: that is the contamination C8
speaks of. Each estimator's error is ``|estimate(K̂_lin) − estimate(K*)|`` — against its own value on
the ground truth, so an estimator's bias on a clean kernel (the energy rank reads a geometric
spectrum below r*) is not counted as softmax-induced — and its **degradation** is the mean over pairs
of ``error(softmax) − error(linear)``.

The check has something to detect only where the softmax visibly contaminates the estimate: the
paper's numerical rank (1 % of s_1) counts every contaminated direction, so its degradation is the
contamination's size (``numerical_rank_degradation``; >= ``c8_min_contamination`` rank units, else
"nothing to detect"). The realised-mixer energy rank (recovered per input when V is known and n <=
min(d, d_v)) is reported beside it as an in-experiment control; E5's learned kernels (equal to K*
under both teachers: no contamination) stay as E5's ``c8_softmax_vs_linear`` table.
"""

from __future__ import annotations

import pandas as pd

from ..verdict import ClaimContext, Verdict
from .analysis import TRUE_COLUMN

KERNEL_ESTIMATORS = (
    "energy_effective_rank",
    "numerical_rank",
    "largest_gap_rank",
    "optimal_hard_threshold",
    "noise_calibrated_rank",
)
MIXER = "realised_mixer_energy_rank"
PAIR = ["v", "task.n", "task.r_star", "task.spectrum", "n_samples", "task.sigma", "seed"]
DRAW = ["task.n", "task.r_star", "task.spectrum", "seed"]  # one teacher draw: the independent unit


def _truth(key: str) -> str:
    return TRUE_COLUMN.get(key, f"true_{key}")


def paired_errors(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (linear, softmax) pair of softmax_linearised predictions on the same data set:
    ``err_<teacher>_<key>`` (vs the estimator on the truth) and ``rerr_<teacher>_<key>`` (vs r*)."""
    keys = [k for k in (*KERNEL_ESTIMATORS, MIXER) if f"est_{k}" in rows and _truth(k) in rows]
    frames = {}
    for kind in ("linear", "softmax"):
        t = rows[rows["teacher"] == kind]
        cols = {}
        for k in keys:
            cols[f"err_{kind}_{k}"] = (t[f"est_{k}"] - t[_truth(k)]).abs()
            cols[f"rerr_{kind}_{k}"] = (t[f"est_{k}"] - t["task.r_star"]).abs()
        frames[kind] = pd.DataFrame(cols).set_index(pd.MultiIndex.from_frame(t[PAIR]))
    both = frames["linear"].join(frames["softmax"], how="inner")
    return both.dropna(how="all").reset_index()


def _mean(pairs: pd.DataFrame, col: str) -> float | None:
    return float(pairs[col].mean()) if col in pairs and pairs[col].notna().any() else None


def degradation_table(pairs: pd.DataFrame) -> dict[str, dict]:
    """Per estimator: mean error under each teacher (vs its value on the truth and vs r*) and the degradation."""
    out = {}
    for k in (*KERNEL_ESTIMATORS, MIXER):
        lin, soft = _mean(pairs, f"err_linear_{k}"), _mean(pairs, f"err_softmax_{k}")
        if lin is None or soft is None:
            continue
        out[k] = {
            "error_linear": round(lin, 4),
            "error_softmax": round(soft, 4),
            "degradation": round(soft - lin, 4),
            "error_vs_r_star_linear": round(_mean(pairs, f"rerr_linear_{k}"), 4),
            "error_vs_r_star_softmax": round(_mean(pairs, f"rerr_softmax_{k}"), 4),
        }
    return out


def _draw_share(pairs: pd.DataFrame) -> float | None:
    """Share of teacher draws (the independent unit) on which the energy rank degrades less than the
    numerical rank (per-draw means over that draw's (N, σ) cells)."""
    cols = {}
    for k in ("energy_effective_rank", "numerical_rank"):
        a, b = f"err_softmax_{k}", f"err_linear_{k}"
        if a not in pairs or b not in pairs:
            return None
        cols[k] = pairs[a] - pairs[b]
    per_draw = pd.DataFrame(cols).groupby([pairs[c] for c in DRAW]).mean()
    return float((per_draw["energy_effective_rank"] < per_draw["numerical_rank"]).mean())


def c8_criterion(cfg) -> str:
    v = cfg.verdict
    return (
        f"softmax_linearised at the largest N, sigma <= {v.sigma_max:g}, V {v.c10_v}; pairs of linear and softmax teachers "
        "with the same K*, V*, X. Error of an estimator on the linearised kernel = |estimate − its value on K*|; "
        "degradation = mean over pairs of error(softmax) − error(linear). Something to detect iff the paper's numerical "
        f"rank degrades by >= {v.c8_min_contamination:g} rank unit(s) (else inconclusive: nothing to detect). Then "
        f"confirmed iff the paper's energy effective rank degrades by <= {v.c8_ratio:g} × the numerical rank's; "
        "refuted iff it degrades at least as much as the numerical rank; else inconclusive"
    )


def verdict_c8(cfg, rows: pd.DataFrame, context: ClaimContext) -> Verdict:
    """C8 on E6's softmax_linearised pairs (module docstring)."""
    statement = "the energy effective rank is the estimator robust to softmax-induced noise"
    crit = c8_criterion(cfg)
    linearised = (
        rows[(rows["method"] == "softmax_linearised") & (rows["v"] == cfg.verdict.c10_v)]
        if len(rows)
        else rows
    )
    if len(linearised):
        top = linearised["n_samples"] == linearised["n_samples"].max()
        linearised = linearised[top & (linearised["task.sigma"] <= cfg.verdict.sigma_max + 1e-12)]
    pairs = (
        paired_errors(linearised)
        if len(linearised) and {"linear", "softmax"} <= set(linearised["teacher"])
        else None
    )
    table = degradation_table(pairs) if pairs is not None and len(pairs) else {}
    evidence: dict = {
        "pairs": 0 if pairs is None else int(len(pairs)),
        "teacher_draws": 0 if pairs is None else int(pairs[DRAW].drop_duplicates().shape[0]),
        "by_estimator": table,
    }
    if "energy_effective_rank" not in table or "numerical_rank" not in table:
        return Verdict("C8", "inconclusive", crit, evidence, "E6", statement)
    energy, numerical = table["energy_effective_rank"]["degradation"], table["numerical_rank"]["degradation"]
    evidence.update(
        {
            "energy_degradation": energy,
            "numerical_rank_degradation": numerical,
            "realised_mixer_degradation": table.get(MIXER, {}).get("degradation"),
            "draws_energy_less_degraded": _draw_share(pairs),
            "least_degraded_kernel_estimator": min(
                (k for k in table if k != MIXER), key=lambda k: table[k]["degradation"]
            ),
        }
    )
    if not numerical >= cfg.verdict.c8_min_contamination:
        evidence["reason"] = (
            f"the numerical rank degrades by {numerical:.3g} < {cfg.verdict.c8_min_contamination:g} rank unit(s): "
            "no softmax contamination for robustness to show against"
        )
        return Verdict("C8", "inconclusive", crit, evidence, "E6", statement)
    if energy <= cfg.verdict.c8_ratio * numerical:
        verdict = "confirmed"
    elif energy >= numerical:
        verdict = "refuted"
    else:
        verdict = "inconclusive"
    return Verdict("C8", verdict, crit, evidence, "E6", statement)


def c8_sentence(e: dict, fmt) -> str:
    t = e["by_estimator"]

    def part(k: str, name: str) -> str:
        x = t[k]
        return (
            f"{name} {fmt.number(x['error_linear'])} → {fmt.number(x['error_softmax'])} "
            f"(degradation {fmt.number(x['degradation'])})"
        )

    text = "error vs the estimator on K*, linear → softmax teacher: " + part(
        "energy_effective_rank", "energy rank"
    )
    text += "; " + part("numerical_rank", "numerical rank (the contamination)")
    if MIXER in t:
        text += "; control, " + part(MIXER, "realised-mixer energy rank")
    return text + f"; {e['pairs']} pairs on {e['teacher_draws']} teacher draws"
