"""Fresh draws of a fixed text: which part of it a corpus takes.

A real text (tinyshakespeare, the Python reference's prose, a package's docstrings, the standard
library's code) is the same on every draw, so a fresh draw of a corpus made from it is a fresh
*window*: draw 0 takes the text's beginning, as every corpus always has (its run ids and numbers
unchanged); a later draw starts at a place drawn from its window seed and wraps around the end.
A byte text starts at the beginning of a line; a text read file by file starts at a drawn file.
Where the text is shorter than the corpus, a window is a rotation: the same bytes, with another
part of them held out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np


def window_start(n_items: int, window_seed: int | None) -> int:
    """Where a window of ``n_items`` things starts: 0 for draw 0 (``window_seed`` ``None``)."""
    if window_seed is None or n_items <= 1:
        return 0
    return int(np.random.default_rng([window_seed, 8]).integers(0, n_items))


def text_window(data: bytes, n_tokens: int, window_seed: int | None) -> bytes:
    """``n_tokens`` bytes of ``data`` from a drawn line start, wrapping around (the first
    ``n_tokens`` for ``window_seed`` ``None``)."""
    start = window_start(len(data), window_seed)
    if start:
        newline = data.find(b"\n", start)
        start = newline + 1 if 0 <= newline < len(data) - 1 else 0
    return (data[start:] + data[:start])[:n_tokens]


def rotated(items: list, window_seed: int | None) -> list:
    """``items`` starting at a drawn one and wrapping around (unchanged for ``window_seed`` ``None``)."""
    start = window_start(len(items), window_seed)
    return items[start:] + items[:start]


def gather(files: Sequence, n_bytes: int, pieces: Callable[[int, object], list[bytes]]) -> tuple[bytes, int]:
    """The first ``n_bytes`` of the texts ``pieces(i, file)`` gives for each file in turn, each
    followed by a blank line, and how many files were read to fill them."""
    chunks, size, read = [], 0, 0
    for read, path in enumerate(files, 1):
        for piece in pieces(read - 1, path):
            chunks.append(piece + b"\n\n")
            size += len(chunks[-1])
        if size >= n_bytes:
            break
    return b"".join(chunks)[:n_bytes], read
