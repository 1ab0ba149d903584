"""Corpora of known or estimated complexity for the small language models of E7 (SPEC §6, C11).

Three kinds, each a registered name in :data:`CORPORA` (a factory ``(n_tokens, seed) -> Corpus``):

- **synthetic** ``markov_v{V}_k{k}_a{alpha}``: an order-``k`` Markov source over ``V`` symbols whose
  next-symbol distributions (one per context of the last ``k`` symbols, ``V^k`` contexts) are drawn
  from ``Dirichlet(alpha·1)`` and mixed with 1% uniform mass (no context is absorbing). Its entropy
  rate is known exactly, ``H = Σ_s π(s) H(P(·|s))`` bits per token, with ``π`` the stationary
  distribution over contexts (a sparse linear solve; every transition probability is positive, so
  the chain is irreducible and aperiodic and ``π`` is unique). Tokens are the symbols ``0 … V-1``.
- **code** ``stdlib_code``: the Python standard library's own ``.py`` files
  (``sysconfig.get_paths()["stdlib"]``, sorted by relative path, tests and site-packages left out),
  concatenated up to the size cap. Byte-level tokens (vocabulary 256).
- **text**: any UTF-8 file given by path (:func:`text_corpus`), byte-level tokens.

Predicted complexity of real text is a compression estimate (:func:`compression_bits_per_char`):
bits per byte under ``lzma`` and ``bz2`` (stdlib; zstd is not installed), an upper bound on the
entropy rate that shrinks slowly with the sample size.
"""

from __future__ import annotations

import bisect
import bz2
import hashlib
import lzma
import os
import sysconfig
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import DataError, UserInputError
from ..registry import Registry

CorpusFactory = Callable[[int, int], "Corpus"]
CORPORA: Registry[CorpusFactory] = Registry("corpus")
SMOOTHING = 0.01
EXCLUDED_PARTS = frozenset({"site-packages", "dist-packages", "test", "tests", "idle_test", "__pycache__"})


@dataclass(frozen=True)
class Corpus:
    """A token sequence and what is known about its complexity.

    ``tokens``: ``(N,)`` int64 in ``[0, vocab_size)``. ``entropy_rate_bits`` is the exact entropy
    rate (bits/token) of a synthetic source, ``None`` otherwise; ``compression`` maps a codec name to
    its bits per token on the tokens written as bytes.
    """

    name: str
    kind: str
    tokens: np.ndarray
    vocab_size: int
    entropy_rate_bits: float | None = None
    compression: dict = field(default_factory=dict)
    source: str = ""

    @property
    def compression_bits(self) -> float:
        """The tightest compression estimate (min over codecs), bits per token."""
        return min(self.compression.values())


# -- compression -------------------------------------------------------------------------------


def compression_bits_per_char(data: bytes) -> dict[str, float]:
    """Bits per byte of ``data`` under ``lzma`` (preset 9e, raw container) and ``bz2`` (level 9).

    ``8 · len(compress(data)) / len(data)``: ≈ 8 for random bytes (plus container overhead), far
    below 8 for repetitive text.
    """
    if len(data) == 0:
        raise DataError("Cannot estimate the compression rate of an empty corpus.")
    filters = [{"id": lzma.FILTER_LZMA2, "preset": 9 | lzma.PRESET_EXTREME}]
    sizes = {
        "lzma": len(lzma.compress(data, format=lzma.FORMAT_RAW, filters=filters)),
        "bz2": len(bz2.compress(data, compresslevel=9)),
    }
    return {k: 8.0 * v / len(data) for k, v in sizes.items()}


def _token_bytes(tokens: np.ndarray, vocab_size: int) -> bytes:
    if vocab_size > 256:
        raise DataError(f"Compression estimates need tokens < 256. Got vocab_size={vocab_size} instead.")
    return np.asarray(tokens, dtype=np.uint8).tobytes()


