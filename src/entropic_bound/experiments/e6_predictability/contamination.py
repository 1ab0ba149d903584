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

The claim is the paper's comparison of its two kernel estimators: the energy rank against the
numerical rank. It is decided by intervals over the **teacher draw** (the independent unit: a draw's
pairs share K*, V*, X; keyed with the draw, since every draw re-draws its teachers): per draw the mean
degradation of each estimator over its (N, σ) cells, and a percentile bootstrap over draws. Each of
its two statistics has one boundary:

- **contamination**: the numerical rank's mean degradation against ``c8_min_contamination`` (1 rank
  unit: the numerical rank is an integer, so a softmax that moves it by less than one unit on average
  leaves most pairs' rank unchanged). The paper's premise is that the softmax contaminates the
  numerical rank (it saturates, C10 (b)); an interval wholly below the boundary refutes that premise.
- **robustness**: the ratio of the mean energy-rank degradation to the mean numerical-rank
  degradation against ``c8_ratio`` (1). The paper says the energy rank "works better" than the
  numerical rank under the softmax and names no size: the smallest effect that comparison implies
  is any reduction of the degradation, so a ratio below 1 confirms and above 1 refutes.

Both must hold (refuted when either is refuted, :func:`~entropic_bound.stats.unit_intervals.all_of`).
Every kernel estimator of the panel is ranked by its degradation (``ranking``): the energy rank need
not degrade least.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ...stats.draw_keys import DRAW as DRAW_COLUMN
from ...stats.draw_keys import with_draw
from ...stats.interval_decision import decide_by_interval
from ...stats.rank_tests import percentile_interval
from ...stats.unit_intervals import record
from ..framework.rule import Unit
from ..framework.verdict import ClaimContext, Finding, decide
from .analysis import TRUE_COLUMN, undecided_reason

KERNEL_ESTIMATORS = (
    "energy_effective_rank",
    "numerical_rank",
    "largest_gap_rank",
    "optimal_hard_threshold",
    "noise_calibrated_rank",
)
MIXER = "realised_mixer_energy_rank"
PAIR = [DRAW_COLUMN, "v", "task.n", "task.r_star", "task.spectrum", "n_samples", "task.sigma", "seed"]
DRAW = [DRAW_COLUMN, "task.n", "task.r_star", "task.spectrum", "seed"]  # one teacher draw: the unit
#: C8's unit: a draw's linear and softmax teachers share K*, V*, X, so the pair's draw is the unit.
PAIRED_DRAW = Unit("teacher draw", tuple(DRAW))
#: The bootstrap over teacher draws behind C8's intervals (fixed: the verdict is a function of the rows).
N_BOOT, BOOT_SEED = 2000, 0


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


