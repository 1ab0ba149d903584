"""The Python API behind ``run``, ``reproduce`` and ``report``: config → sweep → store → report."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .config import to_dict
from .config_keys import gather_overrides, split_by_experiment  # noqa: F401  (the pipeline's API)
from .errors import UserInputError
from .experiments.framework.draws import Seeds, draws_to_run
from .names import DEFAULT_OUT, STORE_NAME
from .plotting import to_png
from .registry import EXPERIMENTS
from .report.writer import analyse_store, check_out_dir, write_report
from .store.ownership import OutputFolder, claim_output_folder
from .store.run_store import OldSchemaError, RunStore, is_run_store
from .sweep.runner import Backend, SweepSummary, default_workers, make_backend, run_sweeps
from .sweep.time_left import TimeLeft, plan_groups
from .validation import check_choice

ProgressFn = Callable[[int, int, str], None]


@dataclass
class PipelineResult:
    summaries: dict[str, SweepSummary]
    report: Path | None  # None: not written (a look of --until-decided)
    store: Path
    analysed: dict[str, tuple] | None = None  # name → (experiment, scale, analysis), as reported


def resolve_paths(out: str | Path | None, store: str | Path | None) -> tuple[Path, Path]:
    out_dir = check_out_dir(out or DEFAULT_OUT)
    store_path = Path(store) if store else out_dir / STORE_NAME
    if store_path.exists() and store_path.is_dir():
        raise UserInputError(f"Run store '{store_path}' is a folder; give a file path with --store.")
    return out_dir, store_path


def claim_out(out_dir: Path, force: bool) -> OutputFolder:
    """The output folder if it is ours (or ``force``): refused in one line before any work otherwise."""
    return claim_output_folder(out_dir, force=force, store_is_ours=_holds_our_store)


def _holds_our_store(root: Path) -> bool:
    """A folder holding a run store of ours; an empty one, or only its SQLite sidecars, is another
    run creating it this instant."""
    path = root / STORE_NAME
    if not path.is_file():
        family = {f"{STORE_NAME}{suffix}" for suffix in ("-wal", "-shm", "-journal")}
        return {p.name for p in root.iterdir()} <= family
    return path.stat().st_size == 0 or is_run_store(path)


#: With ``quiet``, the Ray cluster's messages go to this file in the output folder, not the terminal.
RAY_LOG_NAME = "ray-driver.log"


def sweep_backend(
    backend: str | Backend | None, workers: int, address: str | None, ray_log: Path | None = None
) -> str | Backend | None:
    """The backend to sweep with: its name, or a Ray backend bound to ``address`` (whose cluster
    messages go to ``ray_log`` when given)."""
    if address is not None and backend != "ray":
        raise UserInputError(
            f"The '--address' option needs '--backend ray'. Got --backend {backend or 'local'} instead."
        )
    if backend != "ray" or (address is None and ray_log is None):
        return backend
    return make_backend("ray", workers, address=address, log_file=ray_log)


def configure(name: str, scale: str, overrides: dict | None = None):
    """Validated experiment instance for ``name`` at ``scale`` with dotted-key overrides."""
    cls = EXPERIMENTS.get(name)
    return cls(cls.configure(scale, dict(overrides or {})))


DEVICES = ("cpu", "cuda")


def check_device(device: str) -> None:
    """``device`` is one of :data:`DEVICES` and, for ``cuda``, visible to PyTorch."""
    check_choice("device", device, DEVICES)
    if device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise UserInputError(
                f"--device cuda: PyTorch {torch.__version__} sees no CUDA device here; "
                "run on a machine with a GPU and a CUDA build of torch, or use --device cpu."
            )


class OverallProgress:
    """Forwards each experiment's ``progress(done, total, description)`` and keeps an ``all`` line
    counting the runs of every experiment of the command. Experiments sweep at the same time, so
    ``all`` sums what each last reported. With a :class:`~.time_left.TimeLeft`, a display that
    accepts it (``accepts_time_left``) is also given, at every report, every line's seconds left
    estimated at that moment (``left={line: seconds}``), so no line keeps an older estimate than
    another and ``all`` ends when the last experiment does."""

    def __init__(
        self, progress: ProgressFn | None, total: int, experiments: int, time_left: TimeLeft | None = None
    ) -> None:
        self.progress, self.total, self.experiments = progress, total, experiments
        self.time_left = time_left
        self.done: dict[int, float] = {}  # runs stored per experiment

    def for_experiment(self, executor=None) -> ProgressFn | None:
        if self.progress is None:
            return None
        key, name = len(self.done), getattr(executor, "name", None)
        self.done[key] = 0

        def update(done: int, total: int, description: str) -> None:
            self.done[key] = done
            if self.time_left is not None and name is not None:
                self.time_left.update(name, done, total)
            left = self._every_line_left()
            self._show(done, total, description, left)
            if self.experiments > 1:
                self._show(sum(self.done.values()), self.total, f"all: {self.experiments} experiments", left)

        return update

    def analysed(self, name: str) -> None:
        """``name``'s analysis is done: the estimate counts its cost as done."""
        if self.time_left is not None:
            self.time_left.analysed(name)

    def _every_line_left(self) -> dict[str, float] | None:
        if self.time_left is None or not getattr(self.progress, "accepts_time_left", False):
            return None
        left = self.time_left.by_line()
        return left if self.experiments > 1 else {k: v for k, v in left.items() if k != "all"}

    def _show(self, done: float, total: int, description: str, left: dict[str, float] | None) -> None:
        if left is None:
            self.progress(done, total, description)
        else:
            self.progress(done, total, description, left=left)


