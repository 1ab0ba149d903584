"""Architecture descriptions: where each layer's W_Q, W_K, biases and preceding norm live.

Conventions (TransformerLens): a token is a row vector ``x`` of width ``d_model``; head ``h`` forms
``q = x W_Q^h + b_Q^h`` with ``W_Q^h`` of shape ``(d_model, d_head)``, and the attention score of
query ``x`` on key ``y`` is ``x W_Q^h (W_K^kv)ᵀ yᵀ`` plus bias terms. The static kernel is
``K_h = W_Q^h (W_K^kv)ᵀ``, ``kv = h // (n_heads / n_kv_heads)`` (grouped-query attention).

Supported families and their key names (after an optional prefix such as ``bert.``, ``transformer.``
or ``model.``, detected from the keys):

- ``bert``  ``encoder.layer.{i}.attention.self.{query,key}.{weight,bias}``: ``nn.Linear``, weight
  ``(out, in)``, so ``W_Q = weightᵀ``. Post-LN: the norm before layer ``i``'s attention is
  ``embeddings.LayerNorm`` (``i = 0``) or ``encoder.layer.{i-1}.output.LayerNorm``.
- ``gpt2``  ``h.{i}.attn.c_attn.{weight,bias}``: ``Conv1D``, weight ``(in, out) = (d_model, 3 d_model)``
  fusing Q, K, V along columns, so ``W_Q = weight[:, :d]``, ``W_K = weight[:, d:2d]``. Pre-LN ``h.{i}.ln_1``.
- ``llama`` ``layers.{i}.self_attn.{q,k}_proj.weight``: ``nn.Linear`` with ``n_kv_heads`` key heads
  (GQA); RMSNorm ``layers.{i}.input_layernorm.weight`` (no shift). Rotary embeddings rotate q and k
  by position before the product: the static kernel leaves the rotation out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import DataError, UnknownNameError, UserInputError, did_you_mean

SUPPORTED_ARCHS = ("bert", "gpt2", "llama")

# Key of layer 0's query weight, used to detect the key prefix and count layers.
_ANCHOR = {
    "bert": "encoder.layer.{i}.attention.self.query.weight",
    "gpt2": "h.{i}.attn.c_attn.weight",
    "llama": "layers.{i}.self_attn.q_proj.weight",
}
# config.json field names: (n_heads, n_layers, d_model, n_kv_heads or None)
_CONFIG_FIELDS = {
    "bert": ("num_attention_heads", "num_hidden_layers", "hidden_size", None),
    "gpt2": ("n_head", "n_layer", "n_embd", None),
    "llama": ("num_attention_heads", "num_hidden_layers", "hidden_size", "num_key_value_heads"),
}
ROPE_NOTE = "RoPE: the static kernel W_Q W_K^T leaves out the position-dependent rotation of q and k."


@dataclass(frozen=True)
class ArchConfig:
    """Shapes of one checkpoint's attention: ``n_heads`` query heads of width ``d_head`` over ``d_model``."""

    arch: str
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_model: int
    d_head: int
    prefix: str = ""

    @property
    def causal(self) -> bool:
        return self.arch != "bert"

    @property
    def rope(self) -> bool:
        return self.arch == "llama"

    def kv_head(self, head: int) -> int:
        """Key/value head used by query head ``head``: ``head // (n_heads / n_kv_heads)``."""
        return head // (self.n_heads // self.n_kv_heads)


@dataclass(frozen=True)
class LayerWeights:
    """One layer's attention inputs, float64. ``W_Q (d_model, n_heads d_head)``, ``W_K (d_model, n_kv d_head)``."""

    W_Q: np.ndarray
    W_K: np.ndarray
    b_Q: np.ndarray | None  # (n_heads d_head,)
    b_K: np.ndarray | None  # (n_kv d_head,)
    ln_gamma: np.ndarray | None  # (d_model,) scale of the norm feeding this attention
    ln_beta: np.ndarray | None  # (d_model,) shift (LayerNorm only)


def check_arch(arch: str) -> str:
    if arch not in SUPPORTED_ARCHS:
        raise UnknownNameError(
            f"Unknown architecture '{arch}'. Supported: {', '.join(SUPPORTED_ARCHS)}.{did_you_mean(arch, SUPPORTED_ARCHS)}"
        )
    return arch


def _shape(weights: Mapping[str, np.ndarray], key: str) -> tuple[int, ...]:
    return tuple(weights.shape(key)) if hasattr(weights, "shape") else tuple(np.shape(weights[key]))


def _find_prefix(weights: Mapping[str, np.ndarray], arch: str) -> str:
    anchor = _ANCHOR[arch].format(i=0)
    for key in weights:
        if key.endswith(anchor) and (key == anchor or key[: -len(anchor)].endswith(".")):
            return key[: -len(anchor)]
    raise DataError(
        f"No tensor named '*{anchor}' in the checkpoint: is it really a '{arch}' model (see --arch)?"
    )


