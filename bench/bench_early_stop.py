"""What stopping each training run at convergence would save and change, measured on stored curves.

    python bench/bench_early_stop.py --store PATH [--tol 0.1] [--min-share 0.25] [--json]

Reads a run store (read-only; another process may be writing it) and trains nothing. For every run
that stored a training curve (``curves``: ``step``, ``loss`` and a spectrum per checkpoint,
``spectrum_A`` or ``spectrum_K``), it finds the first checkpoint ``s`` at which the convergence rule
(:func:`entropic_bound.stats.convergence.convergence`, tolerance ``--tol``, window the last quarter)
applied to the curve truncated at ``s`` says "converged", and sets what the run holds there beside
what it holds at its last checkpoint (the full run).

- **Excess.** The rule reads the training loss minus the run's floor: ``metrics["noise_floor"]``
  where the run stores one (E1, E3, E4: σ², what E4's own ``converged`` reads), else σ² from the
  params' ``task.sigma`` (E2, E5: their claims set the loss against σ²), else 0 (the loss itself).
  The axis is the step, as E4's rule; E3's stored ``converged`` reads its held-out excess against
  summed learning rate instead, which this bench does not reproduce.
- **Earliest stop.** Not before a quarter of the run's budget (``train.steps``, else its last
  checkpoint): a checkpoint below ``--min-share`` (default ``MIN_SHARE``) of it is never a stop.
- **Groups.** An ensemble stops when its last member does. Membership is the experiment's own: its
  registered class's ``groups`` (``member_params``, ``seeds_share_group``, ``max_group``; no
  ``--max-memory`` chunking) applied to the stored runs, rebuilt as run specs from their params and
  seeds. An experiment not registered here is reported with each run as its own group (flagged),
  which overstates the group saving. Diverged runs are not measured (they stopped at divergence).
- **What claims read**, at the stop against the last checkpoint: the relative change of the training
  loss; the energy-threshold rank (``energy_threshold_rank``, heads averaged, rounded) at τ = 0.9
  and at τ = 0.99 (C3 and C7 read τ = 0.99 on the paper draws, the estimator their rule chose; E1's
  and E4's claims read no rank); the recovery C3 (E2) and C7 (E5) read, ``|rank − r*| <=
  c3_tolerance`` / ``c7_tolerance`` from the store's config (counted on every run, before C7's fit
  filter); and "reached the floor": training loss at or below the floor, or, for E5, C7's fit line
  ``c7_fit · max(σ², 1e-4)``. The claims' own floor numbers (E1's population, E4's held-out relative
  excess) are computed once at the end and are not in the curves: the training-loss line is their
  proxy. Runs the rule stops although their full curve reads "still improving" (a plateau they later
  left) are counted, and so are stops at the earliest checkpoint allowed (where the minimum, not the
  curve, sets the saving).

Steps saved are an upper bound on CPU saved: a step's cost differs between runs, and a stopped
member saves compute only when its whole ensemble stops or the ensemble is compacted.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from entropic_bound.errors import UserInputError
from entropic_bound.registry import EXPERIMENTS
from entropic_bound.results import RunSpec
from entropic_bound.spectra import round_estimate
from entropic_bound.spectra.estimators import energy_threshold_rank
from entropic_bound.stats.convergence import DEFAULT_TOL, convergence
from entropic_bound.store.run_store import RunStore

MIN_SHARE = 0.25  # no stop before this share of the run's budget
TAUS = (0.9, 0.99)  # energy shares of the ranks compared
FIT_FACTOR = {"E5": "c7_fit"}  # experiments whose "reached the floor" is a fit line (config key)
SPECTRA = ("spectrum_A", "spectrum_K")
#: Claims that read each run's recovery, ``|rank − r*| <= tolerance``: the experiment, the tolerance's
#: key in its verdict config and the τ of the energy-threshold rank the claim read on the paper draws.
RECOVERY = {"E2": ("c3_tolerance", 0.99), "E5": ("c7_tolerance", 0.99)}


@dataclass(frozen=True)
class RunStop:
    """One run: its budget, where the rule stops it and what changes there against the full run."""

    run_id: str
    group: tuple
    budget: int
    stop: int  # steps run under the rule (= budget when it never stops early)
    loss_change: float  # (loss at stop - final loss) / |final loss|
    rank_flips: tuple[bool, ...]  # per τ in TAUS
    floor_flip: bool
    recovery_flip: bool  # the recovery a claim reads (E2's C3, E5's C7) changes
    left_plateau: bool  # stopped early although the full curve reads "still improving"
    at_earliest: bool  # stopped at the first checkpoint the minimum allows


@dataclass(frozen=True)
class StopRule:
    """The convergence rule at tolerance ``tol``, never stopping before ``min_share`` of the budget."""

    tol: float = DEFAULT_TOL
    min_share: float = MIN_SHARE

    def earliest(self, steps: list, budget: int) -> int:
        """The first checkpoint the rule may stop at (the last one when none is past the minimum)."""
        return next((i for i, s in enumerate(steps) if i and s >= self.min_share * budget), len(steps) - 1)

    def stop_index(self, steps: list, excess: list, budget: int) -> int:
        """The first allowed checkpoint where the curve truncated there converged; else the last."""
        for i in range(self.earliest(steps, budget), len(steps)):
            if convergence(steps[: i + 1], excess[: i + 1], tol=self.tol)["converged"]:
                return i
        return len(steps) - 1


def rank_curve(spectrum: list, tau: float) -> np.ndarray:
    """The energy-threshold rank at share ``tau`` of every checkpoint's spectrum, heads averaged, rounded."""
    r = energy_threshold_rank(np.asarray(spectrum, dtype=float), tau=tau)  # (T,) or (T, heads)
    return round_estimate(r.mean(-1) if r.ndim > 1 else r)


