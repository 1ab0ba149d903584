"""The quantisation noise floor under each static kernel spectrum, and the ranks above it.

A quantised query weight is ``W_Q + E_Q`` with a rounding error ``E_Q`` the file does not keep, so the
kernel read back is ``K + ΔK``, ``ΔK = E_Q W_Kᵀ + W_Q E_Kᵀ`` (per head, key heads shared as in the
model); by Weyl's inequality no singular value moves by more than ``‖ΔK‖₂``, so singular values below it
cannot be told from rounding. The error is calibrated, not known: a random matrix of each tensor's shape
(Gaussian, each row with the stored row's standard deviation, seeded by :data:`FLOOR_SEED` and the
tensor's name) is sent through the same quantisation type and back (``gguf.quants``; ``Q4_K``, which
``gguf`` cannot write, through :mod:`.kquants`), and its error stands in for ``E``. Per head:
``quant_noise_floor = ‖ΔK‖₂`` and ``rank_above_quant_floor`` = the singular values above it. A type no
quantiser here writes gives NaN and -1 (``floor_types`` in the header says which).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping

import numpy as np

from .arch import ArchConfig, read_layer
from .kernels import split_heads
from .weights import LazyWeights

FLOOR_SEED = 0


def round_trip(weight: np.ndarray, type_name: str) -> np.ndarray | None:
    """``weight`` quantised to ``type_name`` and read back (float64), or None when nothing here writes it."""
    import gguf

    qtype = gguf.GGMLQuantizationType[type_name]
    stored = weight.astype(np.float32)
    try:
        packed = gguf.quants.quantize(stored, qtype)
    except NotImplementedError:
        if type_name != "Q4_K":
            return None
        from .kquants import quantize_q4_k

        packed = quantize_q4_k(stored)
    return gguf.quants.dequantize(packed, qtype).astype(np.float64).reshape(weight.shape)


class calibrated_errors(LazyWeights):
    """Under each block-quantised 2-D tensor's name: the rounding error of a random matrix like it (see
    module); other 2-D tensors: zeros (stored exactly); 1-D tensors (norms, biases): themselves, so an
    adapter's norm folding and gains act on the errors as on the weights."""

    def __init__(self, weights: Mapping[str, np.ndarray], seed: int = FLOOR_SEED):
        self.weights, self.seed, self.unsupported = weights, seed, set()
        self._index = weights

    def __getitem__(self, key: str) -> np.ndarray:
        weight = self.weights[key]
        if weight.ndim < 2:
            return weight
        if self.weights.block_size(key) <= 1:
            return np.zeros_like(weight)
        rng = np.random.default_rng([self.seed, zlib.crc32(key.encode())])
        noise = rng.standard_normal(weight.shape) * weight.std(axis=-1, keepdims=True)
        back = round_trip(noise, self.weights.storage(key))
        if back is None:
            self.unsupported.add(self.weights.storage(key))
            return np.full_like(weight, np.nan)
        return back - noise

    def shape(self, key: str) -> tuple[int, ...]:
        return self.weights.shape(key)


def noise_floors(
    weights: Mapping[str, np.ndarray], cfg: ArchConfig, singular_values: np.ndarray, *, fold_ln: bool
) -> tuple[dict[str, np.ndarray], list[str]]:
    """``{"quant_noise_floor": (L*H,), "rank_above_quant_floor": (L*H,)}`` and the quantisation types no
    quantiser here writes; ``singular_values (L, H, d_head)`` are the kernels' spectra. Layer by layer."""
    from ..spectra import factored_singular_values

    errors = calibrated_errors(weights)
    floor = np.zeros((cfg.n_layers, cfg.n_heads))
    for layer in range(cfg.n_layers):
        w = split_heads(read_layer(weights, cfg, layer), cfg, fold_ln=fold_ln)
        e = split_heads(read_layer(errors, cfg, layer), cfg, fold_ln=fold_ln)
        left = np.concatenate([e.W_Q, w.W_Q], axis=-1)  # (H, d_model, 2 d_head): ΔK = left rightᵀ
        right = np.concatenate([w.W_K, e.W_K], axis=-1)
        if np.isnan(left).any() or np.isnan(right).any():
            floor[layer] = np.nan
            continue
        floor[layer] = factored_singular_values(left, right)[..., 0]
    above = (singular_values > floor[..., None]).sum(axis=-1)
    above = np.where(np.isnan(floor), -1, above)
    columns = {"quant_noise_floor": floor.ravel(), "rank_above_quant_floor": above.ravel().astype(np.int64)}
    return columns, sorted(errors.unsupported)
