"""E7's analysis: learned flags, corpus / checkpoint / head tables, verdicts C11–C13 and their boundaries.

Pure functions of the stored rows and curves. A language model counts as evidence only when it
has **learned** its corpus: it has closed all but ``verdict.learned_max_gap_fraction`` of the gap between
the unigram model and the reference (the exact entropy rate of a synthetic source, otherwise the
best held-out k-gram model on the same split), ``(bits − ref)/(unigram − ref)``, *and* attention at least ``verdict.learned_min_uniform_tv`` from uniform (total variation, head
mean). Runs that fail are set aside and counted in every verdict. The verdict rules are in
:mod:`.e7_verdicts`; each verdict's robustness grid re-decides it under other settings of its
config keys (:func:`boundaries`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ...lm.corpora import corpus_kind
from ...lm.structure import head_categories
from ..base import Analysis, curves_by_run
from ..claim_slices import with_option
from ..robustness import SettingOutcome, summarise_boundary
from .plots import plot_loss_curves, plot_rank_vs_complexity, plot_rank_vs_progress, plot_structure
from .statistics import verdict_c11, verdict_c12, verdict_c13

COMPLEXITY_MEASURES = ("information", "compression", "mixing_known", "mixing_data")
MEASURE_COLUMN = {
    "information": "information_bits",
    "compression": "compression_bits",
    "mixing_known": "mixing_known",
    "mixing_data": "mixing_data",
}


def kernel_key(cfg) -> str:
    return f"{'K' if cfg.verdict.kernel_measure == 'folded' else 'dK'}_{cfg.verdict.rank_estimator}"


def run_table(cfg, table: pd.DataFrame) -> pd.DataFrame:
    """Language-model rows with ``corpus``, ``kind``, ``information_bits`` and the ``learned`` flag."""
    lm = table[table["corpus.name"].notna()] if "corpus.name" in table else table.iloc[0:0]
    lm = lm.assign(corpus=lm["corpus.name"], kind=[corpus_kind(n) for n in lm["corpus.name"]])
    known = lm["entropy_rate_bits"].where(np.isfinite(lm["entropy_rate_bits"]), np.nan)
    lm = lm.assign(information_bits=known.fillna(lm["compression_bits"]))
    ok = lm["status"] == "ok"
    learned = (
        ok
        & (lm["loss_gap_fraction"] <= cfg.verdict.learned_max_gap_fraction)
        & (lm["uniform_tv"] >= cfg.verdict.learned_min_uniform_tv)
    )
    return lm.assign(learned=learned.to_numpy(bool)).reset_index(drop=True)


def corpus_table(cfg, runs: pd.DataFrame) -> pd.DataFrame:
    """One row per corpus of the kinds C11 uses: complexity measures, learned seeds and their ranks."""
    key, col = kernel_key(cfg), MEASURE_COLUMN[cfg.verdict.complexity_measure]
    rows = []
    for name, g in runs[runs["kind"].isin(cfg.verdict.c11_kinds)].groupby("corpus", sort=False):
        used = g[g["learned"]]
        first = g.iloc[0]
        rows.append(
            {
                "name": name,
                "kind": first["kind"],
                "seeds": int(len(used)),
                "seeds_set_aside": int(len(g) - len(used)),
                "complexity_bits": float(first[col]),
                "rank": float(used[key].mean()) if len(used) else float("nan"),
                "rank_sd": float(used[key].std(ddof=0)) if len(used) else float("nan"),
                "seed_ranks": used[key].to_numpy(float).tolist(),
                **{m: float(first[c]) for m, c in MEASURE_COLUMN.items()},
                "entropy_rate_bits": float(first["entropy_rate_bits"]),
                "kgram_bits": float(first["kgram_bits"]),
                "val_bits": float(g["val_bits"].mean()),
                "reference_bits": float(first["reference_bits"]),
            }
        )
    return pd.DataFrame(rows)


def decide_c11(cfg, runs: pd.DataFrame):
    runs = runs[runs["seed"] < cfg.seeds]  # a robustness setting may keep fewer seeds
    corpora = corpus_table(cfg, runs)
    info = {
        "measure": cfg.verdict.complexity_measure,
        "estimator": cfg.verdict.rank_estimator,
        "kernel": cfg.verdict.kernel_measure,
        "kinds": list(cfg.verdict.c11_kinds),
        "runs_used": int(runs[runs["kind"].isin(cfg.verdict.c11_kinds)]["learned"].sum()),
        "runs_set_aside": int((~runs[runs["kind"].isin(cfg.verdict.c11_kinds)]["learned"]).sum()),
    }
    verdict = verdict_c11(
        corpora,
        criterion_info=info,
        n_boot=cfg.verdict.bootstrap,
        seed=cfg.verdict.bootstrap_seed,
        min_corpora=cfg.verdict.c11_min_corpora,
    )
    return verdict, corpora


def c11_with_every_measure(cfg, runs: pd.DataFrame):
    """C11 at ``cfg`` with ``rho_by_measure``: ρ and interval under each complexity measure."""
    verdict, corpora = decide_c11(cfg, runs)
    by = {}
    for m in COMPLEXITY_MEASURES:
        v = (
            verdict
            if m == cfg.verdict.complexity_measure
            else decide_c11(with_option(cfg, {"verdict.complexity_measure": m}), runs)[0]
        )
        by[m] = {k: v.evidence.get(k) for k in ("rho", "ci_low", "ci_high", "corpora")} | {
            "verdict": v.verdict
        }
    return replace(verdict, evidence={**verdict.evidence, "rho_by_measure": by}), corpora


def progress_points(cfg, runs: pd.DataFrame, records: list[dict]) -> pd.DataFrame:
    """Learned runs' checkpoints ``t ≥ 1``: rank, progress, log step, weight norm, complexity."""
    curves, key, rows = curves_by_run(records), kernel_key(cfg), []
    for _, run in runs[runs["learned"] & runs["kind"].isin(cfg.verdict.c12_kinds)].iterrows():
        c = curves.get(run["run_id"], {})
        loss = np.asarray(c.get("val_loss", []), float) / np.log(2)
        heads = c.get("heads") or {}
        if len(loss) < 3 or key not in heads:
            continue
        rank = [np.nanmean(v) for v in heads[key]]
        norm = [np.nanmean(v) for v in heads["qk_norm"]]
        span = loss[0] - run["reference_bits"]
        for t in range(1, len(loss)):
            rows.append(
                {
                    "run_id": run["run_id"],
                    "corpus": run["corpus"],
                    "step": np.log(c["step"][t]),
                    "rank": rank[t],
                    "progress": (loss[0] - loss[t]) / span if span > 0 else np.nan,
                    "weight_norm": norm[t],
                    "complexity": run["information_bits"],
                }
            )
    return pd.DataFrame(
        rows, columns=["run_id", "corpus", "step", "rank", "progress", "weight_norm", "complexity"]
    )


