"""Rank analysis of real checkpoints (SPEC X3): safetensors loading, per-head static kernels
``K_h = W_Q^h W_K^hᵀ`` from the factors, realised mixers on text, sink/locality/positional scores.
"""

from __future__ import annotations

from .arch import ROPE_NOTE, SUPPORTED_ARCHS, ArchConfig, LayerWeights, arch_config, check_arch, read_layer
from .checkpoint import Checkpoint, SafetensorsWeights, open_checkpoint
from .kernels import HeadKernel, LayerHeads, head_kernels, kernel_singular_values, kernel_spectra, split_heads
from .mixers import (
    SINK_THRESHOLD,
    locality_mass,
    mixer_ranks,
    mixer_summary,
    positional_prior_explained,
    realised_mixers,
    sink_score,
    uniform_mixer,
)
from .model import InspectResult, inspect_model, kernel_table

__all__ = [
    "ROPE_NOTE",
    "SINK_THRESHOLD",
    "SUPPORTED_ARCHS",
    "ArchConfig",
    "Checkpoint",
    "HeadKernel",
    "InspectResult",
    "LayerHeads",
    "LayerWeights",
    "SafetensorsWeights",
    "arch_config",
    "check_arch",
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
    "realised_mixers",
    "sink_score",
    "split_heads",
    "uniform_mixer",
]
