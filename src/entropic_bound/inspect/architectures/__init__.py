"""Architecture adapters, one file each, registered in :data:`ARCHITECTURES` by name.

Adding an architecture: one file here with an :class:`Architecture` subclass, and its line in
``registry.py`` (``"inspect.architectures.<file>:<Class>"``).
"""

from __future__ import annotations

from ...registry import ARCHITECTURES
from .base import ArchConfig, Architecture, ConfigFields, LayerWeights
from .llama import ROPE_NOTE

__all__ = ["ARCHITECTURES", "ROPE_NOTE", "ArchConfig", "Architecture", "ConfigFields", "LayerWeights"]