def recovery_flip(rec: dict, config: dict | None, ranks: dict, i: int) -> bool:
    """Whether the run's recovery as its claim reads it (:data:`RECOVERY`: ``|rank − r*| <= tolerance``,
    the tolerance from the store's config) differs between checkpoint ``i`` and the last; False for
    the other experiments."""
    key, tau = RECOVERY.get(rec["experiment"], (None, None))
    tol = ((config or {}).get("verdict") or {}).get(key)
    if tol is None or "task.r_star" not in rec["params"]:
        return False
    r_star = int(rec["params"]["task.r_star"])
    return bool((abs(ranks[tau][i] - r_star) <= tol) != (abs(ranks[tau][-1] - r_star) <= tol))


def floor_of(rec: dict) -> float:
    """The floor the run's excess is measured from (module docstring)."""
    if "noise_floor" in rec["metrics"]:
        return float(rec["metrics"]["noise_floor"])
    return float(rec["params"].get("task.sigma", 0.0)) ** 2


def reached_line(rec: dict, config: dict | None) -> float:
    """The training loss at or below which the run reached its floor, as its experiment reads it."""
    key = FIT_FACTOR.get(rec["experiment"])
    factor = ((config or {}).get("verdict") or {}).get(key) if key else None
    if factor is None:
        return floor_of(rec)
    return float(factor) * max(float(rec["params"].get("task.sigma", 0.0)) ** 2, 1e-4)


def measure_run(rec: dict, group: tuple, config: dict | None, rule: StopRule) -> RunStop:
    curves = rec["curves"]
    steps, loss = [float(x) for x in curves["step"]], [float(x) for x in curves["loss"]]
    spectrum = next(curves[k] for k in SPECTRA if k in curves)
    budget = int(rec["params"].get("train.steps") or steps[-1])
    excess = [x - floor_of(rec) for x in loss]
    i = rule.stop_index(steps, excess, budget)
    stopped = i < len(steps) - 1
    line = reached_line(rec, config)
    final = loss[-1]
    ranks = {tau: rank_curve(spectrum, tau) for tau in TAUS}  # (T,) each
    return RunStop(
        run_id=rec["run_id"],
        group=group,
        budget=budget,
        stop=int(steps[i]) if stopped else budget,
        loss_change=(loss[i] - final) / abs(final) if final else 0.0,
        rank_flips=tuple(bool(ranks[tau][i] != ranks[tau][-1]) for tau in TAUS),
        floor_flip=(loss[i] <= line) != (final <= line),
        recovery_flip=recovery_flip(rec, config, ranks, i),
        left_plateau=stopped and not convergence(steps, excess, tol=rule.tol)["converged"],
        at_earliest=stopped and i == rule.earliest(steps, budget),
    )


