"""What an experiment is: a config, a grid of runs, how groups of runs train, and an analysis.

An :class:`Experiment` instance is bound to one validated config. It is the sweep's *executor*
(``groups`` partitions the full grid deterministically into ensembles; ``execute`` trains one
group) and it analyses the store's table into result tables, figures and verdicts. Verdicts are
computed from stored numbers with a stated criterion and can come out refuted.
"""

from __future__ import annotations

import hashlib
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from .. import config as cfglib
from ..defaults import SCALES
from ..errors import ConfigError, UserInputError
from ..jsonable import json_safe
from ..results import RunResult, RunSpec

VERDICTS = ("confirmed", "refuted", "inconclusive")


def derive_seed(*parts: Any) -> int:
    """A 63-bit seed derived from ``parts`` (stable across processes and machines)."""
    digest = hashlib.sha256(repr(parts).encode()).digest()
    return int.from_bytes(digest[:8], "little") & (2**63 - 1)


@dataclass(frozen=True)
class Verdict:
    """The outcome of one claim, with the criterion that decided it and the numbers behind it."""

    claim: str
    verdict: str
    criterion: str
    evidence: dict
    experiment: str
    statement: str = ""
    robustness: dict | None = None  # see experiments/robustness.py: the claim's boundary

    def __post_init__(self) -> None:
        assert self.verdict in VERDICTS, self.verdict

    def with_robustness(self, robustness: dict) -> Verdict:
        """This verdict with its boundary (a ``robustness.summarise_boundary`` entry) attached."""
        return replace(self, robustness=robustness)

    def to_dict(self) -> dict:
        out = {
            "verdict": self.verdict,
            "criterion": self.criterion,
            "evidence": json_safe(self.evidence),
            "experiment": self.experiment,
            "statement": self.statement,
        }
        if self.robustness is not None:
            out["robustness"] = json_safe(self.robustness)
        return out


def decide(ok: bool | None) -> str:
    """``True`` → confirmed, ``False`` → refuted, ``None`` (not enough data) → inconclusive."""
    return "inconclusive" if ok is None else ("confirmed" if ok else "refuted")


@dataclass
class Analysis:
    """What the report shows for one experiment."""

    results: pd.DataFrame
    verdicts: list[Verdict]
    figures: dict[str, Any] = field(default_factory=dict)  # name → matplotlib Figure
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)  # extra tables shown in the report
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ClaimContext:
    """What a criterion reads besides the config and the rows: the store's records and the tables
    (or numbers) the experiment derived once from all its rows (:meth:`Experiment.prepare`)."""

    records: list[dict] = field(default_factory=list)
    tables: Mapping[str, Any] = field(default_factory=dict)


