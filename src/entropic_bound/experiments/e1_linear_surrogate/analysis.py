"""E1's analysis: the result table, figures and notes beside the verdicts of C1 and C2 (claims.py)."""

from __future__ import annotations

import pandas as pd

from ..framework.decision import draw_figures
from ..framework.verdict import Analysis, ClaimContext, Verdict
from .plots import plot_excess_vs_rank, plot_learned_spectra

RESULT_COLUMNS = [
    "run_id",
    "seed",
    "status",
    "diverged_step",
    "task.r_star",
    "task.spectrum",
    "v",
    "rank",
    "train.n_samples",
    "excess",
    "rel_excess",
    "closed_form",
    "closed_form_rel",
    "ratio_to_closed_form",
    "finite_sample_optimum",
    "train_loss",
    "steps_run",
    "A_numerical_rank",
    "A_energy_effective_rank",
    "A_largest_gap_rank",
]


def analyse(
    cfg, table: pd.DataFrame, rows: pd.DataFrame, context: ClaimContext, verdicts: list[Verdict]
) -> Analysis:
    """The result table, extra tables, figures and notes beside the decided ``verdicts``."""
    records = context.records
    results = table[[c for c in RESULT_COLUMNS if c in table.columns]].copy() if len(table) else table
    figures = draw_figures(
        {"e1_excess_vs_rank": plot_excess_vs_rank, "e1_learned_spectra": plot_learned_spectra},
        cfg,
        rows,
        records,
    )
    notes = [
        f"Students trained with {cfg.train.optimizer} (lr {cfg.train.lr:g}"
        + (f" → {cfg.train.lr_final:g} cosine" if cfg.train.lr_final else "")
        + f", {cfg.train.steps} steps) on "
        + (
            f"a fixed data set of N = {cfg.train.n_samples} sequences"
            if cfg.train.n_samples
            else "fresh batches"
        )
        + f"; n = {cfg.task.n}, d = {cfg.task.d}, σ = {cfg.task.sigma:g}. Excess risk is the exact population value;"
        " the closed form is the population minimum, so a finite N adds estimation error that shrinks with N.",
    ]
    return Analysis(results=results, verdicts=verdicts, figures=figures, notes=notes)
