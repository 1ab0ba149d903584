"""How far quantised weights pin the rank estimates: storage types, and ranks under in-step perturbation.

A block-quantised GGUF tensor (``Q4_1``, ``Q8_0``, ``Q4_K``, …) stores each run of ``block`` weights of
a row on a grid ``d·q + m``: a weight read back is the trained weight rounded to the nearest grid
point, so the trained one lies within half a step of it. :func:`perturbed` adds uniform noise of
±½ step to every quantised weight (the step of a block: the smallest spacing between its distinct
values, so a block whose scales differ by sub-block, as in the K-quants, gets the smallest one), and
:func:`rank_moves` reports which heads change an integer rank estimate under one such draw. Float
tensors (``F32``, ``F16``, ``BF16``) are left alone: they are not rounded to a grid.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping

import numpy as np

from .arch import ArchConfig, adapter
from .weights import LazyWeights

#: The draw of the in-step perturbation (one draw per tensor, seeded by this and the tensor's name).
PERTURBATION_SEED = 0


def storage_columns(weights: Mapping[str, np.ndarray], cfg: ArchConfig) -> dict[str, np.ndarray]:
    """``W_Q_dtype`` and ``W_K_dtype`` per head row: each tensor's type in the file (``Q4_1``, ``F32``, …)."""
    storage = getattr(weights, "storage", None)
    a = adapter(cfg.arch)
    q_types, k_types = [], []
    for layer in range(cfg.n_layers):
        q, k = a.qk_keys(cfg, layer)
        q_types += [storage(q) if storage else "unknown"] * cfg.n_heads
        k_types += [storage(k) if storage else "unknown"] * cfg.n_heads
    return {"W_Q_dtype": np.array(q_types, dtype=object), "W_K_dtype": np.array(k_types, dtype=object)}


def is_quantised(weights: Mapping[str, np.ndarray], cfg: ArchConfig) -> bool:
    """Whether any query or key tensor is block-quantised."""
    block = getattr(weights, "block_size", None)
    if block is None:
        return False
    a = adapter(cfg.arch)
    return any(block(key) > 1 for layer in range(cfg.n_layers) for key in a.qk_keys(cfg, layer))


def block_steps(weight: np.ndarray, block: int) -> np.ndarray:
    """The quantisation step of each weight: the smallest spacing between distinct values of its block
    (``block`` consecutive weights of a row), 0 where a block holds one value. Same shape as ``weight``."""
    rows, cols = weight.shape[0], int(np.prod(weight.shape[1:]))
    blocks = np.sort(weight.reshape(rows, cols // block, block), axis=-1)  # (rows, blocks, block)
    gaps = np.diff(blocks, axis=-1)
    gaps[gaps <= 0] = np.inf
    step = gaps.min(axis=-1)  # (rows, blocks)
    step[~np.isfinite(step)] = 0.0
    return np.repeat(step, block, axis=-1).reshape(weight.shape)


class perturbed(LazyWeights):
    """``weights`` with every block-quantised tensor moved by uniform noise of ±½ its step (see module)."""

    def __init__(self, weights: Mapping[str, np.ndarray], seed: int = PERTURBATION_SEED):
        self.weights, self.seed = weights, seed
        self._index = weights  # the same names, read through the perturbation

    def __getitem__(self, key: str) -> np.ndarray:
        weight = self.weights[key]
        block = self.weights.block_size(key)
        if block <= 1 or weight.ndim < 2:
            return weight
        rng = np.random.default_rng([self.seed, zlib.crc32(key.encode())])
        return weight + block_steps(weight, block) * rng.uniform(-0.5, 0.5, weight.shape)

    def shape(self, key: str) -> tuple[int, ...]:
        return self.weights.shape(key)


def rank_moves(
    weights: Mapping[str, np.ndarray], cfg: ArchConfig, table, *, fold_ln: bool
) -> dict[str, np.ndarray]:
    """Per integer rank estimator, per head row: whether the kernel's estimate differs from ``table``'s
    under one in-step perturbation of the quantised weights."""
    from ..spectra import estimate_all, panel_description
    from .kernels import kernel_spectra

    sv = kernel_spectra(perturbed(weights), cfg, fold_ln=fold_ln)["singular_values"]
    estimates = estimate_all(sv)  # without a shape the Gavish-Donoho key (not applicable) is skipped
    integer = [k for k, d in panel_description().items() if d["integer"] and k in table and k in estimates]
    return {
        key: np.asarray(estimates[key]).ravel().astype(np.int64) != table[key].to_numpy() for key in integer
    }
