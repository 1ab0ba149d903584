"""The table of E7's natural corpora in docs/corpora.md, measured from the corpora themselves.

``python -m tools.corpus_table docs/corpora.md`` rewrites the ``natural-corpora`` block (between
``<!-- generated: natural-corpora -->`` and ``<!-- end generated -->``): for every natural corpus of
the paper grid, the paper's token budget loaded as a run loads it (draw 0) and its complexity
measured as E7's runs measure it (:func:`compression_bits_per_char` on the whole corpus; the
held-out Witten–Bell k-gram on the run's split), with no model trained.
"""

from __future__ import annotations

import sys
from pathlib import Path

from entropic_bound.experiments.e7_language.config import PAPER_CORPORA, SCALE_SETTINGS
from entropic_bound.language_models.corpora.catalogue import CORPORA, VOCAB, corpus_role, load_corpus
from entropic_bound.language_models.corpora.complexity import kgram_heldout_bits, order_estimate
from entropic_bound.language_models.corpora.debian_texts import DEBIAN_TEXTS
from tools.docs_tables import replace_block

HEADER = (
    "| corpus | language | what | tokens | lzma | bz2 | k-gram | order | complexity (C11) |\n"
    "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
)


def corpus_row(name: str) -> str:
    """One corpus: its budget loaded, bits per byte under each estimate, and C11's complexity
    (the smallest of them: ``compression_bits``, what a natural corpus's ``information_bits`` is)."""
    task = SCALE_SETTINGS["paper"]["task"]
    corpus = load_corpus(name, task.tokens, seed=0)
    cut = int(len(corpus.tokens) * (1 - task.val_fraction))
    kgram = kgram_heldout_bits(corpus.tokens[:cut], corpus.tokens[cut:], VOCAB, task.kgram_max_order)
    lzma, bz2, best = corpus.compression["lzma"], corpus.compression["bz2"], min(kgram.values())
    text = DEBIAN_TEXTS.get(name)
    language = text.language if text else "en"
    what = text.register if text else CORPORA.summary(name).removeprefix("natural: ")
    return (
        f"| `{name}` | {language} | {what} | {len(corpus.tokens):,} | {lzma:.3f} | {bz2:.3f} | "
        f"{best:.3f} | {order_estimate(kgram)} | {min(lzma, bz2, best):.3f} |"
    )


def natural_table() -> str:
    rows = [corpus_row(c) for c in PAPER_CORPORA if corpus_role(c).kind == "natural"]
    return "\n".join([HEADER, *rows])


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0] if args else "docs/corpora.md")
    path.write_text(replace_block(path.read_text(), "natural-corpora", natural_table()))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
