"""``inspect_model``: one checkpoint → one row per (layer, head) with every rank estimate.

Static part (always): per-head kernel spectra from the factors (:mod:`.kernels`), every rank
estimator on each (columns named after the panel keys), a spectrum summary (``frobenius_norm``,
``sv_1..sv_k``) and bias norms. Gavish–Donoho (``optimal_hard_threshold``) is *not applicable* to a
static kernel: its noise level is estimated from the median singular value on the assumption that the
matrix is a low-rank signal plus i.i.d. noise, whose singular values form a Marchenko–Pastur bulk. A
product of trained weights ``W_Q W_Kᵀ`` has no such bulk (its small singular values are weights, not
noise), and the median rule then reads most heads as rank 0. The column is NaN and
``optimal_hard_threshold_reason`` says why. Realised part (text given): a forward pass on text
windows, the statistics of :mod:`.mixers` and each head's logit field taken apart (:mod:`.logit_decomposition`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..jsonable import json_safe
from .arch import ArchConfig, adapter, arch_config
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
    quantisation: dict | None = None
    mixers: np.ndarray | None = None  # (B, L, H, n, n), kept only when asked for

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
            "quantisation": self.quantisation,
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


def _decomposition_info(window: int) -> dict:
    from .logit_decomposition import LEVEL, PARTS

    return {
        "parts": list(PARTS),
        "band": window,
        "rank_estimator": f"energy_threshold_rank (tau = {LEVEL})",
        "note": "nested least squares in the order of parts; *_share is net of each part's overfit, "
        "*_share_raw the exact energy share",
    }


def _realised(ckpt, cfg: ArchConfig, text: str | Path, *, window, sink_definition, logit_field, **forward):
    """Per-head statistics ``{name: (L*H,)}`` of the realised mixers on ``text`` and the text's ``info``."""
    from .forward import run_forward
    from .logit_decomposition import decompose_layers
    from .mixers import mixer_summary, sink_score
    from .text import text_problem

    run = run_forward(ckpt, cfg, text, with_inputs=logit_field, **forward)
    summary = mixer_summary(run.mixers, causal=cfg.causal, window=window, sink_definition=sink_definition)
    if run.without_bos is not None:
        without = sink_score(run.without_bos, sink_definition).mean(axis=0)  # (L, H)
        summary["sink_score_without_bos"] = without
        summary["sink_head_without_bos"] = without > SINK_THRESHOLD
    if logit_field:
        summary.update(_logit_field_columns(run.inputs, run.mixers, causal=cfg.causal))
    summary.update(decompose_layers(run.mixers, causal=cfg.causal, width=window))
    stats = {k: v.ravel() for k, v in summary.items()}
    info = {
        "source": _text_source(text),
        "windows": int(run.ids.shape[0]),
        "window_len": int(run.ids.shape[1]),
        "locality_window": window,
        **run.info,
        "sink_definition": sink_definition,
        "sink_threshold": SINK_THRESHOLD,
        "sink_ratio": float(np.mean(stats["sink_head"])),
        "logit_field": _logit_field_info(cfg) if logit_field else None,
        "decomposition": _decomposition_info(window),
    }
    if run.without_bos is not None:
        info["sink_ratio_without_bos"] = float(np.mean(stats["sink_head_without_bos"]))
    problem = text_problem(text, info["windows"], info["window_len"], forward["window_len"])
    if problem:  # stated in the JSON's text header, a CSV column, and on the console
        info["text_warning"] = problem
    return stats, info, run.mixers


def _quantisation(
    weights, cfg: ArchConfig, table: pd.DataFrame, singular_values: np.ndarray, fold_ln: bool
) -> tuple[pd.DataFrame, dict]:
    """The storage type columns, and for quantised weights ``rank_moves_in_quant_step`` and the noise
    floor columns (:mod:`.quant_floor`)."""
    from .quant_floor import FLOOR_SEED, noise_floors
    from .quantisation import PERTURBATION_SEED, is_quantised, rank_moves, storage_columns

    table = pd.concat([table, pd.DataFrame(storage_columns(weights, cfg))], axis=1)
    if not is_quantised(weights, cfg):
        return table, {"quantised": False}
    moves = rank_moves(weights, cfg, table, fold_ln=fold_ln)
    moved = np.logical_or.reduce(list(moves.values()))
    table["rank_moves_in_quant_step"] = moved
    floors, unsupported = noise_floors(weights, cfg, singular_values, fold_ln=fold_ln)
    for column, values in floors.items():
        table[column] = values
    info = {
        "quantised": True,
        "heads": len(moved),
        "heads_whose_rank_moves": int(moved.sum()),
        "heads_whose_rank_moves_by_estimator": {key: int(m.sum()) for key, m in moves.items()},
        "perturbation": "uniform within +-1/2 quantisation step of every quantised weight, one draw",
        "seed": PERTURBATION_SEED,
        "noise_floor": "spectral norm of E_Q W_K^T + W_Q E_K^T, E the rounding error of a random matrix of "
        "each tensor's shape and row scale through the same quantisation type",
        "floor_seed": FLOOR_SEED,
        "floor_types_without_quantiser": unsupported,
        "median_rank_above_floor": float(np.median(floors["rank_above_quant_floor"])),
    }
    return table, info


