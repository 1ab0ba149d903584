"""What runs an experiment's grid: its run specs, how they group into ensembles, what a group costs
and needs in memory, where it trains, and training one group (the sweep's *executor*).

``groups`` partitions the full grid deterministically into ensembles; ``execute`` trains one group.
Nothing here changes a number a run produces: grouping and chunking only decide which runs share
one ensemble, and the costs only order the groups.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable
from dataclasses import replace
from typing import Any

from ...errors import UserInputError
from ...results import RunResult, RunSpec
from .draws import Seeds
from .params import from_params


class Grid(ABC):
    """The grid of an experiment bound to its config ``cfg``; subclasses implement :meth:`specs` and
    :meth:`execute` and set the grouping, cost and device attributes that differ from these.

    A draw (:mod:`.draws`) travels as data: :meth:`drawn_specs` gives the runs of one draw, each
    spec carrying it, and :meth:`execute` derives every seed from :meth:`seeds_of` its group."""

    name: str = ""
    cfg: Any

    @property
    def draw(self) -> int:
        """The config's draw (``--set draw=N``; 0 for a config without one)."""
        return int(getattr(self.cfg, "draw", 0))

    @property
    def seeds(self) -> Seeds:
        """The seeds of the config's draw (:class:`~.draws.Seeds`)."""
        return Seeds(self.name, self.draw)

    def drawn_specs(self, seeds: Seeds) -> list[RunSpec]:
        """Every run of the grid in ``seeds``'s draw: :meth:`specs`, each run carrying the draw."""
        return [replace(s, draw=seeds.draw) for s in self.specs()] if seeds.draw else self.specs()

    def seeds_of(self, group: list[RunSpec]) -> Seeds:
        """The seeds ``group`` trains from: this experiment's, at the draw its runs carry (one draw:
        :meth:`group_key` keeps draws apart)."""
        assert len({s.draw for s in group}) == 1, "a group trains from one draw's seeds"
        return Seeds(self.name, group[0].draw)

    @abstractmethod
    def specs(self) -> list[RunSpec]:
        """Every run of the grid (of draw 0; :meth:`drawn_specs` gives another draw's)."""

    @abstractmethod
    def execute(self, group: list[RunSpec]) -> list[RunResult]:
        """Train one group; one result per spec. Its seeds come from :meth:`seeds_of` the group (the
        draw its runs carry), so one executor trains every draw."""

    # -- grouping --------------------------------------------------------------------------
    member_params: tuple[str, ...] = ()  # params that differ between members of one ensemble
    seeds_share_group: bool = False  # True: replicates (seeds) train in one ensemble too
    max_group: int = 64

    def group_key(self, spec: RunSpec) -> Hashable:
        """Runs with equal keys share data and shapes and train as one ensemble: the runs whose
        params differ only in :attr:`member_params` (and the seed, if :attr:`seeds_share_group`), in one
        draw: a group trains from one draw's seeds (:meth:`seeds_of`)."""
        shared = tuple(sorted((k, str(v)) for k, v in spec.params.items() if k not in self.member_params))
        return (shared, spec.draw) if self.seeds_share_group else (shared, spec.seed, spec.draw)

    def groups(self, specs: list[RunSpec]) -> list[list[RunSpec]]:
        """Deterministic partition of the full grid into ensembles (see :meth:`chunk_size`)."""
        buckets: dict[Hashable, list[RunSpec]] = {}
        for s in specs:
            buckets.setdefault(self.group_key(s), []).append(s)
        out = []
        for key in buckets:
            members = sorted(buckets[key], key=lambda s: s.run_id)
            size = self.chunk_size(members)
            out.extend(members[i : i + size] for i in range(0, len(members), size))
        return out

    # -- scheduling costs ------------------------------------------------------------------
    # hints for the joint sweep (``sweep.run_sweeps``), CPU seconds at the quick scale from
    # bench/profile_reproduce.py: they order groups only and never change a number
    run_cost: float = 0.3  # to train one run
    analysis_cost: float = 3.0  # to analyse the experiment and draw its figures, after its last group

    def group_cost(self, group: list[RunSpec]) -> float:
        """The work a group holds back: its own training, then its experiment's analysis (so groups of
        an experiment with a long analysis go early and that analysis overlaps others' training)."""
        return self.run_cost * len(group) + self.analysis_cost

    # -- device and memory -----------------------------------------------------------------
    # where ``execute`` can train: every ensemble trains through ``device.train_on`` (E6 trains none:
    # its predictors are closed-form float64 numpy on the CPU)
    devices: tuple[str, ...] = ("cpu", "cuda")
    device: str = "cpu"  # set by ``--device`` when it is one of :attr:`devices`
    max_memory_bytes: int | None = None  # set by ``--max-memory``: chunk ensembles to this budget
    full_batch_moments: bool = False  # True: a full-batch B0 trains from the data's moments (E1, E2)

    def train_config(self, spec: RunSpec) -> Any:
        """The typed training config ``spec`` trains with, as the dataclass it is: the experiment's own
        ``cfg.train`` (validated once, with the whole config) with the fields the grid varies for this
        run replaced (E5's C7 contrast). An experiment that knows which of its sections a run uses
        (E2, E3) overrides this. ``to_params`` of the result is the spec's ``train.*`` params."""
        base = self.cfg.train
        changed = {k: v for k, v in from_params(spec, "train").items() if getattr(base, k) != v}
        return replace(base, **changed) if changed else base

    def student_of(self, spec: RunSpec) -> str | None:
        """The registry name of the student ``spec`` trains; None where the experiment trains no
        student ensemble (E6 fits predictors; E7's language models bound their own memory)."""
        return None

    def memory_estimate(self, spec: RunSpec):
        """The :class:`~entropic_bound.training.memory.MemoryEstimate` of ``spec``'s ensemble, from this
        experiment's task config, the run's training config and its student; None without a student."""
        name = self.student_of(spec)
        if name is None:
            return None
        from ...registry import STUDENTS
        from ...training.memory import ensemble_memory

        task, train = self.cfg.task, self.train_config(spec)
        return ensemble_memory(
            STUDENTS.get(name),
            train,
            n=task.n,
            d=task.d,
            d_v=getattr(task, "d_v", task.d),
            n_heads=spec.params.get("n_heads", 1),  # a student without heads has one
            moments=self.full_batch_moments and train.n_samples > 0 and not train.batch_size,
            n_test=getattr(self.cfg, "n_test", 0),
        )

    def chunk_size(self, members: list[RunSpec]) -> int:
        """Models per ensemble: ``max_group``, or fewer so one chunk fits ``max_memory_bytes``.

        A group whose single model does not fit the budget (or, without one, the machine's available
        memory) is refused here, before any work, with the estimate.
        """
        from ...training.memory import MIB, MemoryEstimate, available_memory

        estimates = [e for e in map(self.memory_estimate, members) if e is not None]
        if not estimates:
            return self.max_group
        need = MemoryEstimate(max(e.shared for e in estimates), max(e.per_member for e in estimates))
        budget = self.max_memory_bytes if self.max_memory_bytes is not None else available_memory()
        if budget is not None and need.total(1) > budget:
            what = (
                "the '--max-memory' budget" if self.max_memory_bytes is not None else "the available memory"
            )
            raise UserInputError(
                f"{self.name} needs about {need.total(1) / MIB:,.1f} MiB for at least one model "
                f"({need.describe()}), more than {what} ({budget / MIB:,.1f} MiB): lower task.n, task.d "
                f"or the batch{', or raise it' if self.max_memory_bytes is not None else ''}."
            )
        if self.max_memory_bytes is None:
            return self.max_group
        return max(1, min(self.max_group, len(members), (budget - need.shared) // need.per_member))


def member_result(
    spec: RunSpec,
    m: int,
    outcome,
    metrics: dict,
    *,
    keep: tuple[str, ...] = ("steps_run",),
    curves: dict | None = None,
    wall_s: float = 0.0,
) -> RunResult:
    """The stored result of ensemble member ``m`` of a :class:`~entropic_bound.training.TrainOutcome`.

    A diverged member is stored with status ``"diverged"``, the step at which it diverged, and NaN
    for every metric except ``keep`` (numbers that describe the task or the run, not the model), so
    nothing it produced can be averaged in. ``curves`` are added to the member's training curves.
    """
    step = int(outcome.diverged_step[m])
    if step >= 0:
        metrics = {k: (v if k in keep else float("nan")) for k, v in metrics.items()}
    member_curves = outcome.member_curves(m)
    member_curves.update(curves or {})
    return RunResult(
        spec, "diverged" if step >= 0 else "ok", metrics, member_curves, step if step >= 0 else None, wall_s
    )
