"""The time left of a sweep, estimated from the work its groups declare.

Every experiment declares what its groups cost (``group_cost``: CPU seconds at the quick scale on a
quiet 2-core machine) and what its analysis costs (``analysis_cost``). Runs of different experiments
cost very differently (an E7 language-model run about 14 units, an E6 run 0.05), so a speed counted
in runs, the way a progress bar measures it, is off by hours; a speed counted in declared units is not.

Before any work is done the time left is the declared cost over the workers. As work is done, the
seconds measured per declared unit take over: ``rate = (elapsed + PRIOR_UNITS·prior) / (done +
PRIOR_UNITS)``, so the first seconds (imports, the first partial report) cannot swing it, and a
machine slower than the one the costs were measured on is found out within a few groups.

An experiment's own time left is that of the work up to its last group in the order the sweep
starts them (the costliest first), plus its analysis: E6's cheap groups run last, so E6 ends last.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

#: Declared units of work the prior counts for: the measured rate outweighs it after about this many.
PRIOR_UNITS = 5.0


@dataclass(frozen=True)
class PlannedGroup:
    """A group the sweep will run: its experiment, the runs it will store and its training cost."""

    experiment: str
    runs: int
    cost: float


def plan_groups(jobs: Sequence[tuple], stored: set) -> list[PlannedGroup]:
    """The groups of ``jobs`` (``(executor, groups)`` pairs) still to run, in the order
    :func:`~entropic_bound.sweep.runner.run_sweeps` starts them (costliest first, stably); each
    group's cost is its ``group_cost`` less the analysis it holds back."""
    from .runner import group_cost

    items = []
    for executor, groups in jobs:
        held_back = float(getattr(executor, "analysis_cost", 0.0))
        for group in groups:
            owed = sum(spec.run_id not in stored for spec in group)
            if owed:
                cost = group_cost(executor, group)
                items.append((cost, PlannedGroup(executor.name, owed, max(cost - held_back, 0.0))))
    items.sort(key=lambda item: -item[0])  # stable, as the sweep's own sort
    return [group for _, group in items]


class TimeLeft:
    """Time left of one sweep from its planned groups and each experiment's analysis cost.

    :meth:`update` takes the runs an experiment has done in this sweep (stored plus the reported
    fractions of running groups), :meth:`analysed` that its analysis finished; :meth:`seconds`
    is the estimate for one experiment or (``None``) for the whole sweep. ``clock`` is injectable so
    that a recorded run can be replayed."""

    def __init__(
        self,
        groups: Sequence[PlannedGroup],
        analysis: dict[str, float],
        parallel: int = 1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.groups, self.analysis, self.clock = list(groups), dict(analysis), clock
        self.prior = 1.0 / max(1, parallel)  # seconds per declared unit before anything is measured
        self.start = clock()
        self.runs_done = dict.fromkeys(self.analysis, 0.0)
        self.done_analyses: set[str] = set()
        self.finish_at = self._finish_points()

    def _finish_points(self) -> dict[str, float]:
        """Declared units of the whole sweep done when each experiment is analysed (schedule order)."""
        last = {g.experiment: i for i, g in enumerate(self.groups)}
        points, units = {}, 0.0
        for name in self.analysis:  # nothing to run: analysed before the first group starts
            if name not in last:
                units += self.analysis[name]
                points[name] = units
        for i, group in enumerate(self.groups):
            units += group.cost
            if last[group.experiment] == i:
                units += self.analysis.get(group.experiment, 0.0)
                points[group.experiment] = units
        return points

    def update(self, experiment: str, done: float, total: int) -> None:
        """``experiment`` reports ``done`` of its ``total`` runs (those stored before this sweep included)."""
        owed = sum(g.runs for g in self.groups if g.experiment == experiment)
        self.runs_done[experiment] = max(float(done) - (total - owed), 0.0)

    def analysed(self, experiment: str) -> None:
        self.done_analyses.add(experiment)

    def units_done(self, experiment: str) -> float:
        """Declared units ``experiment`` has done: its runs mapped onto its groups in schedule order."""
        runs, units = self.runs_done.get(experiment, 0.0), 0.0
        for group in self.groups:
            if group.experiment == experiment and runs > 0:
                share = min(runs, group.runs) / group.runs
                units, runs = units + share * group.cost, runs - group.runs
        if experiment in self.done_analyses:
            units += self.analysis.get(experiment, 0.0)
        return units

    def units_total(self, experiment: str | None = None) -> float:
        own = [g.cost for g in self.groups if experiment in (None, g.experiment)]
        analyses = [a for name, a in self.analysis.items() if experiment in (None, name)]
        return sum(own) + sum(analyses)

    def seconds_per_unit(self) -> float:
        done = sum(self.units_done(name) for name in self.analysis)
        return (self.clock() - self.start + PRIOR_UNITS * self.prior) / (done + PRIOR_UNITS)

    def seconds(self, experiment: str | None = None) -> float:
        """Estimated seconds until ``experiment`` (None: every experiment) is run and analysed."""
        done = sum(self.units_done(name) for name in self.analysis)
        if experiment is None:
            left = self.units_total() - done
        else:
            own_left = self.units_total(experiment) - self.units_done(experiment)
            if own_left <= 1e-9:
                return 0.0
            left = max(self.finish_at.get(experiment, 0.0) - done, own_left)
        return max(left, 0.0) * self.seconds_per_unit()
