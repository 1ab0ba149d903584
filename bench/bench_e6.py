"""E6's predictions per data draw: the per-cell path against the shared-statistics path, in one run.

    python bench/bench_e6.py [--teachers 1:flat,4:geometric,16:flat] [--seeds 0,3] [--json]

A slice of E6's paper grid (draw 0) runs both ways, one group (one data draw: both teachers, every
σ) at a time, the two paths alternating so that a change in the machine's load shifts both:

- *per cell*: what E6 ran before, a data draw per (teacher, σ) and ``predict_r_star`` per run
  (``experiment.predict_run``);
- *shared*: ``E6Predictability.execute``, the statistics that depend on X and V computed once per
  draw (``predict/shared_draw.py``).

The slice is every run of the named teachers (``r*:spectrum``) at the named seeds: seed 0 holds
every cell of the grid, a seed from 3 on only the decisive cells (the largest N, σ ≤ 0.01), so
together they hold every shape of group the paper grid has. The paper total is extrapolated, and
said to be: each group's CPU seconds are averaged per *shape* (its n, N and member settings, the
same for every r*, spectrum and seed) and multiplied by how many groups of that shape the paper grid
holds. The wall of ``run E6 --scale paper --workers 2`` (two draws) is estimated as the total
CPU of both draws over two workers, analysis not included. One thread (BLAS and torch), process
CPU time. Every run's discrete metrics must agree exactly; the largest differences of the others are
printed.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # before numpy loads BLAS
    os.environ[_var] = "1"

import argparse  # noqa: E402
import collections  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402

from entropic_bound.experiments.e6_predictability.experiment import (  # noqa: E402
    E6Predictability,
    by_data,
    draw,
    predict_run,
    reference_metrics,
)
from entropic_bound.experiments.framework.draws import Seeds  # noqa: E402
from entropic_bound.spectra import panel_description  # noqa: E402

TIMINGS = {"cpu_s", "timing_s"}
COUNTS = {"r_hat", "exact", "identifiable", "confident_wrong", "n_equations", "n_unknowns", "too_few_samples"}
INTEGER = tuple(k for k, v in panel_description(sigma_known=True).items() if v["integer"])
INTEGER += ("noise_calibrated_rank",)
DRAWS, WORKERS = 2, 2  # run E6 --scale paper: two draws, two workers


def shape(group) -> tuple:
    """What a group's cost depends on: n, N and its members' settings (not r*, spectrum or seed)."""
    p = group[0].params
    members = sorted(
        (s.params["teacher"], s.params["method"], s.params["v"], s.params["task.sigma"]) for s in group
    )
    return p["task.n"], p["n_samples"], tuple(members)


def per_cell(exp: E6Predictability, group) -> list:
    """The runs of ``group`` as E6 ran them before: a draw per (teacher, σ), a prediction per run."""
    results = {}
    for specs in by_data(group):
        teacher, X, Y = draw(specs[0].params, specs[0].seed, Seeds(exp.name, specs[0].draw))
        ref = reference_metrics(teacher, X)
        results.update((spec.run_id, predict_run(spec, teacher, X, Y, ref)) for spec in specs)
    return [results[spec.run_id] for spec in group]


def cpu_of(fn, *args) -> tuple[float, list]:
    start = time.process_time()
    result = fn(*args)
    return time.process_time() - start, result


def differences(old: list, new: list, apart: dict) -> None:
    """Add to ``apart`` the discrete metrics that differ, the largest relative difference of the others
    of size >= 1e-6 and the largest absolute difference of the smaller ones (the noise level of
    noiseless data is round-off itself)."""
    for a, b in zip(old, new):
        for key, x in a.metrics.items():
            y = b.metrics[key]
            if key in TIMINGS or (math.isnan(x) and math.isnan(y)) or x == y:
                continue
            if key in COUNTS or key.endswith(INTEGER):
                apart["discrete"] += 1
            elif abs(x) >= 1e-6:
                apart["relative"] = max(apart["relative"], abs(x - y) / abs(x))
            else:
                apart["absolute_below_1e-6"] = max(apart["absolute_below_1e-6"], abs(x - y))


def measure(exp: E6Predictability, groups) -> tuple[dict, dict]:
    """``(CPU s per group shape, how far the numbers are apart)``: per shape the groups measured, each
    path's CPU seconds and its runs' own ``cpu_s`` per method."""
    rows = collections.defaultdict(
        lambda: {"groups": 0, "per_cell": 0.0, "shared": 0.0, "methods": collections.Counter()}
    )
    apart = {"runs": 0, "discrete": 0, "relative": 0.0, "absolute_below_1e-6": 0.0}
    paths = [("per_cell", lambda g: per_cell(exp, g)), ("shared", exp.execute)]
    for i, group in enumerate(groups):
        row = rows[shape(group)]
        row["groups"] += 1
        results = {}
        for name, fn in paths if i % 2 == 0 else paths[::-1]:
            cpu, results[name] = cpu_of(fn, group)
            row[name] += cpu
            for res in results[name]:
                row["methods"][name, res.spec.params["method"]] += res.metrics["cpu_s"]
        differences(results["per_cell"], results["shared"], apart)
        apart["runs"] += len(group)
    return rows, apart


def extrapolate(rows: dict, paper: collections.Counter) -> dict:
    """Paper CPU s per draw: each shape's mean per group times its count in the paper grid."""
    total = collections.Counter()
    for key, count in paper.items():
        row = rows[key]
        total["per_cell"] += count * row["per_cell"] / row["groups"]
        total["shared"] += count * row["shared"] / row["groups"]
        for (path, method), cpu in row["methods"].items():
            total[f"{method} {path}"] += count * cpu / row["groups"]
    return dict(total)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--teachers", default="1:flat,4:geometric,16:flat", help="r*:spectrum list")
    parser.add_argument("--seeds", default="0,3", help="teacher seeds of the slice (default 0,3)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    torch.set_num_threads(1)
    exp = E6Predictability(E6Predictability.configure("paper"))
    teachers = {(int(r), s) for r, s in (t.split(":") for t in args.teachers.split(","))}
    seeds = {int(s) for s in args.seeds.split(",")}
    every = exp.groups(exp.specs())
    chosen = [
        g
        for g in every
        if g[0].seed in seeds and (g[0].params["task.r_star"], g[0].params["task.spectrum"]) in teachers
    ]
    rows, apart = measure(exp, chosen)
    paper = collections.Counter(shape(g) for g in every)
    missing = sum(1 for key in paper if key not in rows)
    total = extrapolate(rows, collections.Counter({k: c for k, c in paper.items() if k in rows}))
    sliced = {name: sum(row[name] for row in rows.values()) for name in ("per_cell", "shared")}
    summary = {
        "slice": {
            "teachers": sorted(teachers),
            "seeds": sorted(seeds),
            "groups": len(chosen),
            "runs": apart["runs"],
        },
        "slice_cpu_s": {**sliced, "ratio": sliced["per_cell"] / sliced["shared"]},
        "paper_predictions_per_draw": sum(len(g) for g in every),
        "paper_group_shapes_not_in_slice": missing,
        "paper_cpu_s_per_draw_extrapolated": {**total, "ratio": total["per_cell"] / total["shared"]},
        "paper_wall_s_estimate": {name: total[name] * DRAWS / WORKERS for name in ("per_cell", "shared")},
        "differences": apart,
    }
    if args.json:
        print(json.dumps(summary, indent=1))
        return
    report(summary)


def report(summary: dict) -> None:
    s, total, apart = summary["slice"], summary["paper_cpu_s_per_draw_extrapolated"], summary["differences"]
    sliced = summary["slice_cpu_s"]
    print(f"slice: {s['groups']} groups, {s['runs']} runs (teachers {s['teachers']}, seeds {s['seeds']})")
    print(
        f"slice CPU s: per cell {sliced['per_cell']:.1f}, shared {sliced['shared']:.1f}, ratio {sliced['ratio']:.2f}"
    )
    print(
        f"paper, extrapolated per group shape ({summary['paper_predictions_per_draw']} runs per draw, "
        f"{summary['paper_group_shapes_not_in_slice']} shapes not in the slice): per cell {total['per_cell']:.0f} "
        f"CPU s per draw, shared {total['shared']:.0f}, ratio {total['ratio']:.2f}"
    )
    print("  predictions' own CPU s per draw by method (per cell -> shared):")
    for method in sorted({k.split()[0] for k in total if " " in k}):
        print(f"    {method:<24}{total[f'{method} per_cell']:>8.0f} -> {total[f'{method} shared']:.0f}")
    wall = summary["paper_wall_s_estimate"]
    print(
        f"run E6 --scale paper --workers {WORKERS} ({DRAWS} draws), predictions only: per cell "
        f"{wall['per_cell']:.0f} s wall, shared {wall['shared']:.0f} s"
    )
    print(
        f"discrete metrics that differ: {apart['discrete']}; largest relative difference of the others: "
        f"{apart['relative']:.2g} (absolute below 1e-6: {apart['absolute_below_1e-6']:.2g})"
    )


if __name__ == "__main__":
    main()