def trained(rec: dict) -> bool:
    """A finished run with a training curve and a spectrum at every checkpoint."""
    c = rec["curves"] or {}
    spectrum = next((c[k] for k in SPECTRA if k in c), None)
    return (
        rec["status"] == "ok"
        and len(c.get("step") or ()) >= 2
        and spectrum is not None
        and len(spectrum) == len(c["step"]) == len(c.get("loss") or ())
    )


def group_keys(experiment: str, records: list[dict], scale: str | None) -> dict[str, tuple] | None:
    """``{run_id: group index}``: the ensembles the experiment's own ``groups`` forms of these runs
    (as the sweep trains them, without ``--max-memory``); None when the experiment is not registered."""
    if experiment not in EXPERIMENTS:
        return None
    cls = EXPERIMENTS.get(experiment)
    grid = cls(cls.default_config(scale if scale in cls.scale_settings else "quick"))
    specs = [RunSpec(experiment, r["params"], r["seed"]) for r in records]
    return {s.run_id: (i,) for i, group in enumerate(grid.groups(specs)) for s in group}


def saved_share(stops: list[RunStop], *, by_group: bool) -> float:
    """Share of the budgeted steps the stops save, per run or with each group held to its last member."""
    last: dict[tuple, int] = {}
    for s in stops:
        last[s.group] = max(last.get(s.group, 0), s.stop)
    ran = sum(last[s.group] if by_group else s.stop for s in stops)
    budget = sum(s.budget for s in stops)
    return 1.0 - ran / budget if budget else 0.0


def summarise(stops: list[RunStop], draws: list, skipped: int, grouped: bool) -> dict:
    """One experiment's (or all experiments') numbers."""
    early = [s for s in stops if s.stop < s.budget]
    changes = np.abs([s.loss_change for s in early]) if early else np.zeros(0)
    flips = {f"rank_{tau:g}_flips": sum(s.rank_flips[j] for s in stops) for j, tau in enumerate(TAUS)}
    any_flip = sum(any(s.rank_flips) or s.floor_flip or s.recovery_flip for s in stops)
    return {
        "runs": len(stops),
        "groups": len({s.group for s in stops}),
        "membership": "experiment's ensembles" if grouped else "unknown: each run its own group",
        "draws": draws,
        "skipped_runs": skipped,
        "stopped_early": len(early),
        "stopped_at_earliest": sum(s.at_earliest for s in stops),
        "saved_per_run": saved_share(stops, by_group=False),
        "saved_per_group": saved_share(stops, by_group=True),
        "median_abs_loss_change": float(np.median(changes)) if len(changes) else 0.0,
        "max_abs_loss_change": float(changes.max()) if len(changes) else 0.0,
        **flips,
        "floor_flips": sum(s.floor_flip for s in stops),
        "recovery_flips": sum(s.recovery_flip for s in stops),
        "runs_with_any_flip": any_flip,
        "left_plateau": sum(s.left_plateau for s in stops),
    }


def measure_experiment(store: RunStore, experiment: str, rule: StopRule) -> tuple[list[RunStop], dict] | None:
    """``(stops, summary)`` of one experiment's trained runs; None when it stored no training curve."""
    records = store.records(experiment)
    kept = [r for r in records if trained(r)]
    if not kept:
        return None
    info = store.experiment_info(experiment) or {}
    groups = group_keys(experiment, records, info.get("scale"))  # diverged runs hold their places
    alone = {r["run_id"]: (r["run_id"],) for r in kept}  # unknown membership: each run alone
    config = info.get("config")
    stops = [measure_run(r, (experiment, *(groups or alone)[r["run_id"]]), config, rule) for r in kept]
    draws = sorted({r["params"].get("draw", 0) for r in kept})
    return stops, summarise(stops, draws, len(records) - len(kept), groups is not None)