def decide_c12(cfg, runs: pd.DataFrame, records: list[dict]):
    runs = runs[runs["seed"] < cfg.seeds]
    points = progress_points(cfg, runs, records)
    sel = runs[runs["kind"].isin(cfg.verdict.c12_kinds)]
    info = {
        "estimator": cfg.verdict.rank_estimator,
        "kernel": cfg.verdict.kernel_measure,
        "kinds": list(cfg.verdict.c12_kinds),
        "runs_set_aside": int((~sel["learned"]).sum()),
    }
    return verdict_c12(
        points,
        controls=list(cfg.verdict.c12_controls),
        min_abs_rho=cfg.verdict.c12_min_abs_rho,
        n_boot=cfg.verdict.bootstrap,
        seed=cfg.verdict.bootstrap_seed,
        info=info,
    )


HEAD_SCORES = (
    "sink_score",
    "locality_mass",
    "positional_prior_explained",
    "band_explained",
    "uniform_tv",
    "content_tv",
)


def head_table(cfg, table: pd.DataFrame, runs: pd.DataFrame, records: list[dict]) -> pd.DataFrame:
    """Final-checkpoint scores and category of every head of learned LMs and of checkpoints."""
    curves, rows = curves_by_run(records), []
    sources = [(r["run_id"], r["corpus"], r["kind"]) for _, r in runs[runs["learned"]].iterrows()]
    if "probe.checkpoint" in table:
        ck = table[table["probe.checkpoint"].notna() & (table["status"] == "ok")]
        sources += [
            (r["run_id"], f"checkpoint:{r['probe.checkpoint']}", "checkpoint") for _, r in ck.iterrows()
        ]
    for run_id, source, kind in sources:
        heads = curves.get(run_id, {}).get("heads") or {}
        final = {k: np.asarray(heads[k][-1], float) for k in HEAD_SCORES if heads.get(k)}
        if len(final) < len(HEAD_SCORES):
            continue
        for (layer, h), _ in np.ndenumerate(final["content_tv"]):
            rows.append(
                {
                    "run_id": run_id,
                    "source": source,
                    "kind": kind,
                    "layer": layer,
                    "head": h,
                    **{k: float(v[layer, h]) for k, v in final.items()},
                }
            )
    out = pd.DataFrame(rows, columns=["run_id", "source", "kind", "layer", "head", *HEAD_SCORES])
    return out.assign(category=categorise(cfg, out))


def categorise(cfg, heads: pd.DataFrame) -> np.ndarray:
    if not len(heads):
        return np.array([], dtype=object)
    return head_categories(
        {k: heads[k].to_numpy(float) for k in HEAD_SCORES},
        content=cfg.verdict.c13_content_tv,
        sink=cfg.verdict.c13_sink_threshold,
        locality=cfg.verdict.c13_locality_threshold,
        structure=cfg.verdict.c13_structure_tv,
    )


