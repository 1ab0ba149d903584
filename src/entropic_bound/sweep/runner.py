"""The sweep runner: execute every run spec not yet in the store, group by group.

An :class:`Executor` knows how to train runs; it partitions the spec list into **groups** (runs
that train together as one ensemble: shared shapes, one forward/backward per step for all) and
executes one group at a time. A :class:`Backend` decides where groups execute (in-process, a
process pool, a Ray cluster); results always come back to the one store writer, the caller.

Resumption is exact. The partition is computed over the FULL spec list, never over what is left,
so a group holds the same runs whether the sweep is fresh or resumed. A group whose runs are all
stored is skipped; a partly stored group (a kill between two of its commits) is executed whole
again and only its missing runs are stored. Every result is committed in its own transaction as
soon as its group returns. Hence an interrupted-and-resumed sweep stores bitwise the same rows as
an uninterrupted one, none twice.
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import os
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from queue import Empty as EmptyQueue
from typing import Any, Protocol, runtime_checkable

from ..errors import UserInputError
from ..group_progress import reporting_to
from ..registry import Registry
from ..results import RunResult, RunSpec
from .ray_backend import RayBackend

Progress = Callable[[float, int, str], None]
GroupFn = Callable[[list], Any]
PartialProgress = Callable[[int, float], None]  # (index into groups, fraction of that group done)
PARTIAL_POLL_S = 1.0  # how often the process backend forwards its workers' in-group progress


@runtime_checkable
class Executor(Protocol):
    """Trains runs. Must be picklable (with its attributes) to run on a process or Ray backend."""

    name: str

    def groups(self, specs: list[RunSpec]) -> list[list[RunSpec]]:
        """A deterministic partition of ``specs`` into groups trained together."""
        ...

    def execute(self, group: list[RunSpec]) -> list[RunResult]:
        """One result per spec of ``group``."""
        ...


@runtime_checkable
class Backend(Protocol):
    """Where groups execute. ``map_groups`` yields ``(index into groups, fn(group))`` as each
    group finishes, in any order; an exception in ``fn`` propagates to the caller. A backend with a
    ``partial_progress`` attribute calls it with ``(index, fraction)`` while a group runs (what its
    trainers :func:`~entropic_bound.group_progress.report`)."""

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


@dataclass(frozen=True)
class SweepSummary:
    total: int  # distinct runs asked for
    skipped: int  # already in the store before this call
    ran: int  # stored by this call
    diverged: int  # of those, how many diverged
    wall_s: float


def _unique(specs: Sequence[RunSpec]) -> list[RunSpec]:
    seen: dict[str, RunSpec] = {}
    for spec in specs:
        if not isinstance(spec, RunSpec):
            raise TypeError(f"run_sweep needs RunSpec objects; got {type(spec).__name__}.")
        seen.setdefault(spec.run_id, spec)
    return list(seen.values())


def _check_partition(groups: list[list[RunSpec]], specs: list[RunSpec], name: str) -> list[list[RunSpec]]:
    ids = [s.run_id for g in groups for s in g]
    if len(ids) != len(set(ids)) or set(ids) != {s.run_id for s in specs} or any(not g for g in groups):
        raise RuntimeError(
            f"Executor '{name}' returned groups that are not a partition of the "
            f"{len(specs)} specs ({len(ids)} runs in {len(groups)} groups)."
        )
    return [list(g) for g in groups]


def _by_id(results: list[RunResult], group: list[RunSpec], name: str) -> dict[str, RunResult]:
    by_id = {r.spec.run_id: r for r in results}
    if len(results) != len(group) or set(by_id) != {s.run_id for s in group}:
        raise RuntimeError(
            f"Executor '{name}' returned {len(results)} results for a group of {len(group)} runs "
            "that do not match its specs one to one."
        )
    return by_id


def timed_execute(executor: Executor, group: list[RunSpec]) -> list[RunResult]:
    """``executor.execute(group)`` with each result's ``wall_s`` set to the group's wall time over its
    size (where the executor did not time a run itself). Module-level, so process and Ray workers
    can unpickle it."""
    start = time.perf_counter()
    results = executor.execute(group)
    per_run = (time.perf_counter() - start) / max(len(group), 1)
    for result in results:
        if not result.wall_s:
            result.wall_s = per_run
    return results


class _Tally:
    """Progress of one sweep: runs stored, plus the fraction of each running group's runs its
    trainers reported (so long groups move the bar, and its time-left estimate, before they return)."""

    def __init__(
        self, name: str, specs: Sequence, todo: list, stored: set, progress: Progress | None
    ) -> None:
        self.name, self.todo, self.total, self.progress = name, todo, len(specs), progress
        self.owed = [sum(s.run_id not in stored for s in g) for g in todo]  # runs each group will store
        self.running = dict.fromkeys(range(len(todo)), 0.0)
        self.stored = sum(s.run_id in stored for s in specs)
        self.finished = 0
        self._show(f"{self.stored} run(s) already stored, {len(todo)} group(s) to run")

    def partial(self, index: int, fraction: float) -> None:
        if index in self.running:
            self.running[index] = max(self.running[index], fraction)
            busy = sum(f > 0 for f in self.running.values())
            self._show(f"group {self.finished}/{len(self.todo)} done, {busy} running")

    def group_done(self, index: int) -> None:
        self.running.pop(index, None)
        self.stored += self.owed[index]
        self.finished += 1
        self._show(f"group {self.finished}/{len(self.todo)} ({len(self.todo[index])} runs)")

    def _show(self, what: str) -> None:
        if self.progress:
            busy = sum(f * self.owed[i] for i, f in self.running.items())
            self.progress(self.stored + busy, self.total, f"{self.name}: {what}")


def run_sweep(
    executor: Executor,
    specs: Sequence[RunSpec],
    store,
    *,
    progress: Progress | None = None,
    workers: int = 1,
    backend: str | Backend | None = None,
    provenance: dict | None = None,
) -> SweepSummary:
    """Execute every spec whose run is not in ``store``; store each result as its group returns.

    ``store`` is a :class:`~entropic_bound.store.RunStore` (anything with ``finished_ids()`` and
    ``put(result, provenance=)``). ``progress(done, total, description)`` is called once before
    the first group, after each group and, on the local and process backends, whenever a running
    group's trainer reports (:mod:`entropic_bound.group_progress`); ``done`` counts stored runs plus
    the reported fractions of the running groups' runs. ``workers > 1`` selects
    the ``process`` backend unless ``backend`` names another. ``provenance`` defaults to
    :func:`entropic_bound.provenance.provenance`.
    """
    start = time.perf_counter()
    if provenance is None:
        from ..provenance import provenance as _provenance

        provenance = _provenance()
    specs = _unique(specs)
    groups = _check_partition(executor.groups(list(specs)), specs, executor.name)
    stored = store.finished_ids()
    todo = [g for g in groups if any(s.run_id not in stored for s in g)]
    ran, diverged = 0, 0
    tally = _Tally(executor.name, specs, todo, stored, progress)
    skipped = tally.stored
    runner = make_backend(backend, workers)
    if hasattr(runner, "partial_progress"):
        runner.partial_progress = tally.partial
    outputs = runner.map_groups(functools.partial(timed_execute, executor), todo)
    try:
        for index, results in outputs:
            group = todo[index]
            by_id = _by_id(results, group, executor.name)
            for spec in group:
                if spec.run_id in stored:
                    continue
                result = by_id[spec.run_id]
                if store.put(result, provenance=provenance):
                    ran += 1
                    diverged += result.status == "diverged"
            tally.group_done(index)
    finally:
        if hasattr(outputs, "close"):  # a generator backend: stop its workers now, not at garbage collection
            outputs.close()
    return SweepSummary(
        total=len(specs), skipped=skipped, ran=ran, diverged=diverged, wall_s=time.perf_counter() - start
    )
