"""Positive controls of E7: MQAR and copy-at-lag sources (exact rates, answers) and answer accuracy."""

from __future__ import annotations

import copy
import itertools
import math

import numpy as np
import pytest
import torch

from entropic_bound.errors import DataError, UserInputError
from entropic_bound.language_models.corpora.catalogue import (
    CORPORA,
    MQAR_KEYS,
    MQAR_VALUES,
    corpus_kind,
    load_corpus,
)
from entropic_bound.language_models.corpora.sources import LagCopySource, MQARSource
from entropic_bound.language_models.model.ensemble import EnsembleLM
from entropic_bound.language_models.probes.controls import answer_accuracy, episode_starts
from entropic_bound.language_models.training.trainer import (
    LMTrainConfig,
    eval_losses,
    random_starts,
    train_lm_ensemble,
    windows,
)


def test_mqar_answers_are_the_paired_values():
    """Every answer is the value stored after its query key, queries are distinct episode keys."""
    src = MQARSource(pairs=5, queries=3, n_keys=12, n_values=9)
    tokens = src.sample(50 * src.episode_len, np.random.default_rng(0))
    m = src.pairs
    for ep in tokens.reshape(-1, src.episode_len):
        assert ep[0] == 0
        pairs = dict(zip(ep[1 : 2 * m + 1 : 2].tolist(), ep[2 : 2 * m + 2 : 2].tolist()))
        assert len(pairs) == m and all(1 <= k <= 12 for k in pairs) and all(v > 12 for v in pairs.values())
        queries, answers = ep[2 * m + 1 :: 2].tolist(), ep[2 * m + 2 :: 2].tolist()
        assert len(set(queries)) == 3 and all(pairs[q] == a for q, a in zip(queries, answers))
    mask = src.answer_mask(len(tokens))
    assert mask.sum() == 50 * 3 and np.all(tokens[np.flatnonzero(mask) - 1] <= 12)


def test_mqar_episode_bits_by_enumeration():
    """log2 of the number of equally likely episodes, counted by brute force on a tiny alphabet."""
    src = MQARSource(pairs=2, queries=2, n_keys=4, n_values=3)
    count = 0
    for keys in itertools.permutations(range(1, 5), 2):
        for _values in itertools.product(range(3), repeat=2):
            count += len(list(itertools.permutations(keys, 2)))  # query orders
    assert src.episode_bits() == pytest.approx(math.log2(count), abs=1e-12)
    assert src.entropy_rate() == pytest.approx(math.log2(count) / 9, abs=1e-12)


def test_mqar_sampled_episodes_are_uniform_over_the_counted_set():
    """All 12·9·2 = 216 episodes of a tiny source appear with frequency 1/216 (chi-square bound)."""
    src = MQARSource(pairs=2, queries=2, n_keys=4, n_values=3)
    eps = src.sample(21_600 * src.episode_len, np.random.default_rng(1)).reshape(-1, src.episode_len)
    _, counts = np.unique(eps, axis=0, return_counts=True)
    assert len(counts) == 216
    chi2 = ((counts - 100) ** 2 / 100).sum()
    assert chi2 < 300  # df 215: mean 215, sd ~21
    assert np.isfinite(src.log2_prob(eps.reshape(-1))).all()


def test_mqar_phase_bits_match_the_rules_and_the_rate():
    src = MQARSource(pairs=3, queries=2, n_keys=8, n_values=5)
    tokens = src.sample(src.episode_len * 20, np.random.default_rng(5))
    np.testing.assert_allclose(-src.log2_prob(tokens), np.tile(src.phase_bits(), 20), atol=1e-12)
    assert src.phase_bits().mean() == pytest.approx(src.entropy_rate())
    L = src.episode_len
    assert src.aligned_window_bits(L - 1) == pytest.approx(src.episode_bits() / (L - 1))  # SEP not a target
    assert src.aligned_window_bits(2 * L - 1) == pytest.approx(2 * src.episode_bits() / (2 * L - 1))


