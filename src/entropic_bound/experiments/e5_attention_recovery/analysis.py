"""E5's analysis: estimator-error table, verdicts C7 and C8, figures — pure functions of stored rows.

Errors are ``|estimate − r*|`` of the continuous estimate (integer estimators are integers), over
the ok runs from small init (``init_scale <= small_init_max``). Kernel estimators read the learned
``K``'s spectrum (``K_<key>``); the realised-mixer variants (``mixer_<key>`` per input then averaged,
``meanmixer_<key>`` on the mean mixer) are listed beside them but C8 ranks kernel estimators only.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..base import Analysis, Verdict, decide, split_status
from ..claim_slices import grid_setting, sliced_boundary, with_option
from .config import ENERGY, KEYS, estimator_columns
from .plots import plot_error_heatmap, plot_final_spectra, plot_trajectories


def error_table(small: pd.DataFrame) -> pd.DataFrame:
    """Mean and max ``|estimate − r*|`` per (estimator column, teacher, spectrum, r*)."""
    rows = []
    for col in estimator_columns(small):
        for (kind, spectrum, r_star), g in small.groupby(["teacher", "task.spectrum", "task.r_star"]):
            err = (g[col] - r_star).abs()
            rows.append(
                {
                    "estimator": col,
                    "teacher": kind,
                    "spectrum": spectrum,
                    "r_star": int(r_star),
                    "mean_abs_error": float(err.mean()),
                    "max_abs_error": float(err.max()),
                    "mean_estimate": float(g[col].mean()),
                    "runs": int(len(g)),
                }
            )
    return pd.DataFrame(rows)


def estimator_ranking(errors: pd.DataFrame, teacher: str) -> pd.Series:
    """Kernel estimators sorted by mean |error| over ``teacher``'s cells (best first)."""
    g = errors[(errors["teacher"] == teacher) & errors["estimator"].str.startswith("K_")]
    return g.groupby("estimator")["mean_abs_error"].mean().sort_values()


def identified(ok: pd.DataFrame) -> pd.Series:
    """Whether a run's data identify K: the N·n training rows span R^d (N·n >= d)."""
    return ok["train.n_samples"] * ok["task.n"] >= ok["task.d"]


def analyse_e5(cfg, table: pd.DataFrame, records: list[dict]) -> Analysis:
    ok, n_diverged = split_status(table)
    ident = ok[identified(ok)] if len(ok) else ok
    small = ident[ident["init_scale"] <= cfg.verdict.small_init_max] if len(ident) else ident
    errors = error_table(small) if len(small) else pd.DataFrame()
    verdicts = [c7_with_boundary(cfg, ok, n_diverged), c8_with_boundary(cfg, small, n_diverged)]
    tables, figures = {}, {}
    if len(errors):
        tables["estimator_errors"] = errors
        tables["c8_softmax_vs_linear"] = c8_table(small)
    if len(ident):
        figures["e5_estimators_over_training"] = plot_trajectories(cfg, ident, records)
        figures["e5_final_spectra"] = plot_final_spectra(cfg, ident, records)
    if len(errors):
        figures["e5_estimator_error_heatmap"] = plot_error_heatmap(errors)
    notes = [
        f"Students of width r = d = {cfg.task.d} (B1 for the linear teacher, B2 for the softmax teacher), V "
        f"{'/'.join(cfg.v_settings)}, trained by {cfg.train.optimizer} (lr {cfg.train.lr:g}, {cfg.train.steps} "
        f"full-batch steps) on N = {cfg.train.n_samples} sequences (n = {cfg.task.n}, σ = {cfg.task.sigma:g}, c = {cfg.task.c:g}); "
        f"init scales {', '.join(f'{s:g}' for s in cfg.init_scales)} (small: <= {cfg.verdict.small_init_max:g}).",
        f"C7 contrast: the same students on N in {list(cfg.c7_sample_counts)} sequences (N·n < d = {cfg.task.d}: the "
        f"data do not identify K outside the span of their rows), GD lr {cfg.c7_lr:g}, {cfg.c7_steps} steps.",
        f"Realised-mixer ranks use {cfg.n_mixer} held-out inputs; the teacher's own realised-mixer ranks are the "
        "teacher_mixer_* / teacher_meanmixer_* columns. Gavish-Donoho returns 0 when r* >= d/2 (SPEC §4).",
    ]
    return Analysis(results=table, verdicts=verdicts, figures=figures, tables=tables, notes=notes)


