"""The one forward path of ``inspect`` and E7's checkpoint probe: tokenizer, windows, model, mixers.

Each checkpoint kind brings its model and tokenizer here: a safetensors folder through
``transformers.AutoModel`` (eager attention, float32), a ``.gguf`` file through transformers' GGUF
loader (``from_pretrained(folder, gguf_file=name)``; it dequantises to float32 itself, and ``.float()``
raises on such a model, so it is left as loaded), a model object as it is.

Windows start with the tokenizer's BOS where it has one: its own special tokens when it adds them
(BERT's ``[CLS]``), else its ``bos_token`` put in front (Llama/SmolLM2's GGUF tokenizer adds none, so
without it the sink score would measure an arbitrary text token). When the BOS was put in front,
the same windows without it are run too (``sink_score_without_bos``): the model may not have been
trained with one. :func:`first_token` says which token the sink score measures.
"""

from __future__ import annotations

import contextlib
import gc
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DataError, UserInputError
from .arch import ArchConfig, adapter
from .checkpoint import Checkpoint

NO_TOKENIZER = (
    "The model has no tokenizer, so the text cannot be turned into its tokens; give one (tokenizer=..., "
    "or tokenizer files beside config.json), or ask for UTF-8 bytes modulo the vocabulary (--byte-tokens)."
)


@dataclass
class Forward:
    """One pass over the text windows: ``mixers (B, L, H, n, n)``, ``inputs (B, L, n, d)`` (each layer's
    query-projection input, or None), ``without_bos`` mixers on the windows minus their added BOS (or
    None), ``ids (B, n)`` and a JSON-ready ``info`` (tokenizer, first token, BOS)."""

    mixers: np.ndarray
    inputs: np.ndarray | None
    without_bos: np.ndarray | None
    ids: np.ndarray
    info: dict


def load_tokenizer_of(ckpt: Checkpoint) -> Any | None:
    """The checkpoint's own tokenizer, or None when it has none."""
    from .text import _transformers, load_tokenizer

    if ckpt.kind == "module":
        return ckpt.tokenizer
    if ckpt.kind == "gguf":
        from .gguf import transformers_reads

        try:
            with transformers_reads(ckpt):
                return _transformers().AutoTokenizer.from_pretrained(
                    str(ckpt.path.parent), gguf_file=ckpt.path.name
                )
        except (OSError, ValueError, KeyError, RuntimeError):
            return None  # a GGUF without tokenizer metadata
    return load_tokenizer(ckpt.config_dir)


def load_model_of(ckpt: Checkpoint) -> Any:
    """The transformers model that runs the forward pass (eager attention)."""
    from .text import _transformers, load_hf_model

    if ckpt.kind == "module":
        return ckpt.model
    if ckpt.kind == "gguf":
        from .gguf import transformers_reads

        transformers = _transformers()
        try:
            # redirected: its tqdm bar ignores transformers' switch. float32 (what it dequantises to) is
            # named, since "auto" would read a part file, not named *.gguf, as a torch checkpoint
            with transformers_reads(ckpt), contextlib.redirect_stderr(io.StringIO()):
                model = transformers.AutoModelForCausalLM.from_pretrained(
                    str(ckpt.path.parent),
                    gguf_file=ckpt.path.name,
                    attn_implementation="eager",
                    dtype="float32",
                )
        except (OSError, ValueError, KeyError, RuntimeError, ImportError) as exc:
            raise DataError(
                f"transformers could not load '{ckpt.path}': {' '.join(str(exc).split())[:300]}"
            ) from None
        gc.collect()  # the loader's dequantised copy of every tensor
        return model.eval()
    if ckpt.config_dir is None:
        raise UserInputError(
            "Realised mixers need a model folder with config.json (the forward pass builds the model from it)."
        )
    return load_hf_model(ckpt.config_dir)


def reinitialised(model: Any, seed: int) -> Any:
    """``model`` with every weight drawn afresh from ``seed`` as BERT and Llama initialise them: linear and
    embedding weights N(0, ``initializer_range``), biases 0, LayerNorm gain 1 and shift 0, RMSNorm gain 1
    (weight 1; Gemma's RMSNorm scales by 1 + weight, so weight 0).
    (The model's own ``_init_weights`` leaves loaded parameters alone in transformers 5: it skips
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
            if type(module).__name__.endswith("RMSNorm") and isinstance(
                getattr(module, "weight", None), nn.Parameter
            ):
                module.weight.fill_(0.0 if type(module).__name__.startswith("Gemma") else 1.0)  # gain 1
    return model.eval()


def _token_text(tokenizer: Any, token: int) -> str:
    return str(tokenizer.convert_ids_to_tokens(int(token)))


def window_prefix(tokenizer: Any | None) -> tuple[list[int], list[int], bool]:
    """``(prefix, suffix, bos_added)``: the ids each window starts and ends with; ``bos_added`` when the
    tokenizer adds no start token itself and its ``bos_token_id`` is put in front."""
    from .text import special_tokens

    if tokenizer is None:
        return [], [], False
    prefix, suffix = special_tokens(tokenizer)
    bos = getattr(tokenizer, "bos_token_id", None)
    if not prefix and bos is not None:
        return [int(bos)], suffix, True
    return prefix, suffix, False


def first_token(tokenizer: Any | None, prefix: list[int], bos_added: bool) -> str:
    """What the sink score's token 0 is, in words."""
    if not prefix:
        return "the window's first text token (the tokenizer has no BOS)"
    kind = "BOS put in front (the tokenizer adds none)" if bos_added else "the tokenizer's own start token"
    return f"{_token_text(tokenizer, prefix[0])!r} (id {prefix[0]}), {kind}"


