"""``--until-decided``: train draw after draw of the experiments whose claims are still open.

Each look trains one more draw (the next unused draw number, into the same store) of one experiment
and re-decides its claims sequentially (:mod:`.experiments.framework.sequential`): a share's
confidence sequence may be looked at after every draw, a claim without one is decided once at its
planned units. The experiment looked at next is the one whose cheapest open claim is expected to be
decided for the least CPU (the units it still needs × the CPU seconds per unit, from its ``power``).
The command stops when every claim is decided, the budget is spent (no look starts that the last
look of the same experiment says would overrun it), or an experiment reaches ``max_draws``.

A store already holding an ``--until-decided`` experiment resumes from its draws: the first look
trains nothing new.
"""

from __future__ import annotations

import math
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from .errors import UserInputError
from .names import SCALE_DRAWS

_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0}
_BUDGET = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*(h|m|s)\s*$")

#: the draws one experiment may reach under ``--until-decided`` unless ``--max-draws`` says otherwise
DEFAULT_MAX_DRAWS = 50


def parse_budget(text: str) -> float:
    """``"2h"``, ``"30m"``, ``"90s"`` → seconds (> 0); else one line (exit 2)."""
    match = _BUDGET.match(str(text))
    seconds = float(match.group(1)) * _UNITS[match.group(2)] if match else 0.0
    if not seconds > 0:
        raise UserInputError(
            f"The '--budget' option must be a positive time with a unit h, m or s, e.g. --budget 2h, "
            f"30m or 90s. Got {text!r} instead."
        )
    return seconds


def _stored_draws(store_path, name: str, scale: str) -> list[int] | None:
    """The draws of an earlier ``--until-decided`` command on ``name`` at ``scale`` in the store."""
    from .store.run_store import RunStore, is_run_store

    if not (store_path.is_file() and is_run_store(store_path)):
        return None
    with RunStore(store_path, readonly=True) as store:
        info = store.experiment_info(name)
    if info is None or info["sequential"] is None or info["scale"] != scale:
        return None
    return list(info["draws"])


def open_claims(analysis) -> list:
    """The verdicts more draws could still decide (sequential stop not yet given)."""
    return [v for v in analysis.verdicts if (v.evidence.get("sequential") or {}).get("stop") is None]


def expected_cost(verdict) -> float:
    """CPU seconds expected before ``verdict`` is decided (inf where its power does not say)."""
    power = verdict.evidence.get("power") or {}
    more = power.get("more_units")
    per_unit = power.get("cpu_s_per_unit")
    return math.inf if more is None or per_unit is None else float(more) * float(per_unit)


def look_line(name: str, look: int, draws: Sequence[int], verdict) -> str:
    """One progress line: the claim's current interval and the units it still expects."""
    seq, d = verdict.evidence["sequential"], verdict.evidence.get("decision") or {}
    power = verdict.evidence.get("power") or {}
    units = seq["units"][-1] if seq.get("units") else "?"
    if "interval" in seq:
        lo, hi = seq["interval"]
        now = f"interval [{lo:.3g}, {hi:.3g}] at {units} units (bar {d.get('threshold', math.nan):.3g})"
    else:
        now = f"{units} of its {seq.get('planned_units')} planned units"
    needed = power.get("units_needed")
    more = (
        f"≈ {max(0, needed - int(units))} more units expected"
        if needed and units != "?"
        else "units needed unknown"
    )
    return f"{name} look {look} (draws {','.join(map(str, draws))}): {verdict.claim} {now}; {more}"


def run_until_decided(
    names: Sequence[str],
    *,
    budget_s: float,
    max_draws: int = DEFAULT_MAX_DRAWS,
    scale: str = "quick",
    echo: Callable[[str], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
    **pipeline_kwargs,
):
    """Looks until every claim of ``names`` is decided, ``budget_s`` is spent or no draws are left;
    returns the last look's :class:`~.pipeline.PipelineResult` with every look's runs summed and the
    report rewritten with each experiment's stopping reason. ``pipeline_kwargs`` go to
    :func:`~.pipeline.run_experiments` (out, store, overrides, workers …)."""
    from .pipeline import report, resolve_paths

    echo = echo or (lambda line: print(line, file=sys.stderr))
    start = clock()
    _, store_path = resolve_paths(pipeline_kwargs.get("out"), pipeline_kwargs.get("store"))
    overrides = pipeline_kwargs.pop("overrides", None) or {}
    draws = {n: _stored_draws(store_path, n, scale) or list(SCALE_DRAWS[scale]) for n in names}
    todo, expected, look_s, looks = list(names), {n: 0.0 for n in names}, {n: 0.0 for n in names}, {}
    stop, summaries, result = {}, {}, None
    while todo:
        name = min(todo, key=lambda n: expected[n])
        if clock() - start + look_s[name] > budget_s:
            stop.update({n: "budget" for n in todo})
            break
        t0 = clock()
        result = _look(name, draws[name], scale, overrides.get(name), pipeline_kwargs)
        look_s[name] = clock() - t0
        summaries[name] = _summed(summaries.get(name), result.summaries[name])
        looks[name] = looks.get(name, 0) + 1
        still = open_claims(result.analysed[name][2])
        for v in still:
            echo(look_line(name, looks[name], draws[name], v))
        if not still or len(draws[name]) >= max_draws:
            stop[name] = "decided" if not still else "no draws left"
            todo.remove(name)
            continue
        draws[name] = draws[name] + [max(draws[name]) + 1]
        expected[name] = min(map(expected_cost, still))
    _record_stops(store_path, stop)
    page = report(
        pipeline_kwargs.get("out"), pipeline_kwargs.get("store"), force=pipeline_kwargs.get("force", False)
    )
    return replace(result, summaries=summaries, report=page)


def _look(name: str, draws: list[int], scale: str, overrides: dict | None, pipeline_kwargs: dict):
    """Train ``draws`` of ``name`` (those not stored yet) and decide its claims sequentially."""
    from .pipeline import run_experiments

    return run_experiments(
        [name],
        scale=scale,
        overrides={name: overrides or {}},
        draws=draws,
        sequential={"stop": None},
        write=False,
        **pipeline_kwargs,
    )


def _summed(before, now):
    """Two looks' sweep summaries of one experiment as one (runs trained and seconds add up)."""
    if before is None:
        return now
    return replace(
        now,
        skipped=before.skipped,
        ran=before.ran + now.ran,
        diverged=before.diverged + now.diverged,
        wall_s=before.wall_s + now.wall_s,
        cpu_s=before.cpu_s + now.cpu_s,
    )


def _record_stops(store_path, stop: dict[str, str]) -> None:
    """Each experiment's stopping reason into the store, for the report and a later ``report``."""
    from .store.run_store import RunStore

    with RunStore(store_path) as store:
        for name, why in stop.items():
            info = store.experiment_info(name)
            if info is not None and info["sequential"] is not None:
                store.put_experiment(name, info["scale"], info["config"], info["draws"], {"stop": why})
