"""E7's analysis: corpus table, verdicts C11–C13 — pure functions of stored rows and curves.

- **C11** (paper: the static kernel rank *anti*-correlates with predicted task complexity): one
  point per corpus (final kernel rank averaged over heads and seeds, predicted complexity in bits
  per token); Spearman ρ with a percentile bootstrap interval over corpora. Confirmed when the
  interval lies below 0; refuted when ρ ≥ 0; inconclusive when ρ < 0 but the interval reaches 0, or
  with fewer than 3 corpora of distinct complexity.
- **C12** (paper: the rank tracks optimisation progress, the loss, not complexity): per run the
  Spearman ρ between the head-averaged kernel rank and the held-out loss over checkpoints.
  Confirmed when the median |ρ| over runs is at least ``c12_min_abs_rho`` *and* exceeds |ρ| of C11
  (rank vs complexity); refuted otherwise; inconclusive without C11's ρ or with < 3 checkpoints.
- **C13** (paper: structural priors dominate the realised mixers): a head at the final checkpoint
  is explained by a structural prior when it is a sink head (sink score > threshold), a local head
  (locality mass ≥ threshold) or a positional head (position-only prior share ≥ threshold).
  Confirmed when the share of explained heads over all runs is at least ``c13_share``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from ..lm.probe import structural_explained
from .base import Analysis, Verdict, curves_by_run, decide
from .e7_plots import plot_rank_vs_complexity, plot_rank_vs_loss, plot_structural_heatmaps


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman ρ (Pearson correlation of average ranks); NaN when either side is constant."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if len(x) < 2:
        return float("nan")
    rx, ry = rankdata(x) - (len(x) + 1) / 2, rankdata(y) - (len(y) + 1) / 2
    denom = np.sqrt((rx**2).sum() * (ry**2).sum())
    return float((rx * ry).sum() / denom) if denom > 0 else float("nan")


def bootstrap_spearman(x, y, n_boot: int, seed: int, level: float = 0.95) -> tuple[float, float, float]:
    """ρ and a percentile bootstrap interval, resampling the (x, y) pairs; degenerate resamples are dropped."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    rho = spearman(x, y)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(x), size=(n_boot, len(x)))
    boots = np.array([spearman(x[d], y[d]) for d in draws])
    boots = boots[np.isfinite(boots)]
    if not len(boots) or not np.isfinite(rho):
        return rho, float("nan"), float("nan")
    tail = (1 - level) / 2 * 100
    return rho, float(np.percentile(boots, tail)), float(np.percentile(boots, 100 - tail))


def complexity(table: pd.DataFrame, source: str) -> pd.Series:
    """Predicted complexity (bits/token): the exact entropy rate where known and ``source == "known"``,
    otherwise the best compression rate."""
    known = table["entropy_rate_bits"]
    return known.where(np.isfinite(known) & (source == "known"), table["compression_bits"])


def corpus_table(cfg, ok: pd.DataFrame) -> pd.DataFrame:
    """One row per corpus: complexity estimates, final losses and ranks averaged over seeds."""
    ok = ok.assign(complexity_bits=complexity(ok, cfg.complexity_source))
    rank = f"K_{cfg.rank_estimator}"
    agg = {
        "entropy_rate_bits": "mean",
        "lzma_bits": "mean",
        "bz2_bits": "mean",
        "complexity_bits": "mean",
        "vocab_size": "first",
        "val_bits": "mean",
        "train_bits": "mean",
        rank: "mean",
        "mixer_energy_effective_rank": "mean",
        "sink_score": "mean",
        "locality_mass": "mean",
        "positional_prior_explained": "mean",
        "run_id": "count",
    }
    agg = {k: v for k, v in agg.items() if k in ok}
    out = ok.groupby("corpus.name", sort=False).agg(agg).rename(columns={"run_id": "runs"}).reset_index()
    return out.rename(columns={"corpus.name": "corpus"}).sort_values("complexity_bits").reset_index(drop=True)


def verdict_c11(points: pd.DataFrame, *, estimator: str, n_boot: int, seed: int) -> Verdict:
    """C11 from ``points`` with columns ``complexity_bits`` and ``rank`` (one row per corpus)."""
    criterion = (
        f"Spearman rho between the final head-mean {estimator} of K_h = W_Q^h W_K^hT and the predicted "
        f"complexity (bits/token) over corpora: confirmed if the 95% bootstrap interval ({n_boot} resamples "
        "of corpora) lies below 0, refuted if rho >= 0, inconclusive otherwise or with < 3 distinct complexities"
    )
    statement = "static kernel rank anti-correlates with predicted task complexity"
    x, y = points["complexity_bits"].to_numpy(float), points["rank"].to_numpy(float)
    if len(np.unique(x[np.isfinite(x)])) < 3:
        return Verdict("C11", "inconclusive", criterion, {"corpora": int(len(points))}, "E7", statement)
    rho, lo, hi = bootstrap_spearman(x, y, n_boot, seed)
    ok = None if not np.isfinite(rho) else (False if rho >= 0 else (True if hi < 0 else None))
    evidence = {
        "rho": rho,
        "ci_low": lo,
        "ci_high": hi,
        "corpora": int(len(points)),
        "estimator": estimator,
        "points": {
            str(c): [float(a), float(b)] for c, a, b in zip(points.get("corpus", range(len(x))), x, y)
        },
    }
    return Verdict("C11", decide(ok), criterion, evidence, "E7", statement)