def text_windows(
    ckpt: Checkpoint, text: str | Path, *, window_len: int, max_windows: int, byte_tokens: bool
) -> tuple[np.ndarray, bool, dict]:
    """``(ids (B, n), bos_added, info)`` for the checkpoint's tokenizer, refusing a tokenizer-less model
    unless ``byte_tokens`` (UTF-8 bytes modulo ``vocab_size``)."""
    from .text import max_positions, token_windows

    tokenizer = load_tokenizer_of(ckpt)
    if tokenizer is None and not byte_tokens:
        raise UserInputError(NO_TOKENIZER)
    config = ckpt.config or {}
    limit = max_positions(config)
    n = min(window_len, limit) if limit else window_len
    prefix, suffix, bos_added = window_prefix(tokenizer)
    vocab = int(config.get("vocab_size", 256))
    ids = token_windows(
        text, tokenizer, vocab_size=vocab, window_len=n, max_windows=max_windows, prefix=prefix, suffix=suffix
    )
    info = {
        "tokenizer": type(tokenizer).__name__ if tokenizer is not None else "bytes modulo vocab_size",
        "first_token": first_token(tokenizer, prefix, bos_added),
        "bos_added": bos_added,
    }
    return ids, bos_added, info


def run_forward(
    ckpt: Checkpoint,
    cfg: ArchConfig,
    text: str | Path,
    *,
    window_len: int,
    max_windows: int,
    with_inputs: bool,
    byte_tokens: bool = False,
    reinit_seed: int | None = None,
) -> Forward:
    """Tokenise ``text`` into windows, load the model (re-initialised from ``reinit_seed`` if given) and
    return its mixers, with each layer's query-projection inputs when ``with_inputs``."""
    from .mixers import query_input_modules, realised_mixers, realised_mixers_with_inputs

    ids, bos_added, info = text_windows(
        ckpt, text, window_len=window_len, max_windows=max_windows, byte_tokens=byte_tokens
    )
    model = load_model_of(ckpt)
    if reinit_seed is not None:
        model = reinitialised(model, reinit_seed)
    if hasattr(model, "run_with_cache"):  # a TransformerLens HookedTransformer
        mixers, inputs = hooked_mixers(model, ids, cfg.n_layers)
        without = hooked_mixers(model, ids[:, 1:], cfg.n_layers)[0] if bos_added else None
        return Forward(mixers, inputs if with_inputs else None, without, ids, info)
    with eager_attention(model):
        if with_inputs:
            modules = query_input_modules(model, adapter(cfg.arch).anchor, cfg.n_layers)
            mixers, inputs = realised_mixers_with_inputs(model, ids, modules)  # (B, L, H, n, n), (B, L, n, d)
        else:
            mixers, inputs = realised_mixers(model, ids), None
        without = realised_mixers(model, ids[:, 1:]) if bos_added else None
    return Forward(mixers, inputs, without, ids, info)


def hooked_mixers(model: Any, ids: np.ndarray, n_layers: int) -> tuple[np.ndarray, np.ndarray]:
    """A HookedTransformer's attention patterns ``(B, L, H, n, n)`` and each layer's attention input
    (``ln1.hook_normalized``, what ``W_Q`` multiplies) ``(B, L, n, d)``, float64, from one pass."""
    import torch

    wanted = ("attn.hook_pattern", "ln1.hook_normalized")
    with torch.no_grad():
        _, cache = model.run_with_cache(torch.as_tensor(ids), names_filter=lambda name: name.endswith(wanted))
    mixers = np.stack(
        [cache[f"blocks.{i}.attn.hook_pattern"].double().cpu().numpy() for i in range(n_layers)], 1
    )
    inputs = np.stack(
        [cache[f"blocks.{i}.ln1.hook_normalized"].double().cpu().numpy() for i in range(n_layers)], 1
    )
    return mixers, inputs


class eager_attention:
    """Within the block the model computes attention weights (``eager``); a model object loaded with a
    fused kernel (``sdpa``) is switched and switched back after."""

    def __init__(self, model: Any):
        self.model = model
        self.before = getattr(getattr(model, "config", None), "_attn_implementation", None)

    def __enter__(self):
        if self.before not in (None, "eager") and hasattr(self.model, "set_attn_implementation"):
            self.model.set_attn_implementation("eager")
        return self.model

    def __exit__(self, *exc):
        if self.before not in (None, "eager") and hasattr(self.model, "set_attn_implementation"):
            self.model.set_attn_implementation(self.before)
        return False
