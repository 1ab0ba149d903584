"""E5's analysis: estimator-error table, verdicts C7 and C8, figures — pure functions of stored rows.

Errors are ``|estimate − r*|`` of the continuous estimate (integer estimators are integers), over
the ok runs from small init (``init_scale <= small_init_max``). Kernel estimators read the learned
``K``'s spectrum (``K_<key>``); the realised-mixer variants (``mixer_<key>`` per input then averaged,
``meanmixer_<key>`` on the mean mixer) are listed beside them but C8 ranks kernel estimators only.
"""

from __future__ import annotations

import pandas as pd

from ..framework.verdict import Analysis, ClaimContext, Verdict
from .config import KEYS, estimator_columns
from .plots import plot_error_heatmap, plot_final_spectra, plot_trajectories


def error_table(small: pd.DataFrame) -> pd.DataFrame:
    """Mean and max ``|estimate − r*|`` per (estimator column, teacher, spectrum, r*, V, init scale):
    every swept setting is a key (the runs pooled are the seeds)."""
    swept = [k for k in ("v", "init_scale") if k in small]
    rows = []
    for col in estimator_columns(small):
        for key, g in small.groupby(["teacher", "task.spectrum", "task.r_star", *swept]):
            kind, spectrum, r_star, *rest = key
            err = (g[col] - r_star).abs()
            rows.append(
                {
                    "estimator": col,
                    "teacher": kind,
                    "spectrum": spectrum,
                    "r_star": int(r_star),
                    **dict(zip(swept, rest)),
                    "mean_abs_error": float(err.mean()),
                    "max_abs_error": float(err.max()),
                    "mean_estimate": float(g[col].mean()),
                    "runs": int(len(g)),
                }
            )
    return pd.DataFrame(rows)


def identified(rows: pd.DataFrame) -> pd.Series:
    """Whether a run's data identify K: the N·n training rows span R^d (N·n >= d)."""
    return rows["train.n_samples"] * rows["task.n"] >= rows["task.d"]


def small_identified(cfg, rows: pd.DataFrame) -> pd.DataFrame:
    """The runs from small init (``<= verdict.small_init_max``) on data that identify K."""
    ident = rows[identified(rows)] if len(rows) else rows
    return ident[ident["init_scale"] <= cfg.verdict.small_init_max] if len(ident) else ident


def analyse(
    cfg, table: pd.DataFrame, rows: pd.DataFrame, context: ClaimContext, verdicts: list[Verdict]
) -> Analysis:
    """The result table, extra tables, figures and notes beside the decided ``verdicts``."""
    records = context.records
    ident = rows[identified(rows)] if len(rows) else rows
    small = small_identified(cfg, rows)
    errors = error_table(small) if len(small) else pd.DataFrame()
    tables, figures = {}, {}
    if len(errors):
        tables["estimator_errors"] = errors
        tables["c8_softmax_vs_linear"] = c8_table(small)
    if len(ident):
        figures["e5_estimators_over_training"] = plot_trajectories(cfg, ident, records, context.seeds)
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
        "teacher_mixer_* / teacher_meanmixer_* columns. Gavish-Donoho returns 0 when r* >= d/2.",
    ]
    return Analysis(results=table, verdicts=verdicts, figures=figures, tables=tables, notes=notes)


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
