"""The mapping every checkpoint's weights are read through (safetensors, GGUF, a model in memory)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np


class LazyWeights(Mapping[str, np.ndarray]):
    """A checkpoint's tensors by name, each read only when accessed: a subclass keeps ``_index`` (name →
    wherever that tensor is found) and reads a tensor in ``__getitem__``; listing, membership and size
    come from the index alone."""

    _index: Mapping[str, Any]

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __contains__(self, key: object) -> bool:  # without reading the tensor
        return key in self._index

    def __len__(self) -> int:
        return len(self._index)
