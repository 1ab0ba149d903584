"""``inspect_model``: one checkpoint → one row per (layer, head) with every rank estimate.

Static part (always): per-head kernel spectra from the factors (:mod:`.kernels`), the SPEC §4 panel
on each, bias norms. Gavish–Donoho on a kernel uses its ``d_head`` nonzero singular values as a
``d_head × d_head`` core (the other ``d_model − d_head`` are exactly zero, which would make the
median 0). Realised part (``text`` given or ``builtin_text=True``): a forward pass on text windows
and the statistics of :mod:`.mixers`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import UserInputError
from .arch import ROPE_NOTE, ArchConfig, arch_config
from .checkpoint import SafetensorsWeights, open_checkpoint
from .kernels import kernel_spectra


@dataclass
class InspectResult:
    """``table``: one row per head; ``singular_values``: ``(n_layers, n_heads, d_head)`` kernel spectra."""

    model: str
    config: ArchConfig
    table: pd.DataFrame
    singular_values: np.ndarray
    fold_ln: bool
    notes: list[str] = field(default_factory=list)
    text_info: dict | None = None

    def to_json(self) -> dict:
        """JSON-ready dict: ``{"model", "arch", ..., "heads": [{"layer", "head", "kv_head", "singular_values", …}]}``."""
        heads = []
        sv_cols = [c for c in self.table.columns if c.startswith("sv_")]
        for row, sv in zip(
            self.table.drop(columns=sv_cols).to_dict("records"),
            self.singular_values.reshape(-1, self.config.d_head),
        ):
            entry = {k: _json_value(v) for k, v in row.items()}
            entry["singular_values"] = [float(x) for x in sv]
            heads.append(entry)
        c = self.config
        return {
            "model": self.model,
            "arch": c.arch,
            "n_layers": c.n_layers,
            "n_heads": c.n_heads,
            "n_kv_heads": c.n_kv_heads,
            "d_model": c.d_model,
            "d_head": c.d_head,
            "fold_ln": self.fold_ln,
            "estimator_params": _panel_params(),
            "notes": self.notes,
            "text": self.text_info,
            "heads": heads,
        }


def _json_value(v):
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return None if math.isnan(v) else float(v)
    return v


def _panel_params() -> dict:
    from ..spectra import PANEL

    return {key: params for key, _, params in PANEL}


def kernel_table(spectra: dict[str, np.ndarray], cfg: ArchConfig, *, top_k: int = 8) -> pd.DataFrame:
    """One row per head: layer, head, kv_head, every panel estimate, bias norms, ``sv_1..sv_top_k``."""
    from ..spectra import estimate_all, panel_description

    integer = {key for key, d in panel_description().items() if d["integer"]}
    sv = spectra["singular_values"]  # (L, H, d_head)
    L, H, d_head = sv.shape
    layer, head = np.meshgrid(np.arange(L), np.arange(H), indexing="ij")
    cols: dict[str, np.ndarray] = {
        "layer": layer.ravel(),
        "head": head.ravel(),
        "kv_head": np.array([cfg.kv_head(h) for h in head.ravel()]),
    }
    for key, value in estimate_all(sv, shape=(d_head, d_head)).items():
        cols[key] = np.asarray(value).ravel().astype(np.int64 if key in integer else np.float64)
    cols["b_Q_norm"] = spectra["b_Q_norm"].ravel()
    cols["b_K_norm"] = spectra["b_K_norm"].ravel()
    for i in range(min(top_k, d_head)):
        cols[f"sv_{i + 1}"] = sv[..., i].ravel()
    return pd.DataFrame(cols)


def _realised(ckpt, cfg: ArchConfig, text: str | None, *, window: int, window_len: int, max_windows: int):
    from .mixers import mixer_summary, realised_mixers
    from .text import load_hf_model, load_tokenizer, max_positions, read_text, token_windows

    if ckpt.config_dir is None:
        raise UserInputError(
            "Realised mixers need a model folder with config.json (the forward pass builds the model from it)."
        )
    raw = read_text(text)
    tokenizer = load_tokenizer(ckpt.config_dir)
    limit = max_positions(ckpt.config)
    n = min(window_len, limit) if limit else window_len
    vocab = int(ckpt.config.get("vocab_size", 256))
    ids = token_windows(raw, tokenizer, vocab_size=vocab, window_len=n, max_windows=max_windows)
    mixers = realised_mixers(load_hf_model(ckpt.config_dir), ids)  # (B, L, H, n, n)
    stats = {k: v.ravel() for k, v in mixer_summary(mixers, causal=cfg.causal, window=window).items()}
    info = {
        "source": str(text) if text is not None else "built-in sample",
        "windows": int(ids.shape[0]),
        "window_len": int(ids.shape[1]),
        "locality_window": window,
        "tokenizer": type(tokenizer).__name__ if tokenizer is not None else "bytes modulo vocab_size",
    }
    return stats, info


def inspect_model(
    path: str | Path,
    *,
    arch: str | None = None,
    n_heads: int | None = None,
    n_kv_heads: int | None = None,
    fold_ln: bool = False,
    text: str | Path | None = None,
    realised: bool = False,
    window: int = 2,
    window_len: int = 64,
    max_windows: int = 8,
    top_k: int = 8,
    on_layer: Callable[[int, int], None] | None = None,
) -> InspectResult:
    """Inspect the checkpoint at ``path`` (folder or ``.safetensors`` file).

    ``realised=True`` (implied by ``text``) adds realised-mixer statistics on ``text`` (a file) or
    the built-in sample. ``on_layer(layer, n_layers)`` reports progress. Raises :class:`UserInputError`.
    """
    ckpt = open_checkpoint(path)
    weights = SafetensorsWeights(ckpt.files)
    cfg = arch_config(weights, ckpt.config, arch=arch, n_heads=n_heads, n_kv_heads=n_kv_heads)
    if text is not None:
        from .text import read_text

        read_text(text)  # fail on a missing text file before the slow part
    hook = (lambda layer: on_layer(layer, cfg.n_layers)) if on_layer else None
    spectra = kernel_spectra(weights, cfg, fold_ln=fold_ln, on_layer=hook)
    table = kernel_table(spectra, cfg, top_k=top_k)
    notes = [ROPE_NOTE] if cfg.rope else []
    notes.append(
        "Gavish-Donoho on a kernel uses its d_head nonzero singular values as a d_head x d_head core."
    )
    info = None
    if realised or text is not None:
        stats, info = _realised(
            ckpt,
            cfg,
            None if text is None else str(text),
            window=window,
            window_len=window_len,
            max_windows=max_windows,
        )
        table = pd.concat([table, pd.DataFrame(stats)], axis=1)
    return InspectResult(str(path), cfg, table, spectra["singular_values"], fold_ln, notes, info)
