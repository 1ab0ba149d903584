"""Gu et al.'s three inputs (their Table 1): the share of sink heads on natural text, on random tokens
and on one token repeated, for one zoo model, per text window.

The metric is theirs (``eval_sink_open_source.py``): a head's score in one window is its attention on
token 0 averaged over every query (``sink_score(..., "gu2025")``), the head is a sink head in that
window when the score exceeds ε = 0.3, and the share averages the flags over windows, layers and
heads. (The zoo's table instead thresholds each head's score averaged over its windows.)

The inputs, each :data:`~.page.WINDOWS` windows of :data:`~.page.WINDOW_LEN` tokens:

- ``natural``: the zoo's tinyshakespeare windows, with the start token the zoo gives each model;
- ``random``: the same start (and end) tokens around token ids drawn uniformly from the embedding
  table (seed :data:`SEED`);
- ``repeated``: the same start tokens around one token repeated, each window repeating its own first
  text token;
- ``repeated_bare``: that token repeated over the whole window, with no start token, so that no
  token differs from the others but by its position — the case in which Gu et al. report no sink
  for their rotary models (Mistral, LLaMA: 0 %) and one for GPT-2 (absolute positions: 62 %).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

INPUTS = ("natural", "random", "repeated", "repeated_bare")
#: Headings of the page's table, one per input.
INPUT_HEADINGS = {
    "natural": "natural text",
    "random": "random tokens",
    "repeated": "one token repeated (after the start token)",
    "repeated_bare": "one token repeated (no start token)",
}
SEED = 0


@dataclass
class SinkInputs:
    """One model's parameter count and, per input, the share of sink heads in each window ``(B,)``."""

    parameters: int
    per_window: dict[str, np.ndarray]


def input_ids(natural: np.ndarray, prefix: list[int], suffix: list[int], vocab: int, seed: int = SEED):
    """The four inputs ``{name: ids (B, n)}`` built from the natural windows ``(B, n)`` (their start
    ``prefix`` and end ``suffix`` ids kept where stated)."""
    B, n = natural.shape
    body = slice(len(prefix), n - len(suffix))
    random = natural.copy()
    random[:, body] = np.random.default_rng(seed).integers(0, vocab, (B, n - len(prefix) - len(suffix)))
    token = natural[:, body.start][:, None]  # (B, 1) each window's first text token
    repeated = natural.copy()
    repeated[:, body] = token
    bare = np.broadcast_to(token, (B, n)).copy()
    return {"natural": natural, "random": random, "repeated": repeated, "repeated_bare": bare}


def sink_head_share(mixers: np.ndarray) -> np.ndarray:
    """``mixers (B, L, H, n, n)`` → ``(B,)``: the share of heads above ε in each window (Gu et al.)."""
    from ..inspect.mixers import SINK_THRESHOLD, sink_score

    return (sink_score(mixers, "gu2025") > SINK_THRESHOLD).mean(axis=(1, 2))


def measure_sink_inputs(name: str, text: str, *, windows: int, window_len: int) -> SinkInputs:
    """Run ``name`` (a zoo model, ``-random`` included) on the four inputs."""
    from ..inspect.forward import (
        eager_attention,
        load_model_of,
        load_tokenizer_of,
        text_windows,
        window_prefix,
    )
    from ..inspect.mixers import realised_mixers
    from ..inspect.source import open_source

    ckpt = open_source(name)
    natural, _, _ = text_windows(ckpt, text, window_len=window_len, max_windows=windows, byte_tokens=False)
    prefix, suffix, _ = window_prefix(load_tokenizer_of(ckpt))
    model = load_model_of(ckpt)
    vocab = int(model.get_input_embeddings().num_embeddings)
    parameters = sum(p.numel() for p in model.parameters())  # tied weights once
    shares = {}
    with eager_attention(model):
        for kind, ids in input_ids(natural, prefix, suffix, vocab).items():
            shares[kind] = sink_head_share(realised_mixers(model, ids))
    return SinkInputs(int(parameters), shares)
