"""The zoo page's sections on the logit field taken apart, on Gu et al.'s three inputs and on size:
tables and sentences generated from the measured numbers (nothing in them is written by hand).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .published import GU_2025_SINK_RATES
from .sink_inputs import INPUT_HEADINGS, INPUTS
from .size_trend import LABELS, STATISTICS, TrendPoint


def _table(heads: list[str], rows: list[list[str]]) -> list[str]:
    return [
        "| " + " | ".join(heads) + " |",
        "|" + "---|" * len(heads),
        *("| " + " | ".join(r) + " |" for r in rows),
    ]


def _interval(value: float, interval: tuple[float, float], percent: bool = False) -> str:
    if percent:
        return f"{value:.0%} ({interval[0]:.0%}–{interval[1]:.0%})"
    return f"{value:.3g} ({interval[0]:.3g}–{interval[1]:.3g})"


def decomposition_lines(tables: dict[str, pd.DataFrame]) -> list[str]:
    """Per model the median over heads of each part's net energy share and of the ranks."""
    parts = ("sink", "band", "position", "content")
    heads = ["model", *(f"{p} share" for p in parts), "field rank 90 %", "content rank 90 %"]
    rows = []
    for name, t in tables.items():
        cells = [f"{t[f'decomposition_{p}_share'].median():.2f}" for p in parts]
        cells += [f"{t[f'decomposition_{c}_rank'].median():.3g}" for c in ("field", "content")]
        rows.append([f"`{name}`", *cells])
    return [
        "## The logit field taken apart",
        "",
        "Each head's realised logit field (log-attention centred over the keys each query sees, per "
        "window) split by nested least squares, in this order, into a sink column (each window's logits on "
        "token 0), a band (a function of i − j within ±2 tokens, shared by the windows), a position-only "
        "part (a function of (i, j) shared by the windows) and the content remainder; shares are of the "
        "field's energy, net of what each part's free parameters take from noise; ranks are "
        "`energy_threshold_rank` (τ = 0.9) of each window's n × n matrix, averaged over windows (see "
        "`docs/inspect.md`). Median over heads:",
        "",
        *_table(heads, rows),
        "",
    ]


def _published_range(column: int) -> str:
    values = [rates[column] for _, *rates in GU_2025_SINK_RATES]
    return f"{min(values):.2f}–{max(values):.2f} %"


def sink_input_lines(shares: dict[str, dict[str, np.ndarray]]) -> list[str]:
    """Per model the share of sink heads on each input, mean over windows with its 95 % interval."""
    from ..stats.unit_intervals import unit_bootstrap

    rows = []
    for name, per_input in shares.items():
        cells = []
        for kind in INPUTS:
            w = per_input[kind]
            cells.append(
                _interval(*unit_bootstrap(np.arange(len(w)), lambda i, w=w: float(w[i].mean())), True)
            )
        rows.append([f"`{name}`", *cells])
    published = ", ".join(
        f"{heading} {_published_range(k)}"
        for k, heading in enumerate(("natural text", "random tokens", "one token repeated"))
    )
    return [
        "## Sink heads on Gu et al.'s three inputs",
        "",
        "Gu et al.'s metric (a head is a sink head in a window when its attention on token 0, averaged over "
        "every query, exceeds ε = 0.3; the share averages over windows, layers and heads) on the zoo's "
        "windows, on random token ids between the same start tokens, and on each window's first text token "
        "repeated, after the start token and with none (see `entropic_bound.zoo.sink_inputs`). Mean over "
        "windows (95 % interval over windows, percentile bootstrap):",
        "",
        *_table(["model", *(INPUT_HEADINGS[k] for k in INPUTS)], rows),
        "",
        f"Their Table 1 (below), {', '.join(m for m, *_ in GU_2025_SINK_RATES)}: {published}. "
        "How their repeated-token input began (with a start token or not) is not stated in what was read "
        "here; their 0 % for the rotary models (Mistral, LLaMA) is what the last column gives when no "
        "token differs from the others but by its position.",
        "",
    ]


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def _step(a: TrendPoint, b: TrendPoint, key: str) -> int:
    """+1 / −1 when ``key`` rises / falls from ``a`` to ``b`` with disjoint intervals, else 0."""
    (va, ia), (vb, ib) = a.values[key], b.values[key]
    return 0 if _overlap(ia, ib) else int(np.sign(vb - va))


