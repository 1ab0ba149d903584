"""E6 — the data-only predictability frontier: can r* be read from ``(X, Y)`` without training? (C9, C10, X1)

No student is trained. For every teacher draw and data set the predictors of
:mod:`entropic_bound.predict` are applied, each in the setting it is meant for:

| method | teachers | V |
| --- | --- | --- |
| ``linear_v_known`` (least squares for K) | linear | known |
| ``linear_v_unknown`` (V eliminated by ``pinv(X_i) Y_i``) | linear | unknown |
| ``softmax_linearised`` (the paper's estimators, C10) | linear, softmax | known, unknown |
| ``softmax_log_attention`` (exact where identifiable, X1) | softmax | known, unknown |

(``softmax_log_attention`` without V, or with ``n > min(d, d_v)``, is outside its domain; it is run
anyway so that E6 shows it answers "not identifiable" there instead of a confident wrong number.)

One run = one prediction ``(teacher, method, V setting, r*, N, σ, spectrum, n, seed)``. All the runs
on one data draw form a group: the teacher ``K*, V*`` depends on ``(n, d, d_v, r*, spectrum, decay,
c, seed)`` only (not on ``N``, ``σ`` or the teacher kind, so the linear and the softmax teacher share
``K*``, ``V*`` and inputs ``X``), the data on that and ``N``; the noise is drawn even at ``σ = 0``, so
``Y = f*(X) + σE`` shares ``E`` across σ. What the predictors compute from ``X`` and ``V`` alone is
computed once per group (:mod:`entropic_bound.predict.shared_draw`); each run's numbers are those of
``predict_r_star`` on its own data up to float64 round-off (:func:`predict_run`, the per-cell path,
is kept as the reference the tests and ``bench/bench_e6.py`` compare with). Draws at different N
are independent (their data seeds differ), so nothing is shared across N.

Teachers are the project's tasks, ``Y = (X K* Xᵀ/√d) X V*/n`` (linear) and
``Y = softmax(X K* Xᵀ/√d) X V*`` (softmax): the predictors accept any scale of K, so both are in
their class. The (N, σ) cells are two slices — the N sweep at ``task.sigma_ref`` and the σ sweep at the
largest N — or, with ``full_grid``, their product.
"""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import torch

from ...predict import predict_r_star
from ...predict.data import check_arrays
from ...predict.shared_draw import DrawStatistics, predict_on_draw
from ...registry import TASKS
from ...results import RunResult, RunSpec
from ...spectra import energy_effective_rank, estimate_all
from ...tasks import ATTENTION_TEACHERS
from ..framework.base import Experiment
from ..framework.draws import Seeds
from ..framework.parts import parts_of
from . import analysis, claims, config
from .analysis import prepare
from .config import METHOD_SETTINGS, PREDICT_TEACHER, E6Config

MIXER_INPUTS = 64  # inputs for the teacher's own realised-mixer energy rank
#: The methods C9 (linear teacher) and X1 (softmax teacher) decide exactness and flagging on.
DECISIVE_METHODS = ("linear_v_known", "linear_v_unknown", "softmax_log_attention")


def cells(cfg: E6Config) -> list[tuple[int, float]]:
    """The ``(N, σ)`` pairs of the grid: two slices through ``(max N, sigma_ref)``, or their product."""
    sigmas = sorted(set(cfg.task.sigmas) | {cfg.task.sigma_ref})
    if cfg.full_grid:
        return sorted(itertools.product(sorted(set(cfg.sample_counts)), sigmas))
    n_max = max(cfg.sample_counts)
    return sorted({(N, cfg.task.sigma_ref) for N in cfg.sample_counts} | {(n_max, s) for s in sigmas})


def settings(cfg: E6Config) -> list[tuple[str, str, str]]:
    """``(teacher, method, v)`` triples run by this config (see :data:`METHOD_SETTINGS`)."""
    return [
        (kind, m, v)
        for kind in cfg.task.teachers
        for m in cfg.methods
        for v in cfg.v_settings
        if kind in METHOD_SETTINGS[m][0] and v in METHOD_SETTINGS[m][1]
    ]