def decide_c13(cfg, heads: pd.DataFrame, runs: pd.DataFrame, checkpoint_runs: int):
    heads = heads.assign(category=categorise(cfg, heads))
    chosen = heads[heads["kind"].isin(cfg.verdict.c13_sources)]
    lm = runs[runs["kind"].isin(cfg.verdict.c13_sources)]
    info = {
        "sources": list(cfg.verdict.c13_sources),
        "content_tv": cfg.verdict.c13_content_tv,
        "runs_set_aside": int((~lm["learned"]).sum()),
        "checkpoints_measured": checkpoint_runs,
    }
    return verdict_c13(chosen, share=cfg.verdict.c13_share, info=info)


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


def boundaries(cfg, decide: dict, defaults: dict) -> dict[str, dict]:
    """``{claim: robustness entry}``: each claim re-decided under every setting of its grid (the
    first setting is the default, whose verdict ``defaults[claim]`` is already decided)."""
    out = {}
    for claim, settings in grids(cfg).items():
        outcomes = []
        for i, setting in enumerate(settings):
            v = decide[claim](_setting_cfg(cfg, setting)) if i else defaults[claim]
            stat = v.evidence.get("share_structural" if claim == "C13" else "rho")
            outcomes.append(SettingOutcome(setting, v.verdict, stat))
        out[claim] = summarise_boundary(outcomes)
    return out


def analyse_e7(cfg, table: pd.DataFrame, records: list[dict]) -> Analysis:
    if not len(table):
        return Analysis(results=table, verdicts=[], notes=["E7 has no stored runs."])
    runs = run_table(cfg, table)
    n_ckpt = int(table["probe.checkpoint"].notna().sum()) if "probe.checkpoint" in table else 0
    heads = head_table(cfg, table, runs, records)
    decide = {
        "C11": lambda c: decide_c11(c, runs)[0],
        "C12": lambda c: decide_c12(c, runs, records),
        "C13": lambda c: decide_c13(c, heads, runs, n_ckpt),
    }
    c11, corpora = c11_with_every_measure(cfg, runs)
    defaults = {"C11": c11, "C12": decide["C12"](cfg), "C13": decide["C13"](cfg)}
    bounds = boundaries(cfg, decide, defaults)
    verdicts = [v.with_robustness(bounds[claim]) for claim, v in defaults.items()]
    figures = {
        "e7_loss_curves": plot_loss_curves(runs, curves_by_run(records)),
        "e7_rank_vs_complexity": plot_rank_vs_complexity(corpora, kernel_key(cfg)),
        "e7_rank_vs_progress": plot_rank_vs_progress(progress_points(cfg, runs, records)),
    }
    if len(heads):
        figures["e7_head_structure"] = plot_structure(heads)
    tables = {
        "corpora": corpora.drop(columns=["seed_ranks"]) if len(corpora) else corpora,
        "heads": heads,
        "runs": runs[
            [
                "run_id",
                "corpus",
                "kind",
                "seed",
                "val_bits",
                "reference_bits",
                "loss_gap_bits",
                "loss_gap_fraction",
                "uniform_tv",
                "learned",
            ]
        ],
    }
    return Analysis(
        results=table, verdicts=verdicts, figures=figures, tables=tables, notes=_notes(cfg, runs, n_ckpt)
    )


def _notes(cfg, runs: pd.DataFrame, n_ckpt: int) -> list[str]:
    aside = runs[~runs["learned"]]
    notes = [
        f"Models: {len(runs)} causal LMs ({cfg.model.n_layers} layers x {cfg.model.n_heads} heads, d_model {cfg.model.d_model}, context "
        f"{cfg.model.n_ctx}, byte vocabulary), trained {cfg.ensemble_size} at a time as one batched ensemble; AdamW lr "
        f"{cfg.train.lr:g}, {cfg.train.steps} steps of batch {cfg.train.batch_size}; {cfg.seeds} seed(s) per corpus.",
        f"Learned = (held-out bits - reference)/(unigram bits - reference) at most {cfg.verdict.learned_max_gap_fraction:g} "
        f"(reference: entropy rate of a synthetic source, else the held-out Witten-Bell k-gram on the same split) and attention at least "
        f"{cfg.verdict.learned_min_uniform_tv:g} TV from uniform. {len(aside)} of {len(runs)} run(s) set aside"
        + (f": {', '.join(sorted(set(aside['corpus'])))}." if len(aside) else "."),
        f"Kernel for C11/C12: {cfg.verdict.kernel_measure} ({'LN1 gain folded into W_Q, W_K' if cfg.verdict.kernel_measure == 'folded' else 'K_t - K_0, gains folded'}), "
        f"estimator {cfg.verdict.rank_estimator}; both measures are stored for every head and checkpoint.",
    ]
    if not n_ckpt and cfg.checkpoints:
        notes.append(
            f"No released checkpoint was measured ({', '.join(cfg.checkpoints)} not installed): C13 rests on the trained LMs."
        )
    return notes
