"""Data-only complexity estimates of a token corpus (E7): compression rates and k-gram models.

- :func:`compression_bits_per_char`: bits per byte under ``lzma`` (preset 9e, raw) and ``bz2``
  (level 9) of the whole corpus — an upper bound on the entropy rate that shrinks slowly with size.
- :func:`kgram_heldout_bits`: an interpolated Witten–Bell k-gram model (Witten & Bell 1991; Chen &
  Goodman 1998, §2.4) trained on the training split and scored on the held-out split, for every
  order ``0 … max_order``::

      P_k(x | c) = (C(c, x) + T(c) · P_{k−1}(x | c')) / (C(c) + T(c)),   P_{−1} = 1/V

  with ``C`` training counts, ``T(c)`` the number of distinct symbols seen after context ``c`` and
  ``c'`` its last ``k − 1`` symbols (an unseen context falls back to ``P_{k−1}``). The best held-out
  bits/token over orders is the compression estimate on the same split as the language model; the
  smallest order within ``tol`` bits of the best is the data-only estimate of the mixing demand (how
  many previous tokens a predictor needs).
"""

from __future__ import annotations

import bz2
import lzma

import numpy as np

from ...errors import DataError


def compression_bits_per_char(data: bytes) -> dict[str, float]:
    """Bits per byte of ``data`` under ``lzma`` and ``bz2``: ``8 · len(compress(data)) / len(data)``."""
    if len(data) == 0:
        raise DataError("Cannot estimate the compression rate of an empty corpus.")
    filters = [{"id": lzma.FILTER_LZMA2, "preset": 9 | lzma.PRESET_EXTREME}]
    sizes = {
        "lzma": len(lzma.compress(data, format=lzma.FORMAT_RAW, filters=filters)),
        "bz2": len(bz2.compress(data, compresslevel=9)),
    }
    return {k: 8.0 * v / len(data) for k, v in sizes.items()}


def _contexts(tokens: np.ndarray, order: int, vocab: int, start: int) -> np.ndarray:
    """Context ids of the ``order`` symbols before each position ``t ≥ start``: ``(N − start,)``."""
    ctx = np.zeros(len(tokens) - start, dtype=np.int64)
    for j in range(order, 0, -1):
        ctx = ctx * vocab + tokens[start - j : len(tokens) - j]
    return ctx


def _lookup(keys: np.ndarray, counts: np.ndarray, query: np.ndarray) -> np.ndarray:
    """``counts[keys == q]`` for each query (0 where absent); ``keys`` sorted unique."""
    pos = np.clip(np.searchsorted(keys, query), 0, max(len(keys) - 1, 0))
    hit = (keys[pos] == query) if len(keys) else np.zeros(len(query), dtype=bool)
    return np.where(hit, counts[pos] if len(keys) else 0, 0)


def kgram_heldout_bits(
    train: np.ndarray, heldout: np.ndarray, vocab: int, max_order: int = 5
) -> dict[int, float]:
    """Held-out bits/token of the Witten–Bell model of each order ``0 … max_order`` (see module doc).

    Both splits are scored from position ``max_order`` on so every order sees the same tokens.
    """
    train, heldout = np.asarray(train, dtype=np.int64), np.asarray(heldout, dtype=np.int64)
    if vocab ** (max_order + 1) >= 2**62:
        raise DataError(f"A k-gram model of order {max_order} over {vocab} symbols overflows int64 ids.")
    if min(len(train), len(heldout)) <= max_order + 1:
        raise DataError(f"Both splits need more than {max_order + 1} tokens for a k-gram estimate.")
    x_tr, x_ho = train[max_order:], heldout[max_order:]
    prob = np.full(len(x_ho), 1.0 / vocab)
    out = {}
    for k in range(max_order + 1):
        c_tr, c_ho = _contexts(train, k, vocab, max_order), _contexts(heldout, k, vocab, max_order)
        pairs, pair_counts = np.unique(c_tr * vocab + x_tr, return_counts=True)
        ctx, ctx_counts = np.unique(c_tr, return_counts=True)
        types_ctx, types = np.unique(pairs // vocab, return_counts=True)
        C_cx = _lookup(pairs, pair_counts, c_ho * vocab + x_ho)
        C_c = _lookup(ctx, ctx_counts, c_ho)
        T_c = _lookup(types_ctx, types, c_ho)
        seen = C_c > 0
        prob = np.where(seen, (C_cx + T_c * prob) / np.maximum(C_c + T_c, 1), prob)
        out[k] = float(-np.log2(prob).mean())
    return out


def order_estimate(bits_by_order: dict[int, float], tol: float = 0.02) -> int:
    """Smallest order whose held-out bits are within ``tol`` of the best order's."""
    best = min(bits_by_order.values())
    return min(k for k, v in bits_by_order.items() if v <= best + tol)
