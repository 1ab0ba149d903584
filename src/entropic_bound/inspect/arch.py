"""A checkpoint's attention shapes from its ``config.json`` and tensors, through its architecture adapter.

Everything family-specific (key names, config fields, weight layouts) lives in one adapter file per
architecture under :mod:`.architectures`; this module only finds the key prefix (``bert.``,
``transformer.``, ``model.``, …), counts layers, reads the head counts and checks the shapes.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..errors import DataError, UserInputError
from .architectures import ARCHITECTURES, ROPE_NOTE, ArchConfig, Architecture, LayerWeights

__all__ = [
    "ROPE_NOTE",
    "SUPPORTED_ARCHS",
    "ArchConfig",
    "LayerWeights",
    "adapter",
    "arch_config",
    "check_arch",
    "read_layer",
]

SUPPORTED_ARCHS = tuple(ARCHITECTURES.names())


def _registered_name(arch: str) -> str:
    """``arch`` itself, or the adapter that lists it among its ``model_types`` (``gemma3_text``)."""
    if arch in ARCHITECTURES.names():
        return arch
    for name in ARCHITECTURES.names():
        if arch in ARCHITECTURES.get(name).model_types:
            return name
    return arch


def adapter(arch: str) -> Architecture:
    """The adapter registered as ``arch`` (or reading that ``model_type``); a miss lists the available
    names (UnknownNameError)."""
    return ARCHITECTURES.get(_registered_name(arch))()


def check_arch(arch: str) -> str:
    adapter(arch)
    return arch


def _shape(weights: Mapping[str, np.ndarray], key: str) -> tuple[int, ...]:
    return tuple(weights.shape(key)) if hasattr(weights, "shape") else tuple(np.shape(weights[key]))


def _find_prefix(weights: Mapping[str, np.ndarray], arch: str, anchor: str) -> str:
    anchor = anchor.format(i=0)
    for key in weights:
        if key.endswith(anchor) and (key == anchor or key[: -len(anchor)].endswith(".")):
            return key[: -len(anchor)]
    raise DataError(
        f"No tensor named '*{anchor}' in the checkpoint: is it really a '{arch}' model (see --arch)?"
    )


def _count_layers(weights: Mapping[str, np.ndarray], anchor: str, prefix: str) -> int:
    n = 0
    while prefix + anchor.format(i=n) in weights:
        n += 1
    return n


def _positive_int(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise DataError(f"The {what} must be a positive int. Got {value!r} instead.")
    return value


def _heads(config: dict, a: Architecture, n_heads: int | None, n_kv_heads: int | None) -> tuple[int, int]:
    n_heads = _positive_int(
        n_heads if n_heads is not None else config.get(a.fields.n_heads), "number of heads (n_heads)"
    )
    if n_kv_heads is None:
        n_kv_heads = config.get(a.fields.n_kv_heads, n_heads) if a.fields.n_kv_heads else n_heads
    n_kv_heads = _positive_int(n_kv_heads, "number of key/value heads (n_kv_heads)")
    if n_heads % n_kv_heads:
        raise DataError(f"n_heads={n_heads} must be a multiple of n_kv_heads={n_kv_heads}.")
    return n_heads, n_kv_heads


def arch_config(
    weights: Mapping[str, np.ndarray],
    config: dict | None = None,
    *,
    arch: str | None = None,
    n_heads: int | None = None,
    n_kv_heads: int | None = None,
) -> ArchConfig:
    """Build the :class:`ArchConfig` of a checkpoint from its ``config.json`` and tensor shapes.

    ``arch``, ``n_heads`` and ``n_kv_heads`` override the config (a bare ``.safetensors`` file has none).
    Raises :class:`UserInputError` for an unknown architecture or heads that do not divide the width.
    """
    config = config or {}
    if arch is None:
        if "model_type" not in config:
            raise UserInputError(f"Cannot tell the architecture: pass --arch ({', '.join(SUPPORTED_ARCHS)}).")
        arch = str(config["model_type"])
    arch = _registered_name(arch)
    a = adapter(arch)
    prefix = _find_prefix(weights, arch, a.anchor)
    n_layers = _count_layers(weights, a.anchor, prefix)
    d_model = a.d_model(_shape(weights, prefix + a.anchor.format(i=0)))
    n_heads, n_kv_heads = _heads(config, a, n_heads, n_kv_heads)
    d_head = config.get(a.fields.d_head) if a.fields.d_head else None
    if d_head is None:
        if d_model % n_heads:
            raise DataError(f"The head count n_heads={n_heads} does not divide the width d_model={d_model}.")
        d_head = d_model // n_heads
    cfg = ArchConfig(arch, n_layers, n_heads, n_kv_heads, d_model, int(d_head), prefix, a.causal, a.rope)
    got, want = _shape(weights, prefix + a.anchor.format(i=0)), a.anchor_shape(cfg)
    if got != want:
        raise DataError(
            f"Layer 0's query weight has shape {got}, but n_heads={n_heads} x d_head={cfg.d_head} "
            f"over d_model={d_model} needs {want}."
        )
    return cfg


def read_layer(weights: Mapping[str, np.ndarray], cfg: ArchConfig, layer: int) -> LayerWeights:
    """Read layer ``layer``'s query/key weights, biases and preceding norm as float64 arrays."""
    return adapter(cfg.arch).read_layer(weights, cfg, layer)
