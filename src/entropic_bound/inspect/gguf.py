"""A ``.gguf`` file (llama.cpp's format) as the same lazy ``name → float64 array`` mapping as safetensors.

:class:`GGUFWeights` reads one tensor at a time through the ``gguf`` package (``GGUFReader`` memory-maps
the file; ``gguf.quants.dequantize`` expands a quantised tensor), casts it to float64 and names it as
transformers names it (``blk.3.attn_q.weight`` → ``model.layers.3.self_attn.q_proj.weight``), from the
table its architecture adapter declares (:attr:`Architecture.gguf_tensors`).

llama.cpp's converter permutes each head's rows of the query and key weights into the interleaved
order of its rotary kernel; :func:`unpermute_rows` undoes it, so the tensors equal those
transformers' own GGUF loader builds, bit for bit. (The static spectra do not depend on the order;
anything position-aware and the forward pass do.) :func:`gguf_config` builds the ``config.json``
fields the adapter reads from the file's metadata. Needs ``pip install 'entropic-bound[gguf]'``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DataError, UserInputError
from .weights import LazyWeights

#: The GGUF metadata key (after ``<arch>.``) of each ``config.json`` field an adapter reads.
CONFIG_KEYS = {
    "num_hidden_layers": "block_count",
    "hidden_size": "embedding_length",
    "num_attention_heads": "attention.head_count",
    "num_key_value_heads": "attention.head_count_kv",
    "head_dim": "attention.key_length",
    "max_position_embeddings": "context_length",
    "vocab_size": "vocab_size",
    "intermediate_size": "feed_forward_length",
}


def gguf_module():
    try:
        import gguf
    except ImportError:
        raise UserInputError(
            "Reading a .gguf file needs the optional 'gguf' package: pip install 'entropic-bound[gguf]'."
        ) from None
    return gguf


@lru_cache(maxsize=1)
def _joined_reader_class():
    """``GGUFReader`` over the bytes of several part files joined (:func:`.chunks.concatenated`): its own
    constructor memory-maps one path, so that map (of the first part) is set aside for the joined one."""
    gguf = gguf_module()

    class JoinedReader(gguf.GGUFReader):
        def __init__(self, parts: tuple[Path, ...]):
            from .chunks import concatenated

            self._joined = concatenated(parts)
            super().__init__(str(parts[0]))

        data = property(lambda self: self._joined, lambda self, _first_part: None)

    return JoinedReader


def open_reader(path: Path, parts: tuple[Path, ...] = ()):
    """``gguf.GGUFReader`` on ``path``, or on the file that the ``parts`` joined make; a truncated,
    foreign or mis-assembled file is one line (:class:`DataError`)."""
    gguf = gguf_module()
    try:
        reader = _joined_reader_class()(parts) if len(parts) > 1 else gguf.GGUFReader(str(path))
    except (ValueError, IndexError, OSError, KeyError, TypeError) as exc:
        raise DataError(
            f"'{path}' is not a readable GGUF file (truncated or damaged?): {' '.join(str(exc).split())[:200]}"
        ) from None
    end = max((int(t.data_offset) + int(t.n_bytes) for t in reader.tensors), default=len(reader.data))
    if len(parts) > 1 and end != len(reader.data):
        raise DataError(
            f"The {len(parts)} parts starting with '{path}' join into {len(reader.data)} bytes, but the GGUF "
            f"header they start with describes {end}: parts of different models or releases are mixed."
        )
    return reader


def field_value(reader, key: str, default: Any = None) -> Any:
    """The metadata value ``key`` of the file (a scalar, a string or a list), or ``default``."""
    field = reader.fields.get(key)
    if field is None:
        return default
    value = field.contents()
    return value.item() if isinstance(value, np.generic) else value


def gguf_architecture(reader, path: Path):
    """The adapter of the file's ``general.architecture``; one line when none reads it from GGUF."""
    from ..registry import ARCHITECTURES

    arch = field_value(reader, "general.architecture")
    readable = sorted(n for n in ARCHITECTURES.names() if ARCHITECTURES.get(n).gguf_tensors)
    if arch not in ARCHITECTURES.names() or not ARCHITECTURES.get(arch).gguf_tensors:
        raise DataError(
            f"The GGUF file '{path.name}' holds a '{arch}' model; the GGUF architectures inspect reads "
            f"are: {', '.join(readable)}."
        )
    return arch, ARCHITECTURES.get(arch)()


def gguf_config(reader, arch: str) -> dict:
    """``config.json``-style fields from the file's metadata (``model_type`` = the adapter's name)."""
    config: dict[str, Any] = {"model_type": arch}
    for field, key in CONFIG_KEYS.items():
        value = field_value(reader, f"{arch}.{key}")
        if value is not None:
            config[field] = int(value)
    if "vocab_size" not in config and "tokenizer.ggml.tokens" in reader.fields:
        config["vocab_size"] = len(reader.fields["tokenizer.ggml.tokens"].data)
    return config