def rank_loss_rhos(ok: pd.DataFrame, records: list[dict], estimator: str) -> pd.DataFrame:
    """Per run: Spearman ρ over checkpoints between the head-mean kernel rank and the held-out loss."""
    curves = curves_by_run(records)
    rows = []
    for _, row in ok.iterrows():
        c = curves.get(row["run_id"], {})
        rank = trajectory(c, f"K_{estimator}")
        loss = np.asarray(c.get("val_loss", []), dtype=float)
        rows.append(
            {
                "run_id": row["run_id"],
                "corpus": row["corpus.name"],
                "seed": row["seed"],
                "checkpoints": int(len(loss)),
                "rho_rank_loss": spearman(rank, loss),
                "rank_initial": float(rank[0]) if len(rank) else np.nan,
                "rank_final": float(rank[-1]) if len(rank) else np.nan,
            }
        )
    return pd.DataFrame(rows)


def trajectory(curves: dict, key: str) -> np.ndarray:
    """Head-mean of a per-head statistic at every checkpoint: ``(checkpoints,)``."""
    values = (curves.get("heads") or {}).get(key, [])
    return np.array([np.nanmean(np.asarray(v, dtype=float)) for v in values]) if values else np.array([])


def verdict_c12(rhos: pd.DataFrame, rho_complexity: float, *, estimator: str, min_abs_rho: float) -> Verdict:
    """C12 from per-run ρ(rank, loss) and C11's ρ(rank, complexity)."""
    criterion = (
        f"median over runs of |Spearman rho(head-mean {estimator}, held-out loss)| over checkpoints >= "
        f"{min_abs_rho:g} and greater than |rho(rank, complexity)| across corpora (C11)"
    )
    statement = "the static kernel rank tracks optimisation progress (loss), not task complexity"
    usable = rhos[(rhos["checkpoints"] >= 3) & np.isfinite(rhos["rho_rank_loss"])] if len(rhos) else rhos
    if not len(usable) or not np.isfinite(rho_complexity):
        return Verdict(
            "C12",
            "inconclusive",
            criterion,
            {"runs": int(len(usable)), "rho_complexity": rho_complexity},
            "E7",
            statement,
        )
    med_abs = float(usable["rho_rank_loss"].abs().median())
    evidence = {
        "median_abs_rho_rank_loss": med_abs,
        "median_rho_rank_loss": float(usable["rho_rank_loss"].median()),
        "abs_rho_rank_complexity": abs(rho_complexity),
        "runs": int(len(usable)),
        "estimator": estimator,
        "tracks_loss_more_than_complexity": med_abs > abs(rho_complexity),
    }
    return Verdict(
        "C12",
        decide(med_abs >= min_abs_rho and med_abs > abs(rho_complexity)),
        criterion,
        evidence,
        "E7",
        statement,
    )


def head_table(ok: pd.DataFrame, records: list[dict]) -> pd.DataFrame:
    """Final-checkpoint statistics per (run, layer, head)."""
    curves = curves_by_run(records)
    keys = (
        "sink_score",
        "locality_mass",
        "positional_prior_explained",
        "K_energy_effective_rank",
        "mixer_energy_effective_rank",
    )
    rows = []
    for _, row in ok.iterrows():
        heads = curves.get(row["run_id"], {}).get("heads") or {}
        final = {k: np.asarray(heads[k][-1], dtype=float) for k in keys if heads.get(k)}
        if "sink_score" not in final:
            continue
        L, H = final["sink_score"].shape
        for layer in range(L):
            for h in range(H):
                rows.append(
                    {
                        "run_id": row["run_id"],
                        "corpus": row["corpus.name"],
                        "seed": row["seed"],
                        "layer": layer,
                        "head": h,
                        **{k: float(v[layer, h]) for k, v in final.items()},
                    }
                )
    return pd.DataFrame(rows)