def _count_layers(weights: Mapping[str, np.ndarray], arch: str, prefix: str) -> int:
    n = 0
    while prefix + _ANCHOR[arch].format(i=n) in weights:
        n += 1
    return n


def _positive_int(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise DataError(f"The {what} must be a positive int. Got {value!r} instead.")
    return value


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
    check_arch(arch)
    heads_field, _, _, kv_field = _CONFIG_FIELDS[arch]
    prefix = _find_prefix(weights, arch)
    n_layers = _count_layers(weights, arch, prefix)
    q_shape = _shape(weights, prefix + _ANCHOR[arch].format(i=0))
    d_model = q_shape[0] if arch == "gpt2" else q_shape[1]
    n_heads = _positive_int(
        n_heads if n_heads is not None else config.get(heads_field), "number of heads (n_heads)"
    )
    if n_kv_heads is None:
        n_kv_heads = config.get(kv_field, n_heads) if kv_field else n_heads
    n_kv_heads = _positive_int(n_kv_heads, "number of key/value heads (n_kv_heads)")
    if n_heads % n_kv_heads:
        raise DataError(f"n_heads={n_heads} must be a multiple of n_kv_heads={n_kv_heads}.")
    d_head = config.get("head_dim") if arch == "llama" else None
    if d_head is None:
        if d_model % n_heads:
            raise DataError(f"The head count n_heads={n_heads} does not divide the width d_model={d_model}.")
        d_head = d_model // n_heads
    cfg = ArchConfig(arch, n_layers, n_heads, n_kv_heads, d_model, int(d_head), prefix)
    _check_shapes(weights, cfg)
    return cfg


def _check_shapes(weights: Mapping[str, np.ndarray], cfg: ArchConfig) -> None:
    got = _shape(weights, cfg.prefix + _ANCHOR[cfg.arch].format(i=0))
    q_out = cfg.n_heads * cfg.d_head
    want = {"bert": (q_out, cfg.d_model), "gpt2": (cfg.d_model, 3 * q_out), "llama": (q_out, cfg.d_model)}[
        cfg.arch
    ]
    if got != want:
        raise DataError(
            f"Layer 0's query weight has shape {got}, but n_heads={cfg.n_heads} x d_head={cfg.d_head} "
            f"over d_model={cfg.d_model} needs {want}."
        )


def _optional(weights: Mapping[str, np.ndarray], key: str) -> np.ndarray | None:
    return np.asarray(weights[key], dtype=np.float64) if key in weights else None


def _f64(weights: Mapping[str, np.ndarray], key: str) -> np.ndarray:
    return np.asarray(weights[key], dtype=np.float64)


def read_layer(weights: Mapping[str, np.ndarray], cfg: ArchConfig, layer: int) -> LayerWeights:
    """Read layer ``layer``'s query/key weights, biases and preceding norm as float64 arrays."""
    p, i = cfg.prefix, layer
    if cfg.arch == "bert":
        base = f"{p}encoder.layer.{i}.attention.self."
        norm = f"{p}embeddings.LayerNorm." if i == 0 else f"{p}encoder.layer.{i - 1}.output.LayerNorm."
        return LayerWeights(
            _f64(weights, base + "query.weight").T,
            _f64(weights, base + "key.weight").T,
            _optional(weights, base + "query.bias"),
            _optional(weights, base + "key.bias"),
            _optional(weights, norm + "weight"),
            _optional(weights, norm + "bias"),
        )
    if cfg.arch == "gpt2":
        key, d = f"{p}h.{i}.attn.c_attn.", cfg.n_heads * cfg.d_head
        if hasattr(weights, "columns"):  # stream only the Q and K columns
            W_QK = weights.columns(key + "weight", 0, 2 * d)  # (d_model, 2d)
        else:
            W_QK = _f64(weights, key + "weight")[:, : 2 * d]
        bias = _optional(weights, key + "bias")
        return LayerWeights(
            W_QK[:, :d],
            W_QK[:, d:],
            None if bias is None else bias[:d],
            None if bias is None else bias[d : 2 * d],
            _optional(weights, f"{p}h.{i}.ln_1.weight"),
            _optional(weights, f"{p}h.{i}.ln_1.bias"),
        )
    base = f"{p}layers.{i}.self_attn."
    return LayerWeights(
        _f64(weights, base + "q_proj.weight").T,
        _f64(weights, base + "k_proj.weight").T,
        _optional(weights, base + "q_proj.bias"),
        _optional(weights, base + "k_proj.bias"),
        _optional(weights, f"{p}layers.{i}.input_layernorm.weight"),
        None,
    )
