"""Can in-context copying answer a Markov source? No training: the registered sources themselves.

    python bench/lm_controls/copy_availability.py [--tokens 60000] [--n-ctx 32]

For each order-k Markov corpus, over non-overlapping windows of ``n_ctx + 1`` tokens: how often the
current k-token context already occurred earlier in the window (``recurs``), and how often the token
that followed it then is the next token now (``copy_right``, among those). Where both are high, a
content-addressed head ("find where this context was, read what came next" — an induction-style
lookup) predicts the source nearly as well as its transition table, so a trained model may answer
with content routing instead of (or beside) a local band: why the 4-symbol sources fail C13's
"Markov heads are local" expectation (docs/claims.md, C13) while the 8- and 16-symbol ones do not.
"""

from __future__ import annotations

import argparse

import numpy as np

from entropic_bound.experiments.framework.grid import derive_seed
from entropic_bound.language_models.corpora.catalogue import CORPORA, load_corpus
from entropic_bound.language_models.corpora.recurrence import context_recurrence


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=60_000)
    parser.add_argument("--n-ctx", type=int, default=32)
    args = parser.parse_args()
    print(f"{'corpus':<22}{'rate bits':>10}{'recurs':>8}{'copy_right':>12}{'product':>9}")
    for name in (n for n in CORPORA.names() if n.startswith("markov_")):
        corpus = load_corpus(name, args.tokens, derive_seed("E7/corpus", name, 0))
        recurs, right = context_recurrence(np.asarray(corpus.tokens), corpus.mixing_demand, args.n_ctx)
        print(
            f"{name:<22}{corpus.entropy_rate_bits:>10.3f}{recurs:>8.2f}{right:>12.2f}{recurs * right:>9.2f}"
        )


if __name__ == "__main__":
    main()
