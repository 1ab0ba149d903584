"""C11's corpus ladder: corpora derived from natural text whose complexity is controlled.

- :class:`KGramModel`: the order-``k`` Markov chain fitted to a text by add-``δ`` smoothing over the
  text's own alphabet ``A`` (its distinct bytes, ``V = |A|``)::

      P(x | c) = (C(c, x) + δ) / (C(c) + V δ)

  with ``C`` the counts of the ``k``-symbol context ``c`` followed by ``x`` in the text (every order
  counts the same positions ``t ≥ k``); a context the text never shows backs off to its longest
  suffix that it does show (order 0 is the add-``δ`` unigram). Its mixing demand is ``k`` by construction. Sampling draws, at each step,
  with probability ``C(c) / (C(c) + Vδ)`` the symbol after a uniformly chosen occurrence of ``c`` in
  the text, otherwise a uniform symbol — exactly ``P(x | c)``. The entropy rate needs the stationary
  law over ``V^k`` contexts, out of reach beyond ``k = 2``, so it is a stated Monte Carlo:
  ``Ĥ = mean_t H(P(· | c_t))`` along the sample itself (the row entropy, a Rao–Blackwellised
  ``−log2 P``), with a batch-means standard error; the unit tests check it against the exact rate
  for ``k ≤ 2``.
- :func:`shuffle_within_sentences`: each sentence's words (runs of letters, digits and apostrophes)
  permuted among the sentence's word slots, whitespace and punctuation kept in place (so sentence
  boundaries stay), so word frequencies stay and word order goes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ...errors import UserInputError

SENTENCE = re.compile(r"[^.!?]*[.!?]+|[^.!?]+$")  # up to and including the closing punctuation
WORD = re.compile(r"[A-Za-z0-9']+")  # punctuation stays in place, so sentence ends stay where they were


@dataclass(frozen=True)
class KGramModel:
    """Add-``delta`` order-``order`` model of ``text`` (see module doc); symbols are alphabet indices."""

    alphabet: np.ndarray  # (V,) uint8, the text's distinct bytes, sorted
    symbols: np.ndarray  # (N,) int64, the text as alphabet indices
    order: int
    delta: float

    @classmethod
    def fit(cls, data: bytes, order: int, delta: float) -> KGramModel:
        if order < 1 or delta <= 0 or len(data) <= order:
            raise UserInputError(
                f"A k-gram model needs order >= 1, delta > 0 and more than order bytes. Got order={order}, "
                f"delta={delta}, {len(data)} bytes instead."
            )
        raw = np.frombuffer(data, dtype=np.uint8)
        alphabet, symbols = np.unique(raw, return_inverse=True)
        return cls(alphabet, symbols.astype(np.int64), order, delta)

    @property
    def V(self) -> int:
        return len(self.alphabet)

    def context_ids(self, symbols: np.ndarray, order: int | None = None) -> np.ndarray:
        """Base-``V`` id of the ``order`` symbols before each position ``t ≥ k``: ``(N − k,)``."""
        k = self.order
        j_max = k if order is None else order
        ctx = np.zeros(len(symbols) - k, dtype=np.int64)
        for j in range(j_max, 0, -1):
            ctx = ctx * self.V + symbols[k - j : len(symbols) - j]
        return ctx

    def _table(self, order: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Seen contexts of length ``order`` (sorted ids), their first index into the occurrences
        sorted by context, their counts, and those occurrences' next symbols."""
        ctx = self.context_ids(self.symbols, order)
        by_ctx = np.argsort(ctx, kind="stable")
        uniq, first, counts = np.unique(ctx[by_ctx], return_index=True, return_counts=True)
        return uniq, first, counts, self.symbols[self.order :][by_ctx]

    def _rows(self, order: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Seen contexts of length ``order``, their counts ``C(c)``, the seen (context, symbol) pair
        ids ``c·V + x`` (sorted) and the pairs' counts."""
        V, ctx = self.V, self.context_ids(self.symbols, order)
        pairs, n_cx = np.unique(ctx * V + self.symbols[self.order :], return_counts=True)
        uniq, counts = np.unique(ctx, return_counts=True)
        return uniq, counts, pairs, n_cx

    def _row_entropy(self, order: int) -> tuple[np.ndarray, np.ndarray]:
        """Seen contexts of length ``order`` and the entropy (bits) of their smoothed rows."""
        V, d = self.V, self.delta
        uniq, counts, pairs, n_cx = self._rows(order)
        inv = np.searchsorted(uniq, pairs // V)
        total = counts + V * d  # (C,) C(c) + Vδ
        p = (n_cx + d) / total[inv]
        q = d / total  # each unseen symbol's probability
        unseen = (V - np.bincount(inv, minlength=len(uniq))) * (-q * np.log2(q))
        return uniq, np.bincount(inv, weights=-p * np.log2(p), minlength=len(uniq)) + unseen

    def _longest_seen(self, symbols: np.ndarray, per_order) -> np.ndarray:
        """For each position ``t ≥ k``, ``per_order(j, ctx_j, hit)`` of the longest seen context."""
        out = None
        for j in range(self.order + 1):
            ctx = self.context_ids(symbols, j)
            uniq = self._rows(j)[0]
            pos = np.clip(np.searchsorted(uniq, ctx), 0, len(uniq) - 1)
            hit = uniq[pos] == ctx
            value = per_order(j, ctx, pos)
            out = value if out is None else np.where(hit, value, out)
        return out

    def sample(self, n_tokens: int, rng: np.random.Generator) -> np.ndarray:
        """``(n_tokens,)`` alphabet indices, the first ``k`` copied from a random position of the text."""
        V, k, d = self.V, self.order, self.delta
        tables = [self._table(j) for j in range(k + 1)]
        rows = [dict(zip(u.tolist(), zip(f.tolist(), c.tolist()))) for u, f, c, _ in tables]
        nxt = [t[3].tolist() for t in tables]
        start = int(rng.integers(0, len(self.symbols) - k))
        out = self.symbols[start : start + k].tolist()
        u, pick, fresh = (
            rng.random(n_tokens).tolist(),
            rng.random(n_tokens).tolist(),
            rng.integers(0, V, n_tokens),
        )
        fresh, ctx, mods = fresh.tolist(), 0, [V**j for j in range(k + 1)]
        for s in out:
            ctx = ctx * V + s
        for t in range(n_tokens - k):  # sequential by nature; dict and list lookups are the fast path
            j = k
            while (ctx % mods[j]) not in rows[j]:  # back off to the longest seen suffix
                j -= 1
            lo, c = rows[j][ctx % mods[j]]
            x = nxt[j][lo + int(pick[t] * c)] if u[t] * (c + V * d) < c else fresh[t]
            out.append(x)
            ctx = (ctx * V + x) % mods[k]
        return np.asarray(out[:n_tokens], dtype=np.int64)

    def entropy_rate_mc(self, symbols: np.ndarray, batch: int = 10_000) -> tuple[float, float]:
        """Mean row entropy along ``symbols`` (a sample of this model, positions ``t ≥ k``) and its
        batch-means standard error."""
        H = [self._row_entropy(j)[1] for j in range(self.order + 1)]
        h = self._longest_seen(symbols, lambda j, ctx, pos: H[j][pos])
        n_b = max(2, len(h) // batch)
        means = np.array([b.mean() for b in np.array_split(h, n_b)])
        return float(h.mean()), float(means.std(ddof=1) / np.sqrt(n_b))

    def log2_prob(self, symbols: np.ndarray) -> np.ndarray:
        """``log2 P(x_t | c_t)`` for ``t ≥ k``: ``(N − k,)``."""
        V, d, x = self.V, self.delta, symbols[self.order :]

        def logp(j: int, ctx: np.ndarray, pos: np.ndarray) -> np.ndarray:
            _, counts, pairs, n_cx = self._rows(j)
            key = ctx * V + x
            ppos = np.clip(np.searchsorted(pairs, key), 0, len(pairs) - 1)
            cx = np.where(pairs[ppos] == key, n_cx[ppos], 0)
            return np.log2((cx + d) / (counts[pos] + V * d))

        return self._longest_seen(symbols, logp)


def shuffle_within_sentences(text: str, rng: np.random.Generator) -> str:
    """``text`` with each sentence's words permuted among the sentence's word slots (see module doc)."""
    out = []
    for sentence in SENTENCE.findall(text):
        words = WORD.findall(sentence)
        perm = iter([words[i] for i in rng.permutation(len(words))])
        out.append(WORD.sub(lambda _m, p=perm: next(p), sentence))
    return "".join(out)
