"""Q4_K quantisation in llama.cpp's byte layout, which the ``gguf`` package reads but cannot write.

A ``Q4_K`` super-block holds 256 weights of a row as 8 sub-blocks of 32: ``w ≈ d·sc_j·q − dmin·m_j`` with
``q`` in 0…15, 6-bit sub-block scales ``sc_j`` and minima ``m_j``, and two float16 factors ``d``,
``dmin`` (144 bytes: ``d``, ``dmin``, 12 bytes of packed scales, 128 of packed ``q``). :func:`quantize_q4_k`
chooses each sub-block's scale and minimum from its range (llama.cpp refines them by a short search
over candidate scales, so its rounding error is a little smaller: a noise floor calibrated with this
one errs high). Read back with ``gguf.quants.dequantize``.
"""

from __future__ import annotations

import numpy as np

SUPER, SUB = 256, 32


def _six_bit(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``values (blocks, 8) >= 0`` as float16 factors ``(blocks, 1)`` and 6-bit integers ``(blocks, 8)``."""
    top = values.max(axis=-1, keepdims=True)
    factor = (top / 63).astype(np.float16)
    safe = np.where(top > 0, top, 1.0)
    ints = np.clip(np.rint(values * (63 / safe)), 0, 63).astype(np.uint8)
    return factor, ints


def _packed_scales(sc: np.ndarray, mn: np.ndarray) -> np.ndarray:
    """Eight 6-bit scales and minima per block ``(blocks, 8)`` → llama.cpp's 12 bytes ``(blocks, 12)``."""
    low = sc[:, :4] | ((sc[:, 4:] >> 4) << 6)
    mid = mn[:, :4] | ((mn[:, 4:] >> 4) << 6)
    high = (sc[:, 4:] & 0x0F) | ((mn[:, 4:] & 0x0F) << 4)
    return np.concatenate([low, mid, high], axis=-1).astype(np.uint8)


def quantize_q4_k(weight: np.ndarray) -> np.ndarray:
    """``weight (rows, cols)`` (``cols`` a multiple of 256) → its ``Q4_K`` bytes ``(rows, cols / 256 · 144)``."""
    rows, cols = weight.shape
    x = weight.astype(np.float32).reshape(-1, SUPER // SUB, SUB)  # (blocks, 8, 32)
    low = np.minimum(x.min(axis=-1), 0.0)  # (blocks, 8): the grid starts at or below 0
    d, sc = _six_bit((x.max(axis=-1) - low) / 15)
    dmin, mn = _six_bit(-low)
    step = (d.astype(np.float32) * sc)[..., None]  # (blocks, 8, 1), as the reader forms them
    offset = (dmin.astype(np.float32) * mn)[..., None]
    q = np.clip(np.rint((x + offset) / np.where(step > 0, step, 1.0)), 0, 15).astype(np.uint8)
    q = np.where(step > 0, q, 0).reshape(-1, 4, 2, SUB)  # sub-blocks 2c, 2c+1 share byte chunk c
    qs = (q[:, :, 0] | (q[:, :, 1] << 4)).reshape(-1, SUPER // 2)
    blocks = np.concatenate(
        [d.view(np.uint8), dmin.view(np.uint8), _packed_scales(sc, mn), qs], axis=-1
    )  # (blocks, 144)
    return blocks.reshape(rows, -1)
