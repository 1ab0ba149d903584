"""E3's analysis: the seed-median summary table, figures and notes beside the verdicts of C4 and X2
(claims.py). Diverged runs are excluded from every table and counted in every verdict.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..framework.verdict import Analysis, ClaimContext, Verdict
from .plots import plot_excess_vs_rank, plot_full_rank_bars, plot_mixers

SETTING = ["role", "task.kind", "task.operator", "rung", "v", "positional", "n_heads", "rank"]
RESULT_COLUMNS = [
    "run_id",
    "seed",
    "status",
    "diverged_step",
    *SETTING,
    "full_rank",
    "rel_excess",
    "converged",
    "relative_drop",
    "rel_excess_population",
    "excess",
    "signal",
    "mixer_rel_error",
    "A_energy_effective_rank",
    "K_energy_effective_rank",
    "K_numerical_rank",
    "train_loss",
    "steps_run",
    "train.steps",
    "train.lr",
]


def _label(value) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "-"
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def fill_settings(table: pd.DataFrame) -> pd.DataFrame:
    """Setting columns as strings (``rank`` as int); unused ones (``n_heads`` of B0, ``task.operator``
    of the teacher task) read ``"-"``."""
    out = table.copy()
    for col in SETTING:
        if col == "rank":
            out[col] = out[col].astype(int)
        else:
            out[col] = [_label(v) for v in out[col]] if col in out else "-"
    return out


def summary_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Median, min and max relative excess over seeds per setting (role, task, rung, V, positions, heads, r)."""
    if not len(rows):
        return pd.DataFrame(
            columns=[*SETTING, "rel_excess_median", "rel_excess_min", "rel_excess_max", "runs"]
        )
    g = fill_settings(rows).groupby(SETTING, sort=True)["rel_excess"]
    out = g.agg(median="median", min="min", max="max", runs="count").reset_index()
    return out.rename(
        columns={"median": "rel_excess_median", "min": "rel_excess_min", "max": "rel_excess_max"}
    )


def analyse(
    cfg, table: pd.DataFrame, rows: pd.DataFrame, context: ClaimContext, verdicts: list[Verdict]
) -> Analysis:
    """The result table, extra tables, figures and notes beside the decided ``verdicts``."""
    records = context.records
    results = table[[c for c in RESULT_COLUMNS if c in table.columns]].copy() if len(table) else table
    summary = summary_table(rows)
    figures = {}
    if len(rows):
        figures["e3_full_rank_bars"] = plot_full_rank_bars(cfg, rows)
        figures["e3_excess_vs_rank"] = plot_excess_vs_rank(cfg, summary)
        figures["e3_mixers"] = plot_mixers(cfg, rows, records)
    t, x = cfg.train, cfg.x2_train
    notes = [
        f"One fixed_operator task (n = {cfg.task.n}, d = d_v = {cfg.task.d}, r* = {cfg.task.r_star}, {cfg.task.spectrum} spectrum, "
        f"σ = {cfg.task.sigma:g}, task_seed {cfg.task.seed}); every rung sees the same task and the same data stream "
        f"({'fresh batches of ' + str(t.batch_size) if not t.n_samples else 'N = ' + str(t.n_samples)}). "
        f"Seeds vary the student initialisation only ({cfg.seeds} per setting).",
        f"Ladder and control (b): {t.optimizer} lr {t.lr:g} → {t.lr_final} cosine, {t.steps} steps, {t.dtype}. "
        f"X2: {x.optimizer} lr {x.lr:g} → {x.lr_final} cosine, {x.steps} steps (the reference study reached the floor "
        f"only after ≥ 6000 steps; shorter X2 runs can confirm but not refute).",
        f"Relative excess risk = held-out error against the clean target on {cfg.n_test} fresh samples / clean "
        "signal; B0 also stores the exact population value (rel_excess_population). Heads are averaged, so a "
        f"softmax model's mean mixer is row-stochastic whatever its head count. B2/B3 temperature: {cfg.temperature}.",
    ]
    return Analysis(
        results=results, verdicts=verdicts, figures=figures, tables={"summary": summary}, notes=notes
    )