def test_mqar_log2_prob_flags_a_wrong_answer():
    src = MQARSource(pairs=3, queries=2, n_keys=8, n_values=8)
    tokens = src.sample(src.episode_len * 2, np.random.default_rng(2))
    bad = tokens.copy()
    a = int(src.answer_phases()[0])
    bad[a] = 9 + (bad[a] - 9 + 1) % 8  # another value
    assert np.isneginf(src.log2_prob(bad)[a]) and np.isfinite(src.log2_prob(tokens)).all()


@pytest.mark.parametrize("lag,V,eps", [(1, 4, 0.3), (8, 16, 0.1), (5, 2, 0.9)])
def test_lagcopy_rate_matches_monte_carlo(lag, V, eps):
    """Closed form vs −mean log2 P(x_t | x_{t−L}) and vs the empirical copy rate of a long sample."""
    src = LagCopySource(lag, V, eps)
    tokens = src.sample(300_000, np.random.default_rng(3))
    nll = -src.log2_prob(tokens)
    assert src.entropy_rate() == pytest.approx(nll.mean(), abs=6 * nll.std() / np.sqrt(len(nll)) + 1e-3)
    same = np.mean(tokens[lag:] == tokens[:-lag])
    assert same == pytest.approx(1 - eps + eps / V, abs=0.01)
    np.testing.assert_allclose(np.bincount(tokens, minlength=V) / len(tokens), 1 / V, atol=0.01)


def test_lagcopy_window_entropy_between_rate_and_uniform():
    src = LagCopySource(8, 16, 0.1)
    assert src.entropy_rate() < src.window_entropy(64) < src.window_entropy(16) < 4.0
    assert src.window_entropy(7) == pytest.approx(4.0)  # every target blind
    assert LagCopySource(1, 16, 0.1).window_entropy(32) == pytest.approx(src.entropy_rate())


def test_bad_control_parameters():
    with pytest.raises(UserInputError, match="queries"):
        MQARSource(pairs=2, queries=3)
    with pytest.raises(UserInputError, match="lag"):
        LagCopySource(0)


def test_registered_controls():
    for name, demand in (("mqar-p4", 4), ("lagcopy-L8", 8)):
        assert name in CORPORA.names() and corpus_kind(name) == "synthetic"
        a, b = load_corpus(name, 5_000, 3), load_corpus(name, 5_000, 3)
        np.testing.assert_array_equal(a.tokens, b.tokens)
        assert a.mixing_demand == demand and a.entropy_rate_bits > 0 and a.tokens.max() < 256
    mqar = load_corpus("mqar-p4", 5_000, 3)
    src = MQARSource(4, 4, MQAR_KEYS, MQAR_VALUES)
    assert mqar.episode_len == src.episode_len and mqar.entropy_rate_bits == pytest.approx(src.entropy_rate())
    assert np.all(mqar.tokens[mqar.answer_mask] > src.n_keys) and np.array_equal(
        mqar.answer_mask, src.answer_mask(5_000)
    )


def test_answer_accuracy_counts_only_answers():
    """A model is right at an answer iff its argmax is the value: check against an explicit loop."""
    src = MQARSource(pairs=3, queries=3, n_keys=8, n_values=8)
    tokens = src.sample(40 * src.episode_len + 5, np.random.default_rng(4))[5:]  # split mid-episode
    mask = src.answer_mask(40 * src.episode_len + 5)[5:]
    n_ctx = 2 * src.episode_len
    starts = episode_starts(tokens, src.episode_len, n_ctx)[:6]
    assert len(starts) == 6 and np.all(tokens[starts] == 0) and starts[0] == src.episode_len - 5
    model = EnsembleLM(256, n_ctx, [0, 1], d_model=16, n_layers=1, n_heads=2)
    acc = answer_accuracy(model, [tokens, tokens], [mask, mask], [starts, starts])
    with torch.no_grad():
        x = torch.as_tensor(np.stack([tokens[s : s + n_ctx + 1] for s in starts]))[None].repeat(2, 1, 1)
        pred = model(x[..., :-1]).argmax(-1).numpy()
    m = np.stack([mask[s + 1 : s + n_ctx + 1] for s in starts])
    expected = [(pred[e][m] == x[e, :, 1:].numpy()[m]).mean() for e in range(2)]
    np.testing.assert_allclose(acc, expected)