def _recovery_rate(g: pd.DataFrame, col: str, tol: float) -> float | None:
    return float(((g[col] - g["task.r_star"]).abs() <= tol).mean()) if len(g) else None


def learned(cfg, ok: pd.DataFrame) -> pd.Series:
    """Runs that fit their training data: final train loss <= c7_fit·max(σ², 1e-4)."""
    return ok["train_loss"] <= cfg.verdict.c7_fit * np.maximum(ok["task.sigma"] ** 2, 1e-4)


def _low_rank_rate(g: pd.DataFrame, col: str, tol: float) -> float | None:
    return float((g[col] <= g["task.r_star"] + tol).mean()) if len(g) else None


def c7_cells(cfg, g: pd.DataFrame) -> dict:
    """One teacher's numbers (learned runs only): recovery from small init on identified data, and the
    low-rank rate (estimate <= r* + tolerance) of small and large init where K is under-identified."""
    col, tol = f"K_{cfg.verdict.c7_estimator}", cfg.verdict.c7_tolerance
    fit = g[learned(cfg, g)]
    small, ident = fit["init_scale"] <= cfg.verdict.small_init_max, identified(fit)
    low_small = _low_rank_rate(fit[small & ~ident], col, tol)
    low_large = _low_rank_rate(fit[~small & ~ident], col, tol)
    return {
        "small_init_identified_recovery": _recovery_rate(fit[small & ident], col, tol),
        "large_init_identified_recovery": _recovery_rate(fit[~small & ident], col, tol),
        "small_init_under_identified_low_rank": low_small,
        "large_init_under_identified_low_rank": low_large,
        "contrast": None if low_small is None or low_large is None else low_small - low_large,
        "median_estimate_small_under": float(fit[small & ~ident][col].median())
        if (small & ~ident).any()
        else None,
        "median_estimate_large_under": float(fit[~small & ~ident][col].median())
        if (~small & ~ident).any()
        else None,
        "median_rel_excess_identified": float(fit[ident]["rel_excess"].median()) if ident.any() else None,
        "runs": int(len(g)),
        "set_aside_not_learned": int(len(g) - len(fit)),
    }


def c7_decision(cfg, cells: dict) -> bool | None:
    """True: small init recovers r* on identified data and the under-identified contrast is >= c7_contrast;
    False: small init misses r* on identified data, or small init is no more often low rank than large init
    although large init leaves room for the contrast."""
    recovery, contrast = cells["small_init_identified_recovery"], cells["contrast"]
    if recovery is not None and recovery < cfg.verdict.c7_rate:
        return False
    # where large init is itself low rank (r* near d), no contrast of c7_contrast can show: no power
    large = cells["large_init_under_identified_low_rank"]
    if contrast is not None and large is not None and large > 1 - cfg.verdict.c7_contrast:
        return None
    if contrast is not None and contrast <= 0:
        return False
    if recovery is None or contrast is None:
        return None
    return True if contrast >= cfg.verdict.c7_contrast else None


