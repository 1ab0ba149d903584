"""E7's claims C11-C13: each declaration, criterion, report sentence and robustness grid.

- **C11** (paper, App. B: the measured static kernel rank *anti*-correlates with predicted task
  complexity) and **C12** (the rank tracks optimisation progress, the loss, not complexity):
  decided by their intervals on the natural-language corpora, the other kinds reported beside
  (:mod:`.domain_verdicts` states both rules).
- **C13** (structural priors dominate the realised mixers; no single identifiable low-rank routing
  kernel). Heads categorised by :func:`entropic_bound.language_models.probes.structure.head_categories` and fitted by one
  logit-field kernel; both shares with the model as unit, read by head count and weighted by the loss
  the heads' content routing carries, gated by the controls (:mod:`.structure_verdict`).

Each claim's robustness grid re-decides it under other settings of its config keys (:func:`grids`)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ...language_models.corpora.catalogue import KINDS, expected_mixing
from ...language_models.probes.checkpoint import resolve_checkpoint, skip_message
from ..framework.claim import Claim, Setting, needs_rows
from ..framework.claim_slices import with_option
from ..framework.rule import Condition, Interval, Rule, Unit
from ..framework.verdict import ClaimContext, Finding
from .analysis import categorise, corpus_table, main_shape, progress_points
from .config import COMPLEXITY_MEASURES
from .control_gate import control_report, joint_ablations
from .domain_verdicts import (
    c11_on_corpora,
    c11_sentence,
    c12_on_points,
    c12_sentence,
    side_summary,
)
from .local_controls import not_local_only
from .structure_verdict import c13_on_heads, c13_sentence, routing_kernel


def verdict_c11(cfg, rows: pd.DataFrame, context: ClaimContext) -> Finding:
    """C11 on the corpora of ``rows`` (the LM runs of :func:`.analysis.run_table`), ``cfg.seeds`` seeds each."""
    rows = rows[rows["seed"] < cfg.seeds]  # a robustness setting may keep fewer seeds
    corpora = corpus_table(cfg, rows)
    points = rows[
        main_shape(cfg, rows) & rows["kind"].isin(cfg.verdict.c11_kinds)
    ]  # the runs behind C11's points
    info = {
        "measure": cfg.verdict.complexity_measure,
        "estimator": cfg.verdict.rank_estimator,
        "kernel": cfg.verdict.kernel_measure,
        "kinds": list(cfg.verdict.c11_kinds),
        "runs_used": int(points["learned"].sum()),
        "runs_set_aside": int((~points["learned"]).sum()),
    }
    verdict = c11_on_corpora(
        corpora,
        criterion_info=info,
        n_boot=cfg.verdict.bootstrap,
        seed=context.seeds.moved(cfg.verdict.bootstrap_seed),
        min_corpora=cfg.verdict.c11_min_corpora,
    )
    names = list(corpora["name"]) if len(corpora) else []
    domain = {"decides": list(cfg.verdict.c11_kinds), "corpora": names}
    return replace(verdict, evidence={**verdict.evidence, "domain": domain})


def verdict_c12(cfg, rows: pd.DataFrame, context: ClaimContext) -> Finding:
    """C12 on the checkpoints of the learned runs (their curves are in ``context.records``)."""
    records = context.records
    rows = rows[rows["seed"] < cfg.seeds]
    points = progress_points(cfg, rows, records)
    sel = rows[rows["kind"].isin(cfg.verdict.c12_kinds)]
    info = {
        "estimator": cfg.verdict.rank_estimator,
        "kernel": cfg.verdict.kernel_measure,
        "kinds": list(cfg.verdict.c12_kinds),
        "runs_set_aside": int((~sel["learned"]).sum()),
    }
    verdict = c12_on_points(
        points,
        controls=list(cfg.verdict.c12_controls),
        min_abs_rho=cfg.verdict.c12_min_abs_rho,
        n_boot=cfg.verdict.bootstrap,
        seed=context.seeds.moved(cfg.verdict.bootstrap_seed),
        info=info,
    )
    names = list(dict.fromkeys(sel[sel["learned"] & main_shape(cfg, sel)]["corpus"]))
    domain = {"decides": list(cfg.verdict.c12_kinds), "corpora": names}
    return replace(verdict, evidence={**verdict.evidence, "domain": domain})


def verdict_c13(cfg, rows: pd.DataFrame, context: ClaimContext) -> Finding:
    """C13 on the heads of the learned runs and measured checkpoints (``context.tables["heads"]``),
    gated by the controls' heads (every learned model of a control corpus in the grid)."""
    heads, checkpoint_runs = context.tables["heads"], context.tables["checkpoints_measured"]
    v = cfg.verdict
    heads = heads.assign(category=categorise(cfg, heads))
    heads = heads.assign(
        routing_kernel=routing_kernel(
            heads,
            content=v.c13_kernel_content,
            explained=v.c13_kernel_explained,
            rank_fraction=v.c13_kernel_rank_fraction,
        )
    )
    seeds_kept = rows[rows["seed"] < cfg.seeds]["run_id"]
    heads = heads[heads["run_id"].isin(seeds_kept) | heads["kind"].str.contains("checkpoint")]
    # a control corpus is the instrument's test, never evidence for the claim: its heads only gate
    is_control = np.array([bool(expected_mixing(str(s))) for s in heads["source"]], dtype=bool)
    chosen = heads[heads["kind"].isin(v.c13_sources).to_numpy() & ~is_control]
    control_names = [c for c in dict.fromkeys(rows["corpus"]) if expected_mixing(c)]
    info = {
        "sources": list(v.c13_sources),
        "content_tv": v.c13_content_tv,
        "kernel_content": v.c13_kernel_content,
        "kernel_explained": v.c13_kernel_explained,
        "kernel_rank_fraction": v.c13_kernel_rank_fraction,
        "min_moved": v.c13_min_moved,
        "local_max_recurrence": v.c13_local_max_recurrence,
        "weighting": v.c13_weighting,
        "ablation_bits": v.c13_ablation_bits,
        "runs_set_aside": int((~rows[rows["kind"].isin(v.c13_sources)]["learned"]).sum()),
        "checkpoints_measured": checkpoint_runs,
        **released_models_report(cfg, heads),
        "reference": _field_reference(heads),
    }
    joint = joint_ablations(context.records)
    copyable = not_local_only(cfg, control_names, context.seeds)
    return c13_on_heads(
        chosen,
        share=v.c13_share,
        kernel_share=v.c13_kernel_share,
        controls=control_report(heads, control_names, v.c13_ablation_bits, copyable, joint),
        info=info,
        n_boot=v.bootstrap,
        seed=context.seeds.moved(v.bootstrap_seed),
        control_rate=v.c13_control_rate,
    )


