"""Corpora: exact entropy rates vs Monte-Carlo, k-gram estimates vs the truth, kinds, shipped data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from entropic_bound.errors import DataError, UnknownNameError, UserInputError
from entropic_bound.language_models.corpora.catalogue import (
    CORPORA,
    corpus_kind,
    corpus_role,
    expected_mixing,
    load_corpus,
    markov_name,
    pydoc_prose_text,
    stdlib_files,
    text_corpus,
)
from entropic_bound.language_models.corpora.complexity import (
    compression_bits_per_char,
    kgram_heldout_bits,
    order_estimate,
)
from entropic_bound.language_models.corpora.docstrings import (
    PACKAGE_TEXTS,
    docstring_bytes,
    prose,
    source_version,
)
from entropic_bound.language_models.corpora.sources import MarkovSource, RecallSource

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
    name = markov_name(16, 2, 1.0)
    assert name in CORPORA.names()
    a, b = load_corpus(name, 5_000, seed=3), load_corpus(name, 5_000, seed=3)
    np.testing.assert_array_equal(a.tokens, b.tokens)
    assert a.kind == "synthetic" and a.mixing_demand == 2 and len(a.tokens) == 5_000 and a.tokens.max() < 16
    assert 0 < a.entropy_rate_bits < 4.0
    # compression is an upper bound on the entropy rate, up to small-sample slack
    assert min(a.compression.values()) > a.entropy_rate_bits - 0.1


def test_stdlib_corpus():
    files = stdlib_files()
    assert files and all(f.suffix == ".py" for f in files)
    assert not any("site-packages" in f.parts or "test" in f.parts for f in files)
    corpus = load_corpus("stdlib_code", 20_000, seed=0)
    assert len(corpus.tokens) == 20_000 and corpus.kind == "code" and corpus.entropy_rate_bits is None
    assert bytes(corpus.tokens[:200].astype(np.uint8)) == files[0].read_bytes()[:200]
    assert 0.5 < min(corpus.compression.values()) < 6


@pytest.mark.skipif(not SHAKESPEARE.is_file(), reason="tinyshakespeare not available")
def test_text_corpus_from_path():
    corpus = text_corpus(SHAKESPEARE, 30_000)
    assert corpus.name == "text:tinyshakespeare" and len(corpus.tokens) == 30_000 and corpus.kind == "natural"
    assert 1.5 < min(corpus.compression.values()) < 4.5
    shipped = load_corpus("tinyshakespeare", 30_000, seed=0)  # the package data is the same text
    np.testing.assert_array_equal(shipped.tokens, corpus.tokens)


def test_bad_corpus_names_and_paths(tmp_path):
    with pytest.raises(UnknownNameError, match="Available"):
        load_corpus("markov_v16_k1_a1", 1_000, seed=0)  # order 1 has no mixing demand worth the name
    with pytest.raises(DataError, match="does not exist"):
        text_corpus(tmp_path / "missing.txt", 100)
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(DataError, match="empty"):
        text_corpus(empty, 100)


def test_shipped_shakespeare_is_the_whole_public_domain_file():
    import gzip
    import hashlib
    from importlib import resources

    packed = resources.files("entropic_bound.language_models.corpora").joinpath(
        "data", "tinyshakespeare.txt.gz"
    )
    data = gzip.decompress(packed.read_bytes())
    assert hashlib.sha256(data).hexdigest().startswith("86c4e6aa9db7c042")
    assert resources.files("entropic_bound.language_models.corpora").joinpath("data", "SOURCES.md").is_file()


def test_pydoc_prose_is_english_prose():
    text = pydoc_prose_text()
    assert len(text) > 100_000 and "\n\n\n" not in text
    assert not any(line.startswith(" ") for line in text.splitlines())
    words = text.split()
    assert sum(w.lower() in {"the", "of", "is", "a", "to"} for w in words) / len(words) > 0.08
    corpus = load_corpus("pydoc_prose", 5_000, seed=0)
    assert corpus.kind == "natural" and len(corpus.tokens) == 5_000


@pytest.mark.parametrize("name", sorted(PACKAGE_TEXTS))
def test_docstring_corpora_are_english_prose_of_an_installed_package(name):
    data, source = docstring_bytes(name, 60_000)
    text = data.decode("utf-8", errors="replace")
    assert len(data) == 60_000 and "\n\n\n" not in text and source_version(name) in source
    lines = text.splitlines()
    assert not any(line.startswith((" ", ">>>")) for line in lines)
    words = text.split()
    assert sum(w.lower() in {"the", "of", "is", "a", "to"} for w in words) / len(words) > 0.05
    corpus = load_corpus(name, 5_000, seed=0)
    assert corpus.kind == "natural" and corpus_role(name).role == "natural" and len(corpus.tokens) == 5_000
    assert PACKAGE_TEXTS[name].licence  # named here and in lm/data/SOURCES.md


def test_docstring_prose_drops_doctests_directives_and_rules():
    doc = "Add two numbers.\n\n    Examples\n    --------\n    >>> add(1, 2)\n    3\n    ... more\n.. note::\n\n\n\nEnd."
    assert prose(doc) == "Add two numbers.\n\nExamples\n3\n\nEnd."


def test_docstring_sources_are_listed_in_the_shipped_sources_file():
    from importlib import resources

    listed = (
        resources.files("entropic_bound.language_models.corpora").joinpath("data", "SOURCES.md").read_text()
    )
    assert all(f"`{name}`" in listed and PACKAGE_TEXTS[name].licence in listed for name in PACKAGE_TEXTS)


@pytest.mark.parametrize("name", CORPORA.names())
def test_corpus_kind_without_loading_matches_the_corpus(name):
    corpus = load_corpus(name, 2_000, seed=0)
    assert corpus_kind(name) == corpus.kind == corpus.role.kind
    assert (corpus.mixing_demand is not None) == (corpus.kind == "synthetic")
    # a control is a synthetic source of known routing: the mixing its models must show is stated
    assert (corpus.role.role == "control") == bool(expected_mixing(name)) <= (corpus.kind == "synthetic")
    assert corpus.role.role in {corpus.kind, "control"}
    assert corpus.tokens.min() >= 0 and corpus.tokens.max() < 256


def test_corpus_roles_name_the_controls_and_what_they_must_show():
    assert corpus_role("mqar-p2r").expected_mixing == ("content",) and corpus_role("mqar-p2r").recall_control
    assert corpus_role("lagcopy-L4").expected_mixing == ("positional", "local")
    assert corpus_role(markov_name(4, 3, 0.1)).expected_mixing == ("local",)
    assert corpus_role("recall_m2").role == "synthetic" and not corpus_role("recall_m2").recall_control
    assert not corpus_role("shakespeare-kgram3").exact_target and corpus_role("tinyshakespeare").exact_target
    assert corpus_role("text:letters").role == "natural" and expected_mixing("minilm") == ()
    with pytest.raises(UnknownNameError, match="tinyshakespeare"):
        corpus_role("tinyshakespear")


@pytest.mark.parametrize("m", [1, 3, 8])
def test_recall_entropy_rate_matches_monte_carlo_and_the_rules(m):
    """Closed form (lgamma over episodes) vs −mean log2 P(x_t | past) from the per-position rules."""
    source = RecallSource(m, n_keys=12, n_values=5)
    tokens = source.sample(60_000, np.random.default_rng(m))
    L = source.episode_len
    nll = -source.log2_prob(tokens[: (len(tokens) // L) * L])
    assert nll.mean() == pytest.approx(source.entropy_rate(), rel=1e-9)  # whole episodes: exact
    ep = tokens[: (len(tokens) // L) * L].reshape(-1, L)
    keys, values = ep[:, 1 : 2 * m + 1 : 2], ep[:, 2 : 2 * m + 2 : 2]
    assert (ep[:, 0] == 0).all() and all(len(set(r)) == m for r in keys.tolist())
    answer = values[np.arange(len(ep)), (keys == ep[:, -2:-1]).argmax(axis=1)]
    np.testing.assert_array_equal(answer, ep[:, -1])


def test_recall_entropy_by_counting_small_case():
    """m = 2 keys of 3 and 2 values: 3·2 key orders · 2² values · 2 queries = 48 equiprobable episodes."""
    source = RecallSource(2, n_keys=3, n_values=2)
    assert source.episode_bits() == pytest.approx(np.log2(48))
    assert source.entropy_rate() == pytest.approx(np.log2(48) / 7)
    with pytest.raises(UserInputError):
        RecallSource(5, n_keys=3)


@pytest.mark.parametrize("V,k", [(8, 2), (4, 3)])
def test_kgram_estimate_approaches_the_entropy_rate_and_finds_the_order(V, k):
    source = MarkovSource.from_seed(V, k, 1.0, seed=5)
    tokens = source.sample(120_000, np.random.default_rng(0))
    bits = kgram_heldout_bits(tokens[:100_000], tokens[100_000:], 256, max_order=4)
    assert min(bits.values()) == pytest.approx(source.entropy_rate(), abs=0.05)
    assert order_estimate(bits) == k
    assert bits[0] > bits[k] + 0.05  # the order-0 model misses the dependence


def test_kgram_order0_is_the_smoothed_unigram():
    rng = np.random.default_rng(1)
    train, held = rng.integers(0, 4, 5_000), rng.integers(0, 4, 1_000)
    counts = np.bincount(train[3:], minlength=4)
    p = (counts + 4 / 256) / (counts.sum() + 4)  # Witten–Bell: T = 4 types seen, backing off to 1/256
    expected = -np.log2(p[held[3:]]).mean()
    assert kgram_heldout_bits(train, held, 256, max_order=3)[0] == pytest.approx(expected, rel=1e-12)
    with pytest.raises(DataError):
        kgram_heldout_bits(train[:3], held, 256, max_order=3)