def test_window_pools_keep_starts_on_the_grid_and_leave_the_default_draw_alone():
    """With a pool every window starts on it; without one the draw is the plain ``randint`` one."""
    pool = torch.arange(0, 900, 17)
    starts = random_starts(1_000, 32, 500, torch.Generator().manual_seed(0), pool)
    assert set(starts.tolist()) <= set(pool.tolist()) and len(set(starts.tolist())) > 40
    a = random_starts(1_000, 32, 50, torch.Generator().manual_seed(1))
    b = torch.randint(0, 1_000 - 33, (50,), generator=torch.Generator().manual_seed(1))
    assert torch.equal(a, b)
    with pytest.raises(DataError, match="Allowed window starts"):
        random_starts(1_000, 32, 5, torch.Generator(), torch.tensor([990]))


def test_train_ensemble_with_a_pool_evaluates_on_episode_windows():
    """The recall member's fixed held-out windows are drawn from its pool (all open at SEP): its
    step-0 loss equals a direct evaluation of the untrained model on windows drawn that way."""
    src = MQARSource(pairs=2, queries=2, n_keys=8, n_values=8)
    tokens = src.sample(3_000, np.random.default_rng(6))
    train, val = tokens[:2_700], tokens[2_700:]
    pools = [(episode_starts(train, src.episode_len, 16), episode_starts(val, src.episode_len, 16)), None]
    model = EnsembleLM(256, 16, [0, 1], d_model=16, n_layers=2, n_heads=2)
    untrained = copy.deepcopy(model)
    cfg = LMTrainConfig(steps=3, batch_size=4, warmup=0, checkpoints=2, eval_windows=8)
    gens = [torch.Generator().manual_seed(e) for e in range(2)]
    out = train_lm_ensemble(model, [(train, val), (train, val)], cfg, gens, pools=pools)
    assert out.steps[-1] == 3 and np.isfinite(out.val_loss[-1]).all()
    g = torch.Generator().manual_seed(0)  # the trainer's draw order: fixed train windows, then held out
    random_starts(len(train), 16, 8, g, torch.as_tensor(pools[0][0]))
    va = random_starts(len(val), 16, 8, g, torch.as_tensor(pools[0][1]))
    assert (torch.as_tensor(val)[va] == 0).all()
    x, y = windows(torch.as_tensor(val), va, 16)
    direct = eval_losses(untrained, x[None].repeat(2, 1, 1), y[None].repeat(2, 1, 1))
    assert out.val_loss[0][0] == pytest.approx(direct[0], rel=1e-6)


def test_mqar_queries_with_replacement_rates_and_answers():
    """With replacement a query is uniform over the episode's m keys (repeats allowed): the phase bits,
    the rules' log-probabilities and the enumerated episode count agree; answers are still the values."""
    src = MQARSource(pairs=2, queries=3, n_keys=4, n_values=3, distinct_queries=False)
    count = 12 * 9 * 2**3  # ordered keys, values, query sequences
    assert src.episode_bits() == pytest.approx(math.log2(count), abs=1e-12)
    tokens = src.sample(src.episode_len * 4000, np.random.default_rng(8))
    eps = tokens.reshape(-1, src.episode_len)
    queries = eps[:, 2 * src.pairs + 1 :: 2]
    assert (queries[:, 0] == queries[:, 1]).mean() == pytest.approx(0.5, abs=0.03)  # repeats happen
    np.testing.assert_allclose(-src.log2_prob(tokens[: 20 * src.episode_len]), np.tile(src.phase_bits(), 20))
    assert src.phase_bits().sum() == pytest.approx(src.episode_bits())
    keys, values = eps[:, 1 : 2 * src.pairs + 1 : 2], eps[:, 2 : 2 * src.pairs + 2 : 2]
    answers = eps[:, 2 * src.pairs + 2 :: 2]
    for j in range(3):
        hit = keys == queries[:, j : j + 1]
        assert hit.sum(1).tolist() == [1] * len(eps) and np.array_equal(values[hit], answers[:, j])