def released_models_report(cfg, heads: pd.DataFrame) -> dict:
    """The released models whose heads were measured, and a line for each configured one not installed
    here (which package adds it)."""
    is_checkpoint = heads["kind"].astype(str).str.contains("checkpoint")
    return {
        "released_models_measured": sorted(set(heads.loc[is_checkpoint, "source"].astype(str))),
        "released_models_skipped": [
            skip_message(n) for n in cfg.released_models if resolve_checkpoint(n) is None
        ],
    }


def _field_reference(heads: pd.DataFrame) -> dict:
    """Logit-field rank (min, median, max over heads) of every checkpoint, the random-weight control
    included, beside Lee (2026): static W_Q W_K^T 38–75 components for 90%, logit field 2–11."""
    out = {"lee_2026": {"static_rank_90": [38, 75], "logit_field_rank_90": [2, 11]}}
    for s, g in heads[heads["kind"].str.contains("checkpoint")].groupby("source", sort=False):
        r = g["logit_field_rank_90"].to_numpy(float)
        if np.isfinite(r).any():
            out[str(s)] = {
                "logit_field_rank_90": [float(np.nanmin(r)), float(np.nanmedian(r)), float(np.nanmax(r))]
            }
    return out


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
        {"seeds": 1},
    ]
    c13 = [
        {
            "c13_sources": list(cfg.verdict.c13_sources),
            "c13_content_tv": cfg.verdict.c13_content_tv,
            "c13_weighting": cfg.verdict.c13_weighting,
        },
        {"c13_sources": ["natural"]},
        {"c13_sources": ["checkpoint"]},
        {"c13_sources": ["natural", "code", "synthetic"]},  # every trained LM but the control corpora
        {"c13_content_tv": 0.35},
        {"c13_kernel_rank_fraction": 0.125},
        {"c13_kernel_rank_fraction": 0.5},
        {"c13_min_moved": 0.05},  # lets lag-copy controls fail (bench/lm_controls/RESULTS.md)
        {"c13_local_max_recurrence": 1.0},  # every Markov source a required local control, copyable or not
        {"c13_weighting": "ablation" if cfg.verdict.c13_weighting == "count" else "count"},
    ]
    if paper:
        c11 += [{"rank_estimator": e} for e in ("stable_rank", "numerical_rank", "entropy_effective_rank")]
        c11 += [{"complexity_measure": "mixing_known"}]
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


