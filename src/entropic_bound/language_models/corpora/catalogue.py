"""Corpora of E7, each with a ``kind``: natural language, code, or a synthetic source of known demand.

Every corpus is a token sequence over the byte alphabet (:data:`VOCAB` = 256 symbols; synthetic
sources use the first few symbols), so language models of one shape fit every corpus and train as
one ensemble. Registered names (:data:`CORPORA`, factories ``(n_tokens, seed) -> Corpus``):

- **natural** ``tinyshakespeare`` — shipped inside the package (``lm/data/``, public domain, see
  its ``SOURCES.md``); ``pydoc_prose`` — the English prose of the standard library's
  ``pydoc_data.topics`` (the language reference topics; indented code and grammar lines and heading
  rules removed); ``<package>_docstrings`` — the English docstrings of the standard library and of
  installed dependencies (:mod:`.docstrings`); the prose of texts Debian packages install —
  fortune cookies, manual pages and manuals in several languages (:mod:`.debian_texts`, e.g.
  ``fortunes_de``, ``manpages_ja``, ``perl_pod``); and any UTF-8 text file of the user's
  (``text:<stem>``, :func:`text_corpus`).
- **code** ``stdlib_code`` — the standard library's own ``.py`` files (tests and site-packages left out).
- **synthetic** ``markov_v{V}_k{k}_a{alpha}`` (order ``k ≥ 2`` Markov, mixing demand ``k``) and
  ``recall_m{m}`` (associative recall with ``m`` pairs, mixing demand ``m``), ``mqar-p{m}``
  (multi-query associative recall, ``m`` pairs and ``m`` queries: the content-routing control) and
  ``lagcopy-L{L}`` (copy at lag ``L``: the positional-routing control): exact entropy rates
  (:mod:`.sources`). ``shakespeare-kgram{k}`` (k = 1 … 6): a sample of the order-``k`` k-gram model
  fitted to tinyshakespeare, mixing demand ``k``, entropy rate by a stated Monte Carlo (:mod:`.ladder`).
- **natural** ``shakespeare-shuffled``: tinyshakespeare with word order shuffled within sentences.

Natural and code corpora take the first ``n_tokens`` bytes of their text on draw 0 and a window
drawn from the draw's ``window_seed`` on a later draw (:mod:`.text_windows`; the corpora that
take one are :data:`WINDOWED`); their predicted complexity is a compression estimate
(:mod:`.complexity`).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import sysconfig
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path

import numpy as np

from ...errors import DataError, UserInputError
from ...registry import Registry
from ...text_bytes import not_text_reason
from .complexity import compression_bits_per_char
from .debian_texts import DEBIAN_TEXTS, debian_bytes
from .docstrings import PACKAGE_TEXTS, docstring_bytes
from .ladder import KGramModel, shuffle_within_sentences
from .sources import LagCopySource, MarkovSource, MQARSource, RecallSource
from .text_windows import rotated, text_window

CorpusFactory = Callable[[int, int], "Corpus"]
CORPORA: Registry[CorpusFactory] = Registry("corpus")
KINDS = ("natural", "code", "synthetic")
ROLES = (*KINDS, "control")
VOCAB = 256
EXCLUDED_PARTS = frozenset({"site-packages", "dist-packages", "test", "tests", "idle_test", "__pycache__"})


@dataclass(frozen=True)
class Corpus:
    """A token sequence ``(N,)`` int64 in ``[0, VOCAB)`` and what is known about its complexity.

    ``entropy_rate_bits`` and ``mixing_demand`` (k of a Markov source, m of recall) are exact for a
    synthetic source and ``None`` otherwise; ``compression`` maps a codec to its bits per token.
    A recall control (MQAR) also has ``episode_len`` — its windows should open at an episode start
    (:func:`.controls.episode_starts` gives the trainer's pools), since the answer routing is only
    learnable when the layout is at fixed positions — and ``answer_mask`` ``(N,)``, True at the
    answer tokens (for :func:`.controls.answer_accuracy`).
    """

    name: str
    kind: str
    tokens: np.ndarray
    entropy_rate_bits: float | None = None
    mixing_demand: int | None = None
    compression: dict = field(default_factory=dict)
    source: str = ""
    episode_len: int | None = None
    answer_mask: np.ndarray | None = None

    def __post_init__(self) -> None:
        assert self.kind in KINDS, self.kind

    @property
    def role(self) -> CorpusRole:
        """What E7 uses this corpus for (:func:`corpus_role`)."""
        return corpus_role(self.name)


@dataclass(frozen=True)
class CorpusRole:
    """What a registered corpus is for in E7, known from its name without loading it.

    ``role`` is one of :data:`ROLES`: a corpus's ``kind``, or ``control`` for a positive control of
    C13, a source of known routing whose models must show the head categories ``expected_mixing``
    (an MQAR recall control content routing, a lag copy positional or local, a Markov source local).
    ``recall_control``: an MQAR source, trained with E7's recall model and training on its own token
    count. ``exact_target``: its exact entropy rate is a loss a model can reach (a k-gram resample's
    Monte Carlo rate is not).
    """

    role: str
    kind: str
    expected_mixing: tuple[str, ...] = ()
    recall_control: bool = False
    exact_target: bool = True

    def __post_init__(self) -> None:
        assert self.role in ROLES and self.kind in KINDS, (self.role, self.kind)
        assert (self.role == "control") == bool(self.expected_mixing), self


NATURAL = CorpusRole("natural", "natural")
CODE = CorpusRole("code", "code")
SYNTHETIC = CorpusRole("synthetic", "synthetic")
#: registered name → its role (every entry of :data:`CORPORA` has one)
CORPUS_ROLES: dict[str, CorpusRole] = {}


def _control(*expected_mixing: str, recall: bool = False) -> CorpusRole:
    return CorpusRole("control", "synthetic", expected_mixing, recall_control=recall)


def _synthetic(name: str, tokens: np.ndarray, rate: float, demand: int, source: str) -> Corpus:
    data = np.asarray(tokens, dtype=np.uint8).tobytes()
    return Corpus(name, "synthetic", tokens, rate, demand, compression_bits_per_char(data), source)


def markov_name(vocab_size: int, order: int, alpha: float) -> str:
    return f"markov_v{vocab_size}_k{order}_a{alpha:g}"


def _register_markov(vocab_size: int, order: int, alpha: float) -> None:
    name = markov_name(vocab_size, order, alpha)
    CORPUS_ROLES[name] = _control("local")

    def factory(n_tokens: int, seed: int) -> Corpus:
        source = MarkovSource.from_seed(vocab_size, order, alpha, seed)
        tokens = source.sample(n_tokens, np.random.default_rng([seed, 1]))
        info = f"order-{order} Markov source, V={vocab_size}, Dirichlet({alpha:g}) rows, seed {seed}"
        return _synthetic(name, tokens, source.entropy_rate(), order, info)

    CORPORA.register(
        name,
        summary=f"synthetic order-{order} Markov source over {vocab_size} symbols; mixing demand {order}",
    )(factory)


def _register_recall(pairs: int) -> None:
    name = f"recall_m{pairs}"
    CORPUS_ROLES[name] = SYNTHETIC

    def factory(n_tokens: int, seed: int) -> Corpus:
        source = RecallSource(pairs)
        tokens = source.sample(n_tokens, np.random.default_rng([seed, 2]))
        info = (
            f"associative recall, {pairs} pairs, {source.n_keys} keys, {source.n_values} values, seed {seed}"
        )
        return _synthetic(name, tokens, source.entropy_rate(), pairs, info)

    CORPORA.register(name, summary=f"synthetic associative recall with {pairs} pairs; mixing demand {pairs}")(
        factory
    )


# The positive controls' fixed parameters (bench/lm_controls/RESULTS.md says why these).
MQAR_KEYS = MQAR_VALUES = 16  # 32 learn more slowly (RESULTS.md)
LAG_VOCAB, LAG_NOISE = 16, 0.1
KGRAM_DELTA = 1e-3  # small: a larger δ drowns once-seen long contexts in uniform noise


#: The source behind each registered ``mqar-*`` corpus (its episodes start at token 0).
MQAR_SOURCES: dict[str, MQARSource] = {}
#: The source behind each registered ``lagcopy-*`` corpus.
LAG_SOURCES: dict[str, LagCopySource] = {}


def _register_mqar(pairs: int, queries: int | None = None) -> None:
    """``mqar-p{m}``: ``m`` distinct queries (every key asked once); ``mqar-p{m}r``: ``queries``
    drawn with replacement — no elimination shortcut, the control E7 can learn (RESULTS.md)."""
    replace_ = queries is not None
    queries = queries or pairs
    name = f"mqar-p{pairs}" + ("r" if replace_ else "")
    CORPUS_ROLES[name] = _control("content", recall=True)
    MQAR_SOURCES[name] = MQARSource(pairs, queries, MQAR_KEYS, MQAR_VALUES, distinct_queries=not replace_)

    def factory(n_tokens: int, seed: int) -> Corpus:
        source = MQAR_SOURCES[name]
        tokens = source.sample(n_tokens, np.random.default_rng([seed, 4]))
        drawn = "with replacement" if replace_ else "distinct"
        info = (
            (
                f"multi-query associative recall, {pairs} pairs and {queries} {drawn} queries per episode, "
                f"{MQAR_KEYS} keys, {MQAR_VALUES} values, seed {seed}"
            )
            if replace_
            else (
                f"multi-query associative recall, {pairs} pairs and {pairs} queries per episode, "
                f"{MQAR_KEYS} keys, {MQAR_VALUES} values, seed {seed}"
            )
        )
        corpus = _synthetic(name, tokens, source.entropy_rate(), pairs, info)
        return replace(corpus, episode_len=source.episode_len, answer_mask=source.answer_mask(n_tokens))

    CORPORA.register(
        name, summary=f"synthetic multi-query associative recall, {pairs} pairs; mixing demand {pairs}"
    )(factory)


def _register_lagcopy(lag: int) -> None:
    name = f"lagcopy-L{lag}"
    CORPUS_ROLES[name] = _control("positional", "local")
    LAG_SOURCES[name] = LagCopySource(lag, LAG_VOCAB, LAG_NOISE)

    def factory(n_tokens: int, seed: int) -> Corpus:
        source = LAG_SOURCES[name]
        tokens = source.sample(n_tokens, np.random.default_rng([seed, 5]))
        info = f"copy at lag {lag}, {LAG_VOCAB} symbols, noise {LAG_NOISE:g}, seed {seed}"
        return _synthetic(name, tokens, source.entropy_rate(), lag, info)

    CORPORA.register(
        name, summary=f"synthetic copy at fixed lag {lag} (positional routing); mixing demand {lag}"
    )(factory)


def _register_kgram(order: int) -> None:
    name = f"shakespeare-kgram{order}"
    CORPUS_ROLES[name] = CorpusRole("synthetic", "synthetic", exact_target=False)

    def factory(n_tokens: int, seed: int) -> Corpus:
        model = KGramModel.fit(shakespeare_bytes(), order, KGRAM_DELTA)
        symbols = model.sample(n_tokens, np.random.default_rng([seed, 6, order]))
        rate, se = model.entropy_rate_mc(symbols)
        info = (
            f"order-{order} add-{KGRAM_DELTA:g} k-gram resample of tinyshakespeare, seed {seed}; entropy rate "
            f"by Monte Carlo along the sample, standard error {se:.4f} bits"
        )
        return _synthetic(name, model.alphabet[symbols].astype(np.int64), rate, order, info)

    CORPORA.register(
        name, summary=f"synthetic: order-{order} k-gram resample of tinyshakespeare; mixing demand {order}"
    )(factory)


for _V, _k in ((4, 2), (8, 2), (16, 2), (4, 3), (8, 3)):
    for _a in (0.1, 1.0):
        _register_markov(_V, _k, _a)
for _m in (2, 4, 8):
    _register_recall(_m)
for _m in (2, 4, 8):
    _register_mqar(_m)
_register_mqar(2, queries=4)  # mqar-p2r: the learnable recall control (RESULTS.md)
_register_mqar(4, queries=8)  # mqar-p4r: 4 pairs, each asked about twice: learned by ~700 steps (RESULTS.md)
for _L in (4, 8, 16):
    _register_lagcopy(_L)
for _k in range(1, 7):
    _register_kgram(_k)


# -- byte corpora --------------------------------------------------------------------------


def byte_corpus(name: str, kind: str, data: bytes, source: str) -> Corpus:
    """Byte-level tokens (vocabulary 256) of ``data`` with its compression estimates."""
    if not data:
        raise DataError(f"The corpus '{name}' is empty.")
    tokens = np.frombuffer(data, dtype=np.uint8).astype(np.int64)
    return Corpus(name, kind, tokens, compression=compression_bits_per_char(data), source=source)


def stdlib_files() -> list[Path]:
    """The standard library's ``.py`` files, sorted by relative path, tests and site-packages left out."""
    root = Path(sysconfig.get_paths()["stdlib"])
    files = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in EXCLUDED_PARTS]  # prune site-packages and tests
        files.extend(Path(folder) / n for n in names if n.endswith(".py"))
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


