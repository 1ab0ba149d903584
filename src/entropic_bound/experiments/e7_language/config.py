"""E7's typed config: the corpora, the model, the training, the thresholds of C11-C13, and the scale settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ...config import param
from ...errors import ConfigError, did_you_mean
from ...language_models.corpora.catalogue import CORPORA, KINDS, corpus_role, text_file_problem
from ...language_models.corpora.debian_texts import DEBIAN_TEXTS
from ...language_models.corpora.docstrings import PACKAGE_TEXTS
from ...language_models.names import MIN_MOVED, LMTrainConfig
from ...spectra.names import panel_keys
from ..framework.draws import Drawn

#: C11's ladder (natural text, its word-shuffled and k-gram-resampled versions, code, Markov
#: sources) and C13's controls (recall: content routing; lag copy: positional; Markov: local).
QUICK_CORPORA = (
    "tinyshakespeare",
    "shakespeare-shuffled",
    "pydoc_prose",
    "stdlib_code",
    "shakespeare-kgram1",
    "shakespeare-kgram2",
    "shakespeare-kgram3",
    "shakespeare-kgram4",
    "markov_v4_k3_a0.1",
    "markov_v8_k2_a0.1",
    "mqar-p2r",
    "lagcopy-L4",
)


PAPER_CORPORA = (
    *QUICK_CORPORA,
    "shakespeare-kgram5",
    "shakespeare-kgram6",
    "markov_v4_k2_a0.1",
    "markov_v16_k2_a0.1",
    "markov_v8_k3_a0.1",
    "lagcopy-L8",
    # four pairs, each key asked about twice: learned by 2 of 3 paper seeds at 3,000 steps, which
    # stands as a control (unlearned runs are set aside, as for every corpus); too costly for quick
    "mqar-p4r",
    # real text for the natural domain C11 and C12 are decided on (App. B: natural-language corpora):
    # with tinyshakespeare, its shuffle and pydoc_prose, 10 English corpora of technical prose ...
    *PACKAGE_TEXTS,
    # ... and 25 texts Debian packages install, of other registers and languages (fortunes, manual
    # pages, manuals, a lexicon, essays): 35 natural corpora, where C11 at rho = -0.42 needs ~24 and
    # C12 ~52 learned natural runs (3 seeds each: 105)
    *DEBIAN_TEXTS,
)


VERSIONED = {"stdlib_code", "pydoc_prose"}  # read from the running Python's standard library


SOURCES = (*KINDS, "checkpoint", "random_checkpoint")


COMPLEXITY_MEASURES = ("information", "compression", "mixing_known", "mixing_data")


MEASURE_COLUMN = {
    "information": "information_bits",
    "compression": "compression_bits",
    "mixing_known": "mixing_known",
    "mixing_data": "mixing_data",
}


@dataclass(frozen=True)
class E7Task:
    """The corpora the language models learn: which, how many tokens, and the held-out split."""

    corpora: tuple[str, ...] = param(QUICK_CORPORA, choices=tuple(CORPORA.names()), doc="registered corpora")
    corpus_paths: tuple[str, ...] = param((), doc="text files, each one more natural corpus 'text:<stem>'")
    tokens: int = param(100_000, ge=1_000, le=100_000_000, doc="tokens per corpus (train + held out)")
    seed: int = param(0, ge=0, doc="seed of the synthetic sources (the language, fixed across runs)")
    val_fraction: float = param(0.1, gt=0.0, lt=0.5)
    kgram_max_order: int = param(5, ge=0, le=6, doc="largest order of the k-gram compression estimate")

    def check(self) -> None:
        if not self.corpora and not self.corpus_paths:
            raise ConfigError(
                "The 'task.corpora' parameter must name at least one corpus (or give task.corpus_paths)."
            )
        for p in self.corpus_paths:
            if not Path(p).is_file():
                raise ConfigError(
                    f"The 'task.corpus_paths' parameter must list existing files. Got {p!r} instead."
                )
            problem = text_file_problem(p)
            if problem:
                raise ConfigError(f"The 'task.corpus_paths' file {p!r} {problem}.")


#: A head's content routing carries loss when replacing its pattern by its mean raises the held-out
#: loss by at least this (bits/token): trained controls read ≤ 0.004 for heads whose attention moves
#: with content unused downstream, 0.04–0.23 for the heads that answer (docs/claims.md C13).
ABLATION_BITS = 0.02

#: nanoGPT's init; a run spec names ``model.init_std``/``model.emb_std`` only when they differ from it,
#: so the runs trained before the keys existed keep their ids.
DEFAULT_INIT_STD = 0.02


@dataclass(frozen=True)
class E7Model:
    """The shape of every language model (byte vocabulary)."""

    n_ctx: int = param(32, ge=4, le=4096)
    d_model: int = param(32, ge=4, le=4096)
    n_layers: int = param(2, ge=1, le=64)
    n_heads: int = param(2, ge=1, le=256)
    init_std: float = param(
        DEFAULT_INIT_STD, gt=0.0, le=10.0, doc="std of the weight matrices (nanoGPT: 0.02)"
    )
    emb_std: float = param(DEFAULT_INIT_STD, gt=0.0, le=10.0, doc="std of the token and position embeddings")

    def check(self) -> None:
        if self.d_model % self.n_heads:
            raise ConfigError(
                f"The 'model.n_heads' parameter must divide model.d_model={self.d_model}. "
                f"Got {self.n_heads} instead."
            )


@dataclass(frozen=True)
class E7Verdict:
    """What C11–C13 read: the learned-run filter, the kernel and complexity measures, the thresholds,
    the bootstrap and the size of each verdict's robustness grid."""

    learned_max_gap_fraction: float = param(
        0.35, ge=0.0, doc="learned: (held-out bits - reference) / (unigram bits - reference) at most this"
    )
    learned_min_uniform_tv: float = param(
        0.05, ge=0.0, le=1.0, doc="learned: attention TV from uniform at least this"
    )
    learned_min_answer_accuracy: float = param(
        0.9, ge=0.0, le=1.0, doc="learned (recall controls): held-out answer-token accuracy at least this"
    )
    kernel_measure: str = param(
        "folded", choices=("folded", "delta"), doc="K with LN gain folded, or K_t - K_0"
    )
    rank_estimator: str = param("energy_effective_rank", choices=panel_keys, doc="kernel rank for C11/C12")
    complexity_measure: str = param("information", choices=COMPLEXITY_MEASURES, doc="C11's complexity axis")
    bootstrap: int = param(1000, ge=100, le=1_000_000, doc="bootstrap resamples for C11/C12 intervals")
    bootstrap_seed: int = param(0, ge=0)
    # the paper's domain (App. B: natural-language corpora); the other kinds are reported beside
    c11_kinds: tuple[str, ...] = param(("natural",), choices=KINDS, doc="corpus kinds C11 is decided on")
    c11_min_corpora: int = param(4, ge=3, doc="C11: fewest corpora (with a learned run) to decide")
    c12_kinds: tuple[str, ...] = param(("natural",), choices=KINDS, doc="corpus kinds C12 is decided on")
    c12_controls: tuple[str, ...] = param(("step", "weight_norm"), choices=("step", "weight_norm"))
    c12_min_abs_rho: float = param(0.3, ge=0.0, le=1.0, doc="C12: |partial rho| that counts as tracking")
    c13_sources: tuple[str, ...] = param(
        ("natural", "checkpoint"), choices=SOURCES, doc="heads C13 is decided on"
    )
    c13_content_tv: float = param(
        0.5,
        gt=0.0,
        le=1.0,
        doc="a head is content routing when content makes this share of the attention movement its mean pattern allows",
    )
    c13_min_moved: float = param(
        MIN_MOVED,
        ge=0.0,
        le=1.0,
        doc="a content head's content must also move at least this share of its attention mass (content TV)",
    )
    c13_local_max_recurrence: float = param(
        0.5,
        ge=0.0,
        le=1.0,
        doc="C13: a Markov source is a required local control only if its context recurs earlier in the window for fewer than this share of targets (1: every one)",
    )
    c13_ablation_bits: float = param(
        ABLATION_BITS,
        ge=0.0,
        doc="controls: a model's content routing carries loss when ablating its content heads together costs this (bits/token)",
    )
    c13_control_rate: float = param(
        0.5,
        gt=0.0,
        lt=1.0,
        doc="C13: share of required control models the instrument reads right that the Wilson interval must clear (the controls' gate)",
    )
    c13_sink_threshold: float = param(0.3, ge=0.0, le=1.0)
    c13_locality_threshold: float = param(0.5, ge=0.0, le=1.0)
    c13_structure_tv: float = param(
        0.2, ge=0.0, le=1.0, doc="content-independent head: positional above this"
    )
    c13_share: float = param(0.5, ge=0.0, le=1.0, doc="C13: structural share the interval must clear")
    c13_weighting: str = param(
        "count",
        choices=("count", "ablation"),
        doc="C13's main reading: a model's share of heads by count, or weighted by the loss each head's content routing carries (the other is reported beside)",
    )
    c13_kernel_content: float = param(
        0.5, ge=0.0, le=1.0, doc="C13: content-dependent share of a head's logit variance that needs a kernel"
    )
    c13_kernel_explained: float = param(
        0.5, ge=0.0, le=1.0, doc="C13: share of it one kernel must explain to count as the head's kernel"
    )
    c13_kernel_rank_fraction: float = param(
        0.25,
        gt=0.0,
        le=1.0,
        doc="C13: that kernel is low-rank when its rank (90%) is at most this share of the head's d_head",
    )
    c13_kernel_share: float = param(
        0.5, ge=0.0, le=1.0, doc="C13: share of heads with one low-rank kernel the interval must stay below"
    )
    robustness_grid: str = param(
        "quick", choices=("quick", "paper"), doc="size of each verdict's robustness grid"
    )