def blocks(cfg: E6Config) -> list[tuple[tuple[str, str, str], int, tuple[int, float], tuple[int, ...]]]:
    """``(setting, n, (N, σ), r*s)`` blocks of the grid: every setting at every n of ``task.ns`` and
    cell; X1's further n (softmax_log_attention at the largest N and ``sigma_ref``); C10 (d)'s further
    n (softmax_linearised at the largest N and every σ <= ``verdict.sigma_max``, r* of ``c10_r_stars``)."""
    t, n_max = cfg.task, max(cfg.sample_counts)
    out = [(s, n, cell, t.r_stars) for s in settings(cfg) for n in t.ns for cell in cells(cfg)]
    out += [
        (s, n, (n_max, t.sigma_ref), t.r_stars)
        for s in settings(cfg)
        for n in cfg.x1_ns
        if n not in t.ns and s[1] == "softmax_log_attention"
    ]
    sigmas = sorted(x for x in set(t.sigmas) | {t.sigma_ref} if x <= cfg.verdict.sigma_max + 1e-12)
    c10_r_stars = tuple(r for r in cfg.c10_r_stars if r <= t.d)  # a tiny d keeps its own grid
    out += [
        (s, n, (n_max, sigma), c10_r_stars)
        for s in settings(cfg)
        for n in cfg.c10_ns
        if n not in t.ns and s[1] == "softmax_linearised" and len(c10_r_stars) >= 2
        for sigma in sigmas
    ]
    return out


def block_seeds(cfg: E6Config, method: str, v: str, n: int, N: int, sigma: float) -> range:
    """Seeds of one block: ``decisive_seeds`` where C9 or X1 decide (their methods, the main grid's n,
    the largest N, σ <= ``verdict.sigma_max``) when that is more than ``seeds``; ``seeds`` elsewhere.
    Inside X1's domain its further n pools with the main grid's n per r*, so only its V-unknown cell
    (flagged, decided per n) needs them there. The first ``seeds`` are the same runs either way, so
    raising it only adds teacher draws."""
    decisive = (
        method in DECISIVE_METHODS
        and (n in cfg.task.ns or v == "unknown")
        and N == max(cfg.sample_counts)
        and sigma <= cfg.verdict.sigma_max + 1e-12
    )
    return range(max(cfg.seeds, cfg.decisive_seeds) if decisive else cfg.seeds)


class E6Predictability(Experiment):
    config_class, scale_settings, declared_claims, analysis_function = parts_of(config, claims, analysis)
    run_cost, analysis_cost = 0.055, 12.9  # CPU s at quick scale (bench/profile_reproduce.py)
    title = "Data-only predictability frontier"
    # one data draw: both teachers and every σ share K*, V* and X (see draw), so the predictors share
    # what depends on X and V alone (predict.shared_draw)
    member_params = ("method", "v", "teacher", "task.sigma")
    devices = ("cpu",)  # nothing trains here: the predictors are closed-form float64 numpy
    max_group = 256

    def prepare(self, table, ok, records, seeds):
        return prepare(self.cfg, ok, records)

    def specs(self) -> list[RunSpec]:
        c, t = self.cfg, self.cfg.task
        out = []
        for (kind, method, v), n, (N, sigma), r_stars in blocks(c):
            for r_star, spectrum in itertools.product(r_stars, t.spectra):
                params = {
                    "teacher": kind,
                    "method": method,
                    "v": v,
                    "task.n": n,
                    "task.d": t.d,
                    "task.d_v": t.d_v,
                    "task.r_star": r_star,
                    "task.spectrum": spectrum,
                    "task.decay": t.decay,
                    "task.c": t.c,
                    "task.sigma": sigma,
                    "n_samples": N,
                }
                out.extend(
                    RunSpec(self.name, params, seed) for seed in block_seeds(c, method, v, n, N, sigma)
                )
        return out

    def execute(self, group: list[RunSpec]) -> list[RunResult]:
        seeds, shared, results = Seeds(self.name, group[0].draw), [], {}
        for specs in by_data(group):  # one (teacher, σ) at a time: its Y is dropped after its runs
            teacher, X, Y = draw(specs[0].params, specs[0].seed, seeds)
            X, Y, V = check_arrays(X, Y, teacher.V.numpy())
            ref, stats = reference_metrics(teacher, X), statistics_of(shared, X, V)
            results.update((spec.run_id, predict_shared(spec, teacher, Y, ref, stats)) for spec in specs)
        return [results[spec.run_id] for spec in group]


def by_data(group: list[RunSpec]) -> list[list[RunSpec]]:
    """The runs of a group per data set ``(teacher, σ)``, in the order each first appears."""
    out: dict[tuple, list[RunSpec]] = {}
    for spec in group:
        out.setdefault((spec.params["teacher"], spec.params["task.sigma"]), []).append(spec)
    return list(out.values())


def statistics_of(known: list[DrawStatistics], X: np.ndarray, V: np.ndarray) -> DrawStatistics:
    """The :class:`DrawStatistics` of ``X``, ``V`` among ``known`` (added when new)."""
    found = next((s for s in known if s.holds(X, V)), None)
    if found is None:
        found = DrawStatistics(X, V)
        known.append(found)
    return found


def _task_params(p: dict) -> dict:
    return {k[5:]: v for k, v in p.items() if k.startswith("task.")}


