"""C11's corpus ladder: k-gram resamples of a text (rates, monotonicity) and sentence shuffles."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from entropic_bound.errors import UserInputError
from entropic_bound.language_models.corpora.catalogue import (
    CORPORA,
    corpus_kind,
    load_corpus,
    shakespeare_bytes,
)
from entropic_bound.language_models.corpora.ladder import SENTENCE, WORD, KGramModel, shuffle_within_sentences
from entropic_bound.language_models.corpora.sources import MarkovSource

TEXT = shakespeare_bytes(200_000)


def _dense_table(symbols: np.ndarray, V: int, order: int, delta: float, start: int) -> np.ndarray:
    """``P(x | c)`` for every context, straight from the definition: add-δ counts of the positions
    ``t ≥ start``, an unseen context taking the row of its last ``order − 1`` symbols (order 0: the
    add-δ unigram)."""
    if order == 0:
        return ((np.bincount(symbols[start:], minlength=V) + delta) / (len(symbols) - start + V * delta))[
            None
        ]
    ctx = sum(symbols[start - 1 - j : len(symbols) - 1 - j] * V**j for j in range(order))
    counts = np.zeros((V**order, V))
    np.add.at(counts, (ctx, symbols[start:]), 1.0)
    seen = counts.sum(axis=1) > 0
    shorter = _dense_table(symbols, V, order - 1, delta, start)[np.arange(V**order) % V ** (order - 1)]
    rows = (counts + delta) / (counts.sum(axis=1, keepdims=True) + V * delta)
    return np.where(seen[:, None], rows, shorter)


@pytest.mark.parametrize("order", [1, 2])
def test_kgram_monte_carlo_rate_matches_the_exact_rate(order):
    """For k ≤ 2 the fitted chain fits in a dense table: its exact rate (stationary solve, the
    Markov source's code) must lie within a few standard errors of the Monte Carlo along a sample."""
    model = KGramModel.fit(TEXT, order, 1e-3)
    table = _dense_table(model.symbols, model.V, order, 1e-3, start=order)
    exact = MarkovSource(model.V, order, 1.0, table).entropy_rate()
    sample = model.sample(200_000, np.random.default_rng(order))
    mc, se = model.entropy_rate_mc(sample)
    assert abs(mc - exact) < 5 * se + 0.01
    ctx = sum(sample[order - 1 - j : len(sample) - 1 - j] * model.V**j for j in range(order))
    np.testing.assert_allclose(model.log2_prob(sample), np.log2(table[ctx, sample[order:]]), rtol=1e-12)


def test_kgram_rate_falls_with_order():
    rates = []
    for k in range(1, 7):
        model = KGramModel.fit(TEXT, k, 1e-3)
        rates.append(model.entropy_rate_mc(model.sample(60_000, np.random.default_rng(k)))[0])
    assert all(a > b for a, b in zip(rates, rates[1:])), rates


def test_kgram_sample_uses_only_the_texts_alphabet_and_is_seeded():
    model = KGramModel.fit(TEXT, 3, 1e-3)
    a, b = (model.sample(5_000, np.random.default_rng(9)) for _ in range(2))
    np.testing.assert_array_equal(a, b)
    assert set(model.alphabet[a].tolist()) <= set(TEXT)
    with pytest.raises(UserInputError, match="order"):
        KGramModel.fit(TEXT, 0, 1e-3)


def test_shuffle_keeps_each_sentences_words():
    text = TEXT.decode()
    shuffled = shuffle_within_sentences(text, np.random.default_rng(0))
    before, after = SENTENCE.findall(text), SENTENCE.findall(shuffled)
    assert len(before) == len(after) and len(shuffled) == len(text)
    assert all(Counter(WORD.findall(a)) == Counter(WORD.findall(b)) for a, b in zip(before, after))
    assert all(WORD.sub("", a) == WORD.sub("", b) for a, b in zip(before, after))  # layout, punctuation kept
    assert sum(a != b for a, b in zip(before, after)) > len(before) // 2  # order really changed


def test_registered_ladder():
    names = [f"shakespeare-kgram{k}" for k in range(1, 7)] + ["shakespeare-shuffled"]
    assert set(names) <= set(CORPORA.names())
    c = load_corpus("shakespeare-kgram2", 20_000, 1)
    np.testing.assert_array_equal(c.tokens, load_corpus("shakespeare-kgram2", 20_000, 1).tokens)
    assert (
        c.kind == corpus_kind(c.name) == "synthetic"
        and c.mixing_demand == 2
        and 2.0 < c.entropy_rate_bits < 4.0
    )
    s = load_corpus("shakespeare-shuffled", 20_000, 1)
    assert s.kind == corpus_kind(s.name) == "natural" and len(s.tokens) == 20_000
