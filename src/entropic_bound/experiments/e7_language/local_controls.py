"""Which Markov sources are C13's *local* controls: those an in-context lookup cannot answer.

A Markov source whose order-k context has already occurred earlier in the model's window for most
targets can be answered by content routing (an induction-style lookup) as well as by a local band
(:mod:`entropic_bound.language_models.corpora.recurrence`), so its models may route by content without the instrument
being wrong. Such a source stays in the grid and in the control report, but is not *required* to
come out local (``verdict.c13_local_max_recurrence``; 1.0 requires every Markov source).
"""

from __future__ import annotations

from functools import lru_cache

from ...language_models.corpora.catalogue import expected_mixing, load_corpus
from ...language_models.corpora.recurrence import context_recurrence
from ..framework.draws import Seeds


@lru_cache(maxsize=64)
def markov_recurrence(name: str, tokens: int, seed: int, n_ctx: int, seeds: Seeds) -> float:
    """Share of targets whose context recurs earlier in the window, on the corpus E7 trains on."""
    corpus = load_corpus(name, tokens, seeds.seed("corpus", name, seed))
    return context_recurrence(corpus.tokens, corpus.mixing_demand, n_ctx)[0]  # a Markov source's order


def markov_recurrences(cfg, names: list[str], seeds: Seeds) -> dict[str, float]:
    """``{name: recurrence}`` of the Markov corpora among ``names``, in the grid's own corpus and window."""
    return {
        n: markov_recurrence(n, cfg.task.tokens, cfg.task.seed, cfg.model.n_ctx, seeds)
        for n in names
        if expected_mixing(n) == ("local",)  # a Markov source: its mixing demand is its order
    }


def not_local_only(cfg, names: list[str], seeds: Seeds) -> dict[str, float]:
    """The Markov controls an in-context lookup can answer: recurrence ≥ ``c13_local_max_recurrence``."""
    bound = cfg.verdict.c13_local_max_recurrence
    if bound >= 1.0:  # every Markov source required: no corpus to read
        return {}
    return {n: r for n, r in markov_recurrences(cfg, names, seeds).items() if r >= bound}
