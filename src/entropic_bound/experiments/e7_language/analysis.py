"""E7's analysis: learned flags, corpus / checkpoint / head tables, figures and notes beside C11–C13.

Pure functions of the stored rows and curves. A language model counts as evidence only when it
has **learned** its corpus: it has closed all but ``verdict.learned_max_gap_fraction`` of the gap between
the unigram model and the reference (the exact entropy rate of a synthetic source, otherwise the
best held-out k-gram model on the same split), ``(bits − ref)/(unigram − ref)``, *and* attention at least ``verdict.learned_min_uniform_tv`` from uniform (total variation, head
mean), *and*, for a recall control, answers at least ``verdict.learned_min_answer_accuracy`` of the
held-out answer tokens right (its loss averages over unpredictable keys; the answers are what
routing decides). Runs that fail are set aside and counted in every verdict. The criteria and their
robustness grids are in :mod:`.claims`, the statistics in :mod:`.statistics`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...inspect.logit_field import LOGIT_FIELD_COLUMNS
from ...language_models.corpora.catalogue import corpus_kind
from ...language_models.probes.checkpoint import (
    is_random_control,
    resolve_checkpoint,
    skip_message,
)
from ...language_models.probes.structure import head_categories
from ..framework.decision import curves_by_run
from ..framework.params import to_params
from ..framework.verdict import Analysis, ClaimContext, Verdict
from .config import DEFAULT_INIT_STD, MEASURE_COLUMN
from .plots import plot_loss_curves, plot_rank_vs_complexity, plot_rank_vs_progress, plot_structure
from .set_aside import print_set_aside


def kernel_key(cfg) -> str:
    return f"{'K' if cfg.verdict.kernel_measure == 'folded' else 'dK'}_{cfg.verdict.rank_estimator}"


def run_table(cfg, table: pd.DataFrame) -> pd.DataFrame:
    """Language-model rows with ``corpus``, ``kind``, ``information_bits`` and the ``learned`` flag."""
    lm = table[table["corpus.name"].notna()] if "corpus.name" in table else table.iloc[0:0]
    lm = lm.assign(corpus=lm["corpus.name"], kind=[corpus_kind(n) for n in lm["corpus.name"]])
    known = lm["entropy_rate_bits"].where(np.isfinite(lm["entropy_rate_bits"]), np.nan)
    lm = lm.assign(information_bits=known.fillna(lm["compression_bits"]))
    ok = lm["status"] == "ok"
    accuracy = lm["answer_accuracy"] if "answer_accuracy" in lm else pd.Series(np.nan, index=lm.index)
    answers = ~np.isfinite(accuracy) | (accuracy >= cfg.verdict.learned_min_answer_accuracy)
    learned = (
        ok
        & (lm["loss_gap_fraction"] <= cfg.verdict.learned_max_gap_fraction)
        & (lm["uniform_tv"] >= cfg.verdict.learned_min_uniform_tv)
        & answers
    )
    return lm.assign(learned=learned.to_numpy(bool)).reset_index(drop=True)


def main_shape(cfg, runs: pd.DataFrame) -> np.ndarray:
    """Runs of the grid's main model shape and training (``cfg.model``, ``cfg.train``): kernel ranks
    are compared across corpora only at one shape (the recall control trains wider and longer)."""
    same = np.ones(len(runs), dtype=bool)
    for k, v in {**to_params(cfg.model, "model"), **to_params(cfg.train, "train")}.items():
        if k in runs:  # a run spec leaves the init keys out at their default (experiment.specs)
            col = runs[k].fillna(DEFAULT_INIT_STD) if k in ("model.init_std", "model.emb_std") else runs[k]
            same &= (col == v).to_numpy()
    return same


def _heldout(runs: pd.DataFrame) -> pd.Series:
    """Each run's final loss over its whole held-out split; ``val_bits`` (the curve's 32 windows)
    for a run stored before that was measured."""
    if "heldout_bits" not in runs:
        return runs["val_bits"]
    return runs["heldout_bits"].where(np.isfinite(runs["heldout_bits"]), runs["val_bits"])


def corpus_table(cfg, runs: pd.DataFrame) -> pd.DataFrame:
    """One row per corpus of the kinds C11 uses (main shape only): complexity measures, learned seeds
    and their ranks."""
    key, col = kernel_key(cfg), MEASURE_COLUMN[cfg.verdict.complexity_measure]
    rows = []
    runs = runs[main_shape(cfg, runs)]
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
                "heldout_bits": float(_heldout(g).mean()),
                "reference_bits": float(first["reference_bits"]),
                "tokens": int(first["tokens"]) if "tokens" in g and np.isfinite(first["tokens"]) else -1,
                "answer_accuracy": float(g["answer_accuracy"].mean())
                if "answer_accuracy" in g
                else float("nan"),
            }
        )
    return pd.DataFrame(rows)


def progress_points(cfg, runs: pd.DataFrame, records: list[dict]) -> pd.DataFrame:
    """Learned runs' checkpoints ``t ≥ 1``: rank, progress, log step, weight norm, complexity."""
    curves, key, rows = curves_by_run(records), kernel_key(cfg), []
    chosen = runs["learned"] & runs["kind"].isin(cfg.verdict.c12_kinds) & main_shape(cfg, runs)
    for _, run in runs[chosen].iterrows():
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