@dataclass(frozen=True)
class E7Config(Drawn):
    task: E7Task = field(default_factory=E7Task)
    model: E7Model = field(default_factory=E7Model)
    seeds: int = param(2, ge=1, le=1000, doc="models per corpus (init and batch order)")
    # 8: quick's 22 main-shape models train as three ensembles (8, 8, 6) that pack with the recall
    # ensemble and the released models onto two workers; a member-step costs the same at 8 as at 11
    ensemble_size: int = param(8, ge=1, le=4096, doc="language models trained at once in one batched model")
    probe_windows: int = param(16, ge=2, le=4096, doc="held-out windows for the realised mixers")
    locality_window: int = param(2, ge=0, doc="locality mass counts attention within ±w tokens")
    released_models: tuple[str, ...] = param(
        ("minilm", "minilm-random"),
        doc="released models measured for C13 ('minilm', 'minilm-random' = re-initialised weights, or a folder)",
    )
    checkpoint_text: str = param("tinyshakespeare", choices=("tinyshakespeare", "pydoc_prose"))
    checkpoint_windows: int = param(16, ge=2, le=1024)
    checkpoint_window_len: int = param(64, ge=4, le=4096)
    verdict: E7Verdict = field(default_factory=E7Verdict)
    train: LMTrainConfig = field(default_factory=LMTrainConfig)
    # The recall control (mqar-*) needs a wider model, PyTorch-like init (large embeddings keep token
    # identity readable; larger QK weights leave the zero-attention saddle) and its own steps to
    # answer (bench/lm_controls/RESULTS.md); it trains in its own ensemble with these, and C11 (one
    # point per corpus of ONE model shape) leaves it out.
    recall_model: E7Model = field(
        default_factory=lambda: E7Model(d_model=64, n_heads=2, init_std=0.09, emb_std=1.0)
    )
    recall_tokens: int = param(
        2_000_000, ge=1_000, le=100_000_000, doc="tokens of the recall control's corpus (fresh episodes)"
    )
    recall_train: LMTrainConfig = field(
        # measured: mqar-p2r answers 99.7-100 % of held-out queries by 1,500 steps (RESULTS.md)
        default_factory=lambda: LMTrainConfig(steps=1500, batch_size=32, lr=3e-3, warmup=100, checkpoints=10)
    )

    def model_for(self, corpus: str) -> tuple[E7Model, LMTrainConfig]:
        """The model shape and training of ``corpus``'s runs."""
        return (
            (self.recall_model, self.recall_train)
            if corpus_role(corpus).recall_control
            else (self.model, self.train)
        )

    def check(self) -> None:
        for name in self.released_models:
            _check_released_name(name)
        n_val = int(self.task.tokens * self.task.val_fraction)
        if n_val < max(self.model.n_ctx + 2, self.task.kgram_max_order + 2):
            raise ConfigError(
                f"The 'task.tokens' parameter must leave a held-out split of at least model.n_ctx + 2 = "
                f"{self.model.n_ctx + 2} tokens. Got {self.task.tokens} (held out {n_val}) instead."
            )