@CORPORA.register("stdlib_code", summary="the Python standard library's own source files (bytes)")
def stdlib_corpus(n_tokens: int, seed: int = 0, window_seed: int | None = None) -> Corpus:
    """The first ``n_tokens`` bytes of the concatenated standard library sources, from the first
    file or a drawn one (``window_seed``; ``seed`` unused)."""
    chunks, size = [], 0
    for path in rotated(stdlib_files(), window_seed):
        data = path.read_bytes()
        chunks.append(data[: n_tokens - size])
        size += len(chunks[-1])
        if size >= n_tokens:
            break
    root = sysconfig.get_paths()["stdlib"]
    return byte_corpus("stdlib_code", "code", b"".join(chunks), f"{len(chunks)} files of {root}")


def shakespeare_bytes(n_tokens: int = -1) -> bytes:
    """The first ``n_tokens`` bytes of the shipped tinyshakespeare (all of it for ``-1``)."""
    packed = resources.files("entropic_bound.language_models.corpora").joinpath(
        "data", "tinyshakespeare.txt.gz"
    )
    with packed.open("rb") as raw, gzip.open(raw) as fh:
        return fh.read(n_tokens)


@CORPORA.register("tinyshakespeare", summary="natural: Shakespeare's plays (tinyshakespeare, shipped)")
def shakespeare_corpus(n_tokens: int, seed: int = 0, window_seed: int | None = None) -> Corpus:
    """``n_tokens`` bytes of tinyshakespeare, from the package data: its beginning, or a window
    drawn from ``window_seed`` (``seed`` unused)."""
    data = text_window(shakespeare_bytes(), n_tokens, window_seed)
    return byte_corpus(
        "tinyshakespeare",
        "natural",
        data,
        "entropic_bound/language_models/corpora/data/tinyshakespeare.txt.gz",
    )


