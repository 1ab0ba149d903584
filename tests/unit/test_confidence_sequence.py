"""The hedged betting confidence sequence: valid when stopped at the first of many looks that
decides (where a fixed-sample Wilson interval is not), and able to decide a share 0.1 off its bar."""

import numpy as np
import pytest

from entropic_bound.stats.cluster import wilson
from entropic_bound.stats.confidence_sequence import confidence_sequence, e_value, grid_with

BAR, LOOKS, PER_LOOK, SEQUENCES, ALPHA = 0.5, 50, 10, 1000, 0.05


def _units(share: float, seed: int) -> np.ndarray:
    """(SEQUENCES, LOOKS * PER_LOOK) Bernoulli units."""
    rng = np.random.default_rng(seed)
    return (rng.random((SEQUENCES, LOOKS * PER_LOOK)) < share).astype(float)


def _cs_at_looks(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) (SEQUENCES, LOOKS) of the confidence sequence, in chunks (memory)."""
    grid = grid_with([BAR], breaks=100)
    looks = np.arange(1, LOOKS + 1) * PER_LOOK - 1
    parts = [confidence_sequence(chunk, ALPHA, grid) for chunk in np.array_split(x, 8)]
    return (
        np.concatenate([lo[:, looks] for lo, _ in parts]),
        np.concatenate([hi[:, looks] for _, hi in parts]),
    )


def _wilson_at_looks(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    k = np.cumsum(x, axis=1)[:, PER_LOOK - 1 :: PER_LOOK].astype(int)  # (SEQUENCES, LOOKS)
    n = np.arange(1, LOOKS + 1) * PER_LOOK
    n = np.broadcast_to(n, k.shape)
    pairs, where = np.unique(np.stack([k.ravel(), n.ravel()], axis=1), axis=0, return_inverse=True)
    bounds = np.array([wilson(int(kk), int(nn), 1 - ALPHA) for kk, nn in pairs])[where.ravel()]  # (S*L, 2)
    return bounds[:, 0].reshape(k.shape), bounds[:, 1].reshape(k.shape)


def _decided(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Per sequence: +1 confirmed, −1 refuted at the first look whose interval clears the bar, 0 never."""
    confirm, refute = lower >= BAR, upper <= BAR  # (SEQUENCES, LOOKS)
    first = np.argmax(confirm | refute, axis=1)
    rows = np.arange(len(lower))
    out = np.where(confirm[rows, first], 1, np.where(refute[rows, first], -1, 0))
    return out


@pytest.fixture(scope="module")
def on_the_bar() -> np.ndarray:
    return _units(BAR, seed=0)


def test_stopped_at_the_first_deciding_look_the_sequence_errs_at_most_its_level(on_the_bar):
    wrong = np.mean(_decided(*_cs_at_looks(on_the_bar)) != 0)  # on the bar every decision is wrong
    assert wrong <= ALPHA, wrong


def test_the_same_stopping_with_a_wilson_interval_exceeds_the_level(on_the_bar):
    # negative control: the fixed-sample interval looked at 50 times is not valid when stopped early
    wrong = np.mean(_decided(*_wilson_at_looks(on_the_bar)) != 0)
    assert wrong > 2 * ALPHA, wrong


def test_a_share_a_tenth_above_the_bar_is_confirmed_in_most_sequences():
    decided = _decided(*_cs_at_looks(_units(BAR + 0.1, seed=1)))
    assert np.mean(decided == 1) > 0.5, np.mean(decided == 1)
    assert np.mean(decided == -1) <= ALPHA / 2


def test_the_sequence_narrows_and_covers_the_running_mean():
    x = _units(0.3, seed=2)[0]
    lower, upper = confidence_sequence(x, ALPHA)
    assert np.all(np.diff(lower) >= 0) and np.all(np.diff(upper) <= 0)
    assert upper[-1] - lower[-1] < upper[9] - lower[9]
    assert lower[-1] <= x.mean() <= upper[-1]


def test_the_e_value_grows_against_a_false_bar_and_not_against_a_true_one():
    x = _units(0.7, seed=3)[0]
    assert e_value(x, 0.5, ALPHA, above=True) > 2 / ALPHA  # mean 0.7 is far above 0.5
    assert e_value(x, 0.5, ALPHA, above=False) < 1
    assert np.isnan(e_value(x, 0.0))