def draw_degradations(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per teacher draw (rows) and estimator (columns): the mean over the draw's pairs of
    error(softmax) − error(linear)."""
    cols = {
        k: pairs[f"err_softmax_{k}"] - pairs[f"err_linear_{k}"]
        for k in (*KERNEL_ESTIMATORS, MIXER)
        if f"err_softmax_{k}" in pairs and f"err_linear_{k}" in pairs
    }
    return pd.DataFrame(cols).groupby([pairs[c] for c in DRAW]).mean().reset_index(drop=True)


def bootstrap_draws(per_draw: pd.DataFrame, *, n_boot: int, seed: int) -> dict[str, np.ndarray]:
    """Bootstrap over teacher draws: per estimator, the mean degradation of each resample
    ``(n_boot,)``, every estimator on the same resampled draws (so their ratio is paired)."""
    values = per_draw.to_numpy(float)  # (draws, estimators)
    idx = np.random.default_rng(seed).integers(0, len(values), size=(n_boot, len(values)))
    with warnings.catch_warnings():  # an estimator undefined on every drawn draw (the mixer at n > d): NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        means = np.nanmean(values[idx], axis=1)  # (n_boot, estimators)
    return {k: means[:, j] for j, k in enumerate(per_draw.columns)}


def ratio_boots(energy: np.ndarray, numerical: np.ndarray) -> np.ndarray:
    """energy / numerical degradation per resample; +inf where the numerical rank did not degrade
    (no contamination for robustness to show against in that resample)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(numerical > 0, energy / np.where(numerical > 0, numerical, 1.0), np.inf)


def _quantile_interval(boots: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval by order statistics, so +inf resamples (a ratio undefined there, which is
    not robust) take part without inf − inf arithmetic."""
    b = np.sort(boots[~np.isnan(boots)])
    if not len(b):
        return float("nan"), float("nan")
    tail = (1 - level) / 2
    lo, hi = int(np.floor(tail * (len(b) - 1))), int(np.ceil((1 - tail) * (len(b) - 1)))
    return float(b[lo]), float(b[hi])


def ranking(table: dict[str, dict], per_draw: pd.DataFrame, boots: dict[str, np.ndarray]) -> list[dict]:
    """Every kernel estimator of the panel, least degraded first: the pair-mean degradation, the
    draw-mean and its 95 % interval over teacher draws."""
    rows = []
    for k in (e for e in KERNEL_ESTIMATORS if e in table and e in per_draw):
        rows.append(
            {
                "estimator": k,
                "degradation": table[k]["degradation"],
                "draw_mean_degradation": round(float(per_draw[k].mean()), 4),
                "degradation_ci": [round(v, 4) for v in percentile_interval(boots[k])],
            }
        )
    return sorted(rows, key=lambda r: r["degradation"])


def c8_criterion(cfg) -> str:
    v = cfg.verdict
    return (
        f"softmax_linearised at the largest N, sigma <= {v.sigma_max:g}, V {v.c10_v}; pairs of linear and softmax teachers "
        "with the same K*, V*, X. Error of an estimator on the linearised kernel = |estimate − its value on K*|; "
        "degradation = error(softmax) − error(linear), averaged per teacher draw (the unit: n, r*, spectrum, seed, draw) "
        f"over its (N, sigma) cells; 95% bootstrap over draws ({N_BOOT} resamples). Two statistics, one boundary each, "
        f"both must hold: (1) the paper's numerical rank is contaminated: its mean degradation against {v.c8_min_contamination:g} "
        "rank unit(s) (an integer rank moved by less than one unit on average is mostly unchanged; the paper's premise, "
        "C10 (b)); (2) the paper's comparison: the ratio of the energy effective rank's mean degradation to the numerical "
        f"rank's against {v.c8_ratio:g} (the paper says the energy rank works better and names no size: any reduction). "
        "Each holds when its interval lies on the claim's side of its boundary (contamination at or above, ratio at or "
        "below), fails when it lies on the other side; confirmed iff both hold, refuted iff either fails, else "
        "inconclusive. Every kernel estimator is ranked by its degradation beside it"
    )


def _pairs(cfg, rows: pd.DataFrame) -> pd.DataFrame | None:
    """The (linear, softmax) pairs C8 reads: softmax_linearised, V setting c10_v, largest N, sigma <= sigma_max."""
    if not len(rows):
        return None
    rows = with_draw(rows)
    linearised = rows[(rows["method"] == "softmax_linearised") & (rows["v"] == cfg.verdict.c10_v)]
    if not len(linearised):
        return None
    top = linearised["n_samples"] == linearised["n_samples"].max()
    linearised = linearised[top & (linearised["task.sigma"] <= cfg.verdict.sigma_max + 1e-12)]
    if not {"linear", "softmax"} <= set(linearised["teacher"]):
        return None
    pairs = paired_errors(linearised)
    return pairs if len(pairs) else None


def verdict_c8(cfg, rows: pd.DataFrame, context: ClaimContext) -> Finding:
    """C8 on E6's softmax_linearised pairs (module docstring)."""
    crit, pairs = c8_criterion(cfg), _pairs(cfg, rows)
    table = degradation_table(pairs) if pairs is not None else {}
    evidence: dict = {
        "pairs": 0 if pairs is None else int(len(pairs)),
        "teacher_draws": 0 if pairs is None else int(pairs[DRAW].drop_duplicates().shape[0]),
        "by_estimator": table,
    }
    if "energy_effective_rank" not in table or "numerical_rank" not in table:
        evidence["reason"] = "no linear/softmax pairs of softmax_linearised predictions with both estimators"
        return Finding("inconclusive", crit, evidence)
    per_draw = draw_degradations(pairs)
    boots = bootstrap_draws(per_draw, n_boot=N_BOOT, seed=BOOT_SEED)
    energy, numerical = per_draw["energy_effective_rank"], per_draw["numerical_rank"]
    ranked = ranking(table, per_draw, boots)
    contamination = percentile_interval(boots["numerical_rank"])
    ratio = float(energy.mean() / numerical.mean()) if numerical.mean() > 0 else float("nan")
    units = dict(unit=PAIRED_DRAW.name, units=int(len(per_draw)))
    decisions = {
        "energy_to_numerical_ratio": decide_by_interval(
            ratio,
            _quantile_interval(ratio_boots(boots["energy_effective_rank"], boots["numerical_rank"])),
            cfg.verdict.c8_ratio,
            higher_is_better=False,
            **units,
        ),
        "numerical_rank_contaminated": decide_by_interval(
            float(numerical.mean()), contamination, cfg.verdict.c8_min_contamination, **units
        ),
    }
    evidence.update(
        {
            "energy_degradation": table["energy_effective_rank"]["degradation"],
            "numerical_rank_degradation": table["numerical_rank"]["degradation"],
            "numerical_rank_degradation_ci": list(contamination),
            "realised_mixer_degradation": table.get(MIXER, {}).get("degradation"),
            "draws_energy_less_degraded": float((energy < numerical).mean()),
            "energy_to_numerical_ratio": ratio,
            "ranking": ranked,
            "least_degraded_kernel_estimator": ranked[0]["estimator"],
            "energy_rank_place": 1 + [r["estimator"] for r in ranked].index("energy_effective_rank"),
        }
    )
    verdict = decide(record(evidence, decisions))
    if verdict == "inconclusive":
        evidence["reason"] = undecided_reason(evidence, "teacher draws")
    return Finding(verdict, crit, evidence)


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
    ratio = "energy_to_numerical_ratio"  # a record of one decision has no condition: the ratio's
    d = (e.get("decisions") or {}).get(ratio) or e.get("decision")
    if d and d.get("condition", ratio) == ratio:
        lo, hi = d["interval"]
        text += (
            f"; energy/numerical degradation ratio {fmt.number(d['statistic'])} (95% CI {fmt.number(lo)}–"
            f"{fmt.number(hi)} over teacher draws)"
        )
    if e.get("ranking"):
        order = ", ".join(f"{r['estimator']} {fmt.number(r['degradation'])}" for r in e["ranking"])
        text += f"; every estimator, least degraded first: {order}"
    return text + f"; {e['pairs']} pairs on {e['teacher_draws']} teacher draws"
