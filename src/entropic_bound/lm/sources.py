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

from ..errors import UserInputError

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


@dataclass(frozen=True)
class RecallSource:
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
    def vocab_size(self) -> int:
        return 1 + self.n_keys + self.n_values

    @property
    def episode_len(self) -> int:
        return 2 * self.pairs + 3

    def episode_bits(self) -> float:
        """Information of one episode: ordered distinct keys, values, and the query."""
        m, K = self.pairs, self.n_keys
        keys = math.lgamma(K + 1) - math.lgamma(K - m + 1)
        return keys / math.log(2) + m * math.log2(self.n_values) + math.log2(m)

    def entropy_rate(self) -> float:
        """Bits per token of the stationary stream (the phase is known from the last SEP)."""
        return self.episode_bits() / self.episode_len

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
