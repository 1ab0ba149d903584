"""The Python API behind ``run``, ``reproduce`` and ``report``: config → sweep → store → report."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import experiments as _experiments  # noqa: F401  (registers E1…)
from .config import load_yaml, parse_assignment, to_dict
from .defaults import DEFAULT_OUT, STORE_NAME
from .errors import ConfigError, UserInputError
from .plotting import to_png
from .registry import EXPERIMENTS
from .report.writer import analyse_store, check_out_dir, write_report
from .store import RunStore
from .sweep.runner import Backend, SweepSummary, default_workers, make_backend, run_sweeps
from .validation import check_choice

ProgressFn = Callable[[int, int, str], None]


@dataclass
class PipelineResult:
    summaries: dict[str, SweepSummary]
    report: Path
    store: Path


def resolve_paths(out: str | Path | None, store: str | Path | None) -> tuple[Path, Path]:
    out_dir = check_out_dir(out or DEFAULT_OUT)
    store_path = Path(store) if store else out_dir / STORE_NAME
    if store_path.exists() and store_path.is_dir():
        raise UserInputError(f"Run store '{store_path}' is a folder; give a file path with --store.")
    return out_dir, store_path


def sweep_backend(backend: str | Backend | None, workers: int, address: str | None) -> str | Backend | None:
    """The backend to sweep with: its name, or a Ray backend bound to ``address``."""
    if address is not None and backend != "ray":
        raise UserInputError(
            f"The '--address' option needs '--backend ray'. Got --backend {backend or 'local'} instead."
        )
    return make_backend("ray", workers, address=address) if backend == "ray" else backend


def configure(name: str, scale: str, overrides: dict | None = None):
    """Validated experiment instance for ``name`` at ``scale`` with dotted-key overrides."""
    cls = EXPERIMENTS.get(name)
    return cls(cls.configure(scale, dict(overrides or {})))


def gather_overrides(assignments: Sequence[str], config_file: str | None) -> dict:
    """A YAML file's keys, then ``key=value`` assignments (later wins), as one flat dict."""
    items: dict = load_yaml(config_file) if config_file else {}
    items.update(dict(parse_assignment(a) for a in assignments))
    return items


def split_by_experiment(items: dict, names: Sequence[str]) -> dict[str, dict]:
    """``{"E1.train.lr": v}`` → ``{"E1": {"train.lr": v}}``; every key must start with an experiment."""
    out: dict[str, dict] = {n: {} for n in names}
    for key, value in items.items():
        head, _, rest = key.partition(".")
        if head not in out or not rest:
            raise ConfigError(
                f"A reproduce override must start with one of the experiments run ({', '.join(names)}), "
                f"e.g. E1.train.lr=1e-3. Got {key!r} instead."
            )
        out[head][rest] = value
    return out


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
    counting the runs of every experiment of the command (its time left is estimated from them).
    Experiments sweep at the same time, so ``all`` sums what each last reported."""

    def __init__(self, progress: ProgressFn | None, total: int, experiments: int) -> None:
        self.progress, self.total, self.experiments = progress, total, experiments
        self.done: dict[int, float] = {}  # runs done (stored or in-group fractions) per experiment

    def for_experiment(self, _executor=None) -> ProgressFn | None:
        if self.progress is None:
            return None
        key = len(self.done)
        self.done[key] = 0

        def update(done: int, total: int, description: str) -> None:
            self.done[key] = done
            self.progress(done, total, description)
            if self.experiments > 1:
                self.progress(sum(self.done.values()), self.total, f"all: {self.experiments} experiments")

        return update


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
    run's id), though CUDA kernels round differently from the CPU's.
    """
    check_device(device)
    workers = default_workers() if workers is None else workers
    backend = sweep_backend(backend, workers, address)
    out_dir, store_path = resolve_paths(out, store)
    overrides = overrides or {}
    bound = [configure(n, scale, overrides.get(n)) for n in names]
    specs = {exp.name: exp.specs() for exp in bound}
    for exp in bound:
        exp.device = device if device in exp.devices else "cpu"
        if max_memory_mb is not None:
            exp.max_memory_bytes = int(max_memory_mb * 2**20)
            exp.groups(specs[exp.name])  # a budget below one model fails here, before any work
    overall = OverallProgress(progress, sum(len(s) for s in specs.values()), len(bound))
    analysed: dict[str, tuple] = {}
    with RunStore(store_path) as run_store:
        for exp in bound:
            run_store.put_experiment(exp.name, scale, to_dict(exp.cfg))
        done = run_sweeps(
            [(exp, specs[exp.name]) for exp in bound],
            run_store,
            progress=overall.for_experiment,
            workers=workers,
            backend=backend,
            on_done=lambda exp, _: analysed.update({exp.name: analyse_now(run_store, exp.name)}),
        )
        summaries = {exp.name: summary for exp, summary in zip(bound, done)}
        report = write_report(run_store, out_dir, analysed=analysed)
    return PipelineResult(summaries, report, store_path)


def report(
    out: str | Path | None = None, store: str | Path | None = None, only: Sequence[str] | None = None
) -> Path:
    """Rewrite the report folder from an existing store."""
    out_dir, store_path = resolve_paths(out, store)
    for name in only or ():
        EXPERIMENTS.get(name)
    if not store_path.is_file():
        raise UserInputError(
            f"Run store '{store_path}' does not exist; run an experiment first or pass --store."
        )
    with RunStore(store_path) as run_store:
        return write_report(run_store, out_dir, only=list(only) if only else None)