class Experiment(ABC):
    """Base class; subclasses set ``title``, ``config_class`` and ``scale_settings`` (or override
    :meth:`default_config`), ``declared_claims`` (their ``claims.py`` ``CLAIMS``; ``claims`` lists their ids)
    and ``analysis_function``, and implement :meth:`specs` and :meth:`execute`.

    The name is the class name's ``E<k>`` prefix (``E1LinearSurrogate`` → ``E1``); it is the
    registry key (its lazy line in ``registry.py``), every run spec's ``experiment`` and the
    first part of every seed the experiment derives (:meth:`seed`).
    """

    name: str = ""
    title: str = ""
    claims: tuple[str, ...] = ()
    config_class: type = object
    # old config key → new: a store written before a rename still reads, and an old key in an
    # override fails pointing at the new one
    renamed_keys: dict[str, str] = {}
    # old config key → the key that replaced it with another meaning, whose value cannot be carried
    # over: a store written before still reads (the new key at its default), an override fails
    # pointing at the new one
    retired_keys: dict[str, str] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.declared_claims and "claims" not in cls.__dict__:
            cls.claims = tuple(c.id for c in cls.declared_claims)
        if "name" not in cls.__dict__:
            match = re.match(r"E\d+", cls.__name__)
            cls.name = match.group(0) if match else cls.__name__

    def __init__(self, cfg: Any) -> None:
        self.cfg = cfglib.validate(cfg)

    def seed(self, purpose: str, *parts: Any) -> int:
        """A seed for ``purpose`` (``"teacher"``, ``"data"``, ``"init"`` …) of this experiment."""
        return derive_seed(f"{self.name}/{purpose}", *parts)

    # -- configuration -------------------------------------------------------------------
    scale_settings: dict[str, dict[str, Any]] = {}  # scale → the fields that differ from config_class()

    @classmethod
    def default_config(cls, scale: str) -> Any:
        """The embedded config for ``scale`` (``quick`` or ``paper``): ``config_class`` with that
        scale's :attr:`scale_settings`."""
        return cls.config_class(**cls.scale_settings.get(scale, {}))

    @classmethod
    def configure(cls, scale: str = "quick", overrides: Any = ()) -> Any:
        """Default config for ``scale`` with dotted overrides applied and validated."""
        if scale not in SCALES:
            raise ConfigError(
                f"The 'scale' parameter must be one of {', '.join(SCALES)}. Got {scale!r} instead."
            )
        cls._reject_renamed(overrides)
        cfg = cfglib.apply_overrides(cls.default_config(scale), overrides)
        return cfglib.validate(cfg)

    @classmethod
    def _reject_renamed(cls, overrides: Any) -> None:
        """An override with a key the config no longer has fails naming the key it became."""
        items = overrides if isinstance(overrides, Mapping) else dict(map(cfglib.parse_assignment, overrides))
        replaced = {**cls.renamed_keys, **cls.retired_keys}
        for key in items:
            if key in replaced:
                new = replaced[key]
                raise ConfigError(f"Unknown config key '{key}': it is now '{new}'. Did you mean '{new}'?")

    @classmethod
    def from_dict(cls, data: dict) -> Any:
        """Rebuild a stored config (as written by :func:`entropic_bound.config.to_dict`)."""
        flat = {
            cls.renamed_keys.get(k, k): v
            for k, v in cfglib.flatten(data).items()
            if k not in cls.retired_keys
        }
        return cfglib.validate(cfglib.apply_overrides(cls.default_config("quick"), flat))

    # -- the sweep -----------------------------------------------------------------------
    @abstractmethod
    def specs(self) -> list[RunSpec]:
        """Every run of the grid."""

    member_params: tuple[str, ...] = ()  # params that differ between members of one ensemble
    seeds_share_group: bool = False  # True: replicates (seeds) train in one ensemble too

    def group_key(self, spec: RunSpec) -> Hashable:
        """Runs with equal keys share data and shapes and train as one ensemble: the runs whose
        params differ only in :attr:`member_params` (and the seed, if :attr:`seeds_share_group`)."""
        shared = tuple(sorted((k, str(v)) for k, v in spec.params.items() if k not in self.member_params))
        return shared if self.seeds_share_group else (shared, spec.seed)

    @abstractmethod
    def execute(self, group: list[RunSpec]) -> list[RunResult]:
        """Train one group; one result per spec."""

    def train_config(self, spec: RunSpec) -> Any:
        """The typed training config ``spec`` trains with, as the dataclass it is: the experiment's own
        ``cfg.train`` (validated once, with the whole config) with the fields the grid varies for this
        run replaced (E5's C7 contrast). An experiment that knows which of its sections a run uses
        (E2, E3) overrides this. ``flat_params`` of the result is the spec's ``train.*`` params."""
        base = self.cfg.train
        changed = {k: v for k, v in spec_params(spec, "train").items() if getattr(base, k) != v}
        return replace(base, **changed) if changed else base

    # Scheduling hints for the joint sweep (``sweep.run_sweeps``), CPU seconds at the quick scale from
    # bench/profile_reproduce.py: they order groups only and never change a number
    run_cost: float = 0.3  # to train one run
    analysis_cost: float = 3.0  # to analyse the experiment and draw its figures, after its last group

    def group_cost(self, group: list[RunSpec]) -> float:
        """The work a group holds back: its own training, then its experiment's analysis (so groups of
        an experiment with a long analysis go early and that analysis overlaps others' training)."""
        return self.run_cost * len(group) + self.analysis_cost

    max_group: int = 64
    max_memory_bytes: int | None = None  # set by ``--max-memory``: chunk ensembles to this budget
    # where ``execute`` can train: every ensemble trains through ``device.train_on`` (E6 trains none:
    # its predictors are closed-form float64 numpy on the CPU)
    devices: tuple[str, ...] = ("cpu", "cuda")
    device: str = "cpu"  # set by ``--device`` when it is one of :attr:`devices`

    full_batch_moments: bool = False  # True: a full-batch B0 trains from the data's moments (E1, E2)

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
        from ..registry import STUDENTS
        from ..training.memory import ensemble_memory

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
        from ..training.memory import MIB, MemoryEstimate, available_memory

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

    # -- analysis ------------------------------------------------------------------------
    declared_claims: tuple = ()  # the experiment's claims.py CLAIMS: each a claim.Claim
    # analysis.py's analyse(cfg, table, rows, context, verdicts) -> Analysis: tables, figures, notes
    analysis_function: Callable[..., Analysis] | None = None

    def analyse(self, table: pd.DataFrame, records: list[dict]) -> Analysis:
        """Tables, figures and verdicts from this config's rows of the store.

        Selects this grid's rows (:meth:`select`), sets aside the runs that diverged, prepares the rest
        (:meth:`prepare`), decides every declared claim with its robustness grid
        (:meth:`~entropic_bound.experiments.claim.Claim.judge`), counts the diverged runs once into every
        verdict's evidence (``excluded_diverged``) and hands the verdicts to :attr:`analysis_function`.
        """
        table, records = self.select(table, records)
        ok, n_diverged = split_status(table)
        rows, context = self.prepare(table, ok, records)
        verdicts = [
            _count_excluded(claim.judge(self.cfg, rows, context), n_diverged)
            for claim in self.declared_claims
        ]
        analysis = type(self).analysis_function(self.cfg, table, rows, context, verdicts)
        if n_diverged:
            analysis.notes.append(f"{n_diverged} run(s) diverged and are excluded from every verdict.")
        return analysis

    def prepare(
        self, table: pd.DataFrame, ok: pd.DataFrame, records: list[dict]
    ) -> tuple[pd.DataFrame, ClaimContext]:
        """The rows every claim is decided on and their :class:`ClaimContext` (default: the runs that did
        not diverge, and the records); an experiment overrides it to derive columns or tables once."""
        return ok, ClaimContext(records)

    def select(self, table: pd.DataFrame, records: list[dict]) -> tuple[pd.DataFrame, list[dict]]:
        """Keep the store's rows that belong to this config's grid."""
        ids = {s.run_id for s in self.specs()}
        rows = table[table["run_id"].isin(ids)].reset_index(drop=True) if len(table) else table
        return rows, [r for r in records if r["run_id"] in ids]

    @property
    def name_with_title(self) -> str:
        return f"{self.name} — {self.title}"


