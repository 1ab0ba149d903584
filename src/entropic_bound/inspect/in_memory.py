"""A model object in memory as a checkpoint: its ``state_dict`` as the float64 mapping, its config's fields.

Any ``transformers`` model an adapter knows (BERT, GPT-2, Llama families; loaded from safetensors, from
GGUF, or built in the notebook) becomes a :class:`~.checkpoint.Checkpoint` of kind ``"module"``: the
adapters find its tensors under their usual names (``bert.``/``transformer.``/``model.`` prefixes
included) and the forward pass runs the object itself, so ``analyse(model)`` and ``analyse(path)`` go
through the same code after this point.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import UserInputError
from .checkpoint import Checkpoint
from .weights import LazyWeights


class ModuleWeights(LazyWeights):
    """Lazy float64 view of a torch module's parameters and buffers (``state_dict`` names)."""

    def __init__(self, model: Any):
        self._index = model.state_dict()

    def __getitem__(self, key: str) -> np.ndarray:
        return self._index[key].detach().double().cpu().numpy()

    def shape(self, key: str) -> tuple[int, ...]:
        return tuple(self._index[key].shape)

    def storage(self, key: str) -> str:
        """The tensor's torch dtype in memory, spelled as in a file (``F32``, ``BF16``, …)."""
        return str(self._index[key].dtype).removeprefix("torch.").replace("float", "F").replace("bF", "BF")


def is_hooked_transformer(model: Any) -> bool:
    """A TransformerLens ``HookedTransformer`` (its config is ``cfg``, its forward ``run_with_cache``)."""
    return hasattr(model, "run_with_cache") and hasattr(model, "cfg") and hasattr(model, "state_dict")


def is_model_object(model: Any) -> bool:
    """A loaded model (anything with ``state_dict`` and ``config``, or a HookedTransformer), not a path."""
    return (hasattr(model, "state_dict") and hasattr(model, "config")) or is_hooked_transformer(model)


def _hooked_config(cfg: Any) -> dict:
    """The fields the ``hooked_transformer`` adapter reads, from a ``HookedTransformerConfig``."""
    return {
        "model_type": "hooked_transformer",
        "n_heads": cfg.n_heads,
        "n_layers": cfg.n_layers,
        "d_model": cfg.d_model,
        "d_head": cfg.d_head,
        "n_key_value_heads": cfg.n_key_value_heads or cfg.n_heads,
        "max_position_embeddings": cfg.n_ctx,
        "vocab_size": cfg.d_vocab,
    }


def module_checkpoint(model: Any, tokenizer: Any = None) -> Checkpoint:
    """``model`` (a loaded transformers model or a HookedTransformer) and its ``tokenizer`` as a
    :class:`Checkpoint` (a HookedTransformer brings its own ``tokenizer`` when it has one)."""
    if is_hooked_transformer(model):
        tokenizer = tokenizer if tokenizer is not None else getattr(model, "tokenizer", None)
        config = _hooked_config(model.cfg)
    else:
        to_dict = getattr(model.config, "to_dict", None)
        if to_dict is None:
            raise UserInputError(
                f"A {type(model).__name__} has no transformers config (model.config.to_dict()); pass a "
                "transformers model, a HookedTransformer or a checkpoint path."
            )
        config = to_dict()
    weights = ModuleWeights(model)
    return Checkpoint(None, (), config, None, weights, kind="module", model=model, tokenizer=tokenizer)
