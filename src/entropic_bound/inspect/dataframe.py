"""``analyse``: the library face of ``entropic-bound inspect``, one pandas row per attention head.

``analyze`` is the same function under the pandas/scikit-learn spelling, kept for users who reach for it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from .model import inspect_model


def analyse(
    model: Any,
    text: str | Path | None = None,
    fold_ln: bool = False,
    *,
    tokenizer: Any = None,
    byte_tokens: bool = False,
    arch: str | None = None,
    n_heads: int | None = None,
    n_kv_heads: int | None = None,
    sink_definition: str = "ours",
    window: int = 2,
    window_len: int = 64,
    max_windows: int = 8,
    top_k: int = 8,
    cache_dir: str | Path | None = None,
    on_layer: Callable[[int, int], None] | None = None,
) -> pd.DataFrame:
    """Per-head rank analysis of a real checkpoint, as a DataFrame (one row per query head).

    Args:
        model: a loaded transformers model (BERT, GPT-2 or Llama family, from safetensors, GGUF or
            built here; give its ``tokenizer`` for text) or TransformerLens ``HookedTransformer``
            (TransformerLens 3.x); a Hugging Face-format folder (``config.json``
            + ``*.safetensors``); a ``.gguf`` file; a single ``.safetensors`` file (then give ``arch``
            and ``n_heads``); a short name the CLI knows (``"minilm"``, ``"smollm2"``, and each with
            ``-random``: its re-initialised control); or a Hugging Face model id read from the local
            cache only (``huggingface_hub``, ``local_files_only=True``).
        text: None for the static kernels only; a string of text, or a :class:`~pathlib.Path` to a
            UTF-8 file, to add realised-mixer statistics from a forward pass (needs ``transformers``).
            :data:`entropic_bound.inspect.BUILTIN_TEXT` is a ready sample.
        tokenizer: the tokenizer of a model object (a path brings its own).
        byte_tokens: a model without a tokenizer reads the text as UTF-8 bytes modulo its vocabulary
            (refused otherwise: those are not the tokens it was trained on).
        fold_ln: fold the preceding LayerNorm / RMSNorm scale into ``W_Q`` and ``W_K``.
        sink_definition: ``"ours"`` (mean over queries ``i >= 1``) or ``"gu2025"`` (all queries, Gu
            et al., ICLR 2025); a head is a sink head when its score is above ε = 0.3.
        window: locality band ``±window`` tokens; ``window_len``/``max_windows``: text windows.
        top_k: how many leading singular values get a column ``sv_1..sv_top_k``.

    Returns:
        Columns ``layer``, ``head``, ``kv_head`` (GQA key head), one column per rank-estimator key
        (``numerical_rank``, ``energy_effective_rank``, …, ``optimal_hard_threshold`` = NaN with
        ``optimal_hard_threshold_reason``), ``frobenius_norm``, ``b_Q_norm``, ``b_K_norm``,
        ``sv_1..``, ``W_Q_dtype``/``W_K_dtype`` (each tensor's type: ``F32``, ``Q4_1``, …) and, for
        quantised weights, ``rank_moves_in_quant_step``; with text also ``sink_score``, ``sink_head``
        (and ``sink_score_without_bos`` where a BOS was put in front), ``locality_mass``,
        ``positional_prior_explained``, ``mixer_<estimator>``, ``mean_mixer_<estimator>`` and
        ``logit_field_*``. ``frame.attrs`` holds the architecture, notes, text settings (which token the
        sink score measures: ``text["first_token"]``) and the quantisation summary.

    Raises:
        UserInputError: one-line message for a missing, unreadable or unsupported model or text.
    """
    options = {name: value for name, value in locals().items() if name != "model"}  # the parameters
    return inspect_model(model, **options).to_frame()


#: The same function, spelled as pandas and scikit-learn users expect (documented alias).
analyze = analyse
