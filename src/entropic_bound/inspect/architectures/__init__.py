"""Architecture adapters, one file each, registered in :data:`ARCHITECTURES` by name.

Adding an architecture: one file here with an :class:`Architecture` subclass decorated with
``@ARCHITECTURES.register("name")``, and its import below.
"""

from __future__ import annotations

from . import bert, gpt2, llama  # noqa: F401  (each registers itself)
from .base import ARCHITECTURES, ArchConfig, Architecture, ConfigFields, LayerWeights
from .llama import ROPE_NOTE

__all__ = ["ARCHITECTURES", "ROPE_NOTE", "ArchConfig", "Architecture", "ConfigFields", "LayerWeights"]
