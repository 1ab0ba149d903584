"""Where groups of runs execute: in this process, a pool of spawned processes, or Ray.

A :class:`Backend` maps a function over groups and yields ``(index, result)`` as each finishes; the
caller (the sweep runner) is the one store writer.
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import os
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from queue import Empty as EmptyQueue
from typing import Any, Protocol, runtime_checkable

from ..errors import UserInputError
from ..registry import Registry
from ..results import RunSpec
from .group_progress import reporting_to
from .ray_backend import RayBackend

GroupFn = Callable[[list], Any]
PartialProgress = Callable[[int, float], None]  # (index into groups, fraction of that group done)
PARTIAL_POLL_S = 1.0  # how often the process backend forwards its workers' in-group progress


@runtime_checkable
class Backend(Protocol):
    """Where groups execute. ``map_groups`` yields ``(index into groups, fn(group))`` as each
    group finishes, in any order; an exception in ``fn`` propagates to the caller. A backend with a
    ``partial_progress`` attribute calls it with ``(index, fraction)`` while a group runs (what its
    trainers :func:`~entropic_bound.sweep.group_progress.report`)."""

    name: str

    def map_groups(self, fn: GroupFn, groups: list[list[RunSpec]]) -> Iterator[tuple[int, Any]]: ...


BACKENDS: Registry = Registry("backend")


@BACKENDS.register("local", summary="in this process, one group after another")
class LocalBackend:
    name = "local"
    partial_progress: PartialProgress | None = None

    def __init__(self, workers: int = 1) -> None:
        self.workers = 1

    def map_groups(self, fn: GroupFn, groups: list[list[RunSpec]]) -> Iterator[tuple[int, Any]]:
        for index, group in enumerate(groups):
            partial = self.partial_progress
            with reporting_to(None if partial is None else functools.partial(partial, index)):
                result = fn(group)
            yield index, result


# numpy's BLAS and OpenMP size their thread pools from these at import, before _init_worker runs
BLAS_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


@contextlib.contextmanager
def _one_blas_thread_per_worker():
    """Spawned workers inherit one BLAS thread each (unless the user set a count): otherwise every
    worker's numpy starts a thread per core, and ``workers`` processes oversubscribe the CPUs
    (measured: a worker of E6's predictors at 120 % CPU on a 2-core machine with 2 workers)."""
    unset = [var for var in BLAS_THREAD_VARS if var not in os.environ]
    os.environ.update({var: "1" for var in unset})
    try:
        yield
    finally:
        for var in unset:
            os.environ.pop(var, None)


_PARTIAL_QUEUE = None  # in a worker: where its groups' in-group progress goes


def _init_worker(queue=None) -> None:
    """Pool initializer: one intra-op thread per worker, so ``workers`` processes share the CPUs;
    ``queue`` receives ``(index, fraction)`` of the group running here."""
    global _PARTIAL_QUEUE
    import torch

    torch.set_num_threads(1)
    _PARTIAL_QUEUE = queue


def _run_group(fn: GroupFn, index: int, group: list) -> Any:
    """``fn(group)`` in a worker, its in-group progress sent to the driver."""
    queue = _PARTIAL_QUEUE
    with reporting_to(None if queue is None else lambda fraction: queue.put((index, fraction))):
        return fn(group)


@BACKENDS.register("process", summary="a pool of spawned worker processes, one torch thread each")
class ProcessBackend:
    name = "process"
    partial_progress: PartialProgress | None = None

    def __init__(self, workers: int = 2) -> None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise UserInputError(f"The 'workers' parameter must be an int >= 1. Got {workers!r} instead.")
        self.workers = workers

    def map_groups(self, fn: GroupFn, groups: list[list[RunSpec]]) -> Iterator[tuple[int, Any]]:
        if not groups:
            return
        context = multiprocessing.get_context("spawn")
        queue = context.Queue() if self.partial_progress is not None else None
        pool = ProcessPoolExecutor(
            max_workers=min(self.workers, len(groups)),
            mp_context=context,
            initializer=_init_worker,
            initargs=(queue,),
        )
        try:
            with _one_blas_thread_per_worker():  # the workers spawn during these submits
                pending = {
                    pool.submit(_run_group, fn, index, group): index for index, group in enumerate(groups)
                }
            while pending:
                poll = PARTIAL_POLL_S if queue is not None else None
                finished, _ = wait(pending, timeout=poll, return_when=FIRST_COMPLETED)
                self._forward_partial(queue)
                for future in sorted(finished, key=pending.get):
                    yield pending.pop(future), future.result()
        except BaseException:
            # the caller stopped (SIGTERM, a full disk, an error): groups in flight cannot be stored,
            # so end their workers now rather than wait minutes for them
            _terminate_workers(pool)
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _forward_partial(self, queue) -> None:
        if queue is not None and self.partial_progress is not None:
            for index, fraction in _drain(queue):
                self.partial_progress(index, fraction)


def _drain(queue) -> list[tuple[int, float]]:
    """Every ``(index, fraction)`` waiting in ``queue`` now."""
    items = []
    while True:
        try:
            items.append(queue.get_nowait())
        except (EmptyQueue, OSError, ValueError):
            return items


def _terminate_workers(pool: ProcessPoolExecutor) -> None:
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.terminate()


BACKENDS.register(
    "ray", summary="Ray tasks, one group each, on a local Ray or a cluster (needs the [ray] extra)"
)(RayBackend)


def make_backend(backend: str | Backend | None, workers: int = 1, **options) -> Backend:
    """A backend by name (``local``, ``process``, ``ray``) or as given; None picks by ``workers``.
    ``options`` go to the backend's constructor (``address=`` for ``ray``)."""
    if backend is None:
        backend = "local" if workers == 1 else "process"
    if isinstance(backend, str):
        return BACKENDS.get(backend)(workers=workers, **options)
    return backend


def default_workers() -> int:
    """The CPUs this process may run on (its affinity mask, which a container or ``taskset`` narrows;
    ``os.cpu_count`` would count the whole machine's)."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # macOS and Windows have no affinity call
        return max(os.cpu_count() or 1, 1)