@CORPORA.register(
    "shakespeare-shuffled", summary="natural: tinyshakespeare with word order shuffled within sentences"
)
def shakespeare_shuffled_corpus(n_tokens: int, seed: int = 0, window_seed: int | None = None) -> Corpus:
    """``n_tokens`` bytes of tinyshakespeare with each sentence's words permuted
    (:func:`~.ladder.shuffle_within_sentences`, drawn from ``seed``): word statistics kept,
    word order gone; the beginning, or a window drawn from ``window_seed``."""
    text = shakespeare_bytes().decode("utf-8")
    shuffled = shuffle_within_sentences(text, np.random.default_rng([seed, 7])).encode("utf-8")
    shuffled = text_window(shuffled, n_tokens, window_seed)
    return byte_corpus(
        "shakespeare-shuffled",
        "natural",
        shuffled,
        f"tinyshakespeare, words shuffled within sentences, seed {seed}",
    )


def pydoc_prose_text() -> str:
    """The prose paragraphs of ``pydoc_data.topics``, topics in sorted order: lines indented by a
    space or more (code, grammar, tables) and heading rules (``***``, ``===``, ``---``) removed,
    runs of blank lines collapsed."""
    from pydoc_data.topics import topics

    keep = []
    for key in sorted(topics):
        for line in topics[key].splitlines():
            if line.startswith(" ") or (line and set(line) <= set("*=-~^")):
                continue
            keep.append(line)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(keep))


