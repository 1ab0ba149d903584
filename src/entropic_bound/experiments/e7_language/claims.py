"""E7's claims C11-C13: each criterion, its report sentence and its robustness grid.

- **C11** (paper, App. B: the measured static kernel rank *anti*-correlates with predicted task
  complexity). One point per corpus: complexity (the chosen measure) and the final head-mean
  kernel rank averaged over the corpus's learned seeds. Spearman rho with a two-stage bootstrap
  interval (corpora resampled, then each corpus's seeds). Two-sided: confirmed if the interval
  lies below 0, refuted if it lies above 0, inconclusive otherwise or with too few corpora.
- **C12** (the rank tracks optimisation progress, the loss, not complexity). Pooled over learned
  runs and checkpoints t >= 1: the partial Spearman correlation of the kernel rank with the
  optimisation progress (L_0 - L_t)/(L_0 - L_ref) given controls that also drift over training
  (the step, the QK weight norm), with a bootstrap interval over runs. Confirmed when the interval
  excludes 0, |rho| reaches min_abs_rho and exceeds |rho(rank, complexity | controls)|;
  refuted when the interval lies inside (-min_abs_rho, min_abs_rho) (no tracking beyond the
  controls) or complexity is tracked more strongly; inconclusive otherwise.
- **C13** (structural priors dominate the realised mixers). Heads categorised by
  :func:`entropic_bound.lm.structure.head_categories`; the share of content-independent heads with
  a Wilson 95% interval: confirmed if the interval lies above share, refuted if below,
  inconclusive otherwise.

Each claim's robustness grid re-decides it under other settings of its config keys (:func:`grids`)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ...lm.structure import CATEGORIES, STRUCTURAL
from ..base import ClaimContext, Verdict, decide
from ..claim import Claim, Formats, Setting, confirmed_settings_wording, needs_rows
from ..claim_slices import with_option
from .analysis import categorise, corpus_table, progress_points
from .config import COMPLEXITY_MEASURES
from .statistics import cluster_partials, corpus_bootstrap, two_sided, wilson

C11_STATEMENT = "static kernel rank anti-correlates with predicted task complexity"


C12_STATEMENT = "the static kernel rank tracks optimisation progress (loss), not task complexity"


C13_STATEMENT = "structural priors (sink, locality, position) dominate the realised mixers"


def c11_on_corpora(
    corpora: pd.DataFrame, *, criterion_info: dict, n_boot: int, seed: int, min_corpora: int
) -> Verdict:
    """C11 from one row per corpus: ``name, kind, seeds, complexity_bits, rank, seed_ranks`` (+ extras)."""
    criterion = (
        f"Spearman rho between the predicted complexity ({criterion_info['measure']}) and the final head-mean "
        f"{criterion_info['estimator']} of the {criterion_info['kernel']} kernel W_Q W_K^T over corpora (learned runs "
        f"only); 95% two-stage bootstrap ({n_boot} resamples of corpora, then seeds): confirmed if the interval lies "
        f"below 0, refuted if above 0, inconclusive otherwise or with fewer than {min_corpora} corpora"
    )
    usable = (
        corpora[np.isfinite(corpora["complexity_bits"]) & (corpora["seeds"] > 0)] if len(corpora) else corpora
    )
    evidence = {"corpora": int(len(usable)), **criterion_info}
    evidence["corpus_table"] = [
        {k: (v if k != "seed_ranks" else list(v)) for k, v in row.items()}
        for row in corpora.to_dict("records")
    ]
    if len(usable) < min_corpora or usable["complexity_bits"].nunique() < 3:
        evidence.update(rho=float("nan"), ci_low=float("nan"), ci_high=float("nan"))
        return Verdict("C11", "inconclusive", criterion, evidence, "E7", C11_STATEMENT)
    rho, lo, hi = corpus_bootstrap(usable["complexity_bits"], list(usable["seed_ranks"]), n_boot, seed)
    evidence.update(rho=rho, ci_low=lo, ci_high=hi)
    return Verdict("C11", decide(two_sided(lo, hi)), criterion, evidence, "E7", C11_STATEMENT)


def c12_on_points(
    points: pd.DataFrame, *, controls: list[str], min_abs_rho: float, n_boot: int, seed: int, info: dict
) -> Verdict:
    """C12 from pooled checkpoint points: ``run_id, rank, progress, complexity`` and the control columns."""
    criterion = (
        f"partial Spearman rho of the head-mean {info['estimator']} ({info['kernel']} kernel) with optimisation "
        f"progress (L0 - Lt)/(L0 - Lref) given {' and '.join(controls)}, pooled over learned runs' checkpoints, "
        f"95% bootstrap over runs: confirmed if the interval excludes 0, |rho| >= {min_abs_rho:g} and |rho| exceeds "
        f"|partial rho(rank, complexity)|; refuted if the interval lies inside (-{min_abs_rho:g}, {min_abs_rho:g}) or "
        "complexity is tracked more strongly; inconclusive otherwise"
    )
    runs = int(points["run_id"].nunique()) if len(points) else 0
    evidence = {"runs": runs, "points": int(len(points)), "controls": list(controls), **info}
    if runs < 3:
        evidence.update(rho=float("nan"), ci_low=float("nan"), ci_high=float("nan"))
        return Verdict("C12", "inconclusive", criterion, evidence, "E7", C12_STATEMENT)
    rho, lo, hi = cluster_partials(points, "progress", controls, n_boot, seed)
    rc, rc_lo, rc_hi = cluster_partials(points, "complexity", controls, n_boot, seed + 1)
    evidence.update(rho=rho, ci_low=lo, ci_high=hi, rho_complexity=rc, rho_complexity_ci=[rc_lo, rc_hi])
    if not np.isfinite(lo):
        return Verdict("C12", "inconclusive", criterion, evidence, "E7", C12_STATEMENT)
    excludes_zero = lo > 0 or hi < 0
    complexity_wins = np.isfinite(rc) and (rc_lo > 0 or rc_hi < 0) and abs(rc) > max(abs(lo), abs(hi))
    if excludes_zero and abs(rho) >= min_abs_rho and not (np.isfinite(rc) and abs(rc) >= abs(rho)):
        ok = True
    elif (-min_abs_rho < lo and hi < min_abs_rho) or complexity_wins:
        ok = False
    else:
        ok = None
    return Verdict("C12", decide(ok), criterion, evidence, "E7", C12_STATEMENT)


def c13_on_heads(heads: pd.DataFrame, *, share: float, info: dict) -> Verdict:
    """C13 from a per-head table with ``source, kind, layer, head, category`` and the scores."""
    criterion = (
        f"share of heads whose realised mixer is content-independent (category sink, local, positional or averaging: "
        f"content TV from the position-only leave-one-out mean mixer < {info['content_tv']:g}) among "
        f"{'+'.join(info['sources'])} heads, Wilson 95% interval: confirmed if it lies above {share:g}, refuted if "
        "below, inconclusive otherwise"
    )
    evidence = {"heads": int(len(heads)), **info}
    if not len(heads):
        evidence.update(share_structural=float("nan"), ci_low=float("nan"), ci_high=float("nan"))
        return Verdict("C13", "inconclusive", criterion, evidence, "E7", C13_STATEMENT)
    structural = heads["category"].isin(STRUCTURAL).to_numpy()
    lo, hi = wilson(int(structural.sum()), len(heads))
    evidence.update(share_structural=float(structural.mean()), ci_low=lo, ci_high=hi)
    evidence["by_category"] = {c: int((heads["category"] == c).sum()) for c in CATEGORIES}
    evidence["by_source"] = {
        str(s): {"heads": int(len(g)), "share_structural": float(g["category"].isin(STRUCTURAL).mean())}
        for s, g in heads.groupby("source", sort=False)
    }
    cols = [
        c
        for c in (
            "source",
            "kind",
            "layer",
            "head",
            "category",
            "content_tv",
            "uniform_tv",
            "sink_score",
            "locality_mass",
            "band_explained",
            "positional_prior_explained",
        )
        if c in heads
    ]
    evidence["head_table"] = heads[cols].to_dict("records")
    ok = True if lo > share else (False if hi < share else None)
    return Verdict("C13", decide(ok), criterion, evidence, "E7", C13_STATEMENT)


def verdict_c11(cfg, ok: pd.DataFrame, context: ClaimContext) -> Verdict:
    """C11 on the corpora of ``ok`` (the LM runs of :func:`.analysis.run_table`), ``cfg.seeds`` seeds each."""
    ok = ok[ok["seed"] < cfg.seeds]  # a robustness setting may keep fewer seeds
    corpora = corpus_table(cfg, ok)
    info = {
        "measure": cfg.verdict.complexity_measure,
        "estimator": cfg.verdict.rank_estimator,
        "kernel": cfg.verdict.kernel_measure,
        "kinds": list(cfg.verdict.c11_kinds),
        "runs_used": int(ok[ok["kind"].isin(cfg.verdict.c11_kinds)]["learned"].sum()),
        "runs_set_aside": int((~ok[ok["kind"].isin(cfg.verdict.c11_kinds)]["learned"]).sum()),
    }
    return c11_on_corpora(
        corpora,
        criterion_info=info,
        n_boot=cfg.verdict.bootstrap,
        seed=cfg.verdict.bootstrap_seed,
        min_corpora=cfg.verdict.c11_min_corpora,
    )


def verdict_c12(cfg, ok: pd.DataFrame, context: ClaimContext) -> Verdict:
    """C12 on the checkpoints of the learned runs (their curves are in ``context.records``)."""
    records = context.records
    ok = ok[ok["seed"] < cfg.seeds]
    points = progress_points(cfg, ok, records)
    sel = ok[ok["kind"].isin(cfg.verdict.c12_kinds)]
    info = {
        "estimator": cfg.verdict.rank_estimator,
        "kernel": cfg.verdict.kernel_measure,
        "kinds": list(cfg.verdict.c12_kinds),
        "runs_set_aside": int((~sel["learned"]).sum()),
    }
    return c12_on_points(
        points,
        controls=list(cfg.verdict.c12_controls),
        min_abs_rho=cfg.verdict.c12_min_abs_rho,
        n_boot=cfg.verdict.bootstrap,
        seed=cfg.verdict.bootstrap_seed,
        info=info,
    )


def verdict_c13(cfg, ok: pd.DataFrame, context: ClaimContext) -> Verdict:
    """C13 on the heads of the learned runs and measured checkpoints (``context.tables["heads"]``)."""
    heads, checkpoint_runs = context.tables["heads"], context.tables["checkpoints_measured"]
    heads = heads.assign(category=categorise(cfg, heads))
    chosen = heads[heads["kind"].isin(cfg.verdict.c13_sources)]
    lm = ok[ok["kind"].isin(cfg.verdict.c13_sources)]
    info = {
        "sources": list(cfg.verdict.c13_sources),
        "content_tv": cfg.verdict.c13_content_tv,
        "runs_set_aside": int((~lm["learned"]).sum()),
        "checkpoints_measured": checkpoint_runs,
    }
    return c13_on_heads(chosen, share=cfg.verdict.c13_share, info=info)


def grids(cfg) -> dict[str, list[dict]]:
    """Each claim's robustness settings (config keys → values), the default first."""
    paper = cfg.verdict.robustness_grid == "paper"
    c11 = [
        {
            "kernel_measure": cfg.verdict.kernel_measure,
            "complexity_measure": cfg.verdict.complexity_measure,
            "c11_kinds": list(cfg.verdict.c11_kinds),
        },
        {"kernel_measure": "delta" if cfg.verdict.kernel_measure == "folded" else "folded"},
        {"complexity_measure": "compression"},
        {"complexity_measure": "mixing_data"},
        {"c11_kinds": ["natural", "code"]},
        {"seeds": 1},
    ]
    c12 = [
        {
            "c12_controls": list(cfg.verdict.c12_controls),
            "kernel_measure": cfg.verdict.kernel_measure,
            "c12_kinds": list(cfg.verdict.c12_kinds),
        },
        {"c12_controls": ["step"]},
        {"kernel_measure": "delta" if cfg.verdict.kernel_measure == "folded" else "folded"},
        {"c12_kinds": ["natural"]},
        {"seeds": 1},
    ]
    c13 = [
        {"c13_sources": list(cfg.verdict.c13_sources), "c13_content_tv": cfg.verdict.c13_content_tv},
        {"c13_sources": ["natural"]},
        {"c13_sources": ["checkpoint"]},
        {"c13_sources": ["natural", "code", "synthetic"]},
        {"c13_content_tv": 0.35},
    ]
    if paper:
        c11 += [{"rank_estimator": e} for e in ("stable_rank", "numerical_rank", "entropy_effective_rank")]
        c11 += [{"complexity_measure": "mixing_known"}, {"c11_kinds": ["synthetic"]}]
        c12 += [{"rank_estimator": e} for e in ("stable_rank", "numerical_rank")] + [
            {"c12_controls": ["weight_norm"]}
        ]
        c13 += [{"c13_content_tv": v} for v in (0.25, 0.65)] + [{"c13_locality_threshold": 0.3}]
    return {"C11": c11, "C12": c12, "C13": c13}


