"""A model object in memory as a checkpoint: its ``state_dict`` as the float64 mapping, its config's fields.

Any ``transformers`` model an adapter knows (BERT, GPT-2, Llama families; loaded from safetensors, from
GGUF, or built in the notebook) becomes a :class:`~.checkpoint.Checkpoint` of kind ``"module"``: the
adapters find its tensors under their usual names (``bert.``/``transformer.``/``model.`` prefixes
included) and the forward pass runs the object itself, so ``analyse(model)`` and ``analyse(path)`` go
through the same code after this point.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from ..errors import UserInputError
from .checkpoint import Checkpoint


class ModuleWeights(Mapping[str, np.ndarray]):
    """Lazy float64 view of a torch module's parameters and buffers (``state_dict`` names)."""

    def __init__(self, model: Any):
        self._tensors = model.state_dict()

    def __getitem__(self, key: str) -> np.ndarray:
        return self._tensors[key].detach().double().cpu().numpy()

    def __iter__(self) -> Iterator[str]:
        return iter(self._tensors)

    def __contains__(self, key: object) -> bool:  # without reading the tensor
        return key in self._tensors

    def __len__(self) -> int:
        return len(self._tensors)

    def shape(self, key: str) -> tuple[int, ...]:
        return tuple(self._tensors[key].shape)

    def storage(self, key: str) -> str:
        """The tensor's torch dtype in memory, spelled as in a file (``F32``, ``BF16``, …)."""
        return str(self._tensors[key].dtype).removeprefix("torch.").replace("float", "F").replace("bF", "BF")


def is_model_object(model: Any) -> bool:
    """A loaded model (anything with ``state_dict`` and ``config``), not a path or a name."""
    return hasattr(model, "state_dict") and hasattr(model, "config")


def module_checkpoint(model: Any, tokenizer: Any = None) -> Checkpoint:
    """``model`` (a loaded transformers model) and its ``tokenizer`` as a :class:`Checkpoint`."""
    to_dict = getattr(model.config, "to_dict", None)
    if to_dict is None:
        raise UserInputError(
            f"A {type(model).__name__} has no transformers config (model.config.to_dict()); pass a "
            "transformers model or a checkpoint path."
        )
    return Checkpoint(
        None, (), to_dict(), None, ModuleWeights(model), kind="module", model=model, tokenizer=tokenizer
    )
