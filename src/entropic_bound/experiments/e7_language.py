"""E7 — natural language (the paper's Appendix B): small causal LMs on corpora of different complexity.

One run is one (corpus, seed) language model (:class:`~entropic_bound.lm.model.CausalLM`, nanoGPT
sized) trained with AdamW on byte- or symbol-level tokens. At log-spaced checkpoints it records the
train and held-out loss, every estimator on each head's static kernel ``K_h = W_Q^h W_K^hᵀ``, and
on fixed held-out windows the realised-mixer ranks, sink and locality scores and the position-prior
share. The predicted complexity of a corpus is its exact entropy rate (synthetic Markov sources) or
its best compression rate under lzma/bz2 (code, text). Claims: C11 kernel rank anti-correlates with
complexity, C12 it tracks the loss over training rather than complexity, C13 structural priors
dominate the realised mixers (see :mod:`.e7_analysis`).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from ..config import param
from ..errors import ConfigError
from ..lm.corpora import CORPORA, Corpus, file_digest, load_corpus, text_name
from ..lm.model import CausalLM
from ..lm.probe import probe
from ..lm.trainer import LMTrainConfig, random_starts, train_lm, windows
from ..registry import EXPERIMENTS
from ..spectra import PANEL
from ..sweep.spec import RunResult, RunSpec
from .base import Experiment, derive_seed, flat_params, spec_params
from .e7_analysis import analyse_e7

ESTIMATOR_KEYS = tuple(key for key, _, _ in PANEL)
QUICK_CORPORA = (
    "markov_v4_k1_a0.1",
    "markov_v16_k1_a0.1",
    "markov_v16_k2_a1",
    "markov_v64_k1_a1",
    "stdlib_code",
)


@dataclass(frozen=True)
class E7Config:
    corpora: tuple[str, ...] = param(QUICK_CORPORA, choices=tuple(CORPORA.names()), doc="registered corpora")
    corpus_paths: tuple[str, ...] = param(
        (), doc="text files, each one more corpus 'text:<stem>' (byte tokens)"
    )
    corpus_tokens: int = param(100_000, ge=1_000, le=100_000_000, doc="tokens per corpus (train + held out)")
    corpus_seed: int = param(0, ge=0, doc="seed of the synthetic sources (the language, fixed across runs)")
    val_fraction: float = param(0.1, gt=0.0, lt=0.5)
    seeds: int = param(1, ge=1, le=1000, doc="models per corpus (init and batch order)")
    n_ctx: int = param(64, ge=4, le=4096)
    d_model: int = param(64, ge=4, le=4096)
    n_layers: int = param(2, ge=1, le=64)
    n_heads: int = param(4, ge=1, le=256)
    probe_windows: int = param(16, ge=2, le=4096, doc="held-out windows for the realised mixers")
    locality_window: int = param(2, ge=0, doc="locality mass counts attention within ±w tokens")
    complexity_source: str = param(
        "known",
        choices=("known", "compression"),
        doc="synthetic corpora: exact entropy rate (known) or compression estimate",
    )
    rank_estimator: str = param(
        "energy_effective_rank", choices=ESTIMATOR_KEYS, doc="kernel rank for C11/C12"
    )
    bootstrap: int = param(2000, ge=100, le=1_000_000, doc="bootstrap resamples for the C11 interval")
    bootstrap_seed: int = param(0, ge=0)
    c12_min_abs_rho: float = param(0.5, ge=0.0, le=1.0, doc="C12: median |Spearman(rank, loss)| needed")
    c13_sink_threshold: float = param(0.3, ge=0.0, le=1.0)
    c13_locality_threshold: float = param(0.5, ge=0.0, le=1.0)
    c13_positional_threshold: float = param(0.5, le=1.0)
    c13_share: float = param(0.5, ge=0.0, le=1.0, doc="C13: share of heads a prior must explain")
    train: LMTrainConfig = field(default_factory=LMTrainConfig)

    def check(self) -> None:
        if self.d_model % self.n_heads:
            raise ConfigError(
                f"The 'n_heads' parameter must divide d_model={self.d_model}. Got {self.n_heads} instead."
            )
        if not self.corpora and not self.corpus_paths:
            raise ConfigError("The 'corpora' parameter must name at least one corpus (or give corpus_paths).")
        for p in self.corpus_paths:
            if not Path(p).is_file():
                raise ConfigError(
                    f"The 'corpus_paths' parameter must list existing files. Got {p!r} instead."
                )
        n_val = int(self.corpus_tokens * self.val_fraction)
        if n_val < self.n_ctx + 2:
            raise ConfigError(
                f"The 'corpus_tokens' parameter must leave a held-out split of at least n_ctx + 2 = "
                f"{self.n_ctx + 2} tokens. Got {self.corpus_tokens} (held out {n_val}) instead."
            )


@EXPERIMENTS.register(
    "E7", summary="small causal LMs on corpora of different complexity: kernel rank, loss, priors (C11-C13)"
)
class E7Language(Experiment):
    name = "E7"
    title = "Natural language: small causal LMs on corpora of known and estimated complexity"
    claims = ("C11", "C12", "C13")
    config_class = E7Config
    max_group = 1

    @classmethod
    def default_config(cls, scale: str) -> E7Config:
        if scale == "paper":
            markov = tuple(n for n in CORPORA.names() if n.startswith("markov_"))
            return E7Config(
                corpora=(*markov, "stdlib_code"),
                corpus_tokens=1_000_000,
                seeds=2,
                n_ctx=128,
                d_model=128,
                probe_windows=32,
                train=LMTrainConfig(steps=4000, batch_size=32, lr=2e-3, warmup=100, checkpoints=24),
            )
        return E7Config()

    def _corpus_params(self) -> list[dict]:
        c = self.cfg
        out = []
        for name in c.corpora:
            extra = (
                {"corpus.python": f"{sys.version_info.major}.{sys.version_info.minor}"}
                if name == "stdlib_code"
                else {}
            )
            out.append({"corpus.name": name, "corpus.seed": c.corpus_seed, **extra})
        for p in c.corpus_paths:
            path, digest = Path(p).resolve(), file_digest(p)
            name = text_name(path)
            if any(o["corpus.name"] == name for o in out):  # two files with one stem stay two corpora
                name = f"{name}-{digest[:6]}"
            out.append({"corpus.name": name, "corpus.path": str(path), "corpus.digest": digest})
        return out

    def specs(self) -> list[RunSpec]:
        c = self.cfg
        common = {
            "corpus.tokens": c.corpus_tokens,
            "val_fraction": c.val_fraction,
            "model.n_ctx": c.n_ctx,
            "model.d_model": c.d_model,
            "model.n_layers": c.n_layers,
            "model.n_heads": c.n_heads,
            "probe_windows": c.probe_windows,
            "locality_window": c.locality_window,
            **flat_params(c.train, "train"),
        }
        return [
            RunSpec(self.name, {**corpus, **common}, seed)
            for corpus in self._corpus_params()
            for seed in range(c.seeds)
        ]

    def group_key(self, spec: RunSpec):
        return spec.run_id  # one model per group: the corpora differ in data and vocabulary

    def execute(self, group: list[RunSpec]) -> list[RunResult]:
        return [self._execute_one(spec) for spec in group]

    def _execute_one(self, spec: RunSpec) -> RunResult:
        start, p = time.perf_counter(), spec.params
        name = p["corpus.name"]
        corpus = load_corpus(
            name,
            p["corpus.tokens"],
            derive_seed("E7/corpus", name, p.get("corpus.seed", 0)),
            p.get("corpus.path"),
        )
        cut = int(len(corpus.tokens) * (1 - p["val_fraction"]))
        train_tokens, val_tokens = corpus.tokens[:cut], corpus.tokens[cut:]
        model = CausalLM(
            corpus.vocab_size,
            p["model.n_ctx"],
            d_model=p["model.d_model"],
            n_layers=p["model.n_layers"],
            n_heads=p["model.n_heads"],
            seed=derive_seed("E7/init", spec.run_id),
        )
        train = LMTrainConfig(**spec_params(spec, "train"))
        outcome = train_lm(
            model,
            train_tokens,
            val_tokens,
            train,
            torch.Generator().manual_seed(derive_seed("E7/data", spec.run_id)),
        )
        probe_gen = torch.Generator().manual_seed(derive_seed("E7/probe", spec.run_id))
        val = torch.as_tensor(val_tokens, dtype=torch.long)
        idx, _ = windows(
            val, random_starts(len(val), model.n_ctx, p["probe_windows"], probe_gen), model.n_ctx
        )
        spectra, heads = [], {}
        for snapshot in outcome.snapshots:
            model.load_state_dict(snapshot)
            sv, stats = probe(model, idx, window=p["locality_window"])
            spectra.append(sv.tolist())
            for key, value in stats.items():
                heads.setdefault(key, []).append(np.asarray(value, dtype=np.float64).tolist())
        curves = {
            "step": outcome.steps,
            "train_loss": outcome.train_loss,
            "val_loss": outcome.val_loss,
            "kernel_singular_values": spectra,
            "heads": heads,
        }
        metrics = _final_metrics(corpus, outcome, heads, len(train_tokens))
        diverged = outcome.diverged_step is not None
        if diverged:
            metrics = {k: (v if k in _CORPUS_METRICS else np.nan) for k, v in metrics.items()}
        return RunResult(
            spec,
            "diverged" if diverged else "ok",
            metrics,
            curves,
            outcome.diverged_step,
            time.perf_counter() - start,
        )

    def analyse(self, table, records):
        table, records = self.select(table, records)
        return analyse_e7(self.cfg, table, records)


_CORPUS_METRICS = (
    "entropy_rate_bits",
    "lzma_bits",
    "bz2_bits",
    "compression_bits",
    "vocab_size",
    "n_train_tokens",
)


def _final_metrics(corpus: Corpus, outcome, heads: dict, n_train: int) -> dict:
    """Corpus complexity, final losses (nats and bits) and head-averaged final statistics."""
    ln2 = np.log(2.0)
    metrics = {
        "entropy_rate_bits": np.nan if corpus.entropy_rate_bits is None else corpus.entropy_rate_bits,
        "lzma_bits": corpus.compression["lzma"],
        "bz2_bits": corpus.compression["bz2"],
        "compression_bits": corpus.compression_bits,
        "vocab_size": corpus.vocab_size,
        "n_train_tokens": n_train,
        "train_loss": outcome.train_loss[-1],
        "val_loss": outcome.val_loss[-1],
        "train_bits": outcome.train_loss[-1] / ln2,
        "val_bits": outcome.val_loss[-1] / ln2,
        "initial_val_bits": outcome.val_loss[0] / ln2,
        "steps_run": outcome.steps[-1],
    }
    for key, values in heads.items():
        final = np.asarray(values[-1], dtype=np.float64)  # (L, H)
        metrics[key if key != "sink_head" else "sink_head_share"] = float(np.nanmean(final))
    return metrics