def _setting_cfg(cfg, setting: dict):
    """``cfg`` under a robustness setting: its keys are the leaf names (as the stored boundaries show
    them), ``seeds`` at the top level and every other one under ``verdict``."""
    changes = {
        (k if k == "seeds" else f"verdict.{k}"): tuple(v) if isinstance(v, list) else v
        for k, v in setting.items()
    }
    return with_option(cfg, changes)


def c11_every_measure(cfg, ok: pd.DataFrame, context: ClaimContext, verdict: Verdict) -> Verdict:
    """The main C11 verdict with ``rho_by_measure``: rho and interval under each complexity measure."""
    by = {}
    for m in COMPLEXITY_MEASURES:
        v = (
            verdict
            if m == cfg.verdict.complexity_measure
            else verdict_c11(with_option(cfg, {"verdict.complexity_measure": m}), ok, context)
        )
        by[m] = {k: v.evidence.get(k) for k in ("rho", "ci_low", "ci_high", "corpora")} | {
            "verdict": v.verdict
        }
    return replace(verdict, evidence={**verdict.evidence, "rho_by_measure": by})


def _grid_of(claim: str):
    """The settings of ``claim`` in :func:`grids` after its default, each a config with those keys."""

    def grid(cfg, runs: pd.DataFrame, context: ClaimContext) -> list[Setting]:
        return [Setting(s, _setting_cfg(cfg, s), runs) for s in grids(cfg)[claim][1:]]

    return grid