def c11_every_measure(cfg, rows: pd.DataFrame, context: ClaimContext, verdict: Finding) -> Finding:
    """The main C11 verdict with ``rho_by_measure``: rho and interval under each complexity measure."""
    by = {}
    for m in COMPLEXITY_MEASURES:
        v = (
            verdict
            if m == cfg.verdict.complexity_measure
            else verdict_c11(with_option(cfg, {"verdict.complexity_measure": m}), rows, context)
        )
        by[m] = {k: v.evidence.get(k) for k in ("rho", "ci_low", "ci_high", "corpora")} | {
            "verdict": v.outcome
        }
    side = _side_domains(
        cfg, rows, context, "c11_kinds", verdict_c11, ("rho", "ci_low", "ci_high", "corpora")
    )
    evidence = {**verdict.evidence, "rho_by_measure": by}
    return replace(verdict, evidence={**evidence, "domain": {**evidence["domain"], "side": side}})


def c12_side_domains(cfg, rows: pd.DataFrame, context: ClaimContext, verdict: Finding) -> Finding:
    """The main C12 verdict with the same rule's verdict on every other kind and on all pooled."""
    keys = ("rho", "ci_low", "ci_high", "rho_complexity", "rho_complexity_ci", "runs", "halves")
    side = _side_domains(cfg, rows, context, "c12_kinds", verdict_c12, keys)
    domain = {**verdict.evidence["domain"], "side": side}
    return replace(verdict, evidence={**verdict.evidence, "domain": domain})


def _side_domains(cfg, rows, context, key: str, decide_on, keys: tuple[str, ...]) -> dict:
    """``{kind: summary}`` for each kind the verdict was not decided on, and ``all`` (every kind)."""
    decided = tuple(getattr(cfg.verdict, key))
    domains = {k: (k,) for k in KINDS if k not in decided}
    if set(decided) != set(KINDS):
        domains["all"] = KINDS
    return {
        name: side_summary(decide_on(with_option(cfg, {f"verdict.{key}": kinds}), rows, context), keys)
        for name, kinds in domains.items()
    }


def _grid_of(claim: str):
    """The settings of ``claim`` in :func:`grids` after its default, each a config with those keys."""

    def grid(cfg, runs: pd.DataFrame, context: ClaimContext) -> list[Setting]:
        return [Setting(s, _setting_cfg(cfg, s), runs) for s in grids(cfg)[claim][1:]]

    return grid


C11 = Claim(
    id="C11",
    experiment="E7",
    statement="static kernel rank anti-correlates with predicted task complexity",
    # a draw re-windows the same texts (and re-draws inits): it moves a corpus's point, adds no corpus
    unit=Unit("corpus", ("corpus",), added_by="task.corpora"),
    rule=Rule(thresholds=(), interval=Interval.SPEARMAN),  # rho against its one boundary, 0
    decide=needs_rows(verdict_c11),
    sentence=c11_sentence,
    default_setting=lambda cfg: grids(cfg)["C11"][0],
    statistic="rho",
    grid=_grid_of("C11"),
    holds_when=None,
    annotate=c11_every_measure,
)
C12 = Claim(
    id="C12",
    experiment="E7",
    statement="the static kernel rank tracks optimisation progress (loss), not task complexity",
    # runs of one corpus share its text: the corpus is the unit, its runs' checkpoints drawn together
    unit=Unit("corpus", ("corpus",), added_by="task.corpora"),
    rule=Rule(thresholds=("verdict.c12_min_abs_rho",), interval=Interval.CLUSTER_BOOTSTRAP),
    decide=needs_rows(verdict_c12),
    sentence=c12_sentence,
    default_setting=lambda cfg: grids(cfg)["C12"][0],
    statistic="rho",
    grid=_grid_of("C12"),
    holds_when=None,
    annotate=c12_side_domains,
)
C13 = Claim(
    id="C13",
    experiment="E7",
    statement="structural priors (sink, locality, position) dominate the realised mixers",
    # sources (a corpus, a released model) first, then models: a draw adds models, never a source
    unit=Unit("source, then model", ("source", "run_id"), added_by="task.corpora"),
    rule=Rule(
        thresholds=("verdict.c13_share", "verdict.c13_kernel_share"),
        interval=Interval.CLUSTER_BOOTSTRAP,
        conditions=(
            # the controls' gate: a fresh draw brings fresh control models (new sample, init, batches)
            Condition(
                ("verdict.c13_control_rate",), Interval.WILSON, Unit("control model", ("run_id",), "draws")
            ),
        ),
    ),
    decide=needs_rows(verdict_c13),
    sentence=c13_sentence,
    default_setting=lambda cfg: grids(cfg)["C13"][0],
    statistic="share_structural",
    grid=_grid_of("C13"),
    holds_when=None,
)
CLAIMS = (C11, C12, C13)
