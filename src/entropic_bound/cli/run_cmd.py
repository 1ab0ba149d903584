"""``run`` and ``reproduce``: sweep experiments into the run store and write the report."""

from __future__ import annotations

import argparse
import sys
from functools import partial

from ..errors import UserInputError
from ..names import DEFAULT_OUT, SCALES
from ..sweep.runner import BACKENDS
from .progress import report_steps, sweep_progress
from .summary import print_outcome


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scale", default="quick", choices=SCALES, help="embedded config scale (default quick)")
    p.add_argument("--out", default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})")
    p.add_argument("--store", default=None, help="run store file (default OUT/runs.sqlite)")
    p.add_argument(
        "--set",
        dest="assignments",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config key (repeatable), e.g. --set train.lr=1e-3",
    )
    p.add_argument("--config", default=None, help="YAML file of config overrides")
    p.add_argument(
        "--draws",
        default=None,
        metavar="0,1,2",
        help="train each of these random draws into the same store and decide every claim on each "
        "(confirmed or refuted only when all agree); default: one draw (0) at quick, 0,1 at paper",
    )
    _sequential(p)
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="worker processes training groups of runs, every experiment's groups in one pool "
        "(default: the CPUs this process may use; 1: train in this process)",
    )
    p.add_argument(
        "--backend",
        default=None,
        choices=BACKENDS.names(),
        help="execution backend (default local; process when --workers > 1; ray needs the [ray] extra)",
    )
    p.add_argument(
        "--address",
        default=None,
        metavar="auto|HOST:PORT",
        help="--backend ray: join this running Ray cluster (default: start a local Ray with --workers CPUs)",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch and BLAS threads in this process (default 1: tiny models run faster single-threaded, "
        "and two threads collapse when another process holds a core)",
    )
    p.add_argument(
        "--max-memory",
        type=float,
        default=None,
        metavar="MB",
        help="memory budget of one ensemble in MiB (default: at most 64 models per ensemble)",
    )
    p.add_argument(
        "--device",
        default="cpu",
        help="cpu (default) or cuda: where every experiment's ensembles train (data are drawn on the "
        "CPU, so a run draws the same data on either device)",
    )
    add_force(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar; print only the report path")
    p.add_argument(
        "--json", action="store_true", help="print the verdicts JSON to stdout instead of the table"
    )


def _sequential(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--until-decided",
        action="store_true",
        help="train draw after draw of the experiments whose claims are still open (the cheapest to decide "
        "first), re-deciding after each with anytime-valid intervals, until every claim is decided, "
        "--budget is spent or --max-draws is reached",
    )
    p.add_argument("--budget", default=None, metavar="2h|30m|90s", help="--until-decided: the time to spend")
    p.add_argument(
        "--max-draws",
        type=int,
        default=None,
        help="--until-decided: the most draws per experiment (default 50)",
    )


def _until_decided(args) -> dict | None:
    """``{"budget_s", "max_draws"}`` of ``--until-decided`` (checked before any heavy import), or None."""
    from ..until_decided import DEFAULT_MAX_DRAWS, parse_budget

    if not args.until_decided:
        for flag, value in (("--budget", args.budget), ("--max-draws", args.max_draws)):
            if value is not None:
                raise UserInputError(
                    f"The '{flag}' option needs '--until-decided'. Got {flag} {value} alone."
                )
        return None
    if args.draws is not None:
        raise UserInputError(
            "The '--until-decided' option chooses the draws itself; give it without --draws "
            f"(got --draws {args.draws})."
        )
    if args.budget is None:
        raise UserInputError("The '--until-decided' option needs a '--budget', e.g. --budget 2h, 30m or 90s.")
    max_draws = DEFAULT_MAX_DRAWS if args.max_draws is None else args.max_draws
    if max_draws < 1:
        raise UserInputError(f"The '--max-draws' option must be an int >= 1. Got {max_draws} instead.")
    return {"budget_s": parse_budget(args.budget), "max_draws": max_draws}


def add_force(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--force",
        action="store_true",
        help="write into a non-empty --out folder that holds no entropic-bound output, or over files "
        "changed since entropic-bound wrote them (nothing is ever deleted)",
    )


def add_parser(sub) -> None:
    p = sub.add_parser("run", help="run one experiment (E1…E7) and write the report")
    p.add_argument("experiment", help="experiment name (see 'entropic-bound list')")
    _common(p)
    p.set_defaults(func=_run)
    q = sub.add_parser("reproduce", help="run every experiment (or --only a few) and write the report")
    q.add_argument("--only", default=None, help="comma-separated experiments, e.g. E1,E2")
    _common(q)
    q.set_defaults(func=_reproduce)


def _check_workers(args) -> None:
    if args.max_memory is not None and not args.max_memory > 0:
        raise UserInputError(
            f"The '--max-memory' option must be a positive number of MiB. Got {args.max_memory} instead."
        )
    for flag, value in (("--workers", args.workers), ("--threads", args.threads)):
        if value is not None and value < 1:
            raise UserInputError(f"The '{flag}' option must be an int >= 1. Got {value} instead.")
    from .inspect_cmd import limit_threads

    # BLAS too: a released model's logit-field fit in this process took 4x the CPU with numpy's
    # default pool on a loaded 2-core machine (spawned workers already get one BLAS thread each)
    limit_threads(args.threads)


def _draws(args) -> tuple[int, ...] | None:
    """``--draws`` parsed (checked before any heavy import), or None when not given."""
    from ..experiments.framework.draws import parse_draws

    return None if args.draws is None else parse_draws(args.draws)


def _execute(names: list[str], overrides: dict, args, draws: tuple[int, ...] | None) -> int:
    from ..pipeline import run_experiments  # heavy: imports every experiment
    from ..until_decided import run_until_decided

    _check_workers(args)
    sequential = _until_decided(args)
    if sequential is not None and args.quiet:
        sequential["echo"] = lambda _line: None  # no look lines either
    with sweep_progress(args.quiet) as progress:
        run = run_experiments if sequential is None else partial(run_until_decided, **sequential)
        extra = {"draws": draws} if sequential is None else {}
        result = run(
            names,
            scale=args.scale,
            overrides=overrides,
            out=args.out,
            store=args.store,
            progress=progress,
            workers=args.workers,
            backend=args.backend,
            address=args.address,
            max_memory_mb=args.max_memory,
            device=args.device,
            steps=report_steps(args.quiet),
            force=args.force,
            quiet=args.quiet,
            **extra,
        )
    if not args.quiet:
        for name, s in result.summaries.items():
            print(
                f"{name}: {s.ran} run(s) trained, {s.skipped} already stored, {s.diverged} diverged "
                f"({s.cpu_s:.1f} s of training, the sum of the runs' own times; done at {s.wall_s:.1f} s)",
                file=sys.stderr,
            )
    print_outcome(result.report, as_json=args.json, quiet=args.quiet)
    return 0


def _run(args) -> int:
    from ..config_keys import check_keys, gather_overrides, strip_experiment
    from ..registry import EXPERIMENTS

    # Override keys are checked before the experiments (and torch) are imported: a typo fails at once.
    items = gather_overrides(args.assignments, args.config)
    overrides = strip_experiment(args.experiment, items, EXPERIMENTS.names())
    check_keys(args.experiment, overrides)
    draws = _draws(args)
    _until_decided(args)
    EXPERIMENTS.get(args.experiment)
    return _execute([args.experiment], {args.experiment: overrides}, args, draws)


def _reproduce(args) -> int:
    from ..config_keys import check_keys, experiment_names, gather_overrides, split_by_experiment

    items = gather_overrides(args.assignments, args.config)
    only = None if args.only is None else [n.strip() for n in args.only.split(",") if n.strip()]
    if only == []:
        raise UserInputError(
            "The '--only' option must name at least one experiment, e.g. --only E1,E2 (without it "
            f"every experiment runs). Got {args.only!r} instead."
        )
    draws = _draws(args)
    _until_decided(args)
    early = only or experiment_names()  # checked before the experiments (and torch) are imported
    if early:
        for name, keys in split_by_experiment(items, early).items():
            check_keys(name, keys)
    from ..pipeline import EXPERIMENTS

    names = only or EXPERIMENTS.names()
    for n in names:
        EXPERIMENTS.get(n)
    return _execute(names, split_by_experiment(items, names), args, draws)
