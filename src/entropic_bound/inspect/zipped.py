"""A transformers model folder zipped and split over packages (:mod:`.chunks`), loaded without unzipping.

The zip's members are deflated, so the weights cannot be read in place: ``model.safetensors`` is
inflated into memory and loaded into the model transformers builds from the folder's ``config.json``
(eager attention, float32); the small files (config, tokenizer) are unpacked into a temporary folder
that transformers reads and that is removed after. No copy of the weights is written to disk. The
zip is read through :class:`ArrayFile`, a file object over the parts joined by memory maps.
"""

from __future__ import annotations

import io
import json
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

import numpy as np

from ..errors import DataError
from .checkpoint import Checkpoint
from .chunks import concatenated

WEIGHTS = "model.safetensors"


class ArrayFile(io.RawIOBase):
    """A read-only, seekable file object over a ``uint8`` array (no copy)."""

    def __init__(self, data: np.ndarray):
        self.data, self.position = data, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        start = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: len(self.data)}[whence]
        self.position = max(0, start + offset)
        return self.position

    def tell(self) -> int:
        return self.position

    def readinto(self, buffer) -> int:
        chunk = self.data[self.position : self.position + len(buffer)]
        memoryview(buffer)[: len(chunk)] = chunk
        self.position += len(chunk)
        return len(chunk)


def _folder_members(archive: zipfile.ZipFile) -> dict[str, zipfile.ZipInfo]:
    """The files of the one model folder in the zip, by name inside it (``config.json``, …)."""
    members = {}
    for info in archive.infolist():
        path = PurePosixPath(info.filename)
        if not info.is_dir() and len(path.parts) == 2:  # <folder>/<file>: sub-folders are not the model's
            members[path.name] = info
    if WEIGHTS not in members or "config.json" not in members:
        raise DataError(f"The zipped model holds no {WEIGHTS} and config.json in one folder.")
    return members


def _inflated(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytearray:
    """The member ``info`` inflated into one buffer, 16 MiB at a time (no second copy of it)."""
    buffer = bytearray(info.file_size)
    view, position = memoryview(buffer), 0
    with archive.open(info) as member:
        while position < len(buffer):
            read = member.readinto(view[position : position + (1 << 24)])
            if not read:
                raise DataError(f"The zipped {info.filename} ends after {position} of {len(buffer)} bytes.")
            position += read
    return buffer


def safetensors_views(buffer: bytearray) -> dict:
    """The tensors of a safetensors file held in ``buffer``, as torch views into it (format: an 8-byte
    little-endian header length, a JSON header of dtype, shape and byte offsets, then the data)."""
    import torch

    dtypes = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}
    dtypes |= {"I64": torch.int64, "I32": torch.int32}
    length = int.from_bytes(buffer[:8], "little")
    header = json.loads(bytes(buffer[8 : 8 + length]))
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        dtype, (start, end) = dtypes[entry["dtype"]], entry["data_offsets"]
        count = (end - start) // dtype.itemsize
        flat = (
            torch.frombuffer(buffer, dtype=dtype, count=count, offset=8 + length + start) if count else None
        )
        tensors[name] = flat.reshape(entry["shape"]) if count else torch.zeros(entry["shape"], dtype=dtype)
    return tensors


def _model(archive: zipfile.ZipFile, weights: zipfile.ZipInfo, folder: Path):
    import transformers

    config = transformers.AutoConfig.from_pretrained(str(folder))
    model = transformers.AutoModel.from_config(config, attn_implementation="eager")
    state = safetensors_views(_inflated(archive, weights))  # in memory only
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing, unexpected = (
        [k for k in keys if not k.endswith("position_ids")] for keys in (missing, unexpected)
    )
    if missing or unexpected:  # position_ids: a buffer older checkpoints stored
        raise DataError(
            f"The zipped model's weights do not fit its config (missing {missing[:3]}, extra {unexpected[:3]})."
        )
    return model.float().eval()


def zipped_checkpoint(parts: tuple[Path, ...]) -> Checkpoint:
    """The model folder zipped across ``parts`` as a checkpoint of kind ``"module"`` (model and tokenizer)."""
    from .in_memory import module_checkpoint
    from .text import load_tokenizer

    try:
        archive = zipfile.ZipFile(ArrayFile(concatenated(parts)))
    except (zipfile.BadZipFile, OSError) as exc:
        raise DataError(
            f"The parts starting with '{parts[0]}' do not join into a zip file ({exc})."
        ) from None
    with archive, tempfile.TemporaryDirectory(prefix="eb-zipped-") as tmp:
        members = _folder_members(archive)
        for name, info in members.items():
            if name != WEIGHTS:
                (Path(tmp) / name).write_bytes(archive.read(info))
        model = _model(archive, members[WEIGHTS], Path(tmp))
        tokenizer = load_tokenizer(Path(tmp))
    return module_checkpoint(model, tokenizer)
