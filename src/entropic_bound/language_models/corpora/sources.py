"""Synthetic token sources whose entropy rate and token-mixing demand are known exactly (E7).

- :class:`MarkovSource`: an order-``k`` Markov chain over ``V`` symbols. Its mixing demand is ``k``
  (the next symbol depends on the last ``k`` tokens: a content-independent local band of width k).
  Entropy rate ``H = Σ_s π(s) H(P(·|s))`` bits/token, ``π`` stationary over contexts.
- :class:`RecallSource`: associative recall with ``m`` pairs. Episodes
  ``SEP k_1 v_1 … k_m v_m q a`` of ``2m + 3`` tokens: ``m`` distinct keys drawn without replacement
  from ``n_keys`` key symbols, values uniform over ``n_values`` value symbols, a query ``q``
  uniform among the episode's keys and the answer ``a`` = the value paired with ``q``. The answer
  needs content routing over the ``m`` pairs: mixing demand ``m``. Per episode the information is
  ``log2(n_keys!/(n_keys−m)!) + m·log2(n_values) + log2(m)`` bits (SEP and the answer are
  determined by the past), so the entropy rate is that over ``2m + 3`` bits/token.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

import numpy as np

from ...errors import UserInputError

SMOOTHING = 0.01


@dataclass(frozen=True)
class MarkovSource:
    """An order-``k`` Markov source over ``vocab_size`` symbols with Dirichlet(``alpha``) rows.

    ``transitions``: ``(V^k, V)``, row ``s`` is ``P(next | context s)``; the context of the last ``k``
    symbols ``x_{t-k+1} … x_t`` is the base-``V`` number ``s = Σ_j x_{t-k+1+j} V^{k-1-j}``, and after
    emitting ``x`` the next context is ``(s·V + x) mod V^k``.
    """

    vocab_size: int
    order: int
    alpha: float
    transitions: np.ndarray

    @classmethod
    def from_seed(
        cls, vocab_size: int, order: int, alpha: float, seed: int, smoothing: float = SMOOTHING
    ) -> MarkovSource:
        """Rows ``(1 − ε)·Dirichlet(alpha·1) + ε/V`` with ``ε = smoothing``, drawn from ``seed``."""
        if not 0.0 < smoothing <= 1.0:
            raise UserInputError(
                f"The 'smoothing' parameter must be a float in (0, 1]. Got {smoothing!r} instead."
            )
        if vocab_size < 2 or vocab_size > 256 or order < 1 or vocab_size**order > 2**16 or alpha <= 0:
            raise UserInputError(
                "A Markov source needs 2 <= vocab_size <= 256, order >= 1, vocab_size**order <= 65536 and "
                f"alpha > 0. Got vocab_size={vocab_size}, order={order}, alpha={alpha} instead."
            )
        rng = np.random.default_rng(seed)
        P = rng.dirichlet(np.full(vocab_size, alpha), size=vocab_size**order)  # (V^k, V)
        P = (1.0 - smoothing) * P + smoothing / vocab_size  # no absorbing contexts; irreducible, aperiodic
        return cls(vocab_size, order, alpha, P / P.sum(axis=1, keepdims=True))

    def next_context(self) -> np.ndarray:
        """``(V^k, V)`` int: the context reached from ``s`` by emitting ``x``."""
        S, V = self.transitions.shape
        return (np.arange(S)[:, None] * V + np.arange(V)[None, :]) % S

    def stationary(self) -> np.ndarray:
        """Stationary distribution over contexts ``(V^k,)``: the sparse solve of ``π (T − I) = 0``,
        ``Σ π = 1``, with ``T`` the context-to-context transition matrix (``V`` nonzeros per row)."""
        from scipy.sparse import coo_matrix, identity
        from scipy.sparse.linalg import spsolve

        S, V = self.transitions.shape
        rows = np.repeat(np.arange(S), V)
        T = coo_matrix((self.transitions.ravel(), (rows, self.next_context().ravel())), shape=(S, S)).tocsr()
        A = (T.T - identity(S, format="csr")).tolil()  # (S, S), A π = 0
        A[0, :] = 1.0  # replace one (redundant) balance equation by the normalisation
        b = np.zeros(S)
        b[0] = 1.0
        pi = np.maximum(spsolve(A.tocsr(), b), 0.0)
        return pi / pi.sum()

    def entropy_rate(self) -> float:
        """``H = Σ_s π(s) · (−Σ_x P(x|s) log2 P(x|s))`` in bits per token."""
        P = self.transitions
        row_entropy = -(P * np.log2(P)).sum(axis=1)  # (S,)
        return float(self.stationary() @ row_entropy)

    def sample(self, n_tokens: int, rng: np.random.Generator) -> np.ndarray:
        """``(n_tokens,)`` int64, the first context drawn from the stationary distribution."""
        S, V = self.transitions.shape
        cum = np.cumsum(self.transitions, axis=1)
        cum[:, -1] = 1.0
        cum_rows = cum.tolist()
        s = int(rng.choice(S, p=self.stationary()))
        u = rng.random(n_tokens).tolist()
        out = [0] * n_tokens
        for t in range(n_tokens):  # sequential by nature; plain Python lists are the fast path
            x = bisect.bisect_right(cum_rows[s], u[t])
            x = min(x, V - 1)
            out[t] = x
            s = (s * V + x) % S
        return np.asarray(out, dtype=np.int64)

    def log2_prob(self, tokens: np.ndarray) -> np.ndarray:
        """``log2 P(x_t | x_{t-k} … x_{t-1})`` for ``t ≥ k``: ``(N,) → (N-k,)``."""
        V, k = self.vocab_size, self.order
        tokens = np.asarray(tokens, dtype=np.int64)
        ctx = np.zeros(len(tokens) - k, dtype=np.int64)
        for j in range(k):
            ctx = ctx * V + tokens[j : len(tokens) - k + j]
        return np.log2(self.transitions[ctx, tokens[k:]])


class _Episodes:
    """What the recall sources share: tokens ``0`` = SEP, ``n_keys`` key and ``n_values`` value symbols,
    in a stream of episodes whose phase the last SEP gives."""

    n_keys: int
    n_values: int

    @property
    def vocab_size(self) -> int:
        return 1 + self.n_keys + self.n_values

    def entropy_rate(self) -> float:
        """Bits per token of the stationary stream (the phase is known from the last SEP)."""
        return self.episode_bits() / self.episode_len


@dataclass(frozen=True)
class RecallSource(_Episodes):
    """Associative recall with ``pairs`` key–value pairs per episode (see module doc).

    Tokens: ``0`` = SEP, keys ``1 … n_keys``, values ``n_keys + 1 … n_keys + n_values``.
    """

    pairs: int
    n_keys: int = 32
    n_values: int = 32

    def __post_init__(self) -> None:
        if not 1 <= self.pairs <= self.n_keys or self.n_values < 2 or 1 + self.n_keys + self.n_values > 256:
            raise UserInputError(
                "A recall source needs 1 <= pairs <= n_keys, n_values >= 2 and 1 + n_keys + n_values <= 256. "
                f"Got pairs={self.pairs}, n_keys={self.n_keys}, n_values={self.n_values} instead."
            )

    @property
    def episode_len(self) -> int:
        return 2 * self.pairs + 3

    def episode_bits(self) -> float:
        """Information of one episode: ordered distinct keys, values, and the query."""
        m, K = self.pairs, self.n_keys
        keys = math.lgamma(K + 1) - math.lgamma(K - m + 1)
        return keys / math.log(2) + m * math.log2(self.n_values) + math.log2(m)

    def sample(self, n_tokens: int, rng: np.random.Generator) -> np.ndarray:
        """``(n_tokens,)`` int64: whole episodes from phase 0, cut to ``n_tokens``."""
        m, E = self.pairs, -(-n_tokens // self.episode_len)
        keys = np.argsort(rng.random((E, self.n_keys)), axis=1)[:, :m] + 1  # (E, m) distinct
        values = rng.integers(0, self.n_values, size=(E, m)) + 1 + self.n_keys  # (E, m)
        which = rng.integers(0, m, size=E)
        ep = np.zeros((E, self.episode_len), dtype=np.int64)
        ep[:, 1 : 2 * m + 1 : 2], ep[:, 2 : 2 * m + 2 : 2] = keys, values
        ep[:, -2], ep[:, -1] = keys[np.arange(E), which], values[np.arange(E), which]
        return ep.reshape(-1)[:n_tokens]

    def log2_prob(self, tokens: np.ndarray) -> np.ndarray:
        """``log2 P(x_t | past)`` for every token after the first whole episode of a stream from
        :meth:`sample` (phase 0 at t = 0), computed position by position from the rules."""
        m, K, L = self.pairs, self.n_keys, self.episode_len
        out = []
        for t in range(L, len(tokens)):
            phase = t % L
            if phase == 0 or phase == L - 1:  # SEP, or the answer: determined by the past
                out.append(0.0)
            elif phase == L - 2:  # the query: uniform over the episode's m keys
                out.append(-math.log2(m))
            elif phase % 2 == 1:  # a key: uniform over the keys not yet used in this episode
                used = (phase - 1) // 2
                out.append(-math.log2(K - used))
            else:  # a value
                out.append(-math.log2(self.n_values))
        return np.asarray(out)


@dataclass(frozen=True)
class MQARSource(_Episodes):
    """Multi-query associative recall (Zoology's MQAR, Arora et al. 2023), as a stream of episodes.

    Episode (``1 + 2·pairs + 2·queries`` tokens): ``SEP k_1 v_1 … k_m v_m q_1 a_1 … q_Q a_Q`` with
    ``m`` distinct keys drawn without replacement from ``n_keys`` key symbols, values uniform over
    ``n_values`` value symbols, queries ``Q`` distinct keys of the episode in random order, and each
    answer ``a_j`` the value paired with ``q_j``. Tokens: ``0`` = SEP, keys ``1 … n_keys``, values
    ``n_keys + 1 … n_keys + n_values``. Information per episode: ``log2(n_keys!/(n_keys−m)!)`` (keys)
    ``+ m·log2(n_values)`` (values) ``+ log2(m!/(m−Q)!)`` (queries); SEP and answers are determined
    by the past. The answer is content routing over the ``m`` pairs: mixing demand ``m``.

    ``distinct_queries=False`` draws the queries with replacement (uniform over the ``m`` keys, query
    information ``Q·log2 m``). With distinct queries and ``Q = m`` an answer can also be guessed by
    elimination — a value of the episode not yet answered, 52 % at ``m = 4`` without any key
    matching — and small models stall on that shortcut (bench/lm_controls/RESULTS.md); with
    replacement the best key-blind guess is ``1/m``.
    """

    pairs: int = 8
    queries: int = 8
    n_keys: int = 64
    n_values: int = 64
    distinct_queries: bool = True

    def __post_init__(self) -> None:
        most = self.pairs if self.distinct_queries else 64
        ok = 1 <= self.queries <= most and 1 <= self.pairs <= self.n_keys and self.n_values >= 2
        if not ok or 1 + self.n_keys + self.n_values > 256:
            raise UserInputError(
                "An MQAR source needs 1 <= queries <= pairs <= n_keys, n_values >= 2 and "
                f"1 + n_keys + n_values <= 256. Got pairs={self.pairs}, queries={self.queries}, "
                f"n_keys={self.n_keys}, n_values={self.n_values} instead."
            )

    @property
    def episode_len(self) -> int:
        return 1 + 2 * self.pairs + 2 * self.queries

    def episode_bits(self) -> float:
        m, Q, K = self.pairs, self.queries, self.n_keys
        keys = math.lgamma(K + 1) - math.lgamma(K - m + 1)
        if self.distinct_queries:
            queries = math.lgamma(m + 1) - math.lgamma(m - Q + 1)
        else:
            queries = Q * math.log(m)
        return (keys + queries) / math.log(2) + m * math.log2(self.n_values)

    def phase_bits(self) -> np.ndarray:
        """Information (bits) of the token at each phase of an episode, given the past: ``(L,)``."""
        m, K = self.pairs, self.n_keys
        bits = np.zeros(self.episode_len)
        bits[1 : 2 * m + 1 : 2] = np.log2(K - np.arange(m))  # fresh keys
        bits[2 : 2 * m + 2 : 2] = math.log2(self.n_values)
        asked = np.arange(self.queries) if self.distinct_queries else np.zeros(self.queries)
        bits[2 * m + 1 :: 2] = np.log2(m - asked)  # queries among the unasked (or all) keys
        return bits

    def aligned_window_bits(self, n_ctx: int) -> float:
        """The least mean loss (bits/token) over the ``n_ctx`` targets of a window that opens at an
        episode start (as E7 trains this source): target ``j`` has phase ``j mod L`` and its whole
        episode in view."""
        return float(self.phase_bits()[np.arange(1, n_ctx + 1) % self.episode_len].mean())

    def answer_phases(self) -> np.ndarray:
        """Positions of the answers within an episode: ``(queries,)``."""
        return 2 * self.pairs + 2 + 2 * np.arange(self.queries)

    def answer_mask(self, n_tokens: int) -> np.ndarray:
        """``(n_tokens,)`` bool: True at the answer tokens of a stream from :meth:`sample`."""
        phase = np.arange(n_tokens) % self.episode_len
        return np.isin(phase, self.answer_phases())

    def sample(self, n_tokens: int, rng: np.random.Generator) -> np.ndarray:
        """``(n_tokens,)`` int64: whole episodes from phase 0, cut to ``n_tokens``."""
        m, Q, E = self.pairs, self.queries, -(-n_tokens // self.episode_len)
        keys = np.argsort(rng.random((E, self.n_keys)), axis=1)[:, :m] + 1  # (E, m) distinct
        values = rng.integers(0, self.n_values, size=(E, m)) + 1 + self.n_keys  # (E, m)
        if self.distinct_queries:
            which = np.argsort(rng.random((E, m)), axis=1)[:, :Q]  # (E, Q) distinct pair indices
        else:
            which = rng.integers(0, m, size=(E, Q))  # (E, Q) with replacement
        rows = np.arange(E)[:, None]
        ep = np.zeros((E, self.episode_len), dtype=np.int64)
        ep[:, 1 : 2 * m + 1 : 2], ep[:, 2 : 2 * m + 2 : 2] = keys, values
        ep[:, 2 * m + 1 :: 2], ep[:, 2 * m + 2 :: 2] = keys[rows, which], values[rows, which]
        return ep.reshape(-1)[:n_tokens]

    def log2_prob(self, tokens: np.ndarray) -> np.ndarray:
        """``log2 P(x_t | past)`` for every token of a stream from :meth:`sample` (phase 0 at t = 0),
        position by position from the rules; ``−inf`` where a token breaks them."""
        m, K, L = self.pairs, self.n_keys, self.episode_len
        out = np.empty(len(tokens))
        for t, x in enumerate(np.asarray(tokens).tolist()):
            phase, start = t % L, t - t % L
            pair_keys = tokens[start + 1 : start + 2 * m + 1 : 2]
            if phase == 0:
                ok, p = x == 0, 1.0
            elif phase <= 2 * m and phase % 2 == 1:  # a fresh key: uniform over unused keys
                ok, p = 1 <= x <= K and x not in tokens[start + 1 : t : 2], 1.0 / (K - (phase - 1) // 2)
            elif phase <= 2 * m:  # a value
                ok, p = x > K, 1.0 / self.n_values
            elif phase % 2 == 1 and not self.distinct_queries:  # a query: uniform over the episode's keys
                ok, p = x in pair_keys, 1.0 / m
            elif phase % 2 == 1:  # a query: uniform over the episode's keys not yet queried
                asked = (phase - 2 * m - 1) // 2
                ok, p = x in pair_keys and x not in tokens[start + 2 * m + 1 : t : 2], 1.0 / (m - asked)
            else:  # the answer: the value stored after the queried key
                j = int(np.flatnonzero(pair_keys == tokens[t - 1])[0])
                ok, p = x == tokens[start + 2 + 2 * j], 1.0
            out[t] = math.log2(p) if ok else -math.inf
        return out


@dataclass(frozen=True)
class LagCopySource:
    """Copy at a fixed lag: ``x_t = x_{t−L}`` with probability ``1 − ε``, else a uniform symbol.

    Over ``vocab_size`` symbols, the first ``L`` symbols uniform. The stream is ``L`` interleaved
    symmetric Markov chains (one per residue ``t mod L``), each with a uniform stationary law, so the
    entropy rate is ``H = −(1−ε+ε/V) log2(1−ε+ε/V) − (V−1)(ε/V) log2(ε/V)`` bits/token. The answer
    is pure positional routing: read the token ``L`` back, whatever it is (mixing demand ``L``).
    """

    lag: int = 8
    vocab_size: int = 16
    noise: float = 0.1

    def __post_init__(self) -> None:
        if self.lag < 1 or not 2 <= self.vocab_size <= 256 or not 0.0 < self.noise <= 1.0:
            raise UserInputError(
                "A lag-copy source needs lag >= 1, 2 <= vocab_size <= 256 and 0 < noise <= 1. Got "
                f"lag={self.lag}, vocab_size={self.vocab_size}, noise={self.noise} instead."
            )

    def entropy_rate(self) -> float:
        V, eps = self.vocab_size, self.noise
        stay, move = 1.0 - eps + eps / V, eps / V
        return float(-stay * math.log2(stay) - (V - 1) * move * math.log2(move))

    def window_entropy(self, n_ctx: int) -> float:
        """The least mean loss (bits/token) over the ``n_ctx`` targets of a window of ``n_ctx + 1``
        tokens from a random start: target ``j`` (context ``j`` tokens) sees its parent only when
        ``j ≥ L``; the ``L − 1`` blind targets cost ``log2 V`` (the stationary law is uniform)."""
        blind = min(self.lag - 1, n_ctx)
        return (blind * math.log2(self.vocab_size) + (n_ctx - blind) * self.entropy_rate()) / n_ctx

    def sample(self, n_tokens: int, rng: np.random.Generator) -> np.ndarray:
        """``(n_tokens,)`` int64: the copy runs lag by lag, so whole rows of ``L`` draw at once."""
        L, V = self.lag, self.vocab_size
        rows = -(-n_tokens // L)
        noise = rng.random((rows, L)) < self.noise
        fresh = rng.integers(0, V, size=(rows, L))
        out = np.empty((rows, L), dtype=np.int64)
        out[0] = fresh[0]
        for r in range(1, rows):  # row r copies row r-1 except where noise strikes
            out[r] = np.where(noise[r], fresh[r], out[r - 1])
        return out.reshape(-1)[:n_tokens]

    def log2_prob(self, tokens: np.ndarray) -> np.ndarray:
        """``log2 P(x_t | x_{t−L})`` for ``t ≥ L``: ``(N,) → (N − L,)``."""
        V, eps, L = self.vocab_size, self.noise, self.lag
        tokens = np.asarray(tokens)
        same = tokens[L:] == tokens[:-L]
        return np.log2(np.where(same, 1.0 - eps + eps / V, eps / V))