HEAD_SCORES = (
    "sink_score",
    "locality_mass",
    "positional_prior_explained",
    "band_explained",
    "uniform_tv",
    "content_tv",
)
#: Scores that runs stored before they existed lack (NaN then): the largest per-row content TV and
#: the content TV over a recall control's answer rows (NaN for every source without an answer mask);
#: the content shares (what categorises) fall back to those TVs for such runs.
OPTIONAL_SCORES = ("content_tv_max", "content_tv_answers", "content_share", "content_share_answers")
_FALLBACK = {"content_share": "content_tv", "content_share_answers": "content_tv_answers"}
#: Scores of the final step only (trained LMs): the loss a head's content routing carries.
FINAL_HEAD_SCORES = ("content_ablation_bits",)


def head_table(cfg, table: pd.DataFrame, runs: pd.DataFrame, records: list[dict]) -> pd.DataFrame:
    """Final-checkpoint scores and category of every head of learned LMs and of checkpoints."""
    curves, rows = curves_by_run(records), []
    sources = [
        (r["run_id"], r["corpus"], r["kind"], r["model.d_model"] / r["model.n_heads"])
        for _, r in runs[runs["learned"]].iterrows()
    ]
    if "probe.checkpoint" in table:
        ck = table[table["probe.checkpoint"].notna() & (table["status"] == "ok")]
        sources += [
            (
                r["run_id"],
                f"checkpoint:{r['probe.checkpoint']}",
                _checkpoint_kind(r["probe.checkpoint"]),
                float(r["d_head"]),
            )
            for _, r in ck.iterrows()
        ]
    for run_id, source, kind, d_head in sources:
        heads = curves.get(run_id, {}).get("heads") or {}
        final = {k: np.asarray(heads[k][-1], float) for k in HEAD_SCORES if heads.get(k)}
        if len(final) < len(HEAD_SCORES):
            continue
        nan = np.full(final["content_tv"].shape, np.nan)
        final.update({k: np.asarray(heads[k][-1], float) if heads.get(k) else nan for k in OPTIONAL_SCORES})
        final.update({k: final[old] for k, old in _FALLBACK.items() if not heads.get(k)})
        fields = curves.get(run_id, {}).get("logit_field") or {}
        final.update({c: np.asarray(fields[c], float) if c in fields else nan for c in LOGIT_FIELD_COLUMNS})
        late = curves.get(run_id, {}).get("final_heads") or {}  # NaN: a checkpoint, or stored before
        final.update({c: np.asarray(late[c], float) if c in late else nan for c in FINAL_HEAD_SCORES})
        for (layer, h), _ in np.ndenumerate(final["content_tv"]):
            rows.append(
                {
                    "run_id": run_id,
                    "source": source,
                    "kind": kind,
                    "layer": layer,
                    "head": h,
                    "d_head": float(d_head),
                    **{k: float(v[layer, h]) for k, v in final.items()},
                }
            )
    out = pd.DataFrame(
        rows,
        columns=[
            "run_id",
            "source",
            "kind",
            "layer",
            "head",
            "d_head",
            *HEAD_SCORES,
            *OPTIONAL_SCORES,
            *LOGIT_FIELD_COLUMNS,
            *FINAL_HEAD_SCORES,
        ],
    )
    return out.assign(category=categorise(cfg, out))


def _checkpoint_kind(name: str) -> str:
    return "random_checkpoint" if is_random_control(name) else "checkpoint"


def categorise(cfg, heads: pd.DataFrame) -> np.ndarray:
    if not len(heads):
        return np.array([], dtype=object)
    return head_categories(
        {k: heads[k].to_numpy(float) for k in (*HEAD_SCORES, *OPTIONAL_SCORES) if k in heads},
        content=cfg.verdict.c13_content_tv,
        sink=cfg.verdict.c13_sink_threshold,
        locality=cfg.verdict.c13_locality_threshold,
        structure=cfg.verdict.c13_structure_tv,
        min_moved=cfg.verdict.c13_min_moved,
    )