def verdict_c13(
    heads: pd.DataFrame, *, sink: float, locality: float, positional: float, share: float
) -> Verdict:
    """C13 from a per-head table with ``sink_score``, ``locality_mass``, ``positional_prior_explained``."""
    criterion = (
        f"share of heads (final checkpoint, all runs) explained by a structural prior — sink score > {sink:g}, "
        f"locality mass >= {locality:g} or position-only prior share >= {positional:g} — is at least {share:.0%}"
    )
    statement = "structural priors (sink, locality, position) dominate the realised mixers"
    if not len(heads):
        return Verdict("C13", "inconclusive", criterion, {"heads": 0}, "E7", statement)
    s, loc, p = (
        heads[c].to_numpy(float) for c in ("sink_score", "locality_mass", "positional_prior_explained")
    )
    explained = structural_explained(
        s, loc, p, sink_threshold=sink, locality_threshold=locality, positional_threshold=positional
    )
    with np.errstate(invalid="ignore"):
        evidence = {
            "share_explained": float(explained.mean()),
            "heads": int(len(heads)),
            "share_sink": float((s > sink).mean()),
            "share_local": float((loc >= locality).mean()),
            "share_positional": float((p >= positional).mean()),
            "share_by_corpus": {
                str(c): float(explained[(heads["corpus"] == c).to_numpy()].mean())
                for c in heads["corpus"].unique()
            },
        }
    return Verdict("C13", decide(evidence["share_explained"] >= share), criterion, evidence, "E7", statement)


def analyse_e7(cfg, table: pd.DataFrame, records: list[dict]) -> Analysis:
    ok = table[table["status"] == "ok"] if len(table) else table
    n_diverged = int((table["status"] == "diverged").sum()) if len(table) else 0
    corpora = corpus_table(cfg, ok) if len(ok) else pd.DataFrame()
    rank = f"K_{cfg.rank_estimator}"
    points = (
        corpora.rename(columns={rank: "rank"})
        if len(corpora)
        else pd.DataFrame(columns=["complexity_bits", "rank"])
    )
    c11 = verdict_c11(points, estimator=cfg.rank_estimator, n_boot=cfg.bootstrap, seed=cfg.bootstrap_seed)
    rhos = (
        rank_loss_rhos(ok, records, cfg.rank_estimator)
        if len(ok)
        else pd.DataFrame(columns=["checkpoints", "rho_rank_loss"])
    )
    c12 = verdict_c12(
        rhos,
        c11.evidence.get("rho", float("nan")),
        estimator=cfg.rank_estimator,
        min_abs_rho=cfg.c12_min_abs_rho,
    )
    heads = head_table(ok, records) if len(ok) else pd.DataFrame()
    c13 = verdict_c13(
        heads,
        sink=cfg.c13_sink_threshold,
        locality=cfg.c13_locality_threshold,
        positional=cfg.c13_positional_threshold,
        share=cfg.c13_share,
    )
    figures = {}
    if len(ok):
        figures["e7_rank_vs_complexity"] = plot_rank_vs_complexity(corpora, cfg.rank_estimator)
        figures["e7_rank_vs_loss"] = plot_rank_vs_loss(ok, records, cfg.rank_estimator)
        if len(heads):
            figures["e7_sink_locality_heatmaps"] = plot_structural_heatmaps(heads)
    notes = _notes(cfg, n_diverged)
    tables = {"corpora": corpora, "rank_loss": rhos, "heads": heads} if len(ok) else {}
    results = (
        table.drop(
            columns=[
                c for c in table.columns if c.startswith("train.") and c not in ("train.steps", "train.lr")
            ]
        )
        if len(table)
        else table
    )
    return Analysis(results=results, verdicts=[c11, c12, c13], figures=figures, tables=tables, notes=notes)


def _notes(cfg, n_diverged: int) -> list[str]:
    source = (
        "the exact entropy rate of the source (stationary distribution of the context chain)"
        if cfg.complexity_source == "known"
        else "their compression estimate"
    )
    notes = [
        f"Models: causal LM, {cfg.n_layers} layers × {cfg.n_heads} heads, d_model {cfg.d_model}, context {cfg.n_ctx}, "
        f"learned absolute positions, pre-LN; AdamW lr {cfg.train.lr:g}, {cfg.train.steps} steps of batch "
        f"{cfg.train.batch_size}; {cfg.seeds} seed(s) per corpus of {cfg.corpus_tokens} tokens ({cfg.val_fraction:.0%} held out).",
        f"Predicted complexity (bits per token): synthetic Markov corpora use {source}; code and text corpora use the "
        "best of lzma (preset 9e) and bz2 (level 9) bits per byte on the corpus — an upper bound on the entropy rate "
        "that overestimates it at this sample size (the corpus table lists both for the synthetic sources).",
        f"Kernel ranks are from raw W_Q, W_K (pre-LN scale not folded), shape (d_head, d_head) for Gavish–Donoho. "
        f"C11/C12 use {cfg.rank_estimator}; realised mixers on {cfg.probe_windows} held-out windows, locality "
        f"window ±{cfg.locality_window}.",
    ]
    if n_diverged:
        notes.append(f"{n_diverged} run(s) diverged and are excluded from every verdict.")
    return notes
