"""Corpora: Markov entropy rates vs Monte-Carlo, stationary distributions, compression sanity, byte corpora."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from entropic_bound.errors import DataError, UnknownNameError, UserInputError
from entropic_bound.lm.corpora import (
    CORPORA,
    MarkovSource,
    compression_bits_per_char,
    load_corpus,
    markov_name,
    stdlib_files,
    text_corpus,
)

SHAKESPEARE = Path(__file__).resolve().parents[3] / "shared" / "data" / "corpora" / "tinyshakespeare.txt"


@pytest.mark.parametrize("V,k,alpha", [(4, 1, 0.3), (8, 2, 1.0), (16, 1, 0.1), (3, 3, 0.5)])
def test_entropy_rate_matches_monte_carlo(V, k, alpha):
    """Exact H vs −mean log2 P(x_t | context) over a long sample (an independent estimate)."""
    source = MarkovSource.from_seed(V, k, alpha, seed=V * 10 + k)
    tokens = source.sample(200_000, np.random.default_rng(1))
    nll = -source.log2_prob(tokens)
    mc, se = nll.mean(), nll.std() / np.sqrt(len(nll))
    assert abs(source.entropy_rate() - mc) < 6 * se + 5e-3  # loose for the chain's autocorrelation


def test_stationary_distribution_against_dense_eigenvector():
    source = MarkovSource.from_seed(5, 2, 0.4, seed=3)
    S, V = source.transitions.shape
    T = np.zeros((S, S))
    np.add.at(T, (np.repeat(np.arange(S), V), source.next_context().ravel()), source.transitions.ravel())
    w, vecs = np.linalg.eig(T.T)
    pi = np.real(vecs[:, np.argmin(np.abs(w - 1))])
    np.testing.assert_allclose(source.stationary(), pi / pi.sum(), atol=1e-12)


def test_empirical_symbol_frequencies_match_stationary():
    source = MarkovSource.from_seed(6, 1, 0.5, seed=2)
    tokens = source.sample(300_000, np.random.default_rng(0))
    freq = np.bincount(tokens, minlength=6) / len(tokens)
    np.testing.assert_allclose(freq, source.stationary(), atol=0.01)


def test_entropy_rate_limits():
    """A uniform source has H = log2 V; a nearly deterministic one has H near 0."""
    uniform = MarkovSource.from_seed(8, 1, 1.0, seed=0, smoothing=1.0)
    assert uniform.entropy_rate() == pytest.approx(3.0, abs=1e-12)
    sharp = MarkovSource.from_seed(8, 1, 1e-3, seed=0, smoothing=1e-6)
    assert sharp.entropy_rate() < 0.3
    P = MarkovSource.from_seed(6, 2, 0.3, seed=4).transitions
    rows = -(P * np.log2(P)).sum(axis=1)
    assert rows.min() <= MarkovSource(6, 2, 0.3, P).entropy_rate() <= rows.max()


def test_markov_sampling_is_seeded():
    source = MarkovSource.from_seed(4, 2, 0.5, seed=1)
    a = source.sample(500, np.random.default_rng(7))
    b = source.sample(500, np.random.default_rng(7))
    np.testing.assert_array_equal(a, b)
    assert a.min() >= 0 and a.max() < 4


def test_bad_markov_parameters():
    with pytest.raises(UserInputError, match="vocab_size"):
        MarkovSource.from_seed(1, 1, 0.5, seed=0)
    with pytest.raises(UserInputError, match="smoothing"):
        MarkovSource.from_seed(4, 1, 0.5, seed=0, smoothing=0.0)


def test_compression_random_bytes_near_eight_bits():
    data = np.random.default_rng(0).integers(0, 256, 50_000, dtype=np.uint8).tobytes()
    for codec, bits in compression_bits_per_char(data).items():
        assert 7.9 < bits < 8.2, codec


def test_compression_repeated_text_far_below():
    data = b"the quick brown fox jumps over the lazy dog. " * 2000
    for codec, bits in compression_bits_per_char(data).items():
        assert bits < 0.2, codec
    with pytest.raises(DataError):
        compression_bits_per_char(b"")


def test_registered_markov_corpus_is_deterministic_and_consistent():
    name = markov_name(16, 1, 1.0)
    assert name in CORPORA.names()
    a, b = load_corpus(name, 5_000, seed=3), load_corpus(name, 5_000, seed=3)
    np.testing.assert_array_equal(a.tokens, b.tokens)
    assert a.kind == "synthetic" and a.vocab_size == 16 and len(a.tokens) == 5_000
    assert 0 < a.entropy_rate_bits < 4.0
    # compression is an upper bound on the entropy rate, up to small-sample slack
    assert a.compression_bits > a.entropy_rate_bits - 0.1


def test_stdlib_corpus():
    files = stdlib_files()
    assert files and all(f.suffix == ".py" for f in files)
    assert not any("site-packages" in f.parts or "test" in f.parts for f in files)
    corpus = load_corpus("stdlib_code", 20_000, seed=0)
    assert len(corpus.tokens) == 20_000 and corpus.vocab_size == 256 and corpus.entropy_rate_bits is None
    assert bytes(corpus.tokens[:200].astype(np.uint8)) == files[0].read_bytes()[:200]
    assert 0.5 < corpus.compression_bits < 6


@pytest.mark.skipif(not SHAKESPEARE.is_file(), reason="tinyshakespeare not available")
def test_text_corpus_from_path():
    corpus = text_corpus(SHAKESPEARE, 30_000)
    assert corpus.name == "text:tinyshakespeare" and len(corpus.tokens) == 30_000
    assert 1.5 < corpus.compression_bits < 4.5


def test_bad_corpus_names_and_paths(tmp_path):
    with pytest.raises(UnknownNameError, match="Available"):
        load_corpus("markov_v5_k1_a1", 1_000, seed=0)
    with pytest.raises(DataError, match="does not exist"):
        text_corpus(tmp_path / "missing.txt", 100)
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(DataError, match="empty"):
        text_corpus(empty, 100)