def test_distinct_queries_cannot_exceed_pairs():
    with pytest.raises(UserInputError, match="queries"):
        MQARSource(pairs=2, queries=3, n_keys=4, n_values=3)
    assert MQARSource(pairs=2, queries=3, n_keys=4, n_values=3, distinct_queries=False).episode_len == 11


class _InductionOracle(torch.nn.Module):
    """Predicts the token that followed the latest earlier occurrence of the current token (an
    ideal induction head), shifted by ``lag`` positions to model an off-by-one answer mask."""

    def __init__(self, n_ctx: int, lag: int = 0) -> None:
        super().__init__()
        self.n_ctx, self.lag, self.dummy = n_ctx, lag, torch.nn.Parameter(torch.zeros(1))

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        E, B, n = idx.shape
        logits = torch.zeros(E, B, n, 256)
        for e, b in itertools.product(range(E), range(B)):
            row = idx[e, b].tolist()
            for t in range(n):
                s = t - self.lag
                prev = [i for i in range(s) if row[i] == row[s]] if s >= 0 else []
                if prev:
                    logits[e, b, t, row[prev[-1] + 1]] = 1.0
        return logits


@pytest.mark.parametrize("distinct", [True, False])
def test_answer_accuracy_of_an_induction_oracle_is_one(distinct):
    """On episode-aligned windows every answer is the token after the query key's latest earlier
    occurrence: the oracle scores 100 %, the same oracle one position late scores near chance."""
    src = MQARSource(pairs=4, queries=4, n_keys=16, n_values=16, distinct_queries=distinct)
    tokens, n_ctx = src.sample(60 * src.episode_len, np.random.default_rng(9)), 32
    mask, starts = src.answer_mask(len(tokens)), episode_starts(tokens, src.episode_len, n_ctx)[:40]
    exact = answer_accuracy(_InductionOracle(n_ctx), [tokens], [mask], [starts])
    late = answer_accuracy(_InductionOracle(n_ctx, lag=1), [tokens], [mask], [starts])
    assert exact[0] == pytest.approx(1.0, abs=1e-12) and late[0] < 0.2