def measure(path: Path, rule: StopRule) -> dict[str, dict]:
    """``{experiment: summary, …, "all": summary}`` of the store at ``path``."""
    out, every = {}, []
    with RunStore(path, readonly=True) as store:
        for experiment in store.experiments():
            measured = measure_experiment(store, experiment, rule)
            if measured is not None:
                every += measured[0]
                out[experiment] = measured[1]
    if out:
        grouped = all(s["membership"].startswith("experiment") for s in out.values())
        skipped = sum(s["skipped_runs"] for s in out.values())
        out["all"] = summarise(every, sorted({d for s in out.values() for d in s["draws"]}), skipped, grouped)
    return out


COLUMNS = (
    ("experiment", "{}"),
    ("runs", "{:,}"),
    ("groups", "{:,}"),
    ("stopped", "{:,}"),
    ("at earliest", "{:,}"),
    ("saved/run", "{:.1%}"),
    ("saved/group", "{:.1%}"),
    ("med |Δloss|", "{:.2%}"),
    ("max |Δloss|", "{:.3g}"),
    ("rank90 flips", "{:,}"),
    ("rank99 flips", "{:,}"),
    ("floor flips", "{:,}"),
    ("recovery flips", "{:,}"),
    ("left plateau", "{:,}"),
)
FIELDS = (
    "runs",
    "groups",
    "stopped_early",
    "stopped_at_earliest",
    "saved_per_run",
    "saved_per_group",
    "median_abs_loss_change",
    "max_abs_loss_change",
    "rank_0.9_flips",
    "rank_0.99_flips",
    "floor_flips",
    "recovery_flips",
    "left_plateau",
)


def table(summaries: dict[str, dict]) -> str:
    """A Markdown table, one row per experiment and one for all."""
    head = "| " + " | ".join(name for name, _ in COLUMNS) + " |"
    rows = [head, "|" + " --- |" * len(COLUMNS)]
    for name, s in summaries.items():
        cells = [name, *(fmt.format(s[f]) for (_, fmt), f in zip(COLUMNS[1:], FIELDS))]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def notes(summaries: dict[str, dict]) -> list[str]:
    out = [f"{n}: draws {', '.join(map(str, s['draws']))}" for n, s in summaries.items() if n != "all"]
    out += [
        f"{n}: {s['skipped_runs']} run(s) not measured (diverged, or no spectrum at every checkpoint)"
        for n, s in summaries.items()
        if n != "all" and s["skipped_runs"]
    ]
    out += [
        f"{n}: group membership {s['membership']}"
        for n, s in summaries.items()
        if not s["membership"].startswith("experiment")
    ]
    return out


def arguments(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", required=True, type=Path, help="run store (SQLite), opened read-only")
    ap.add_argument("--tol", type=float, default=DEFAULT_TOL, help="the convergence rule's tolerance")
    ap.add_argument(
        "--min-share", type=float, default=MIN_SHARE, help="no stop before this share of a run's budget"
    )
    ap.add_argument("--json", action="store_true", help="print the summaries as JSON")
    return ap.parse_args(argv)


def usage_error(args: argparse.Namespace) -> str | None:
    """What is wrong with the arguments, in one line; None when nothing is."""
    if not 0 < args.tol < 1:
        return f"--tol must lie in (0, 1). Got {args.tol!r}."
    if not 0 <= args.min_share < 1:
        return f"--min-share must lie in [0, 1). Got {args.min_share!r}."
    if not args.store.is_file():
        return f"no run store at {args.store} (expected a file written by 'entropic-bound run')."
    return None


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    problem = usage_error(args)
    if problem is None:
        try:
            summaries = measure(args.store, StopRule(args.tol, args.min_share))
        except UserInputError as e:
            problem = f"{args.store} is not a readable run store: {' '.join(str(e).split())}"
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    if args.json:
        rule = {"tol": args.tol, "min_share": args.min_share}
        print(json.dumps({**rule, "experiments": summaries}, indent=1))
    elif not summaries:
        print(f"{args.store} holds no trained run with a training curve.")
    else:
        print(table(summaries))
        print("\n".join(notes(summaries)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