def verdict_c7(cfg, ok: pd.DataFrame, n_diverged: int = 0) -> Verdict:
    col = f"K_{cfg.verdict.c7_estimator}"
    criterion = (
        f"implicit bias, per teacher, on runs that fit their data (train loss <= {cfg.verdict.c7_fit:g}·max(σ², 1e-4)), "
        f"estimator {cfg.verdict.c7_estimator} of K: (i) on data that identify K (N·n >= d) GD from small init (<= "
        f"{cfg.verdict.small_init_max:g}) has |estimate - r*| <= {cfg.verdict.c7_tolerance:g} in >= {cfg.verdict.c7_rate:.0%} of runs; (ii) on "
        f"data that do not (N·n < d) the fraction of small-init runs with a low-rank answer (estimate <= r* + "
        f"{cfg.verdict.c7_tolerance:g}) exceeds large init's by >= {cfg.verdict.c7_contrast:g}. Confirmed iff (i) and (ii) for every "
        "teacher; refuted iff (i) fails or small init is no more often low rank than large init while large init is low rank in at most "
        f"{1 - cfg.verdict.c7_contrast:.0%} of its runs (else the contrast has no room); else inconclusive"
    )
    statement = (
        "GD from small init on an over-parameterised attention student learns a kernel of rank r* (implicit bias: "
        "where the data do not identify K, small init still finds a low-rank kernel and large init does not)"
    )
    if not len(ok) or col not in ok:
        ev = {"runs": 0, "excluded_diverged": n_diverged}
        return Verdict("C7", "inconclusive", criterion, ev, "E5", statement)
    by = {kind: c7_cells(cfg, g) for kind, g in ok.groupby("teacher")}
    decisions = {kind: c7_decision(cfg, c) for kind, c in by.items()}
    contrasts = [c["contrast"] for c in by.values() if c["contrast"] is not None]
    evidence = {
        "estimator": cfg.verdict.c7_estimator,
        "tolerance": cfg.verdict.c7_tolerance,
        "by_teacher": by,
        "decision_by_teacher": decisions,
        "min_contrast": min(contrasts) if contrasts else None,
        "excluded_diverged": n_diverged,
    }
    values = list(decisions.values())
    verdict = "refuted" if False in values else ("confirmed" if values and all(values) else "inconclusive")
    return Verdict("C7", verdict, criterion, evidence, "E5", statement)


C7_ESTIMATORS = ("energy_threshold_rank_99", "energy_effective_rank", "numerical_rank", "largest_gap_rank")
AXES = (("spectra", "task.spectrum"), ("r_stars", "task.r_star"), ("seed", "seed"))


def c7_with_boundary(cfg, ok: pd.DataFrame, n_diverged: int = 0) -> Verdict:
    """C7 decided again per spectrum, r*, seed and with the other estimators of K's rank."""
    options = [
        (
            {"c7_estimator": k},
            lambda k=k: verdict_c7(with_option(cfg, {"verdict.c7_estimator": k}), ok, n_diverged),
        )
        for k in C7_ESTIMATORS
        if k != cfg.verdict.c7_estimator
    ]
    default = grid_setting(cfg, "task.spectra", "task.r_stars", "verdict.c7_estimator")
    return sliced_boundary(
        lambda r: verdict_c7(cfg, r, n_diverged), ok, default, AXES, "min_contrast", options
    )


PAPER_C8 = ("numerical_rank", "energy_effective_rank")
PAIRING = ["task.r_star", "task.spectrum", "v", "init_scale", "seed"]


def c8_table(small: pd.DataFrame) -> pd.DataFrame:
    """Per estimator and operator: mean |error| under each teacher on paired (K*, spectrum, init, seed) cells.

    Kernel error: ``|estimate(K) − r*|``; realised error: ``|estimate(M_student) − estimate(M_teacher)|``
    (realised mixers averaged over held-out inputs), so each operator is judged against its own truth.
    """
    teachers = set(small["teacher"]) if len(small) else set()
    if not {"linear", "softmax"} <= teachers:
        return pd.DataFrame()
    lin = small[small["teacher"] == "linear"].set_index(PAIRING)
    soft = small[small["teacher"] == "softmax"].set_index(PAIRING)
    common = lin.index.intersection(soft.index)
    rows = []
    for key in KEYS:
        for op, est, truth in (
            ("kernel", f"K_{key}", None),
            ("realised", f"mixer_{key}", f"teacher_mixer_{key}"),
        ):
            if est not in small or (truth and truth not in small):
                continue
            err = {}
            for kind, t in (("linear", lin), ("softmax", soft)):
                t = t.loc[common]
                ref = t[truth] if truth else t.index.get_level_values("task.r_star")
                err[kind] = float((t[est] - ref).abs().mean())
            rows.append(
                {
                    "estimator": key,
                    "operator": op,
                    "paper_estimator": key in PAPER_C8,
                    "error_linear": err["linear"],
                    "error_softmax": err["softmax"],
                    "softmax_minus_linear": err["softmax"] - err["linear"],
                    "pairs": int(len(common)),
                }
            )
    return pd.DataFrame(rows)


