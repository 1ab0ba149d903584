"""The one weights seam: every checkpoint is a lazy mapping ``tensor name → float64 array`` and a config.

A checkpoint is a folder (``config.json`` plus one or more ``*.safetensors`` files, sharded ones with
``model.safetensors.index.json``), a single ``.safetensors`` file, a ``.gguf`` file (:mod:`.gguf`), or a
model object in memory (:mod:`.in_memory`). Pickle checkpoints (``.bin``, ``.pt``, ``.pth``, ``.ckpt``,
``.pkl``) are refused: loading them runs arbitrary code. Every architecture adapter reads
``checkpoint.weights`` and ``checkpoint.config`` and nothing else; the forward pass and tokenizer of
each kind are in :mod:`.forward`.

:class:`SafetensorsWeights` maps key → tensor lazily: ``weights[key]`` reads that one tensor from
its memory-mapped file and casts it to float64, so peak memory stays near one layer's tensors.
``weights.columns(key, start, stop)`` reads a column slice (GPT-2's fused ``c_attn``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DataError, UserInputError
from .weights import LazyWeights

PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle")
INDEX_NAME = "model.safetensors.index.json"


@dataclass(frozen=True)
class Checkpoint:
    """A checkpoint's tensors (``weights``) and ``config`` (config.json's fields, or None), whatever holds them.

    ``kind`` is ``"safetensors"``, ``"gguf"`` or ``"module"`` (a model object in memory, ``model``, with its
    ``tokenizer`` if one was given); ``files`` and ``config_dir`` say where the files are, if any.
    """

    path: Path | None
    files: tuple[Path, ...]
    config: dict | None
    config_dir: Path | None  # folder holding config.json (for a transformers forward pass)
    weights: Mapping[str, np.ndarray] | None = None
    kind: str = "safetensors"
    model: Any = None
    tokenizer: Any = None


def _refuse_pickle(path: Path) -> None:
    if path.suffix.lower() in PICKLE_SUFFIXES:
        raise UserInputError(
            f"Refusing to load the pickle checkpoint '{path}': pickle files can run arbitrary code. "
            "Convert it to .safetensors first."
        )


def _read_config(folder: Path) -> dict | None:
    path = folder / "config.json"
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise DataError(f"Cannot read '{path}': {exc}.") from None


def _shard_names(weight_map, index: Path) -> list[str]:
    """The shard file names of an index, each a relative path inside the model folder.

    An index naming ``/etc/passwd`` or ``../x`` is refused before any file is opened: a downloaded
    model must not make the inspection read files outside its own folder. (Symlinks inside the
    folder, as in the Hugging Face cache, are followed: the folder's owner made them.)"""
    if not isinstance(weight_map, dict):
        raise DataError(f"Cannot read the shard index '{index}': its weight_map is not a mapping.")
    names = sorted({str(name) for name in weight_map.values()})
    for name in names:
        parts = Path(name).parts
        if not name or Path(name).is_absolute() or ".." in parts or "\\" in name:
            raise DataError(
                f"The shard index '{index}' names '{name}', outside the model folder; refusing to open it."
            )
    return names


def _folder_files(folder: Path) -> tuple[Path, ...]:
    index = folder / INDEX_NAME
    if index.is_file():
        try:
            weight_map = json.loads(index.read_text())["weight_map"]
        except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
            raise DataError(f"Cannot read the shard index '{index}': {exc}.") from None
        files = tuple(folder / name for name in _shard_names(weight_map, index))
        missing = [f.name for f in files if not f.is_file()]
        if missing:
            raise DataError(f"The shard index '{index}' names missing files: {', '.join(missing)}.")
        return files
    files = tuple(sorted(folder.glob("*.safetensors")))
    if not files:
        pickles = sorted(p.name for p in folder.iterdir() if p.suffix.lower() in PICKLE_SUFFIXES)
        if pickles:
            _refuse_pickle(folder / pickles[0])
        raise DataError(f"No *.safetensors files in '{folder}'.")
    return files


def open_checkpoint(path: str | Path) -> Checkpoint:
    """Resolve ``path`` (a folder, a ``.safetensors`` or a ``.gguf`` file) into a :class:`Checkpoint`.

    Raises :class:`UserInputError` for a missing path, a pickle file, a folder without
    ``config.json``, a file that is neither ``.safetensors`` nor ``.gguf``, or an unreadable file.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(f"The model path '{path}' does not exist.")
    if path.is_dir():
        config = _read_config(path)
        if config is None:
            raise DataError(
                f"The folder '{path}' has no config.json; pass a Hugging Face–format folder, "
                "a .gguf file, or a single .safetensors file with --arch."
            )
        files = _folder_files(path)
        return Checkpoint(path, files, config, path, SafetensorsWeights(files))
    _refuse_pickle(path)
    if path.suffix.lower() == ".gguf":
        return gguf_checkpoint(path)
    if path.suffix.lower() != ".safetensors":
        raise DataError(
            f"Expected a .safetensors or .gguf file, or a model folder. Got '{path.name}' instead."
        )
    config = _read_config(path.parent)
    return Checkpoint(
        path, (path,), config, path.parent if config is not None else None, SafetensorsWeights((path,))
    )


def gguf_checkpoint(path: Path, parts: tuple[Path, ...] = ()) -> Checkpoint:
    """A ``.gguf`` file, or the file its ``parts`` make joined (:mod:`.chunks`), as a checkpoint."""
    from .gguf import GGUFWeights

    weights = GGUFWeights(path, parts)
    return Checkpoint(path, parts or (path,), weights.config, path.parent, weights, kind="gguf")


class SafetensorsWeights(LazyWeights):
    """Lazy float64 view of the tensors in ``files``; each access reads only that tensor."""

    def __init__(self, files: tuple[Path, ...] | list[Path]):
        from safetensors import safe_open

        self._handles: dict[Path, object] = {}
        self._index: dict[str, Path] = {}
        for file in files:
            try:
                handle = safe_open(str(file), framework="pt")
            except Exception as exc:  # SafetensorError is not importable as a stable name
                raise DataError(f"'{file}' is not a valid safetensors file ({exc}).") from None
            self._handles[file] = handle
            for key in handle.keys():
                self._index[key] = file

    def __getitem__(self, key: str) -> np.ndarray:
        return self._read(key, None)

    def shape(self, key: str) -> tuple[int, ...]:
        return tuple(self._handles[self._index[key]].get_slice(key).get_shape())

    def storage(self, key: str) -> str:
        """The tensor's dtype in the file (``F32``, ``BF16``, …)."""
        return str(self._handles[self._index[key]].get_slice(key).get_dtype())

    def columns(self, key: str, start: int, stop: int) -> np.ndarray:
        """Columns ``start:stop`` of the 2-D tensor ``key``, as float64 ``(rows, stop - start)``."""
        return self._read(key, slice(start, stop))

    def _read(self, key: str, cols: slice | None) -> np.ndarray:
        handle = self._handles[self._index[key]]  # KeyError for a missing key, as a Mapping should
        try:
            if cols is None:
                tensor = handle.get_tensor(key)
            else:
                tensor = handle.get_slice(key)[:, cols]
        except Exception as exc:
            raise DataError(f"Cannot read tensor '{key}' from '{self._index[key]}' ({exc}).") from None
        return tensor.double().numpy()
