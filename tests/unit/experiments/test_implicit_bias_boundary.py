"""C3 and C7 have one boundary: a small-minus-large contrast anywhere but on it is decided by enough
data sets, confirmed above and refuted below (synthetic rows through the real criteria)."""

from __future__ import annotations

import pandas as pd
import pytest

from entropic_bound.experiments.e2_recovery import claims as e2_claims
from entropic_bound.experiments.e2_recovery.recovery import estimator_rule as e2_rule
from entropic_bound.experiments.e5_attention_recovery import claims as e5_claims
from entropic_bound.experiments.e5_attention_recovery.recovery import estimator_rule as e5_rule
from entropic_bound.experiments.framework.draws import Seeds
from entropic_bound.experiments.framework.verdict import ClaimContext
from entropic_bound.experiments.science.names import LARGE_INIT_MIN, SMALL_INIT_MAX
from entropic_bound.pipeline import configure

SMALL, LARGE = SMALL_INIT_MAX / 10, LARGE_INIT_MIN  # one init scale per group


def _flags(share: float, m: int) -> list[bool]:
    """``m`` outcomes with exactly ``round(share·m)`` successes, spread over the data sets."""
    k = round(share * m)
    return [i * k // m != (i + 1) * k // m for i in range(m)]


def _c3_rows(key: str, small: float, large: float, m: int) -> pd.DataFrame:
    """``m`` under-identified data sets with room (minimum-norm rank 16 > r* = 2), two draws, one fitted GD
    run per init group each; a run recovers (final estimate r*) or ends at rank 6."""
    rows = []
    for init, share in ((SMALL, small), (LARGE, large)):
        for i, ok in enumerate(_flags(share, m)):
            rows.append(
                {
                    "run_id": f"{init}-{i}",
                    "draw": i % 2,
                    "seed": i // 2,
                    "train.optimizer": "gd",
                    "train_loss": 1e-3,
                    "task.sigma": 0.1,
                    "init_scale": init,
                    "identified": 0.0,
                    "task.r_star": 2,
                    "task.spectrum": "flat",
                    "train.n_samples": 2,
                    f"A_{key}": 2.0 if ok else 6.0,
                    f"min_norm_{key}": 16.0,
                }
            )
    return pd.DataFrame(rows)


def _c7_rows(key: str, small: float, large: float, m: int) -> pd.DataFrame:
    """``m`` N = 1 data sets of the linear teacher with room (minimum-norm rank 10 > r* = 2), two draws, one
    fitted run per init group each; a run recovers (r*) or ends above it (rank 10: nothing fits below)."""
    rows = []
    for init, share in ((SMALL, small), (LARGE, large)):
        for i, ok in enumerate(_flags(share, m)):
            rows.append(
                {
                    "teacher": "linear",
                    "draw": i % 2,
                    "seed": i // 2,
                    "train_loss": 1e-3,
                    "task.sigma": 0.1,
                    "init_scale": init,
                    "train.n_samples": 1,
                    "task.n": 16,
                    "task.d": 32,
                    "task.r_star": 2,
                    "task.spectrum": "flat",
                    "v": "known",
                    "rel_excess": 0.5,
                    f"K_{key}": 2.0 if ok else 10.0,
                    f"min_norm_{key}": 10.0,
                }
            )
    return pd.DataFrame(rows)


CASES = [(0.6, 0.4, "confirmed"), (0.4, 0.6, "refuted"), (0.55, 0.45, "confirmed"), (0.3, 0.4, "refuted")]
#: claim → (experiment, its estimator rule, its criterion, synthetic rows, the contrast's evidence key)
CLAIMS = {
    "C3": ("E2", e2_rule, e2_claims.verdict_c3, _c3_rows, "contrast"),
    "C7": ("E5", e5_rule, e5_claims.verdict_c7, _c7_rows, "min_contrast"),
}


def _decide(claim: str, small: float, large: float, m: int):
    """``claim`` decided by its real criterion on ``m`` synthetic data sets with the given shares."""
    experiment, rule, verdict, rows, _ = CLAIMS[claim]
    cfg = configure(experiment, "quick", {}).cfg
    key = rule(cfg, Seeds(experiment))["estimator"]
    return verdict(cfg, rows(key, small, large, m), ClaimContext(seeds=Seeds(experiment)))


@pytest.mark.parametrize("claim", sorted(CLAIMS))
@pytest.mark.parametrize("small, large, far", CASES)
def test_any_contrast_off_the_boundary_is_decided_by_enough_data_sets(claim, small, large, far):
    few, many = _decide(claim, small, large, 10), _decide(claim, small, large, 1000)
    assert few.outcome == "inconclusive" and "more data sets" in few.evidence["reason"]
    assert many.outcome == far and many.evidence["decision"]["units"] == 1000  # seeds repeat across draws
    assert many.evidence[CLAIMS[claim][-1]] == pytest.approx(small - large)


@pytest.mark.parametrize("claim", sorted(CLAIMS))
def test_a_contrast_on_the_boundary_stays_undecided(claim):
    on = _decide(claim, 0.5, 0.5, 1000)
    assert on.outcome == "inconclusive" and on.evidence["decision"]["threshold"] == 0.0