def c13_sentence(e: dict, fmt: Formats) -> str:
    cats = ", ".join(f"{k} {v}" for k, v in sorted(e["by_category"].items(), key=lambda kv: -kv[1]))
    sources = ", ".join(
        f"{k.split(':')[-1]} {fmt.pct(v['share_structural'])}" for k, v in e["by_source"].items()
    )
    return (
        f"{fmt.pct(e['share_structural'])} of {e['heads']} heads content-independent (95% CI {fmt.pct(e['ci_low'])}–"
        f"{fmt.pct(e['ci_high'])}); heads by category: {cats}; by source: {sources}"
    )


C11 = Claim(
    "C11",
    decide=needs_rows("C11", "E7", verdict_c11),
    sentence="Spearman ρ(rank, complexity) = {rho:n} (95% CI {ci_low:n} to {ci_high:n}) over {corpora} corpora "
    "({runs_set_aside} runs set aside as not learned)",
    default_setting=lambda cfg: grids(cfg)["C11"][0],
    statistic="rho",
    grid=_grid_of("C11"),
    holds_when=confirmed_settings_wording,
    annotate=c11_every_measure,
)
C12 = Claim(
    "C12",
    decide=needs_rows("C12", "E7", verdict_c12),
    sentence="partial ρ(rank, loss | drifting controls) = {rho:n} (95% CI {ci_low:n} to {ci_high:n}) over {points} "
    "checkpoints of {runs} learned runs ({runs_set_aside} set aside); ρ(rank, complexity) = {rho_complexity:n}",
    default_setting=lambda cfg: grids(cfg)["C12"][0],
    statistic="rho",
    grid=_grid_of("C12"),
    holds_when=confirmed_settings_wording,
)
C13 = Claim(
    "C13",
    decide=needs_rows("C13", "E7", verdict_c13),
    sentence=c13_sentence,
    default_setting=lambda cfg: grids(cfg)["C13"][0],
    statistic="share_structural",
    grid=_grid_of("C13"),
    holds_when=confirmed_settings_wording,
)
CLAIMS = (C11, C12, C13)