def size_sentence(key: str, trained: list[TrendPoint]) -> str:
    """What ``key`` does across the trained models in order of size, read off the intervals: a step
    counts only when the two models' intervals are disjoint."""
    chain = " → ".join(f"`{p.name}` {_interval(*p.values[key])}" for p in trained)
    steps = [_step(a, b, key) for a, b in zip(trained, trained[1:])]
    overall = _step(trained[0], trained[-1], key)
    resolved = sum(s != 0 for s in steps)
    if overall == 0:
        return f"- {LABELS[key]}: no change with size that the windows resolve ({chain})."
    word = "rises" if overall > 0 else "falls"
    if all(s in (0, overall) for s in steps):
        how = (
            "at every step"
            if resolved == len(steps)
            else f"({resolved} of {len(steps)} steps resolved, the rest flat)"
        )
        return f"- {LABELS[key]}: {word} with size {how}: {chain}."
    return (
        f"- {LABELS[key]}: {word} from the smallest to the largest model, but not in order of size: {chain}."
    )


def control_sentence(key: str, points: list[TrendPoint]) -> str:
    """How ``key`` of each trained model compares with its random control (disjoint intervals only)."""
    by_name = {p.name: p for p in points}
    above = below = unresolved = 0
    pairs = [(p, by_name.get(p.name + "-random")) for p in points if p.trained]
    for trained, control in pairs:
        if control is None:
            continue
        (v, iv), (c, ic) = trained.values[key], control.values[key]
        if _overlap(iv, ic):
            unresolved += 1
        elif v > c:
            above += 1
        else:
            below += 1
    counted = above + below + unresolved
    return (
        f"- {LABELS[key]}: trained above its random control in {above} of {counted} models, below in "
        f"{below}, not resolved in {unresolved}."
    )


def trend_lines(points: list[TrendPoint], figure: str) -> list[str]:
    """The size section: the table, the figure and what changes with size, all from ``points``."""
    heads = ["model", "parameters", *(label for _, label in STATISTICS)]
    rows = [
        [f"`{p.name}`", f"{p.parameters / 1e6:.1f} M", *(_interval(*p.values[k]) for k, _ in STATISTICS)]
        for p in points
    ]
    trained = sorted((p for p in points if p.trained), key=lambda p: p.parameters)
    lines = [
        "## Against model size",
        "",
        "Parameters counted on the loaded model (tied weights once, embeddings included). Each cell: the "
        "statistic (95 % interval); the ranks and energy shares are medians over heads of each head's "
        "mean over windows, their intervals resample windows (percentile bootstrap, heads' decompositions "
        "held fixed); the static rank's interval resamples heads (it depends on no window).",
        "",
        *_table(heads, rows),
        "",
        f"![against parameter count]({figure})",
        "",
        "Filled circles: trained weights; hollow squares: the random-weight control, drawn a little to the "
        "right of its model; bars: 95 % intervals.",
        "",
    ]
    if len(trained) >= 2:
        lines += [
            f"What changes with size across the {len(trained)} trained models (their intervals compared; the "
            "models differ in architecture, tokenizer, data and objective too, so size is not the only "
            "thing that changes along the axis):",
            "",
            *(size_sentence(key, trained) for key, _ in STATISTICS),
            "",
            "Against the random-weight controls (same architecture, same parameter count):",
            "",
            *(control_sentence(key, points) for key, _ in STATISTICS),
            "",
        ]
    return lines