def _check_released_name(name: str) -> None:
    """Refuse a ``released_models`` entry that is no released model and no path here but close to a
    released name (``smolm2``): a typo, said at once, rather than a model skipped with a note after the
    run. Any other name is a folder or file that may exist only on another machine, and is skipped there."""
    from ...inspect.released import RANDOM_SUFFIX, RELEASED_MODELS, is_released_name

    if is_released_name(name) or "/" in name or "\\" in name or Path(name).exists():
        return
    known = [n for base in RELEASED_MODELS for n in (base, base + RANDOM_SUFFIX)]
    hint = did_you_mean(name, known)
    if hint:
        raise ConfigError(
            f"The 'released_models' parameter must list released models ({', '.join(known)}) or model "
            f"folders and .gguf files. Got {name!r} instead.{hint}"
        )


#: The fields that differ from the defaults at each scale (``Experiment.default_config``).
SCALE_SETTINGS = {
    "quick": {"train": LMTrainConfig(steps=600, batch_size=32, lr=1e-2, warmup=20, checkpoints=10)},
    "paper": {
        "task": E7Task(corpora=PAPER_CORPORA, tokens=400_000),
        # PyTorch-like init (as the recall control's): with nanoGPT's 0.02 the natural corpora stayed
        # 0.19-0.23 bits/token above their k-gram reference at 2,500 steps; with it, 0.09 at 2,500
        # and less at 3,000 (bench/lm_controls/RESULTS.md, held-out bits over the whole split)
        "model": E7Model(d_model=64, n_heads=4, init_std=0.09, emb_std=1.0),
        "seeds": 3,
        "ensemble_size": 14,
        "probe_windows": 32,
        "verdict": E7Verdict(robustness_grid="paper"),
        # a trained causal LM beside the encoder where its package is installed (about 45 CPU s a run)
        "released_models": ("minilm", "minilm-random", "smollm2", "smollm2-random"),
        # measured (docs/paper-scale.md): 164 runs of 26 corpora took 105.4 run-minutes, ~39 CPU s a
        # run; 49 corpora x 3 seeds and the two recall controls x 3 (153 runs) ~ 100 CPU min a draw,
        # ~ 50 min on 2 workers plus the analysis (over the 30-minute budget: learning wins)
        "train": LMTrainConfig(steps=3000, batch_size=32, lr=5e-3, warmup=100, checkpoints=16),
        "recall_train": LMTrainConfig(steps=3000, batch_size=32, lr=3e-3, warmup=100, checkpoints=16),
    },
}