# -- synthetic Markov sources ----------------------------------------------------------------


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


def markov_name(vocab_size: int, order: int, alpha: float) -> str:
    return f"markov_v{vocab_size}_k{order}_a{alpha:g}"


def _register_markov(vocab_size: int, order: int, alpha: float) -> None:
    name = markov_name(vocab_size, order, alpha)

    def factory(n_tokens: int, seed: int) -> Corpus:
        source = MarkovSource.from_seed(vocab_size, order, alpha, seed)
        tokens = source.sample(n_tokens, np.random.default_rng([seed, 1]))
        return Corpus(
            name,
            "synthetic",
            tokens,
            vocab_size,
            source.entropy_rate(),
            compression_bits_per_char(_token_bytes(tokens, vocab_size)),
            f"order-{order} Markov source, V={vocab_size}, Dirichlet({alpha:g}) rows, seed {seed}",
        )

    CORPORA.register(
        name,
        summary=f"synthetic order-{order} Markov source over {vocab_size} symbols, "
        f"Dirichlet({alpha:g}) rows; exact entropy rate",
    )(factory)


for _V in (4, 16, 64):
    for _k in (1, 2):
        for _a in (0.1, 1.0):
            _register_markov(_V, _k, _a)


# -- byte corpora --------------------------------------------------------------------------


def byte_corpus(name: str, kind: str, data: bytes, source: str) -> Corpus:
    """Byte-level tokens (vocabulary 256) of ``data`` with its compression estimates."""
    if not data:
        raise DataError(f"The corpus '{name}' is empty.")
    tokens = np.frombuffer(data, dtype=np.uint8).astype(np.int64)
    return Corpus(name, kind, tokens, 256, None, compression_bits_per_char(data), source)


def stdlib_files() -> list[Path]:
    """The standard library's ``.py`` files, sorted by relative path, tests and site-packages left out."""
    root = Path(sysconfig.get_paths()["stdlib"])
    files = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in EXCLUDED_PARTS]  # prune site-packages and tests
        files.extend(Path(folder) / n for n in names if n.endswith(".py"))
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


@CORPORA.register("stdlib_code", summary="the Python standard library's own source files (bytes)")
def stdlib_corpus(n_tokens: int, seed: int = 0) -> Corpus:
    """The first ``n_tokens`` bytes of the concatenated standard library sources (``seed`` unused)."""
    chunks, size = [], 0
    for path in stdlib_files():
        data = path.read_bytes()
        chunks.append(data[: n_tokens - size])
        size += len(chunks[-1])
        if size >= n_tokens:
            break
    root = sysconfig.get_paths()["stdlib"]
    return byte_corpus("stdlib_code", "code", b"".join(chunks), f"{len(chunks)} files of {root}")


def text_corpus(path: str | Path, n_tokens: int) -> Corpus:
    """The first ``n_tokens`` bytes of a text file, byte-level tokens; name ``text:<file stem>``."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"The corpus file '{path}' does not exist.")
    with path.open("rb") as fh:
        data = fh.read(n_tokens)
    return byte_corpus(text_name(path), "text", data, str(path))


def text_name(path: str | Path) -> str:
    return f"text:{Path(path).stem}"


def file_digest(path: str | Path) -> str:
    """First 16 hex digits of the sha256 of a file (part of a run's identity)."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"The corpus file '{path}' does not exist.")
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def load_corpus(name: str, n_tokens: int, seed: int, path: str | None = None) -> Corpus:
    """A registered corpus by name, or the text file ``path`` when ``name`` starts with ``text:``."""
    if n_tokens < 16:
        raise UserInputError(f"The 'n_tokens' parameter must be an int >= 16. Got {n_tokens} instead.")
    if name.startswith("text:"):
        if path is None:
            raise UserInputError(f"The text corpus '{name}' needs a file path.")
        return text_corpus(path, n_tokens)
    return CORPORA.get(name)(n_tokens, seed)
