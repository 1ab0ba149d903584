"""``inspect_model``: one checkpoint → one row per (layer, head) with every rank estimate.

Static part (always): per-head kernel spectra from the factors (:mod:`.kernels`), every rank
estimator on each (columns named after the panel keys), a spectrum summary (``frobenius_norm``,
``sv_1..sv_k``) and bias norms. Gavish–Donoho (``optimal_hard_threshold``) is *not applicable* to a
static kernel: its noise level is estimated from the median singular value on the assumption that the
matrix is a low-rank signal plus i.i.d. noise, whose singular values form a Marchenko–Pastur bulk. A
product of trained weights ``W_Q W_Kᵀ`` has no such bulk (its small singular values are weights, not
noise), and the median rule then reads most heads as rank 0. The column is NaN and
``optimal_hard_threshold_reason`` says why. Realised part (text given): a forward pass on text
windows and the statistics of :mod:`.mixers`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import UserInputError
from ..jsonable import json_safe
from .arch import ArchConfig, adapter, arch_config
from .checkpoint import SafetensorsWeights, open_checkpoint
from .hub import resolve_model
from .kernels import kernel_spectra
from .mixers import SINK_THRESHOLD, check_sink_definition

GD_KEY = "optimal_hard_threshold"
GD_REASON_KEY = "optimal_hard_threshold_reason"
GD_NOT_APPLICABLE = (
    "not applicable: a weight product W_Q W_K^T has no noise bulk, and Gavish-Donoho assumes "
    "a low-rank signal plus i.i.d. noise"
)


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

    def header(self) -> dict:
        """Everything but the per-head rows, JSON-ready."""
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
        }

    def to_json(self) -> dict:
        """JSON-ready dict: the :meth:`header` and ``"heads": [{"layer", "head", "kv_head", …}]``.

        NaN becomes null (Gavish–Donoho beside its ``optimal_hard_threshold_reason``); each head
        carries its full kernel spectrum as ``singular_values`` instead of the ``sv_i`` columns.
        """
        heads = []
        sv_cols = [c for c in self.table.columns if c.startswith("sv_")]
        for row, sv in zip(
            self.table.drop(columns=sv_cols).to_dict("records"),
            self.singular_values.reshape(-1, self.config.d_head),
        ):
            entry = {k: json_safe(v) for k, v in row.items()}
            entry["singular_values"] = [float(x) for x in sv]
            heads.append(entry)
        return {**self.header(), "heads": heads}

    def to_frame(self) -> pd.DataFrame:
        """The per-head table, with the :meth:`header` in ``frame.attrs``."""
        frame = self.table.copy()
        frame.attrs.update(self.header())
        return frame


def _panel_params() -> dict:
    from ..spectra import PANEL

    return {key: params for key, _, params in PANEL}


def kernel_table(spectra: dict[str, np.ndarray], cfg: ArchConfig, *, top_k: int = 8) -> pd.DataFrame:
    """One row per head: layer, head, kv_head, every panel estimate (Gavish–Donoho NaN with its
    reason), ``frobenius_norm``, bias norms, ``sv_1..sv_top_k``."""
    from ..spectra import PANEL, estimate_all, panel_description

    integer = {key for key, d in panel_description().items() if d["integer"]}
    sv = spectra["singular_values"]  # (L, H, d_head)
    L, H, d_head = sv.shape
    layer, head = np.meshgrid(np.arange(L), np.arange(H), indexing="ij")
    cols: dict[str, np.ndarray] = {
        "layer": layer.ravel(),
        "head": head.ravel(),
        "kv_head": np.array([cfg.kv_head(h) for h in head.ravel()]),
    }
    estimates = estimate_all(sv)  # without a shape the Gavish-Donoho key is skipped
    for key, _, _ in PANEL:
        if key == GD_KEY:
            cols[GD_KEY] = np.full(L * H, np.nan)
            cols[GD_REASON_KEY] = np.full(L * H, GD_NOT_APPLICABLE, dtype=object)
        else:
            cols[key] = np.asarray(estimates[key]).ravel().astype(np.int64 if key in integer else np.float64)
    cols["frobenius_norm"] = np.sqrt((sv**2).sum(axis=-1)).ravel()
    cols["b_Q_norm"] = spectra["b_Q_norm"].ravel()
    cols["b_K_norm"] = spectra["b_K_norm"].ravel()
    for i in range(min(top_k, d_head)):
        cols[f"sv_{i + 1}"] = sv[..., i].ravel()
    return pd.DataFrame(cols)


def _text_source(text: str | Path) -> str:
    from .text import BUILTIN_TEXT

    if isinstance(text, Path):
        return str(text)
    return "built-in sample" if text == BUILTIN_TEXT else f"a string of {len(text)} characters"


def _logit_field_columns(inputs: np.ndarray, mixers: np.ndarray, *, causal: bool) -> dict[str, np.ndarray]:
    """``logit_field_*`` columns ``(layers, heads)`` from the layer inputs and mixers (:mod:`.logit_field`)."""
    from .logit_field import LOGIT_FIELD_COLUMNS, fit_layer

    L, H = mixers.shape[1:3]
    out = {c: np.full((L, H), np.nan) for c in LOGIT_FIELD_COLUMNS}
    for layer in range(L):
        for h, fit in enumerate(fit_layer(inputs[:, layer], mixers[:, layer], causal=causal)):
            for c in LOGIT_FIELD_COLUMNS:
                out[c][layer, h] = fit[c]
    out["logit_field_rank_90"] = out["logit_field_rank_90"].astype(np.int64)
    return out


def _logit_field_info(cfg: ArchConfig) -> dict:
    from .logit_field import LEVEL, MAX_DIMS

    return {
        "max_dims": MAX_DIMS,
        "level": LEVEL,
        "note": "no fixed kernel exists under rotary positions: explained is a lower bound"
        if cfg.rope
        else "",
    }


def _realised(
    ckpt, cfg: ArchConfig, text: str | Path, *, window, window_len, max_windows, sink_definition, logit_field
):
    from .mixers import mixer_summary, query_input_modules, realised_mixers, realised_mixers_with_inputs
    from .text import load_hf_model, load_tokenizer, max_positions, token_windows

    if ckpt.config_dir is None:
        raise UserInputError(
            "Realised mixers need a model folder with config.json (the forward pass builds the model from it)."
        )
    tokenizer = load_tokenizer(ckpt.config_dir)
    limit = max_positions(ckpt.config)
    n = min(window_len, limit) if limit else window_len
    vocab = int(ckpt.config.get("vocab_size", 256))
    ids = token_windows(text, tokenizer, vocab_size=vocab, window_len=n, max_windows=max_windows)
    model = load_hf_model(ckpt.config_dir)
    if logit_field:
        modules = query_input_modules(model, adapter(cfg.arch).anchor, cfg.n_layers)
        mixers, inputs = realised_mixers_with_inputs(model, ids, modules)  # (B, L, H, n, n), (B, L, n, d)
    else:
        mixers = realised_mixers(model, ids)  # (B, L, H, n, n)
    summary = mixer_summary(mixers, causal=cfg.causal, window=window, sink_definition=sink_definition)
    if logit_field:
        summary.update(_logit_field_columns(inputs, mixers, causal=cfg.causal))
    stats = {k: v.ravel() for k, v in summary.items()}
    info = {
        "source": _text_source(text),
        "windows": int(ids.shape[0]),
        "window_len": int(ids.shape[1]),
        "locality_window": window,
        "tokenizer": type(tokenizer).__name__ if tokenizer is not None else "bytes modulo vocab_size",
        "sink_definition": sink_definition,
        "sink_threshold": SINK_THRESHOLD,
        "sink_ratio": float(np.mean(stats["sink_head"])),
        "logit_field": _logit_field_info(cfg) if logit_field else None,
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
    window: int = 2,
    window_len: int = 64,
    max_windows: int = 8,
    top_k: int = 8,
    sink_definition: str = "ours",
    logit_field: bool = True,
    cache_dir: str | Path | None = None,
    on_layer: Callable[[int, int], None] | None = None,
) -> InspectResult:
    """Inspect the checkpoint ``path``: a folder, a ``.safetensors`` file, or a cached Hugging Face id.

    ``text`` (a string of text, or a :class:`~pathlib.Path` to a UTF-8 file) adds realised-mixer
    statistics and, with ``logit_field``, the one-kernel fit of each head's attention logits
    (:mod:`.logit_field`). ``on_layer(layer, n_layers)`` reports progress. Raises :class:`UserInputError`.
    """
    check_sink_definition(sink_definition)
    ckpt = open_checkpoint(resolve_model(path, cache_dir=cache_dir))
    weights = SafetensorsWeights(ckpt.files)
    cfg = arch_config(weights, ckpt.config, arch=arch, n_heads=n_heads, n_kv_heads=n_kv_heads)
    if text is not None:
        from .text import check_text

        check_text(text)  # fail on a missing or empty text file before the slow part
    hook = (lambda layer: on_layer(layer, cfg.n_layers)) if on_layer else None
    spectra = kernel_spectra(weights, cfg, fold_ln=fold_ln, on_layer=hook)
    table = kernel_table(spectra, cfg, top_k=top_k)
    notes = [*adapter(cfg.arch).notes, f"Gavish-Donoho (optimal_hard_threshold) is {GD_NOT_APPLICABLE}."]
    info = None
    if text is not None:
        stats, info = _realised(
            ckpt,
            cfg,
            text,
            window=window,
            window_len=window_len,
            max_windows=max_windows,
            sink_definition=sink_definition,
            logit_field=logit_field,
        )
        table = pd.concat([table, pd.DataFrame(stats)], axis=1)
    return InspectResult(str(path), cfg, table, spectra["singular_values"], fold_ln, notes, info)