def test_loss_weights_leave_unweighted_members_alone_and_weigh_the_others():
    """A member without weights trains bit for bit as without the option; a weighted member's loss
    is Σ w·nll / Σ w (answers only here), so its path differs."""
    src = MQARSource(pairs=2, queries=2, n_keys=8, n_values=8, distinct_queries=False)
    tokens = src.sample(3_000, np.random.default_rng(6))
    train, val = tokens[:2_700], tokens[2_700:]
    cfg = LMTrainConfig(steps=4, batch_size=4, warmup=0, checkpoints=2, eval_windows=8)

    def run(loss_weights):
        model = EnsembleLM(256, 16, [0, 1], d_model=16, n_layers=2, n_heads=2)
        gens = [torch.Generator().manual_seed(e) for e in range(2)]
        return train_lm_ensemble(model, [(train, val)] * 2, cfg, gens, loss_weights=loss_weights)

    plain, mixed = run(None), run([src.answer_mask(2_700).astype(float), None])
    assert mixed.val_loss[-1][1] == plain.val_loss[-1][1] and mixed.val_loss[-1][0] != plain.val_loss[-1][0]
    model = EnsembleLM(256, 16, [0, 1], d_model=16, n_layers=1, n_heads=2)
    x = torch.as_tensor(tokens[:34]).view(1, 2, 17).repeat(2, 1, 1)
    w = torch.as_tensor(src.answer_mask(34)).view(1, 2, 17).repeat(2, 1, 1)[..., 1:].float()
    w[1] = 0.0  # no weight at all: the plain mean
    with torch.no_grad():
        logits = model(x[..., :-1]).reshape(-1, 256)
        nll = torch.nn.functional.cross_entropy(logits, x[..., 1:].reshape(-1), reduction="none").view(
            2, 2, 16
        )
        got = model.member_losses(x[..., :-1], x[..., 1:], w)
    assert got[0] == pytest.approx(float(nll[0][w[0] > 0].mean()), rel=1e-6)
    assert got[1] == pytest.approx(float(nll[1].mean()), rel=1e-6)
    with pytest.raises(DataError, match="Loss weights"):
        run([np.ones(5), None])


def test_init_std_scales_the_weights_and_defaults_to_nanogpt():
    """``init_std`` sets the weight-matrix scale (residual outputs ``σ/√(2L)``); the default is
    0.02 and its draw is the same as before the option existed (same generator stream)."""
    a = EnsembleLM(256, 16, [3], d_model=64, n_layers=2, n_heads=2)
    b = EnsembleLM(256, 16, [3], d_model=64, n_layers=2, n_heads=2, init_std=0.1)
    assert float(a.blocks[0].W_Q.detach().std()) == pytest.approx(0.02, rel=0.05)
    assert float(b.blocks[0].W_Q.detach().std()) == pytest.approx(0.1, rel=0.05)
    assert float(b.blocks[1].W_O.detach().std()) == pytest.approx(0.05, rel=0.05)
    torch.testing.assert_close(b.tok_emb, a.tok_emb * 5.0)  # one stream, rescaled
    c = EnsembleLM(256, 16, [3], d_model=64, n_layers=2, n_heads=2, emb_std=1.0)
    torch.testing.assert_close(c.tok_emb, a.tok_emb * 50.0)
    torch.testing.assert_close(c.blocks[0].W_Q, a.blocks[0].W_Q)


def test_registered_learnable_mqar_control():
    """``mqar-p2r``: 2 pairs, 4 queries drawn with replacement, the registered keys and values."""
    corpus = load_corpus("mqar-p2r", 6_500, 1)
    src = MQARSource(2, 4, MQAR_KEYS, MQAR_VALUES, distinct_queries=False)
    assert corpus.episode_len == src.episode_len == 13 and corpus.mixing_demand == 2
    assert corpus.entropy_rate_bits == pytest.approx(src.entropy_rate())
    assert np.isfinite(src.log2_prob(corpus.tokens)).all() and np.array_equal(
        corpus.answer_mask, src.answer_mask(6_500)
    )
    queries = corpus.tokens.reshape(-1, 13)[:, 5::2]
    assert (queries[:, 0] == queries[:, 1]).any()  # repeats: not the distinct-query source


def test_registered_four_pair_mqar_control():
    """``mqar-p4r``: 4 pairs, 8 queries drawn with replacement (episode 1 + 8 + 16 = 25 tokens)."""
    corpus = load_corpus("mqar-p4r", 5_000, 2)
    src = MQARSource(4, 8, MQAR_KEYS, MQAR_VALUES, distinct_queries=False)
    assert corpus.episode_len == src.episode_len == 25 and corpus.mixing_demand == 4
    assert corpus.entropy_rate_bits == pytest.approx(src.entropy_rate())
    assert np.array_equal(corpus.answer_mask, src.answer_mask(5_000))
    assert np.isfinite(src.log2_prob(corpus.tokens)).all()