def inspect_model(
    path: Any,
    *,
    arch: str | None = None,
    n_heads: int | None = None,
    n_kv_heads: int | None = None,
    fold_ln: bool = False,
    text: str | Path | None = None,
    tokenizer: Any = None,
    byte_tokens: bool = False,
    window: int = 2,
    window_len: int = 64,
    max_windows: int = 8,
    top_k: int = 8,
    sink_definition: str = "ours",
    logit_field: bool = True,
    cache_dir: str | Path | None = None,
    on_layer: Callable[[int, int], None] | None = None,
    keep_mixers: bool = False,
) -> InspectResult:
    """Inspect ``path``: a folder, a ``.safetensors`` or ``.gguf`` file, a short name (``minilm``,
    ``smollm2``, ``<name>-random``), a cached Hugging Face id, or a loaded transformers model.

    ``text`` (a string of text, or a :class:`~pathlib.Path` to a UTF-8 file) adds realised-mixer
    statistics and, with ``logit_field``, the one-kernel fit of each head's attention logits
    (:mod:`.logit_field`); ``tokenizer`` goes with a model object; ``byte_tokens`` lets a model without
    a tokenizer read UTF-8 bytes. ``on_layer(layer, n_layers)`` reports progress; ``keep_mixers`` keeps
    the mixers ``(B, L, H, n, n)`` on the result. Raises :class:`UserInputError`.
    """
    from .source import open_source, source_name

    check_sink_definition(sink_definition)
    if text is not None:
        from .text import check_text

        check_text(text)  # fail on a missing or empty text file before the slow part
    ckpt = open_source(path, cache_dir=cache_dir, tokenizer=tokenizer)
    weights = ckpt.weights
    cfg = arch_config(weights, ckpt.config, arch=arch, n_heads=n_heads, n_kv_heads=n_kv_heads)
    hook = (lambda layer: on_layer(layer, cfg.n_layers)) if on_layer else None
    spectra = kernel_spectra(weights, cfg, fold_ln=fold_ln, on_layer=hook)
    table, quant = _quantisation(
        weights, cfg, kernel_table(spectra, cfg, top_k=top_k), spectra["singular_values"], fold_ln
    )
    notes = [*adapter(cfg.arch).notes, f"Gavish-Donoho (optimal_hard_threshold) is {GD_NOT_APPLICABLE}."]
    if quant["quantised"]:
        by = ", ".join(f"{k} {n}" for k, n in quant["heads_whose_rank_moves_by_estimator"].items())
        notes.append(
            f"quantised weights: {quant['heads_whose_rank_moves']} of {quant['heads']} heads change an integer "
            f"rank estimate when every quantised weight moves within +-1/2 its quantisation step ({by}; "
            "column rank_moves_in_quant_step); the quantisation noise floor under each spectrum leaves a median "
            f"of {quant['median_rank_above_floor']:g} singular values above it (columns quant_noise_floor, "
            "rank_above_quant_floor)."
        )
    info, mixers = None, None
    if text is not None:
        stats, info, mixers = _realised(
            ckpt,
            cfg,
            text,
            window=window,
            window_len=window_len,
            max_windows=max_windows,
            byte_tokens=byte_tokens,
            sink_definition=sink_definition,
            logit_field=logit_field,
        )
        table = pd.concat([table, pd.DataFrame(stats)], axis=1)
    result = InspectResult(source_name(path), cfg, table, spectra["singular_values"], fold_ln, notes, info)
    result.quantisation = quant
    result.mixers = mixers if keep_mixers else None
    return result
