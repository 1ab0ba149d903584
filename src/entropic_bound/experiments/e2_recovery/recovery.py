"""C3's measurements: the estimator chosen on the ground truth, the rank of each run over training,
and the low-rank / recovery counts per init group.

The estimator is fixed from the config alone, before any run is read: for every ``(r*, spectrum, N)``
of the grid, the teacher's singular values (the spectrum scaled to ``||A*||_F = sqrt(n)``) and, at every
identified ``N``, ``A*`` plus the noise a least-squares fit of ``N`` samples at the runs' ``σ`` puts into
``A`` (``E = G M⁺``, ``M = [X_1 … X_N]`` the ``n × N·d`` inputs, ``G`` the noise) go to
:func:`~entropic_bound.stats.estimator_choice.choose_estimator`. The structured ``G M⁺`` replaces the
rule's isotropic noise: a learned operator carries no Marchenko–Pastur bulk, so an isotropic noise
model would favour Gavish–Donoho, which returns 0 on the learned A.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from ...spectra import estimate_all, round_estimate, singular_values
from ...stats.estimator_choice import ground_truth_cases, rule_evidence
from ...stats.transients import classify_rank_curve
from ...tasks.operators import make_spectrum
from ..framework.decision import curves_by_run
from ..framework.draws import Seeds

NOISE_DRAWS = 20  # per truth and N: the rule's choice is then the noise level's, not one sample's


def truth_spectrum(n: int, r_star: int, spectrum: str, decay: float) -> np.ndarray:
    """``A*``'s singular values, ``(n,)``: the named profile scaled to ``||A*||_F = sqrt(n)`` (the task's
    default operator norm), zeros past ``r*``."""
    s = make_spectrum(r_star, spectrum, decay=decay)
    out = np.zeros(n)
    out[:r_star] = s * np.sqrt(n) / np.linalg.norm(s)
    return out


def ls_noise(n: int, d: int, n_samples: int, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """The noise a least-squares fit of one data set puts into ``A``: ``G M⁺`` (``n × n``), ``M`` the
    ``n × N·d`` inputs and ``G`` the noise (``V*`` orthogonal: it stays iid ``σ`` in ``A``'s coordinates)."""
    M = rng.standard_normal((n, n_samples * d))
    return sigma * rng.standard_normal((n, n_samples * d)) @ np.linalg.pinv(M)


def estimator_rule(cfg, seeds: Seeds) -> dict:
    """The rule's outcome on the config's grid of truths: ``{estimator, all_match, matches (every
    estimator's share of cases), estimator_on_truth (per r*/spectrum: noiseless value and the range over
    noisy cases), noise_fraction (per identified N), rule}``.

    The noisy cases are ``A* + G M⁺`` at every *identified* N of the grid (``N·d >= n``): there the
    least-squares minimiser is unique and equals that matrix, so it is the truth at the runs' noise level.
    On under-identified data the fit is not ``A*`` plus noise (its unseen part is the init's), so those
    N add no case."""
    t = cfg.task
    counts = tuple(cfg.sample_counts)
    return _rule(t.n, t.d, t.sigma, t.decay, tuple(t.r_stars), tuple(t.spectra), counts, seeds.moved(0))


@lru_cache(maxsize=64)
def _rule(n, d, sigma, decay, r_stars, spectra, counts, seed) -> dict:
    rng = np.random.default_rng(seed)  # the noise cases move with the draw, as the runs do
    identified = [N for N in counts if N * d >= n]
    cases, labels, noise = [], [], {}
    for r in r_stars:
        for sp in spectra:
            s = truth_spectrum(n, r, sp, decay)
            cases += ground_truth_cases(np.diag(s), r)
            labels.append((f"r*={r}, {sp}", True))
            for N in identified if sigma > 0 else ():
                for _ in range(NOISE_DRAWS):
                    E = ls_noise(n, d, N, sigma, rng)
                    noise.setdefault(str(N), []).append(np.linalg.norm(E, 2) / s[0])
                    sv = singular_values(np.diag(s) + E)
                    cases.append({"singular_values": sv, "r_star": r, "shape": (n, n)})
                    labels.append((f"r*={r}, {sp}", False))
    return rule_evidence(cases, labels, noise)


def rank_statuses(cfg, rows: pd.DataFrame, key: str, records: list[dict]) -> pd.DataFrame:
    """``rows`` with ``status_rank`` (recovered / transient / not_recovered, from the rank curve over training
    where the run stored its spectra, else from the final estimate) and ``rank_curve`` (steps, estimates)."""
    curves = curves_by_run(records)
    status, trajectories = [], []
    for _, row in rows.iterrows():
        c = curves.get(row["run_id"], {})
        r_star = int(row["task.r_star"])
        if c.get("spectrum_A") and c.get("loss"):
            ranks = estimate_all(np.asarray(c["spectrum_A"], float), shape=(cfg.task.n, cfg.task.n))[key]
            floor = float(row["task.sigma"]) ** 2
            status.append(classify_rank_curve(c["step"], ranks, c["loss"], r_star, floor=floor)["status"])
            trajectories.append((list(c["step"]), [float(x) for x in ranks]))
        else:
            final = int(round_estimate(row[f"A_{key}"]))
            status.append("recovered" if final == r_star else "not_recovered")
            trajectories.append(None)
    return rows.assign(status_rank=status, rank_curve=trajectories)


def rank_over_training(g: pd.DataFrame, points: int = 6) -> dict:
    """Per (init scale, N): the median estimate at up to ``points`` of the stored checkpoints."""
    out = {}
    for (init, N), cell in g.groupby(["init_scale", "train.n_samples"]):
        curves = [c for c in cell["rank_curve"] if c is not None]
        if not curves:
            continue
        length = min(len(c[0]) for c in curves)
        idx = sorted({int(i) for i in np.linspace(0, length - 1, min(points, length))})
        med = np.median(np.array([[c[1][i] for i in idx] for c in curves]), axis=0)
        out[f"init {init:g}, N {int(N)}"] = {
            int(curves[0][0][i]): round(float(m), 3) for i, m in zip(idx, med)
        }
    return out


def status_counts(g: pd.DataFrame) -> dict:
    return {s: int((g["status_rank"] == s).sum()) for s in ("recovered", "transient", "not_recovered")}


def min_norm_operator(X: np.ndarray, Y: np.ndarray, V: np.ndarray) -> np.ndarray:
    """The minimum-norm least-squares ``A`` (``n × n``) of one data set ``Y_b = A X_b V + E_b``.

    ``X (N, n, d)``, ``Y (N, n, d_v)``, ``V (d, d_v)``: stacking the samples side by side,
    ``A [X_1 V … X_N V] = [Y_1 … Y_N]``, so ``A = Y_cat M⁺`` with ``M = [X_1 V … X_N V]`` (``n × N·d_v``).
    It is what the data alone force (the limit of GD from init 0 on this convex loss); under-identified
    data leave its rank at most ``N·d_v``."""
    M = np.concatenate(list(X @ V), axis=1)  # (n, N·d_v)
    T = np.concatenate(list(Y), axis=1)  # (n, N·d_v)
    return T @ np.linalg.pinv(M)


def min_norm_estimates(X, Y, V) -> dict[str, float]:
    """Every panel estimate of :func:`min_norm_operator`'s spectrum: ``{min_norm_<key>: value}``."""
    A = min_norm_operator(np.asarray(X, float), np.asarray(Y, float), np.asarray(V, float))
    return {f"min_norm_{k}": float(v) for k, v in estimate_all(singular_values(A), shape=A.shape).items()}
