"""E7's executors: one ensemble of language models (one member per (corpus, seed) run), or one checkpoint.

A language-model group trains every member at once (:func:`~entropic_bound.language_models.training.trainer.train_lm_ensemble`;
member ``e`` has its own corpus, init seed and batch order, all derived from its run id, so its
numbers do not depend on the group it trained in). At every checkpoint it probes the kernels
(folded and change from init) and the realised mixers on fixed held-out windows. A checkpoint run
measures a released model's heads on natural text.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from ...inspect.logit_field import LOGIT_FIELD_COLUMNS, fit_layer
from ...language_models.corpora.catalogue import (
    LAG_SOURCES,
    MQAR_SOURCES,
    VOCAB,
    Corpus,
    expected_mixing,
    load_corpus,
)
from ...language_models.corpora.complexity import kgram_heldout_bits, order_estimate
from ...language_models.model.ensemble import EnsembleLM
from ...language_models.probes.checkpoint import (
    RANDOM_SEED,
    checkpoint_mixers,
    is_random_control,
    resolve_checkpoint,
)
from ...language_models.probes.controls import answer_accuracy, episode_starts
from ...language_models.probes.heads import (
    KernelProbe,
    content_ablation_bits,
    ensemble_lm_fields,
    joint_ablation_bits,
    mixer_stats,
)
from ...language_models.probes.structure import structure_summary
from ...language_models.training.trainer import (
    EnsembleOutcome,
    LMTrainConfig,
    heldout_bits,
    random_starts,
    tiling_starts,
    train_lm_ensemble,
    windows,
)
from ...sweep.spec import RunResult, RunSpec
from ..framework.draws import Seeds
from ..framework.params import from_params
from .config import DEFAULT_INIT_STD

CORPUS_METRICS = (
    "entropy_rate_bits",
    "mixing_known",
    "mixing_data",
    "lzma_bits",
    "bz2_bits",
    "kgram_bits",
    "unigram_bits",
    "compression_bits",
    "reference_bits",
    "n_train_tokens",
    "tokens",
)


def finite_mean(values) -> float:
    """Mean of the finite entries; NaN (and no warning) when there are none (a score without rows)."""
    a = np.asarray(values, dtype=float)
    return float(np.nanmean(a)) if np.isfinite(a).any() else float("nan")


def corpus_metrics(corpus: Corpus, train: np.ndarray, val: np.ndarray, max_order: int) -> dict:
    """Complexity of a corpus on the language model's own split (bits/token; see :mod:`...language_models.corpora.complexity`).

    ``reference_bits`` — what a model that has learned the corpus should approach: the exact
    entropy rate where known, otherwise the best held-out k-gram model on the same split (a
    short-context predictor like the model; lzma and bz2 also exploit repeats far beyond the
    model's context, so they stay a complexity measure, ``compression_bits``, not a target).
    """
    kgram = kgram_heldout_bits(train, val, VOCAB, max_order)
    best = min(kgram.values())
    compression = min(best, *corpus.compression.values())
    nan = float("nan")
    # a k-gram resample's Monte Carlo rate (k >= 4) is below what a model can learn from the sample:
    # its learned filter uses the held-out k-gram reference, the rate stays its complexity
    target = corpus.entropy_rate_bits if corpus.role.exact_target else None
    return {
        "entropy_rate_bits": nan if corpus.entropy_rate_bits is None else corpus.entropy_rate_bits,
        "mixing_known": nan if corpus.mixing_demand is None else float(corpus.mixing_demand),
        "mixing_data": float(order_estimate(kgram)),
        "lzma_bits": corpus.compression["lzma"],
        "bz2_bits": corpus.compression["bz2"],
        "kgram_bits": best,
        "unigram_bits": kgram[0],
        "compression_bits": compression,
        "reference_bits": best if target is None else target,
        "n_train_tokens": len(train),
        "tokens": len(train) + len(val),  # a user's file may be shorter than task.tokens
    }


def _load(spec: RunSpec, seeds: Seeds) -> Corpus:
    """The run's corpus; a fixed text's window moves with the draw (draw 0: its beginning)."""
    p = spec.params
    name = p["corpus.name"]
    return load_corpus(
        name,
        p["corpus.tokens"],
        seeds.seed("corpus", name, p.get("corpus.seed", 0)),
        p.get("corpus.path"),
        window_seed=seeds.window(name),
    )


class _Recorder:
    """Per-checkpoint probe results of every member: ``heads[key][checkpoint]`` is ``(E, L, H)``."""

    def __init__(
        self, model: EnsembleLM, probe_idx: torch.Tensor, window: int, answer_rows: np.ndarray | None = None
    ) -> None:
        self.kernels, self.idx, self.window = KernelProbe(model), probe_idx, window
        self.answer_rows = answer_rows
        self.spectra: list[np.ndarray] = []
        self.heads: dict[str, list[np.ndarray]] = {}

    def __call__(self, step: int, model: EnsembleLM) -> None:
        sv, stats = self.kernels(model)
        stats.update(mixer_stats(model, self.idx, window=self.window, answer_rows=self.answer_rows))
        self.spectra.append(sv)
        for key, value in stats.items():
            self.heads.setdefault(key, []).append(value)

    def member_curves(self, e: int) -> dict:
        return {
            "kernel_singular_values": [s[e].tolist() for s in self.spectra],
            "heads": {k: [v[e].tolist() for v in values] for k, values in self.heads.items()},
        }


def _episode_pools(group, members, n_ctx: int) -> list[tuple[np.ndarray, np.ndarray] | None]:
    """Allowed window starts per member: a recall control's episode starts in its (train, held-out)
    splits — it trains, is probed and is scored on windows that open at an episode, as Zoology's
    fixed-layout MQAR sequences — and ``None`` (anywhere) for every other corpus."""
    out = []
    for corpus, train, val, _ in members:
        if corpus.episode_len is None:
            out.append(None)
            continue
        out.append(
            (episode_starts(train, corpus.episode_len, n_ctx), episode_starts(val, corpus.episode_len, n_ctx))
        )
    return out


def _probe_windows(
    group, members, pools, n_ctx: int, count: int, seeds: Seeds
) -> tuple[torch.Tensor, np.ndarray]:
    """Fixed held-out windows per member for the probes ``(E, count, n_ctx)`` and their answer rows
    ``(E, count, n_ctx)``: True where the query's target (the next token) is a recall control's
    answer (all False for a corpus without an answer mask)."""
    out, rows = [], []
    for s, (corpus, train, val, _), pool in zip(group, members, pools):
        gen = torch.Generator().manual_seed(seeds.of_run("probe", s.run_id))
        allowed = None if pool is None else torch.as_tensor(pool[1], dtype=torch.long)
        v = torch.as_tensor(val, dtype=torch.long)
        starts = random_starts(len(v), n_ctx, count, gen, allowed)
        out.append(windows(v, starts, n_ctx)[0])
        rows.append(np.zeros((len(starts), n_ctx), dtype=bool))
        if corpus.answer_mask is not None:
            mask = corpus.answer_mask[len(train) :]
            targets = np.asarray(starts)[:, None] + 1 + np.arange(n_ctx)  # next-token positions
            rows[-1] = mask[targets]
    return torch.stack(out), np.stack(rows)


def group_model(group: list[RunSpec], seeds: Seeds) -> EnsembleLM:
    """The untrained ensemble of one group: the first run's model shape, each member initialised
    from its own run id."""
    p = group[0].params
    return EnsembleLM(
        VOCAB,
        p["model.n_ctx"],
        [seeds.of_run("init", s.run_id) for s in group],
        d_model=p["model.d_model"],
        n_layers=p["model.n_layers"],
        n_heads=p["model.n_heads"],
        init_std=p.get("model.init_std", DEFAULT_INIT_STD),
        emb_std=p.get("model.emb_std", DEFAULT_INIT_STD),
    )


def execute_lm_group(group: list[RunSpec], seeds: Seeds, device: str = "cpu") -> list[RunResult]:
    """Train the group's members as one ensemble on ``device``, from the seeds of their draw; one
    result per spec."""
    start, p = time.perf_counter(), group[0].params
    corpora = {}
    for spec in group:
        key = (spec.params["corpus.name"], spec.params.get("corpus.path"))
        if key not in corpora:
            corpus = _load(spec, seeds)
            cut = int(len(corpus.tokens) * (1 - p["val_fraction"]))
            train, val = corpus.tokens[:cut], corpus.tokens[cut:]
            metrics = corpus_metrics(corpus, train, val, p["kgram_max_order"])
            floor = window_floor(spec.params["corpus.name"], p["model.n_ctx"])
            if floor is not None:  # what a model that sees only its window can reach
                metrics["reference_bits"] = floor
            corpora[key] = (corpus, train, val, metrics)
    members = [corpora[(s.params["corpus.name"], s.params.get("corpus.path"))] for s in group]
    n_ctx = p["model.n_ctx"]
    model = group_model(group, seeds).to(device)
    pools = _episode_pools(group, members, n_ctx)
    probe_idx, answer_rows = _probe_windows(
        group, members, pools, n_ctx, p["probe_windows"], seeds
    )  # (E, P, n)
    recorder = _Recorder(model, probe_idx, p["locality_window"], answer_rows)
    gens = [torch.Generator().manual_seed(seeds.of_run("data", s.run_id)) for s in group]
    cfg = LMTrainConfig(**from_params(group[0], "train"))
    outcome = train_lm_ensemble(model, [(m[1], m[2]) for m in members], cfg, gens, recorder, pools)
    extra = _final_measures(model, group, members, probe_idx, pools)
    wall = (time.perf_counter() - start) / len(group)
    return [
        _member_result(spec, e, members[e][0], members[e][3], outcome, recorder, wall, extra[e])
        for e, spec in enumerate(group)
    ]


def window_floor(name: str, n_ctx: int) -> float | None:
    """The least mean loss over a window's targets for a control whose early targets are blind: a
    recall source on episode-aligned windows, a lag copy (targets before the lag see no parent)."""
    recall = MQAR_SOURCES.get(name)  # a registered recall corpus: its episodes start at token 0
    if recall is not None:
        return recall.aligned_window_bits(n_ctx)
    lag_copy = LAG_SOURCES.get(name)
    if lag_copy is not None:
        return lag_copy.window_entropy(n_ctx)
    return None


ANSWER_WINDOWS = 128  # held-out episode-aligned windows for the recall control's answer accuracy
#: The final held-out loss reads up to this many non-overlapping held-out windows (the checkpoint curve
#: reads 32, about 1,000 tokens: a standard error near 0.05 bits/token, too coarse for "within 0.1 bits
#: of the reference"; 1,024 windows of 33 tokens put it near 0.01).
HELDOUT_WINDOWS = 1024


def _final_measures(model: EnsembleLM, group, members, probe_idx: torch.Tensor, pools) -> list[dict]:
    """Per member, at the final step: the logit-field fit of every head on the probe windows
    (``{column: (L, H)}``), the content ablation per head (and, for a control corpus, of every subset
    of heads together), the loss over the whole held-out split
    (:func:`_heldout`) and, for a recall control, its answer accuracy (:func:`_answer_accuracy`)."""
    fields = ensemble_lm_fields(model, probe_idx)  # [member][layer][head] dicts
    ablation = content_ablation_bits(model, probe_idx)  # (E, L, H)
    # C13's controls are judged on their content heads ablated together: every subset, kept for them
    controls = [bool(expected_mixing(s.params["corpus.name"])) for s in group]
    joint = joint_ablation_bits(model, probe_idx) if any(controls) else None  # (E, 2^(L·H))
    heldout = _heldout(model, members, pools)
    out = [
        {
            "logit_field": {c: [[h[c] for h in layer] for layer in fields[e]] for c in LOGIT_FIELD_COLUMNS},
            "final_heads": {"content_ablation_bits": ablation[e].tolist()},
            **heldout[e],
            **({"joint_ablation_bits": joint[e].tolist()} if joint is not None and controls[e] else {}),
        }
        for e in range(len(group))
    ]
    for e, accuracy in _answer_accuracy(model, members).items():
        out[e]["answer_accuracy"] = accuracy
    return out


def _heldout(model: EnsembleLM, members, pools) -> list[dict]:
    """Per member, the final loss over up to :data:`HELDOUT_WINDOWS` non-overlapping windows of its
    held-out split (a recall control's open at its episodes) and how many windows that was."""
    vals = [m[2] for m in members]
    tiles = [
        tiling_starts(len(v), model.n_ctx, None if pool is None else pool[1], HELDOUT_WINDOWS)
        for v, pool in zip(vals, pools)
    ]
    bits = heldout_bits(model, vals, tiles)
    return [{"heldout_bits": float(b), "heldout_windows": len(t)} for b, t in zip(bits, tiles)]


def _answer_accuracy(model: EnsembleLM, members) -> dict[int, float]:
    """``{member: held-out answer accuracy}`` for the recall controls (corpora with an answer mask),
    on up to :data:`ANSWER_WINDOWS` episode-aligned held-out windows."""
    vals, masks, starts = [], [], []
    for corpus, train, val, _ in members:
        vals.append(val)
        if corpus.answer_mask is None:
            masks.append(np.zeros(len(val), dtype=bool))
            starts.append(np.zeros(0, dtype=np.int64))
            continue
        masks.append(corpus.answer_mask[len(train) :])
        starts.append(episode_starts(val, corpus.episode_len, model.n_ctx)[:ANSWER_WINDOWS])
    recall = [e for e, m in enumerate(masks) if m.any()]
    if not recall:
        return {}
    w = min(len(starts[e]) for e in recall)  # answer_accuracy takes one window count for all
    padded = [s[:w] if len(s) >= w else np.zeros(w, dtype=np.int64) for s in starts]
    accuracy = answer_accuracy(model, vals, masks, padded)
    return {e: float(accuracy[e]) for e in recall}


def _member_result(
    spec, e, corpus, metrics, outcome: EnsembleOutcome, recorder: _Recorder, wall, extra: dict
) -> RunResult:
    ln2 = np.log(2.0)
    val_bits = [float(v[e]) / ln2 for v in outcome.val_loss]
    final = extra["heldout_bits"]  # the whole held-out split; val_bits' 32 windows are the curve
    curves = {
        "step": outcome.steps,
        "train_loss": [float(v[e]) for v in outcome.train_loss],
        "val_loss": [float(v[e]) for v in outcome.val_loss],
        "curve_step": outcome.curve_steps,
        "batch_loss": [float(v[e]) for v in outcome.batch_loss],
        **recorder.member_curves(e),
        "logit_field": extra["logit_field"],  # final step only: {column: (L, H)}
        "final_heads": extra["final_heads"],  # final step only: {score: (L, H)}
        **{k: extra[k] for k in ("joint_ablation_bits",) if k in extra},  # final step: (2^(L·H),)
    }
    out = {
        **metrics,
        "train_bits": float(outcome.train_loss[-1][e]) / ln2,
        "val_bits": val_bits[-1],
        "initial_val_bits": val_bits[0],
        "heldout_bits": final,
        "heldout_windows": extra["heldout_windows"],
        "loss_gap_bits": final - metrics["reference_bits"],
        "loss_gap_fraction": (final - metrics["reference_bits"])
        / (metrics["unigram_bits"] - metrics["reference_bits"]),
        "steps_run": outcome.steps[-1],
        "answer_accuracy": extra.get("answer_accuracy", float("nan")),
        **{c: finite_mean(v) for c, v in extra["logit_field"].items()},
        "content_ablation_bits_max": float(np.max(extra["final_heads"]["content_ablation_bits"])),
    }
    for key, values in recorder.heads.items():
        out[key] = finite_mean(values[-1][e])
    step = int(outcome.diverged_step[e])
    if step >= 0:
        out = {k: (v if k in CORPUS_METRICS else float("nan")) for k, v in out.items()}
    return RunResult(spec, "diverged" if step >= 0 else "ok", out, curves, step if step >= 0 else None, wall)


def execute_checkpoint(spec: RunSpec, seeds: Seeds) -> RunResult:
    """Structure scores of a released checkpoint's heads on the natural text named in the spec."""
    start, p = time.perf_counter(), spec.params
    resolved = resolve_checkpoint(p["probe.checkpoint"])
    if resolved is None:
        from ...errors import DataError

        raise DataError(f"The checkpoint '{p['probe.checkpoint']}' is not available on this machine.")
    window = seeds.window(p["probe.text"])  # another text per draw
    text_corpus = load_corpus(p["probe.text"], p["probe.text_bytes"], seeds.moved(0), window_seed=window)
    text = np.asarray(text_corpus.tokens, dtype=np.uint8).tobytes().decode("utf-8", errors="replace")
    random = is_random_control(p["probe.checkpoint"])
    mixers, inputs, causal, d_head = checkpoint_mixers(
        resolved[0],
        text,
        window_len=p["probe.window_len"],
        max_windows=p["probe.windows"],
        reinit_seed=RANDOM_SEED if random else None,
    )
    scores = structure_summary(mixers, causal=causal, window=p["locality_window"])  # {k: (L, H)}
    fields = [
        fit_layer(inputs[:, layer], mixers[:, layer], causal=causal) for layer in range(mixers.shape[1])
    ]
    field = {c: [[h[c] for h in layer] for layer in fields] for c in LOGIT_FIELD_COLUMNS}
    metrics = {
        "causal": float(causal),
        "d_head": float(d_head),
        **{k: finite_mean(v) for k, v in scores.items()},
    }
    metrics.update({c: finite_mean(v) for c, v in field.items()})
    curves = {
        "heads": {k: [np.asarray(v).tolist()] for k, v in scores.items()},
        "logit_field": field,
        "windows": int(mixers.shape[0]),
        "window_len": int(mixers.shape[-1]),
    }
    return RunResult(spec, "ok", metrics, curves, None, time.perf_counter() - start)
