"""Name → object registries, after lm-evaluation-harness's ``api/registry.py``.

Every built-in entry is declared below as a lazy ``"module:object"`` target with its one-line
summary, so each registry is complete as soon as ``entropic_bound`` is imported and listing names
imports nothing (no torch). A lookup imports the entry's module the first time it is asked for.
Code outside the package (a plug-in, a test) registers the same way, or eagerly with the decorator.
A failed lookup says ``Unknown task 'x'. Available: a, b, c.`` with a did-you-mean.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from .errors import UnknownNameError, did_you_mean
from .tasks.names import LINEAR_QK_TEACHER, SOFTMAX_TEACHER

T = TypeVar("T")


@dataclass(frozen=True)
class LazyEntry:
    """``"package.module:attribute"`` (the attribute may be dotted): imported on first lookup."""

    target: str

    def resolve(self):
        module, _, attribute = self.target.partition(":")
        obj = importlib.import_module(module)
        for part in attribute.split("."):
            obj = getattr(obj, part)
        return obj


class Registry(Generic[T]):
    """A named collection of objects of one kind (tasks, students, estimators, experiments)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T | LazyEntry] = {}
        self._summaries: dict[str, str] = {}
        self._targets: dict[str, str] = {}

    def _add(self, key: str, entry: T | LazyEntry, summary: str) -> None:
        if key in self._items:
            raise ValueError(f"{self.kind} '{key}' is already registered")
        self._items[key] = entry
        self._summaries[key] = summary

    def register(self, name: str | None = None, *, summary: str = "") -> Callable[[T], T]:
        """Decorator: register now, under ``name`` or the object's own ``name`` attribute."""

        def decorator(obj: T) -> T:
            key = name if name is not None else obj.name
            self._add(key, obj, summary or (getattr(obj, "__doc__", "") or "").strip().split("\n")[0])
            return obj

        return decorator

    def register_lazy(self, name: str, target: str, *, summary: str) -> None:
        """Register ``target`` (``"package.module:object"``) without importing it."""
        if ":" not in target:
            raise ValueError(f"A lazy {self.kind} target is 'module:object'. Got {target!r} instead.")
        self._add(name, LazyEntry(target), summary)
        self._targets[name] = target

    def get(self, name: str) -> T:
        if name not in self._items:
            available = ", ".join(sorted(self._items)) or "(none)"
            raise UnknownNameError(
                f"Unknown {self.kind} '{name}'. Available: {available}.{did_you_mean(name, self._items)}"
            )
        entry = self._items[name]
        if isinstance(entry, LazyEntry):
            entry = self._items[name] = entry.resolve()
        return entry

    def build(self, name: str, *args, **kwargs):
        """``name``'s entry called with ``args`` and the keyword arguments it accepts.

        An entry that declares ``accepts`` (a tuple of keyword names, as every student does) gets
        only those of ``kwargs``, so one call builds any entry from the same settings (``temperature``
        reaches B2 and B3, not B1); an entry without ``accepts`` (a task dataclass) gets them all.
        """
        obj = self.get(name)
        accepts = getattr(obj, "accepts", None)
        if accepts is not None:
            kwargs = {k: v for k, v in kwargs.items() if k in accepts}
        return obj(*args, **kwargs)

    def target(self, name: str) -> str | None:
        """The ``module:object`` ``name`` was declared with (imported or not); None for an entry
        registered eagerly or not at all. Says where an entry lives without importing it."""
        return self._targets.get(name)

    def summary(self, name: str) -> str:
        if name not in self._items:
            self.get(name)  # the one-line error
        return self._summaries[name]

    def names(self) -> list[str]:
        return sorted(self._items)

    def declared(self) -> list[str]:
        """The names in the order they were registered (``registry.py``'s lines first)."""
        return list(self._items)

    def unregister(self, name: str) -> None:
        """Forget ``name`` (a plug-in or test that registered a throw-away entry cleans up)."""
        self._items.pop(name, None)
        self._summaries.pop(name, None)
        self._targets.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._items)


TASKS: Registry = Registry("task")
STUDENTS: Registry = Registry("student")
ESTIMATORS: Registry = Registry("estimator")
EXPERIMENTS: Registry = Registry("experiment")
PREDICTORS: Registry = Registry("predictor")
ARCHITECTURES: Registry = Registry("architecture")

