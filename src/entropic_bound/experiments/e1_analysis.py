"""E1's analysis: result table, verdicts C1 and C2, and figures — pure functions of stored rows."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..plotting import (
    colour,
    figure_grid,
    label_spectrum_axes,
    legend_below,
    log_with_zero,
    mark_floor,
    panel_grid,
    plot_spectrum,
    sweep_colour,
)
from ..theory import tail_energy_curve
from .base import Analysis, Verdict, curves_by_run, decide, draw_figures, split_status
from .claim_slices import grid_setting, sliced_boundary

#: C1/C2 boundary axes: (config key, result column); each value is decided again on its own rows.
AXES = (("spectra", "task.spectrum"), ("v_settings", "v"), ("r_stars", "task.r_star"), ("seed", "seed"))

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


def analyse_e1(cfg, table: pd.DataFrame, records: list[dict]) -> Analysis:
    results = table[[c for c in RESULT_COLUMNS if c in table.columns]].copy() if len(table) else table
    ok, n_diverged = split_status(table)
    verdicts = [c1_with_boundary(cfg, ok, n_diverged), c2_with_boundary(cfg, ok, n_diverged)]
    figures = draw_figures(
        {"e1_excess_vs_rank": plot_excess_vs_rank, "e1_learned_spectra": plot_learned_spectra},
        cfg,
        ok,
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
        + f"; n = {cfg.task.n}, d = {cfg.task.d}, σ = {cfg.task.sigma:g}. Excess risk is the exact population value (SPEC §5);"
        " the closed form is the population minimum, so a finite N adds estimation error that shrinks with N.",
    ]
    return Analysis(results=results, verdicts=verdicts, figures=figures, notes=notes)


def c1_with_boundary(cfg, ok: pd.DataFrame, n_diverged: int = 0) -> Verdict:
    """C1 on the whole grid, decided again per spectrum, V setting, r* and seed."""
    default = grid_setting(cfg, "task.spectra", "v_settings", "task.r_stars")
    return sliced_boundary(lambda r: _verdict_c1(cfg, r, n_diverged), ok, default, AXES, "median_ratio")


def c2_with_boundary(cfg, ok: pd.DataFrame, n_diverged: int = 0) -> Verdict:
    """C2 on the whole grid, decided again per spectrum, V setting, r* and seed."""
    default = grid_setting(cfg, "task.spectra", "v_settings", "task.r_stars")
    return sliced_boundary(
        lambda r: _verdict_c2(cfg, r, n_diverged), ok, default, AXES, "max_rel_excess_at_or_above_r_star"
    )


def _verdict_c1(cfg, ok: pd.DataFrame, n_diverged: int) -> Verdict:
    criterion = (
        f"median over runs with r < r* of (measured excess risk / closed-form tail-energy minimum) "
        f"lies in [{cfg.verdict.c1_low:g}, {cfg.verdict.c1_high:g}]"
    )
    below = ok[(ok["rank"] < ok["task.r_star"]) & (ok["closed_form"] > 0)] if len(ok) else ok
    if not len(below):
        evidence = {"runs": 0, "excluded_diverged": n_diverged}
        return Verdict("C1", "inconclusive", criterion, evidence, "E1", "deficiency follows the tail energy")
    ratio = below["ratio_to_closed_form"].to_numpy()
    med = float(np.median(ratio))
    by_group = below.groupby(["task.spectrum", "v"])["ratio_to_closed_form"].median().round(4)
    evidence = {
        "median_ratio": med,
        "q10": float(np.quantile(ratio, 0.1)),
        "q90": float(np.quantile(ratio, 0.9)),
        "runs": int(len(below)),
        "median_by_spectrum_and_v": {f"{s}/{v}": x for (s, v), x in by_group.items()},
        "n_samples": cfg.train.n_samples,
        "excluded_diverged": n_diverged,
    }
    return Verdict(
        "C1",
        decide(cfg.verdict.c1_low <= med <= cfg.verdict.c1_high),
        criterion,
        evidence,
        "E1",
        "every rank-r < r* model has excess risk bounded below by the tail energy, and training reaches it",
    )


def _transition_ratios(ok: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for key, g in ok.groupby(["task.r_star", "task.spectrum", "v", "seed"]):
        r_star = key[0]
        at = g[g["rank"] == r_star]["excess"]
        below = g[g["rank"] == r_star - 1]["excess"] if r_star > 1 else g["signal"].iloc[:1]
        if len(at) and len(below):
            rows.append(
                {
                    "r_star": r_star,
                    "spectrum": key[1],
                    "v": key[2],
                    "seed": key[3],
                    "ratio": float(below.iloc[0] / max(at.iloc[0], 1e-300)),
                }
            )
    return pd.DataFrame(rows)


def _verdict_c2(cfg, ok: pd.DataFrame, n_diverged: int) -> Verdict:
    criterion = (
        f"every run with r >= r* has relative excess risk < eps_floor = {cfg.verdict.eps_floor:g}, and the transition "
        f"is sharp: median over (r*, spectrum, V, seed) of excess(r*-1)/excess(r*) >= {cfg.verdict.sharpness:g} "
        "(excess(0) = the clean signal)"
    )
    above = ok[ok["rank"] >= ok["task.r_star"]] if len(ok) else ok
    ratios = _transition_ratios(ok) if len(ok) else pd.DataFrame()
    if not len(above) or not len(ratios):
        evidence = {"runs": int(len(above)), "excluded_diverged": n_diverged}
        return Verdict("C2", "inconclusive", criterion, evidence, "E1", "achievability at r >= r*")
    worst = float(above["rel_excess"].max())
    med_ratio = float(ratios["ratio"].median())
    evidence = {
        "max_rel_excess_at_or_above_r_star": worst,
        "runs_at_or_above_r_star": int(len(above)),
        "runs_reaching_floor": int((above["rel_excess"] < cfg.verdict.eps_floor).sum()),
        "median_transition_ratio": med_ratio,
        "min_transition_ratio": float(ratios["ratio"].min()),
        "transition_ratio_by_r_star": ratios.groupby("r_star")["ratio"].median().round(2).to_dict(),
        "excluded_diverged": n_diverged,
    }
    ok_flag = worst < cfg.verdict.eps_floor and med_ratio >= cfg.verdict.sharpness
    return Verdict(
        "C2",
        decide(ok_flag),
        criterion,
        evidence,
        "E1",
        "a model of rank r >= r* reaches the noise floor, with a sharp transition at r = r*",
    )


def plot_excess_vs_rank(cfg, ok: pd.DataFrame, records: list[dict]):
    """Relative excess risk vs rank, one panel per (spectrum, r*), with the tail-energy curve.

    The closed form is exactly 0 at r >= r*: a symlog axis (linear band shaded near 0) draws it at 0
    rather than at an arbitrary floor. V known / V learned sit at small x offsets; the finite-N
    optimum is an open marker over each trained (filled) one so neither hides the other.
    """
    curves = curves_by_run(records)
    spectra, r_stars = sorted(ok["task.spectrum"].unique()), sorted(ok["task.r_star"].unique())
    fig, axes = panel_grid(len(spectra) * len(r_stars), width=3.4, height=2.8)
    positive = ok["rel_excess"][ok["rel_excess"] > 0]
    smallest = float(positive.min()) if len(positive) else 1e-6
    for k, (spectrum, r_star) in enumerate((s, r) for s in spectra for r in r_stars):
        ax = axes[k]
        g = ok[(ok["task.spectrum"] == spectrum) & (ok["task.r_star"] == r_star)]
        if not len(g):
            ax.set_visible(False)
            continue
        s = np.asarray(curves[g["run_id"].iloc[0]].get("teacher_singular_values", []))
        ranks = np.arange(0, cfg.task.n + 1)
        if len(s):
            tail = tail_energy_curve(s, ranks) / np.sum(s**2)
            ax.plot(ranks, tail, "-", color=colour("closed form"), lw=1.2, label="closed form (tail energy)")
        for v, dx in (("known", -0.15), ("learned", 0.15)):
            gv = g[g["v"] == v]
            if not len(gv):
                continue
            c = colour(v)
            ax.plot(gv["rank"] + dx, gv["rel_excess"], "o", ms=4, color=c, ls="", label=f"trained, V {v}")
            opt = gv["finite_sample_optimum"] / gv["signal"]
            if np.isfinite(opt).any():
                ax.plot(
                    gv["rank"] + dx,
                    opt,
                    "D",
                    ms=6,
                    mfc="none",
                    mec=c,
                    mew=0.9,
                    ls="",
                    label=f"finite-N optimum, V {v}",
                )
        ax.axvline(r_star, color="tab:red", lw=0.8, ls=":")
        mark_floor(ax, cfg.verdict.eps_floor, "ε_floor")
        log_with_zero(ax, smallest)
        ax.set_title(f"{spectrum}, r* = {r_star}", fontsize=9)
        ax.set_xlabel("student rank r")
        ax.set_ylabel("relative excess risk")
    legend_below(fig, axes, ncol=3)
    fig.suptitle("E1: excess risk vs rank (B0); the closed form is exactly 0 at r ≥ r*", fontsize=10)
    return fig


def plot_learned_spectra(cfg, ok: pd.DataFrame, records: list[dict]):
    """Final singular values of the learned A at the largest rank, against the teacher's."""
    curves = curves_by_run(records)
    spectra = sorted(ok["task.spectrum"].unique())
    fig, axes = figure_grid(1, len(spectra), width=3.6, height=2.8)
    for j, spectrum in enumerate(spectra):
        ax = axes[0][j]
        g = ok[
            (ok["task.spectrum"] == spectrum)
            & (ok["rank"] == ok["rank"].max())
            & (ok["seed"] == ok["seed"].min())
        ]
        for _, row in g.sort_values(["task.r_star", "v"]).iterrows():
            c = curves[row["run_id"]]
            plot_spectrum(
                ax,
                c.get("spectrum_A", [[]])[-1],
                marker=".",
                lw=0.8,
                color=sweep_colour(row["task.r_star"], "r_star"),
                ls="-" if row["v"] == "known" else "--",
                label=f"r* = {row['task.r_star']}, V {row['v']}",
            )
        ax.set_title(f"learned A (r = {int(ok['rank'].max())}), {spectrum}", fontsize=9)
        label_spectrum_axes(ax, "A")
    legend_below(fig, axes, ncol=4)
    return fig
