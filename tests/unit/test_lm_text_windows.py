"""A fresh draw of a fixed text is a fresh window of it; draw 0 is the text's beginning."""

import numpy as np
import pytest

from entropic_bound.experiments.e7_language.execute import _load
from entropic_bound.experiments.framework.draws import Seeds
from entropic_bound.language_models.corpora.catalogue import CORPORA, WINDOWED, load_corpus
from entropic_bound.language_models.corpora.text_windows import rotated, text_window
from entropic_bound.sweep.spec import RunSpec

TEXT = b"".join(b"line %03d of the text\n" % i for i in range(200))


def test_no_window_seed_is_the_beginning():
    assert text_window(TEXT, 500, None) == TEXT[:500]
    assert rotated(list("abcdef"), None) == list("abcdef")


def test_a_drawn_window_starts_at_a_line_and_wraps_around():
    windows = {text_window(TEXT, len(TEXT), seed) for seed in range(20)}
    assert len(windows) > 10  # the start moves with the seed
    for w in windows:
        assert len(w) == len(TEXT) and sorted(w.splitlines()) == sorted(TEXT.splitlines())
        assert w.startswith(b"line ")  # a rotation at a line boundary: the same lines, another split


def test_rotation_keeps_every_item_once():
    items = list(range(50))
    moved = [rotated(items, s) for s in range(10)]
    assert all(sorted(m) == items for m in moved) and any(m[0] != 0 for m in moved)


#: windowed corpora whose text the corpus seed draws (the shuffle of the words)
SEEDED_TEXTS = {"shakespeare-shuffled"}


@pytest.mark.parametrize("name", [n for n in CORPORA.declared() if n in WINDOWED])
def test_a_fixed_text_moves_with_the_window_seed(name):
    first = load_corpus(name, 20_000, 0)
    if name not in SEEDED_TEXTS:
        assert np.array_equal(
            first.tokens, load_corpus(name, 20_000, 7).tokens
        )  # the seed alone moves nothing
    drawn = load_corpus(name, 20_000, 0, window_seed=1)
    assert len(drawn.tokens) == 20_000 and not np.array_equal(first.tokens, drawn.tokens)


def test_synthetic_corpora_ignore_the_window_seed():
    assert "markov_v4_k3_a0.1" not in WINDOWED
    a = load_corpus("markov_v4_k3_a0.1", 5_000, 3)
    b = load_corpus("markov_v4_k3_a0.1", 5_000, 3, window_seed=9)
    assert np.array_equal(a.tokens, b.tokens)


def _spec(draw):
    params = {"corpus.name": "tinyshakespeare", "corpus.tokens": 5_000}
    return RunSpec(experiment="E7", params=params, seed=0, draw=draw)


def test_e7_takes_another_window_of_a_real_text_on_a_later_draw():
    zero, one, two = (_load(_spec(d), Seeds("E7", d)).tokens for d in (0, 1, 2))
    assert np.array_equal(zero, load_corpus("tinyshakespeare", 5_000, 0).tokens)  # draw 0 unchanged
    assert not np.array_equal(zero, one) and not np.array_equal(one, two)
