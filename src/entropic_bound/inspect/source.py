"""Whatever the user names as a model → one :class:`~.checkpoint.Checkpoint`.

A loaded transformers model (:mod:`.in_memory`); a short name of :mod:`.released` (``minilm``,
``smollm2``; ``<name>-random`` loads that model and re-initialises it from :data:`RANDOM_SEED`, so its
tensors and its forward pass are the control's); a folder or ``.safetensors``/``.gguf`` file; or a
Hugging Face id in the local cache (:mod:`.hub`). The CLI and :func:`~.dataframe.analyse` both call
:func:`open_source`, so every name one knows the other knows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import UserInputError
from .checkpoint import Checkpoint, gguf_checkpoint, open_checkpoint
from .hub import resolve_model
from .in_memory import is_model_object, module_checkpoint
from .released import RANDOM_SUFFIX, is_released_name, require

#: The random-weight control's torch seed (part of an E7 run's identity through its version string).
RANDOM_SEED = 0


def open_released(name: str) -> Checkpoint:
    """The released model ``name``'s checkpoint: its file, or its parts read in place (a GGUF file joined
    by memory maps, or a zipped model folder read into memory)."""
    found = require(name)
    if isinstance(found, Path):
        return open_checkpoint(found)
    if found[0].name.endswith(".bin"):
        return gguf_checkpoint(found[0], found)
    from .zipped import zipped_checkpoint

    return zipped_checkpoint(found)


def _released(name: str, tokenizer: Any) -> Checkpoint:
    ckpt = open_released(name)
    if not name.endswith(RANDOM_SUFFIX):
        return ckpt
    from .forward import load_model_of, load_tokenizer_of, reinitialised

    model = reinitialised(load_model_of(ckpt), RANDOM_SEED)
    return module_checkpoint(model, tokenizer if tokenizer is not None else load_tokenizer_of(ckpt))


def open_source(model: Any, *, cache_dir: str | Path | None = None, tokenizer: Any = None) -> Checkpoint:
    """The checkpoint ``model`` names or is (see the module docstring)."""
    if is_model_object(model):
        return module_checkpoint(model, tokenizer)
    if isinstance(model, str) and is_released_name(model) and not Path(model).exists():
        return _released(model, tokenizer)
    if not isinstance(model, (str, Path)):
        raise UserInputError(
            f"Expected a model path, a short name, or a loaded transformers model / HookedTransformer. "
            f"Got a {type(model).__name__} instead."
        )
    return open_checkpoint(resolve_model(model, cache_dir=cache_dir))


def source_name(model: Any) -> str:
    """How the result names its model: the path or name given, or the model object's class."""
    return type(model).__name__ if is_model_object(model) else str(model)