#: A tiny grid for the tests that run every experiment (smoke): seconds, every claim decided;
#: nothing learns in 12 steps, so the learned-run filters let every run count, and no released
#: checkpoint is read.
TINY_SETTINGS = {
    "task.corpora": (
        "tinyshakespeare",
        "pydoc_prose",
        "stdlib_code",
        "markov_v4_k3_a0.1",
        "recall_m2",
        "mqar-p2r",
        "lagcopy-L4",
    ),
    "task.tokens": 4000,
    "task.kgram_max_order": 3,
    "model.n_ctx": 16,
    "model.d_model": 16,
    "model.n_heads": 2,
    "model.n_layers": 1,
    "probe_windows": 4,
    "train.steps": 12,
    "train.batch_size": 8,
    "train.checkpoints": 4,
    "train.eval_windows": 4,
    "recall_tokens": 4000,
    "recall_model.n_ctx": 16,
    "recall_model.d_model": 16,
    "recall_model.n_layers": 1,
    "recall_train.steps": 12,
    "recall_train.batch_size": 8,
    "recall_train.checkpoints": 4,
    "recall_train.eval_windows": 4,
    "verdict.bootstrap": 100,
    "verdict.learned_max_gap_fraction": 100,
    "verdict.learned_min_uniform_tv": 0,
    "verdict.learned_min_answer_accuracy": 0,
    "checkpoint_windows": 4,
    "checkpoint_window_len": 24,
    "released_models": (),
}