def prepare(cfg, table: pd.DataFrame, records: list[dict]) -> tuple[pd.DataFrame, ClaimContext]:
    """Every claim reads the LM runs (:func:`run_table`, all statuses: a run that is not ok is not
    learned), their checkpoints (records), and the head table of learned runs and checkpoints."""
    if not len(table):
        return table, ClaimContext(records)
    runs = run_table(cfg, table)
    n_ckpt = int(table["probe.checkpoint"].notna().sum()) if "probe.checkpoint" in table else 0
    heads = head_table(cfg, table, runs, records)
    return runs, ClaimContext(records, {"heads": heads, "checkpoints_measured": n_ckpt})


def analyse(
    cfg, table: pd.DataFrame, runs: pd.DataFrame, context: ClaimContext, verdicts: list[Verdict]
) -> Analysis:
    """The corpus, head and run tables, figures and notes beside the decided ``verdicts``."""
    records = context.records
    if not len(table):
        return Analysis(results=table, verdicts=[], notes=["E7 has no stored runs."])
    n_ckpt, heads = context.tables["checkpoints_measured"], context.tables["heads"]
    corpora = corpus_table(cfg, runs[runs["seed"] < cfg.seeds])
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
        "runs": runs[[c for c in RUN_COLUMNS if c in runs]],
    }
    return Analysis(
        results=table, verdicts=verdicts, figures=figures, tables=tables, notes=_notes(cfg, runs, n_ckpt)
    )


RUN_COLUMNS = (
    "run_id",
    "corpus",
    "kind",
    "seed",
    "tokens",
    "val_bits",
    "heldout_bits",
    "reference_bits",
    "loss_gap_bits",
    "loss_gap_fraction",
    "uniform_tv",
    "answer_accuracy",
    "learned",
)


def short_corpora(cfg, runs: pd.DataFrame) -> list[str]:
    """One line per corpus used at fewer tokens than ``task.tokens`` (a user's short file), naming
    its file (or name) and both lengths: complexities of different sizes are not comparable."""
    if "tokens" not in runs:
        return []
    out = []
    for name, g in runs.groupby("corpus", sort=False):
        got = g["tokens"].to_numpy(float)
        if np.isfinite(got).any() and np.nanmin(got) < cfg.task.tokens:
            where = (
                g["corpus.path"].iloc[0]
                if "corpus.path" in g and isinstance(g["corpus.path"].iloc[0], str)
                else name
            )
            out.append(
                f"warning: corpus {where} has {int(np.nanmin(got))} tokens, fewer than task.tokens = "
                f"{cfg.task.tokens}; it is used at its own length, so its complexity is not comparable."
            )
    return out


def _notes(cfg, runs: pd.DataFrame, n_ckpt: int) -> list[str]:
    aside = runs[~runs["learned"]]
    notes = [
        f"Models: {len(runs)} causal LMs ({cfg.model.n_layers} layers x {cfg.model.n_heads} heads, d_model {cfg.model.d_model}, context "
        f"{cfg.model.n_ctx}, byte vocabulary), trained {cfg.ensemble_size} at a time as one batched ensemble; AdamW lr "
        f"{cfg.train.lr:g}, {cfg.train.steps} steps of batch {cfg.train.batch_size}; {cfg.seeds} seed(s) per corpus. "
        f"The recall control (mqar-*) trains in its own shape ({cfg.recall_model.n_layers} x {cfg.recall_model.n_heads}, "
        f"d_model {cfg.recall_model.d_model}, context {cfg.recall_model.n_ctx}, init std {cfg.recall_model.init_std:g} "
        f"(embeddings {cfg.recall_model.emb_std:g}); lr {cfg.recall_train.lr:g}, "
        f"{cfg.recall_train.steps} steps) on episode-aligned windows; C11 and C12 leave it out (one model shape).",
        f"Learned = (held-out bits - reference)/(unigram bits - reference) at most {cfg.verdict.learned_max_gap_fraction:g} "
        f"(reference: entropy rate of a synthetic source, else the held-out Witten-Bell k-gram on the same split) and attention at least "
        f"{cfg.verdict.learned_min_uniform_tv:g} TV from uniform, and for a recall control held-out answer accuracy at least "
        f"{cfg.verdict.learned_min_answer_accuracy:g}. {len(aside)} of {len(runs)} run(s) set aside"
        + (f": {', '.join(sorted(set(aside['corpus'])))}." if len(aside) else "."),
        f"Kernel for C11/C12: {cfg.verdict.kernel_measure} ({'LN1 gain folded into W_Q, W_K' if cfg.verdict.kernel_measure == 'folded' else 'K_t - K_0, gains folded'}), "
        f"estimator {cfg.verdict.rank_estimator}; both measures are stored for every head and checkpoint.",
    ]
    notes += short_corpora(cfg, runs) + print_set_aside(cfg, runs)
    skipped = [skip_message(n) for n in cfg.released_models if resolve_checkpoint(n) is None]
    notes += [f"C13: {line}." for line in skipped]
    if not n_ckpt and cfg.released_models:
        notes.append("No released checkpoint was measured: C13 rests on the trained LMs.")
    return notes
