"""What one training ensemble allocates, estimated before any work (``--max-memory``).

An ensemble's memory is what it *shares* (the data set, the held-out set, and for a full-batch B0
the data's second moments: ``2 (n²d² + n²d·d_v)`` floats at their peak, while they are normalised)
plus what each *member* adds (its parameters four times over: value, gradient and Adam's two
moments; the kernel or operator its forward pass forms; the activations of one batch kept for
backward, from the student's own count). Each student's estimate is checked against the measured
peak memory of a real run (tests/unit/test_memory_estimate.py).
"""

from __future__ import annotations

from dataclasses import dataclass

MIB = 2**20


@dataclass(frozen=True)
class MemoryEstimate:
    """Bytes one ensemble shares whatever its size, and bytes each of its members adds."""

    shared: int
    per_member: int

    def total(self, members: int) -> int:
        return self.shared + members * self.per_member

    def describe(self) -> str:
        return f"{self.shared / MIB:,.0f} MiB shared + {self.per_member / MIB:,.1f} MiB per model"


def itemsize(dtype: str) -> int:
    return 4 if dtype == "float32" else 8


def data_bytes(
    train, *, n: int, d: int, d_v: int, moments: bool = False, n_test: int = 0, extra: int = 0
) -> int:
    """The data one ensemble holds: the fixed set (``train.n_samples``) or one fresh batch, as ``X``,
    ``Y`` and the clean target; the held-out set (float64); and, with ``moments``, the second moments."""
    item = itemsize(train.dtype)
    samples = train.n_samples or train.batch_size
    out = samples * n * (d + 2 * d_v) * item + n_test * n * (d + 2 * d_v) * 8
    if moments:  # accumulators, one chunk's product, then the normalised copies
        out += 2 * (n * n * d * d + n * n * d * d_v) * item
    return out + extra


def ensemble_memory(
    student,
    train,
    *,
    n: int,
    d: int,
    d_v: int,
    n_heads: int = 1,
    moments: bool = False,
    n_test: int = 0,
    **options,
) -> MemoryEstimate:
    """The :class:`MemoryEstimate` of one ensemble of ``student`` (a registry class) trained with ``train``.

    Members are counted at full rank (an upper bound: a group's members differ in rank). A full-batch
    B0 trained from moments keeps no batch activations; otherwise the batch is ``train.batch_size``,
    or the whole fixed set when that is 0.
    """
    batch = 0 if moments else (train.batch_size or train.n_samples)
    per_member = student.training_bytes(
        n=n, d=d, d_v=d_v, rank=student.full_rank(n, d), batch=batch, n_heads=n_heads,
        itemsize=itemsize(train.dtype), **options,
    )  # fmt: skip
    shared = data_bytes(train, n=n, d=d, d_v=d_v, moments=moments, n_test=n_test)
    return MemoryEstimate(shared, per_member)


def available_memory() -> int | None:
    """Bytes of memory the machine can give now (``MemAvailable``), or None where it cannot say."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None