def verdict_c8(cfg, small: pd.DataFrame, n_diverged: int = 0) -> Verdict:
    m = cfg.verdict.c8_margin
    criterion = (
        "paired linear/softmax teachers with the same K*, spectrum, init and seed (small init, identified data): the "
        "error of the paper's energy effective rank on the learned kernel (vs r*) and on the realised mixers (vs the "
        f"teacher's) is no worse under the softmax teacher than under the linear one (softmax − linear <= {m:g}), and "
        f"head to head its degradation is at most the paper's numerical rank's + {m:g}. Confirmed iff both; refuted "
        "iff either fails"
    )
    statement = "the energy effective rank is the estimator robust to softmax"
    table = c8_table(small)
    if not len(table):
        ev = {"pairs": 0, "excluded_diverged": n_diverged}
        return Verdict("C8", "inconclusive", criterion, ev, "E5", statement)
    deg = table.set_index(["estimator", "operator"])["softmax_minus_linear"]
    energy = {op: float(deg[(ENERGY, op)]) for op in ("kernel", "realised") if (ENERGY, op) in deg}
    numerical = {op: float(deg[("numerical_rank", op)]) for op in energy if ("numerical_rank", op) in deg}
    ours = table[(table["operator"] == "kernel") & ~table["paper_estimator"]].sort_values("error_softmax")
    best = ours.iloc[0] if len(ours) else None
    evidence = {
        "energy_degradation_kernel": energy.get("kernel"),
        "energy_degradation": energy,
        "numerical_rank_degradation": numerical,
        "errors": {
            f"{r['estimator']}/{r['operator']}": {
                "linear": round(r["error_linear"], 4),
                "softmax": round(r["error_softmax"], 4),
                "paper": bool(r["paper_estimator"]),
            }
            for _, r in table.iterrows()
        },
        "our_best_under_softmax": None
        if best is None
        else {
            "estimator": best["estimator"],
            "tied": [
                e
                for e, x in zip(ours["estimator"], ours["error_softmax"])
                if x <= best["error_softmax"] + 1e-9
            ],
            "kernel_error_softmax": float(best["error_softmax"]),
            "degradation": float(best["softmax_minus_linear"]),
        },
        "pairs": int(table["pairs"].iloc[0]),
        "excluded_diverged": n_diverged,
    }
    if len(energy) < 2 or len(numerical) < 2:
        return Verdict("C8", "inconclusive", criterion, evidence, "E5", statement)
    robust = all(v <= m for v in energy.values())
    head = all(energy[op] <= numerical[op] + m for op in energy)
    evidence["energy_robust"], evidence["energy_at_least_as_robust_as_numerical"] = robust, head
    return Verdict("C8", decide(robust and head), criterion, evidence, "E5", statement)


def c8_with_boundary(cfg, small: pd.DataFrame, n_diverged: int = 0) -> Verdict:
    """C8 decided again per spectrum, r* and seed."""
    default = grid_setting(cfg, "task.spectra", "task.r_stars")
    return sliced_boundary(
        lambda r: verdict_c8(cfg, r, n_diverged), small, default, AXES, "energy_degradation_kernel"
    )