@CORPORA.register("pydoc_prose", summary="natural: English prose of the Python reference (pydoc_data.topics)")
def pydoc_prose_corpus(n_tokens: int, seed: int = 0, window_seed: int | None = None) -> Corpus:
    """``n_tokens`` UTF-8 bytes of :func:`pydoc_prose_text`: its beginning, or a window drawn from
    ``window_seed`` (``seed`` unused)."""
    data = text_window(pydoc_prose_text().encode("utf-8"), n_tokens, window_seed)
    return byte_corpus("pydoc_prose", "natural", data, "pydoc_data.topics (prose lines)")


#: the corpora read from a fixed text, whose factories take a ``window_seed`` (a later draw's window)
WINDOWED = {
    "stdlib_code",
    "tinyshakespeare",
    "shakespeare-shuffled",
    "pydoc_prose",
    *PACKAGE_TEXTS,
    *DEBIAN_TEXTS,
}


CORPUS_ROLES.update(
    {"stdlib_code": CODE, "tinyshakespeare": NATURAL, "shakespeare-shuffled": NATURAL, "pydoc_prose": NATURAL}
)


def _register_text(
    name: str, summary: str, read: Callable[[str, int, int | None], tuple[bytes, str]]
) -> None:
    """A natural corpus whose bytes and source line ``read(name, n_bytes, window_seed)`` gives."""
    CORPUS_ROLES[name] = NATURAL

    def factory(n_tokens: int, seed: int = 0, window_seed: int | None = None) -> Corpus:  # seed unused
        data, source = read(name, n_tokens, window_seed)
        return byte_corpus(name, "natural", data, source)

    CORPORA.register(name, summary=summary)(factory)


