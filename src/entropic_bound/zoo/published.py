"""The published figures the model-zoo page sets beside its measurements, each with where it was read.

Only numbers read from a retrieved source are quoted, and each names that source: Gu et al.'s sink
rates are Table 1 of their paper as a Markdown transcription of it gives them (the PDF itself was not
at hand), their metric is the authors' own script; Lee's ranges are the paper's headline figures,
which could not be checked against the paper here. Models a paper shows only in a plot (Gu et al.'s
Pythia, OPT and smaller GPT-2 models) get no number.
"""

from __future__ import annotations

GU_2025 = (
    'X. Gu, T. Pang, C. Du, Q. Liu, F. Zhang, C. Du, Y. Wang, M. Lin. "When Attention Sink Emerges in '
    'Language Models: An Empirical View." The Thirteenth International Conference on Learning '
    "Representations (ICLR), 2025 (spotlight); arXiv 2410.10781 (https://arxiv.org/abs/2410.10781); "
    "code: https://github.com/sail-sg/Attention-Sink"
)
LEE_2026 = (
    'W. Lee. "Compressible Softmax-Attended Language under Incompressible Attention." arXiv 2604.04384, '
    "2026 (https://arxiv.org/abs/2604.04384)"
)

#: Where Gu et al.'s numbers below were read.
GU_2025_SOURCE = (
    "Table 1 (p. 5) of Gu et al. 2025, read from the Markdown transcription of the paper in "
    "github.com/viktor-shcherb/msc_thesis, `references/2025-04-attention-sink-emerges/sections/"
    "03_properties-of-attention-sink.md` (commit a6577d1), not from the PDF; the metric from the "
    "authors' `eval_sink_open_source.py` (github.com/sail-sg/Attention-Sink, commit 663f658)"
)

#: Gu et al.'s Sink_1^ε (ε = 0.3, T = 64), in %: ``(model, natural text, random tokens, one token
#: repeated)`` (Table 1, left).
GU_2025_SINK_RATES = (
    ("GPT2-XL", 77.00, 70.29, 62.28),
    ("Mistral-7B", 97.49, 75.21, 0.00),
    ("LLaMA2-7B Base", 92.47, 90.13, 0.00),
    ("LLaMA3-8B Base", 99.02, 91.23, 0.00),
)

#: The same metric on natural text, ``(model, base, chat)`` in % (Table 1, right): instruction tuning
#: leaves it nearly where it was.
GU_2025_BASE_VS_CHAT = (
    ("Mistral-7B", 97.49, 88.34),
    ("LLaMA2-7B", 92.47, 92.88),
    ("LLaMA2-13B", 91.69, 90.94),
    ("LLaMA3-8B", 99.02, 98.85),
)

#: ``(source, what it reports, what in the zoo's table to compare it with)``.
PUBLISHED = (
    (
        "Lee 2026",
        "over 5,888 KV heads of five LMs (124M–7B parameters) the logit energy field reaches 90 % in 2–11 "
        "components, while the learned W_Q W_Kᵀ needs 38–75 (the paper's headline figures; not checked "
        "against the paper here, no copy of it could be retrieved offline)",
        "compare `logit field rank 90 %` and `static energy rank 90 %`",
    ),
    (
        "Gu et al. 2025",
        "a head is a sink head when its attention to the first token, averaged over all queries of a "
        "64-token sequence, exceeds ε = 0.3; Sink_1^ε, the share of such heads, is 77.00 % (GPT2-XL) to "
        "99.02 % (LLaMA3-8B Base) on natural text (table below); sinks emerge during pre-training",
        "compare `sink heads (gu2025)` of the trained models, and their `-random` controls",
    ),
)


def _percent(value: float) -> str:
    return f"{value:.2f} %"


def published_lines() -> list[str]:
    """The page's section of published figures: the comparison table and Gu et al.'s sink rates."""
    lines = [
        "## Published figures they compare with",
        "",
        "| source | reported | compare with |",
        "|---|---|---|",
        *(f"| {src} | {what} | {how} |" for src, what, how in PUBLISHED),
        "",
        "### Gu et al. 2025's sink rates",
        "",
        f"Sink_1^ε with ε = 0.3 and T = 64 tokens, in % of heads; {GU_2025_SOURCE}.",
        "",
        "| model | natural text | random tokens | one token repeated |",
        "|---|---|---|---|",
        *(f"| {m} | {' | '.join(map(_percent, rates))} |" for m, *rates in GU_2025_SINK_RATES),
        "",
        "| model (natural text) | base | chat |",
        "|---|---|---|",
        *(f"| {m} | {' | '.join(map(_percent, rates))} |" for m, *rates in GU_2025_BASE_VS_CHAT),
        "",
        "Pythia (14M–12B), OPT (125M–13B) and the smaller GPT-2 models appear in the paper only as plots "
        "(its Figures 4 and 10), so no rate is quoted for them. How the `gu2025` column above differs: both "
        "average a head's attention on token 0 over every query of a 64-token window and count the heads "
        "above ε = 0.3, but the authors' script thresholds each sequence's score and averages the indicator "
        "over sequences, layers and heads, while the zoo thresholds each head's score averaged over its 16 "
        "windows; their text is their own natural-text probe set (the input domain moves the metric little, "
        "their Appendix C.2), the zoo's is tinyshakespeare; none of the zoo's models is in their table.",
        "",
    ]
    return lines


def reference_lines() -> list[str]:
    return ["## References", "", f"- {GU_2025}.", f"- {LEE_2026}.", ""]