def estimate_time_left(bound: Sequence, groups: dict[str, list], stored: set, workers: int) -> TimeLeft:
    """The sweep's :class:`~.time_left.TimeLeft`: the groups still to run, in the sweep's order, with
    their declared costs, and each experiment's analysis cost."""
    planned = plan_groups([(exp, groups[exp.name]) for exp in bound], stored)
    analysis = {exp.name: float(getattr(exp, "analysis_cost", 0.0)) for exp in bound}
    return TimeLeft(planned, analysis, parallel=min(workers, default_workers()))


def analyse_now(run_store: RunStore, name: str) -> tuple:
    """``(experiment, scale, analysis)`` of ``name`` from the store, its figures drawn to PNG bytes
    now (the pipeline calls it while other experiments' groups still train; the report writer
    then only writes the bytes)."""
    [(exp, scale, analysis)] = analyse_store(run_store, [name])
    analysis.figures = {key: to_png(fig) for key, fig in analysis.figures.items()}
    return exp, scale, analysis


def run_experiments(
    names: Sequence[str],
    *,
    scale: str = "quick",
    overrides: dict[str, dict] | None = None,
    out: str | Path | None = None,
    store: str | Path | None = None,
    progress: ProgressFn | None = None,
    workers: int | None = 1,
    backend: str | Backend | None = None,
    address: str | None = None,
    max_memory_mb: float | None = None,
    device: str = "cpu",
    steps: Callable[[str], None] | None = None,
    force: bool = False,
    quiet: bool = False,
    draws: Sequence[int] | None = None,
    sequential: dict | None = None,
    write: bool = True,
) -> PipelineResult:
    """Validate every config first, then sweep every experiment into the store and write the report.

    All experiments' groups go to one pool of ``workers`` processes (None: every CPU this process
    may use; 1: in this process), the costliest first; each experiment is analysed and its figures
    drawn here as soon as its last group is stored, while the others train; the report comes last.

    ``backend``: ``local``, ``process`` or ``ray`` (default by ``workers``); ``address`` joins a
    running Ray cluster (``auto`` or ``HOST:PORT``) with ``backend="ray"``. ``max_memory_mb`` caps the
    estimated training memory of one ensemble (models are split into more, smaller ensembles); a
    budget too small for a single model is an error before any work. ``device`` (``cpu`` or ``cuda``)
    is where experiments that support it train (:attr:`Experiment.devices`: E7's language models);
    the others run on the CPU. Runs are the same runs on either device (the device is not part of a
    run's id), though CUDA kernels round differently from the CPU's. ``steps`` is told each step of
    the report building (the progress bars end with the last run). ``force`` writes into a
    non-empty folder that holds no entropic-bound output (see :mod:`.ownership`). ``quiet`` keeps a
    Ray cluster's messages in ``OUT/ray-driver.log`` instead of the terminal. ``draws`` trains every
    experiment on each of these draws into the one store (None: the scale's default draws, or the
    one draw an override sets; see :func:`~.experiments.framework.draws.draws_to_run`); its report decides
    every claim on each draw and combines them (:mod:`.experiments.framework.replication`);
    ``sequential`` (``{"stop": ...}``) marks the draws as the looks of an ``--until-decided`` command,
    whose claims the report decides sequentially (:mod:`.experiments.framework.sequential`);
    ``write=False`` analyses the experiments but leaves the report to a later :func:`report`.
    """
    check_device(device)
    workers = default_workers() if workers is None else workers
    out_dir, store_path = resolve_paths(out, store)
    backend = sweep_backend(backend, workers, address, out_dir / RAY_LOG_NAME if quiet else None)
    overrides = overrides or {}
    bound = [configure(n, scale, overrides.get(n)) for n in names]
    runs_of = {
        exp.name: draws_to_run(scale, exp.draw, draws, "draw" in (overrides.get(exp.name) or {}))
        for exp in bound
    }
    specs = {  # one executor trains every draw: each run carries its own
        exp.name: [s for d in runs_of[exp.name] for s in exp.drawn_specs(Seeds(exp.name, d))] for exp in bound
    }
    groups = {}
    for exp in bound:
        exp.device = device if device in exp.devices else "cpu"
        if max_memory_mb is not None:
            exp.max_memory_bytes = int(max_memory_mb * 2**20)
        # a model that fits no budget (or no memory) fails here, before any work
        groups[exp.name] = exp.groups(specs[exp.name])
    folder = claim_out(out_dir, force)
    analysed: dict[str, tuple] = {}
    with RunStore(store_path) as run_store:
        for exp in bound:
            run_store.put_experiment(exp.name, scale, to_dict(exp.cfg), list(runs_of[exp.name]), sequential)
        time_left = estimate_time_left(bound, groups, run_store.finished_ids(), workers) if progress else None
        overall = OverallProgress(progress, sum(len(s) for s in specs.values()), len(bound), time_left)

        def on_done(exp, _summary) -> None:
            analysed[exp.name] = analyse_now(run_store, exp.name)
            overall.analysed(exp.name)

        done = run_sweeps(
            [(exp, specs[exp.name]) for exp in bound],
            run_store,
            progress=overall.for_experiment,
            workers=workers,
            backend=backend,
            on_done=on_done,
        )
        summaries = {exp.name: summary for exp, summary in zip(bound, done)}
        report = write_report(run_store, folder, steps=steps, analysed=analysed) if write else None
    return PipelineResult(summaries, report, store_path, analysed)


def report(
    out: str | Path | None = None,
    store: str | Path | None = None,
    only: Sequence[str] | None = None,
    steps: Callable[[str], None] | None = None,
    force: bool = False,
) -> Path:
    """Rewrite the report folder from an existing store (opened read-only unless it needs migrating)."""
    out_dir, store_path = resolve_paths(out, store)
    for name in only or ():
        EXPERIMENTS.get(name)
    if not store_path.is_file():
        raise UserInputError(
            f"Run store '{store_path}' does not exist; run an experiment first or pass --store."
        )
    try:
        run_store = RunStore(store_path, readonly=True)
    except OldSchemaError:
        run_store = RunStore(store_path)  # ours (identified read-only), written by an older version
    with run_store:
        folder = claim_out(out_dir, force)
        return write_report(run_store, folder, only=list(only) if only else None, steps=steps)