for _name, _text in PACKAGE_TEXTS.items():
    _owner = _text.package or "the Python standard library"
    _register_text(_name, f"natural: English docstrings of {_owner}", docstring_bytes)
for _name, _debian in DEBIAN_TEXTS.items():
    _summary = f"natural ({_debian.language}): {_debian.register}; Debian package {_debian.package}"
    _register_text(_name, _summary, debian_bytes)


def text_corpus(path: str | Path, n_tokens: int) -> Corpus:
    """The first ``n_tokens`` bytes of a text file, byte-level tokens; name ``text:<file stem>``."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"The corpus file '{path}' does not exist.")
    with path.open("rb") as fh:
        data = fh.read(n_tokens)
    return byte_corpus(text_name(path), "natural", data, str(path))


#: An own corpus shorter than this cannot fill the held-out split and the training windows of the
#: smallest model (``task.tokens`` may not go below it either).
MIN_TEXT_BYTES = 1000


def text_file_problem(path: str | Path) -> str:
    """Why ``path`` cannot be an own corpus ('' when it can): the byte-level models learn text, and a
    binary file's held-out loss has no structure to find (its statistics divide by zero)."""
    data = Path(path).read_bytes()
    if len(data) < MIN_TEXT_BYTES:
        return f"has {len(data)} bytes; expected UTF-8/ASCII text of at least {MIN_TEXT_BYTES} bytes"
    problem = not_text_reason(data)
    return f"{problem}; expected UTF-8/ASCII text, e.g. a .txt file" if problem else ""


def text_name(path: str | Path) -> str:
    return f"text:{Path(path).stem}"


def file_digest(path: str | Path) -> str:
    """First 16 hex digits of the sha256 of a file (part of a run's identity)."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"The corpus file '{path}' does not exist.")
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def corpus_role(name: str) -> CorpusRole:
    """The role of a corpus name without loading it: a user's text file (``text:<stem>``) is natural
    language; a name no corpus is registered under fails listing the registered ones."""
    if name.startswith("text:"):
        return NATURAL
    CORPORA.get(name)
    return CORPUS_ROLES[name]


def corpus_kind(name: str) -> str:
    """The kind of a corpus name without loading it (a name not registered counts as natural)."""
    return CORPUS_ROLES.get(name, NATURAL).kind


def expected_mixing(name: str) -> tuple[str, ...]:
    """The head categories a control corpus's models must show; empty for any other source name."""
    role = CORPUS_ROLES.get(name)
    return role.expected_mixing if role is not None else ()


def load_corpus(
    name: str, n_tokens: int, seed: int, path: str | None = None, window_seed: int | None = None
) -> Corpus:
    """A registered corpus by name, or the text file ``path`` when ``name`` starts with ``text:``;
    a fixed text (:data:`WINDOWED`) from its beginning, or from a window drawn from ``window_seed``."""
    if n_tokens < 16:
        raise UserInputError(f"The 'n_tokens' parameter must be an int >= 16. Got {n_tokens} instead.")
    if name.startswith("text:"):
        if path is None:
            raise UserInputError(f"The text corpus '{name}' needs a file path.")
        return text_corpus(path, n_tokens)
    factory = CORPORA.get(name)
    if window_seed is not None and name in WINDOWED:
        return factory(n_tokens, seed, window_seed=window_seed)
    return factory(n_tokens, seed)