def _count_excluded(verdict: Verdict, n_diverged: int) -> Verdict:
    """``verdict`` with the number of runs that diverged (and that no criterion saw) in its evidence."""
    return replace(verdict, evidence={**verdict.evidence, "excluded_diverged": n_diverged})


def split_status(table: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """``(the rows with status "ok", the number of diverged runs)`` of a store table."""
    if not len(table):
        return table, 0
    return table[table["status"] == "ok"], int((table["status"] == "diverged").sum())


def curves_by_run(records: list[dict]) -> dict[str, dict]:
    """``run_id → curves`` of the store's records (empty dict where a run stored none)."""
    return {r["run_id"]: r.get("curves") or {} for r in records}


def draw_figures(
    plots: dict[str, Callable[..., Any]], cfg: Any, ok: pd.DataFrame, records: list[dict]
) -> dict:
    """``name → plot(cfg, ok, records)`` for each of ``plots``; no figures when no run is ok."""
    return {name: plot(cfg, ok, records) for name, plot in plots.items()} if len(ok) else {}


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


def spec_params(spec: RunSpec, prefix: str) -> dict:
    """The params of ``spec`` under ``prefix.`` with the prefix removed."""
    n = len(prefix) + 1
    return {k[n:]: v for k, v in spec.params.items() if k.startswith(prefix + ".")}


def moved_keys(section: str, names: str) -> dict[str, str]:
    """``{old key: "section.old key"}`` for the space-separated ``names`` a config moved into ``section``
    (for :attr:`Experiment.renamed_keys`)."""
    return {name: f"{section}.{name}" for name in names.split()}


def config_params(cfg: Any, prefix: str, names: tuple[str, ...]) -> dict:
    """The config fields ``names`` as run params ``prefix.name`` (an experiment's settings of its task)."""
    return {f"{prefix}.{name}": getattr(cfg, name) for name in names}


def flat_params(obj: Any, prefix: str) -> dict:
    """A config section as flat ``prefix.key`` params for a run spec."""
    return {f"{prefix}.{k}": v for k, v in cfglib.flatten(cfglib.to_dict(obj)).items()}


ProgressFn = Callable[[int, int, str], None]