def unpermute_rows(weight: np.ndarray, n_heads: int) -> np.ndarray:
    """Undo llama.cpp's rotary row order: each head's rows ``(2, d_head/2)`` back to ``(d_head/2, 2)``
    interleaving, i.e. transformers' order. ``weight`` is ``(n_heads d_head, d_model)``."""
    half = weight.shape[0] // n_heads // 2
    return weight.reshape(n_heads, half, 2, *weight.shape[1:]).swapaxes(2, 1).reshape(weight.shape)


def _hf_name(gguf_name: str, table: Mapping[str, str]) -> str:
    """``blk.{i}.attn_q.weight`` → ``model.layers.{i}.self_attn.q_proj.weight`` (the adapter's table);
    names outside the table keep their GGUF spelling."""
    parts = gguf_name.split(".")
    if parts[0] == "blk" and len(parts) >= 3 and parts[2] in table:
        return f"model.layers.{parts[1]}.{table[parts[2]]}." + ".".join(parts[3:])
    stem = ".".join(parts[:-1])
    return f"{table[stem]}.{parts[-1]}" if stem in table else gguf_name


@contextlib.contextmanager
def transformers_reads(ckpt):
    """Within the block transformers' GGUF loader, given the first part of a split file as its
    ``gguf_file``, reads the joined parts: it opens every file with ``gguf.GGUFReader(path)`` and takes
    no other source, so that name is pointed at :func:`open_reader` for this one path meanwhile."""
    gguf = gguf_module()
    original, first = gguf.GGUFReader, Path(ckpt.files[0])
    if len(ckpt.files) < 2:
        yield
        return
    _joined_reader_class()  # made from the real class, before the name is pointed away

    def reader(path, mode="r"):
        return open_reader(first, ckpt.files) if Path(path) == first else original(path, mode)

    gguf.GGUFReader = reader
    try:
        yield
    finally:
        gguf.GGUFReader = original


class GGUFWeights(LazyWeights):
    """Lazy float64 view of a GGUF file's tensors under transformers' names, in transformers' order."""

    def __init__(self, path: str | Path, parts: tuple[Path, ...] = ()):
        self.path, self.parts = Path(path), tuple(parts)
        self.reader = open_reader(self.path, self.parts)
        self.arch, adapter = gguf_architecture(self.reader, self.path)
        self.config = gguf_config(self.reader, self.arch)
        self._permuted = adapter.gguf_permuted  # name part → config field of its head count
        self._norm_offset = adapter.gguf_norm_offset
        self._index = {_hf_name(t.name, adapter.gguf_tensors): t for t in self.reader.tensors}
        self.reader.fields.clear()  # the vocabulary's ~10^5 small arrays: only the config was needed

    def __getitem__(self, key: str) -> np.ndarray:
        tensor = self._index[key]  # KeyError for a missing key, as a Mapping should
        weight = self._dequantised(key, tensor)
        for part, heads in self._permuted.items():
            if part in key:
                weight = unpermute_rows(weight, int(self.config[heads]))
        return weight

    def shape(self, key: str) -> tuple[int, ...]:
        """``(rows, columns)`` as transformers stores it (GGUF lists the dimensions innermost first)."""
        return tuple(int(n) for n in reversed(self._index[key].shape))

    def storage(self, key: str) -> str:
        """The tensor's type in the file: ``F32``, ``F16``, ``Q4_1``, ``Q8_0``, …"""
        return self._index[key].tensor_type.name

    def block_size(self, key: str) -> int:
        """How many consecutive weights of a row share one quantisation scale (1 for a float type)."""
        gguf = gguf_module()
        return int(gguf.GGML_QUANT_SIZES[self._index[key].tensor_type][0])

    def _dequantised(self, key: str, tensor) -> np.ndarray:
        gguf = gguf_module()
        try:
            values = gguf.quants.dequantize(tensor.data, tensor.tensor_type)
        except NotImplementedError:
            raise DataError(
                f"The tensor '{tensor.name}' of '{self.path.name}' is stored as {tensor.tensor_type.name}, "
                "which the installed gguf package cannot dequantise."
            ) from None
        except (ValueError, IndexError) as exc:
            raise DataError(f"Cannot read tensor '{tensor.name}' of '{self.path.name}' ({exc}).") from None
        if self._norm_offset and key.endswith("norm.weight"):
            values = values + np.float32(self._norm_offset)  # in float32, as transformers' loader does
        return np.asarray(values, dtype=np.float64).reshape(self.shape(key))
