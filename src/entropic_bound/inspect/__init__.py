"""Rank analysis of real checkpoints (safetensors, GGUF, model objects), per-head static kernels
``K_h = W_Q^h W_K^hᵀ`` from the factors, realised mixers on text, sink/locality/positional scores.

:func:`analyse` (alias ``analyze``) is the library entry point (a pandas DataFrame, one row per head); one adapter file
per architecture lives in :mod:`.architectures` (registry :data:`ARCHITECTURES`).
"""

from __future__ import annotations

from .arch import (
    ROPE_NOTE,
    SUPPORTED_ARCHS,
    ArchConfig,
    LayerWeights,
    adapter,
    arch_config,
    check_arch,
    read_layer,
)
from .architectures import ARCHITECTURES, Architecture
from .checkpoint import Checkpoint, SafetensorsWeights, open_checkpoint
from .dataframe import analyse, analyze
from .hub import resolve_model
from .kernels import HeadKernel, LayerHeads, head_kernels, kernel_singular_values, kernel_spectra, split_heads
from .logit_field import LOGIT_FIELD_COLUMNS, fit_layer, fit_logit_field
from .mixers import (
    SINK_DEFINITIONS,
    SINK_THRESHOLD,
    locality_mass,
    mixer_ranks,
    mixer_summary,
    positional_prior_explained,
    query_input_modules,
    realised_mixers,
    realised_mixers_with_inputs,
    sink_score,
    uniform_mixer,
)
from .model import GD_NOT_APPLICABLE, InspectResult, inspect_model, kernel_table
from .text import BUILTIN_TEXT

__all__ = [
    "ARCHITECTURES",
    "LOGIT_FIELD_COLUMNS",
    "BUILTIN_TEXT",
    "GD_NOT_APPLICABLE",
    "ROPE_NOTE",
    "SINK_DEFINITIONS",
    "SINK_THRESHOLD",
    "SUPPORTED_ARCHS",
    "ArchConfig",
    "Architecture",
    "Checkpoint",
    "HeadKernel",
    "InspectResult",
    "LayerHeads",
    "LayerWeights",
    "SafetensorsWeights",
    "adapter",
    "analyse",
    "analyze",
    "arch_config",
    "check_arch",
    "fit_layer",
    "fit_logit_field",
    "head_kernels",
    "inspect_model",
    "kernel_singular_values",
    "kernel_spectra",
    "kernel_table",
    "locality_mass",
    "mixer_ranks",
    "mixer_summary",
    "open_checkpoint",
    "positional_prior_explained",
    "read_layer",
    "query_input_modules",
    "realised_mixers",
    "realised_mixers_with_inputs",
    "resolve_model",
    "sink_score",
    "split_heads",
    "uniform_mixer",
]
