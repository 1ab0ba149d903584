"""Split an ensemble into chunks that fit a memory budget."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from ..errors import UserInputError

T = TypeVar("T")


def chunk_members(members: Sequence[T], max_memory_bytes: int, bytes_per_member: int) -> list[list[T]]:
    """Consecutive chunks of ``members`` with ``len(chunk) · bytes_per_member ≤ max_memory_bytes``.

    Chunks are as equal as possible (sizes differ by at most one); a member larger than the budget
    alone is an error, raised before any work.
    """
    if bytes_per_member < 1 or max_memory_bytes < 1:
        raise UserInputError(
            f"The memory budget and the bytes per member must be positive. Got {max_memory_bytes} and {bytes_per_member}."
        )
    if bytes_per_member > max_memory_bytes:
        raise UserInputError(
            f"The 'max_memory' budget must hold at least one model ({bytes_per_member} bytes). "
            f"Got {max_memory_bytes} instead."
        )
    if not members:
        return []
    per_chunk = max_memory_bytes // bytes_per_member
    n_chunks = -(-len(members) // per_chunk)
    base, extra = divmod(len(members), n_chunks)
    out, start = [], 0
    for i in range(n_chunks):
        size = base + (i < extra)
        out.append(list(members[start : start + size]))
        start += size
    return out