def draw(p: dict, seed: int, seeds: Seeds):
    """``(teacher, X (N, n, d), Y (N, n, d_v))`` float64 numpy for one group's params ``p``, from the
    seeds of the group's draw."""
    task_params = _task_params(p)
    task = TASKS.build(ATTENTION_TEACHERS[p["teacher"]], **task_params)
    shared = sorted((k, v) for k, v in task_params.items() if k != "sigma")  # same K*, V* across σ, N, kind
    teacher = task.teacher(torch.Generator().manual_seed(seeds.seed("teacher", shared, seed)))
    gen = torch.Generator().manual_seed(seeds.seed("data", shared, p["n_samples"], seed))
    batch = teacher.sample(p["n_samples"], gen, dtype=torch.float64)
    return teacher, batch.X.numpy(), batch.Y.numpy()


def reference_metrics(teacher, X: np.ndarray) -> dict[str, float]:
    """The ground truth's own numbers: every estimator on ``K*``'s spectrum (``true_<key>``), the
    teacher's realised-mixer energy rank on up to :data:`MIXER_INPUTS` inputs (per input, averaged, and of
    the mean mixer), and (softmax) saturation."""
    d = teacher.d
    true = estimate_all(teacher.truth["singular_values"], shape=(d, d))
    out = {f"true_{k}": float(v) for k, v in true.items()}
    Xm = torch.from_numpy(X[:MIXER_INPUTS])
    M = teacher.mixer(Xm)  # (m, n, n)
    out["teacher_mixer_energy_rank"] = float(np.mean(energy_effective_rank(torch.linalg.svdvals(M).numpy())))
    out["teacher_meanmixer_energy_rank"] = float(
        energy_effective_rank(torch.linalg.svdvals(M.mean(0)).numpy())
    )
    sat = teacher.saturation(Xm) if hasattr(teacher, "saturation") else {}
    out["row_entropy_ratio"] = float(sat.get("row_entropy_ratio", math.nan))
    out["mean_max_attention"] = float(sat.get("mean_max_attention", math.nan))
    return out


def predict_run(spec: RunSpec, teacher, X: np.ndarray, Y: np.ndarray, ref: dict) -> RunResult:
    """One prediction by :func:`predict_r_star` on its own: the per-cell reference of
    :func:`predict_shared` (tests and bench/bench_e6.py compare the two)."""
    p = spec.params
    wall0, cpu0 = time.perf_counter(), time.process_time()
    pred = predict_r_star(
        X,
        Y,
        teacher=PREDICT_TEACHER[p["teacher"]],
        V=teacher.V.numpy() if p["v"] == "known" else None,
        method=p["method"],
        seed=run_seed(spec),
        check_fit=False,  # the teacher-class check is for a user's data; E6 knows its teacher's class
    )
    return run_result(spec, teacher, pred, ref, time.process_time() - cpu0, wall0)


def predict_shared(spec: RunSpec, teacher, Y: np.ndarray, ref: dict, stats: DrawStatistics) -> RunResult:
    """One prediction from the statistics its data draw shares with the group's other runs."""
    p = spec.params
    wall0, cpu0 = time.perf_counter(), time.process_time()
    pred = predict_on_draw(stats, Y, method=p["method"], v_known=p["v"] == "known", seed=run_seed(spec))
    return run_result(spec, teacher, pred, ref, time.process_time() - cpu0, wall0)


def run_seed(spec: RunSpec) -> int:
    """The seed of a prediction's noise simulation and held-out split."""
    return Seeds("E6", spec.draw).of_run("cut", spec.run_id)


def run_result(spec: RunSpec, teacher, pred, ref: dict, cpu: float, wall0: float) -> RunResult:
    """The stored result: metrics hold ``r_hat``, ``exact``, the flags, every estimate (``est_<key>``)
    and timing."""
    exact = pred.r_hat == spec.params["task.r_star"]
    metrics = {
        "r_hat": pred.r_hat,
        "exact": float(exact),
        "identifiable": float(pred.identifiable),
        "confident_wrong": float(pred.identifiable and not exact),
        "margin": pred.margin,
        "noise_level": pred.noise_level,
        "kernel_noise": pred.kernel_noise,
        "threshold": pred.threshold,
        "timing_s": pred.timing_s,
        "cpu_s": cpu,
        "n_equations": pred.n_equations,
        "n_unknowns": pred.n_unknowns,
        "too_few_samples": float(pred.too_few_samples),
        **{f"est_{k}": v for k, v in pred.estimates.items()},
        **ref,
    }
    curves = {
        "reason": pred.reason,
        "singular_values": pred.singular_values,
        "true_singular_values": [float(s) for s in teacher.truth["singular_values"]],
    }
    return RunResult(spec, "ok", metrics, curves, None, time.perf_counter() - wall0)
