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

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from ..results import RunResult, RunSpec
from .backends import (  # noqa: F401  (the sweep's public names, re-exported)
    BACKENDS,
    Backend,
    LocalBackend,
    ProcessBackend,
    default_workers,
    make_backend,
)

Progress = Callable[[float, int, str], None]


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


@dataclass(frozen=True)
class SweepSummary:
    total: int  # distinct runs asked for
    skipped: int  # already in the store before this call
    ran: int  # stored by this call
    diverged: int  # of those, how many diverged
    wall_s: float  # when the last group was stored, from the sweep's start (others train alongside)
    cpu_s: float = 0.0  # the cost: the sum of the stored runs' own seconds


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
    """Progress of one sweep: runs stored, and beside them the fraction of each running group's runs
    its trainers reported (so a long group's line moves before the group returns)."""

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
        """The count is what is stored (what a Ctrl-C keeps); runs part-trained are said beside it."""
        if self.progress:
            busy = sum(f * self.owed[i] for i, f in self.running.items())
            training = f", ~{busy:.0f} run(s) trained in groups not yet stored" if busy >= 0.5 else ""
            self.progress(self.stored, self.total, f"{self.name}: {what}{training}")


@dataclass
class _Part:
    """One executor's share of a joint sweep: its groups still to run and what has been stored."""

    executor: Executor
    specs: list[RunSpec]
    todo: list[list[RunSpec]]
    tally: _Tally
    skipped: int
    left: int  # groups of ``todo`` not yet stored
    ran: int = 0
    diverged: int = 0
    cpu_s: float = 0.0
    summary: SweepSummary | None = field(default=None)


def _plan(executor: Executor, specs: Sequence[RunSpec], stored: set, progress: Progress | None) -> _Part:
    specs = _unique(specs)
    groups = _check_partition(executor.groups(list(specs)), specs, executor.name)
    todo = [g for g in groups if any(s.run_id not in stored for s in g)]
    tally = _Tally(executor.name, specs, todo, stored, progress)
    return _Part(executor, specs, todo, tally, skipped=tally.stored, left=len(todo))


def group_cost(executor: Executor, group: list[RunSpec]) -> float:
    """The executor's estimate of a group's training time (``executor.group_cost``), else its size."""
    estimate = getattr(executor, "group_cost", None)
    return float(estimate(group)) if callable(estimate) else float(len(group))


def execute_tagged(executors: tuple, item: tuple[int, list[RunSpec]]) -> list[RunResult]:
    """:func:`timed_execute` of ``(index of the executor, group)``; module-level for the workers."""
    index, group = item
    return timed_execute(executors[index], group)


def _store(part: _Part, group: list[RunSpec], results: list[RunResult], store, stored, provenance) -> None:
    by_id = _by_id(results, group, part.executor.name)
    for spec in group:
        if spec.run_id in stored:
            continue
        result = by_id[spec.run_id]
        if store.put(result, provenance=provenance):
            part.ran += 1
            part.cpu_s += result.wall_s
            part.diverged += result.status == "diverged"
    part.left -= 1


def run_sweeps(
    jobs: Sequence[tuple[Executor, Sequence[RunSpec]]],
    store,
    *,
    progress: Callable[[Executor], Progress | None] | None = None,
    workers: int = 1,
    backend: str | Backend | None = None,
    provenance: dict | None = None,
    on_done: Callable[[Executor, SweepSummary], None] | None = None,
) -> list[SweepSummary]:
    """Sweep several executors' specs through ONE backend; one :class:`SweepSummary` per job.

    Every group of every job goes to the backend at once, the costliest first (:func:`group_cost`),
    so workers never wait for one experiment to end before the next starts and the long groups do
    not start last. Results are stored here, as in :func:`run_sweep` (same partition, same resume
    rules). ``on_done(executor, summary)`` is called in this process as soon as an executor's last
    group is stored (at once for one with nothing to run) — while the other groups still train.
    ``progress(executor)`` gives that executor's ``progress(done, total, description)`` callback.
    """
    start = time.perf_counter()
    if provenance is None:
        from ..provenance import provenance as _provenance

        provenance = _provenance()
    stored = store.finished_ids()
    parts = [_plan(ex, specs, stored, progress(ex) if progress else None) for ex, specs in jobs]

    def finish(part: _Part) -> None:
        part.summary = SweepSummary(
            len(part.specs), part.skipped, part.ran, part.diverged, time.perf_counter() - start, part.cpu_s
        )
        if on_done is not None:
            on_done(part.executor, part.summary)

    for part in parts:
        if not part.todo:
            finish(part)
    items = [(k, i) for k, part in enumerate(parts) for i in range(len(part.todo))]
    items.sort(key=lambda ki: -group_cost(parts[ki[0]].executor, parts[ki[0]].todo[ki[1]]))  # stable
    runner = make_backend(backend, workers)
    if hasattr(runner, "partial_progress"):
        runner.partial_progress = lambda j, fraction: parts[items[j][0]].tally.partial(items[j][1], fraction)
    fn = functools.partial(execute_tagged, tuple(part.executor for part in parts))
    outputs = runner.map_groups(fn, [(k, parts[k].todo[i]) for k, i in items])
    try:
        for j, results in outputs:
            part, i = parts[items[j][0]], items[j][1]
            _store(part, part.todo[i], results, store, stored, provenance)
            part.tally.group_done(i)
            if not part.left:
                finish(part)
    finally:
        if hasattr(outputs, "close"):  # a generator backend: stop its workers now, not at garbage collection
            outputs.close()
    return [part.summary for part in parts]


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

    ``store`` is a :class:`~entropic_bound.store.run_store.RunStore` (anything with ``finished_ids()`` and
    ``put(result, provenance=)``). ``progress(done, total, description)`` is called once before
    the first group, after each group and, on the local and process backends, whenever a running
    group's trainer reports (:mod:`entropic_bound.sweep.group_progress`); ``done`` counts stored runs plus
    the reported fractions of the running groups' runs. ``workers > 1`` selects
    the ``process`` backend unless ``backend`` names another. ``provenance`` defaults to
    :func:`entropic_bound.provenance.provenance`. One job of :func:`run_sweeps`.
    """
    [summary] = run_sweeps(
        [(executor, specs)],
        store,
        progress=(lambda _: progress) if progress else None,
        workers=workers,
        backend=backend,
        provenance=provenance,
    )
    return summary