_P = "entropic_bound."
# registry, name, target (module:object under entropic_bound), one-line summary; the estimators in
# the order the report lists their panel rows
_BUILT_IN: tuple[tuple[Registry, str, str, str], ...] = (
    (EXPERIMENTS, "E1", "experiments.e1_linear_surrogate.experiment:E1LinearSurrogate",
     "linear surrogate: excess risk vs rank against the tail-energy closed form (C1, C2)"),
    (EXPERIMENTS, "E2", "experiments.e2_recovery.experiment:E2Recovery",
     "linear surrogate recovery: GD from small init finds rank r* (C3)"),
    (EXPERIMENTS, "E3", "experiments.e3_ladder.experiment:E3Ladder",
     "interpolation ladder B0–B3 on fixed_operator; controls; learned positions (C4, X2)"),
    (EXPERIMENTS, "E4", "experiments.e4_attention_teacher.experiment:E4AttentionTeacher",
     "attention-native teacher-student: excess risk vs rank, linear and softmax (C5, C6)"),
    (EXPERIMENTS, "E5", "experiments.e5_attention_recovery.experiment:E5AttentionRecovery",
     "attention-native recovery: GD from small init, estimators of K = W_Q W_K^T (C7; C8 is decided in E6)"),
    (EXPERIMENTS, "E6", "experiments.e6_predictability.experiment:E6Predictability",
     "data-only predictability frontier: r* from (X, Y) without training (C8, C9, C10, X1)"),
    (EXPERIMENTS, "E7", "experiments.e7_language.experiment:E7Language",
     "small causal LMs on natural, code and synthetic corpora: kernel rank, loss, priors (C11-C13)"),
    (STUDENTS, "B0", "models.linear_operator:LinearOperatorEnsemble",
     "linear surrogate A X V with A = P Qᵀ (fixed token mixer)"),
    (STUDENTS, "B1", "models.linear_qk:LinearQKEnsemble",
     "linear QK attention c (X W_Q)(X W_K)^T X V (input-conditioned, no softmax)"),
    (STUDENTS, "B2", "models.softmax_attention:SoftmaxAttentionEnsemble",
     "softmax attention softmax((X W_Q)(X W_K)^T / sqrt(d)) X V"),
    (STUDENTS, "B3", "models.block:TransformerBlockEnsemble",
     "pre-LN transformer block (LN, softmax attention, FFN, residuals) + linear readout"),
    (TASKS, "fixed_operator", "tasks.fixed_operator:FixedOperatorTask",
     "Y = A* X V* + E with a rank-r* token mixer A* (the linear surrogate's task)"),
    (TASKS, "linear_qk_teacher", "tasks.attention_teachers:LinearQKTeacherTask",
     f"{LINEAR_QK_TEACHER} with a rank-r* kernel K*"),
    (TASKS, "softmax_teacher", "tasks.attention_teachers:SoftmaxTeacherTask",
     f"{SOFTMAX_TEACHER} with a rank-r* kernel K*"),
    (ESTIMATORS, "numerical_rank", "spectra.estimators:numerical_rank.estimator",
     "Numerical rank ``#{i : s_i > tol · s_1}`` with a tolerance relative to the top singular value."),
    (ESTIMATORS, "energy_effective_rank", "spectra.estimators:energy_effective_rank.estimator",
     "Energy effective rank ``exp(H(p))`` with ``p_i = s_i² / Σ_j s_j²`` (Shannon entropy, nats)."),
    (ESTIMATORS, "entropy_effective_rank", "spectra.estimators:entropy_effective_rank.estimator",
     "Effective rank ``exp(H(q))`` with ``q_i = s_i / Σ_j s_j`` (Shannon entropy, nats)."),
    (ESTIMATORS, "stable_rank", "spectra.estimators:stable_rank.estimator",
     "Stable rank ``Σ_i s_i² / s_1² = ||A||_F² / ||A||_2²``."),
    (ESTIMATORS, "participation_ratio", "spectra.estimators:participation_ratio.estimator",
     "Participation ratio ``(Σ s_i²)² / Σ s_i⁴`` of the energies ``s_i²``."),
    (ESTIMATORS, "energy_threshold_rank", "spectra.estimators:energy_threshold_rank.estimator",
     "Smallest ``k`` with ``Σ_{i≤k} s_i² ≥ τ · Σ_i s_i²`` (share ``τ`` of the energy)."),
    (ESTIMATORS, "largest_gap_rank", "spectra.estimators:largest_gap_rank.estimator",
     "The cut ``k`` at the largest relative gap: ``argmax_i log(s_i / s_{i+1})`` (1-based ``k = i``)."),
    (ESTIMATORS, "optimal_hard_threshold", "spectra.estimators:optimal_hard_threshold.estimator",
     "Gavish–Donoho optimal hard threshold: the number of singular values above the threshold."),
    (PREDICTORS, "linear_v_known", "predict.linear_v_known:linear_v_known",
     "linear QK, V known: least squares for K, rank of K̂"),
    (PREDICTORS, "linear_v_unknown", "predict.linear_v_unknown:linear_v_unknown",
     "linear QK, V unknown: eliminate V (pinv(X_i) Y_i), rank of the stack"),
    (PREDICTORS, "softmax_linearised", "predict.softmax_linearised:softmax_linearised",
     "softmax (paper): ranks of a linearised kernel and of realised mixers"),
    (PREDICTORS, "softmax_log_attention", "predict.softmax_log_attention:softmax_log_attention",
     "softmax, V known, n ≤ d_v: weighted least squares on log-attention ratios"),
    (ARCHITECTURES, "bert", "inspect.architectures.bert:Bert",
     "BERT encoders (post-LN, bidirectional), e.g. MiniLM"),
    (ARCHITECTURES, "mpnet", "inspect.architectures.mpnet:MPNet",
     "MPNet encoders (post-LN, bidirectional, relative position buckets), e.g. all-mpnet-base-v2"),
    (ARCHITECTURES, "gpt2", "inspect.architectures.gpt2:Gpt2", "GPT-2 decoders (pre-LN, fused c_attn Conv1D)"),
    (ARCHITECTURES, "llama", "inspect.architectures.llama:Llama",
     "Llama decoders (RMSNorm, grouped-query attention, RoPE)"),
    (ARCHITECTURES, "qwen2", "inspect.architectures.qwen2:Qwen2",
     "Qwen2 decoders (RMSNorm, grouped-query attention with query/key biases, RoPE), e.g. Qwen2.5-Coder"),
    (ARCHITECTURES, "gemma3", "inspect.architectures.gemma3:Gemma3",
     "Gemma 3 decoders (QK-norm, norms as 1 + w, head_dim != d_model / heads, RoPE)"),
    (ARCHITECTURES, "hooked_transformer", "inspect.architectures.hooked:HookedTransformer",
     "TransformerLens HookedTransformer objects (per-head W_Q, W_K)"),
)  # fmt: skip
for _registry, _name, _target, _summary in _BUILT_IN:
    _registry.register_lazy(_name, _P + _target, summary=_summary)
