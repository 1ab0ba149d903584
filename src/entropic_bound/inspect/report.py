"""How an inspection is printed: the compact terminal table (≤ 120 columns), the wide one, CSV and JSON.

The compact table keeps one column per idea under a short header, explained in a legend under the
table; ``wide=True`` prints every column under its full name. NaN prints as ``n/a`` (Gavish–Donoho
on a weight product, a positional share with all-uniform mixers).
"""

from __future__ import annotations

import io
import json
import textwrap

import numpy as np
import pandas as pd

from .model import GD_REASON_KEY, InspectResult

#: ``(column, short header)`` of the compact table, in print order; absent columns are skipped.
COMPACT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("layer", "L"),
    ("head", "H"),
    ("kv_head", "kv"),
    ("numerical_rank", "num"),
    ("energy_effective_rank", "energy"),
    ("entropy_effective_rank", "entropy"),
    ("stable_rank", "stable"),
    ("largest_gap_rank", "gap"),
    ("optimal_hard_threshold", "GD"),
    ("sv_1", "sv1"),
    ("sink_score", "sink"),
    ("locality_mass", "local"),
    ("positional_prior_explained", "pos"),
    ("mixer_energy_effective_rank", "mix_energy"),
    ("logit_field_explained", "field"),
    ("logit_field_rank_90", "field_r90"),
)
MAX_WIDTH = 120


def _cell(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, float):
        return "n/a" if value != value else f"{value:.3g}" if abs(value) >= 1000 else f"{value:.3f}"
    return str(value)


def _render(frame: pd.DataFrame) -> str:
    cells = frame.map(_cell) if hasattr(frame, "map") else frame.applymap(_cell)
    return cells.to_string(index=False)


def _legend(shown: list[tuple[str, str]]) -> list[str]:
    """``short = full`` pairs, wrapped at :data:`MAX_WIDTH`."""
    lines, line = [], "columns:"
    for full, short in shown:
        if short == full:
            continue
        item = f" {short} = {full};"
        if len(line) + len(item) > MAX_WIDTH:
            lines.append(line)
            line = "        "
        line += item
    return [*lines, line.rstrip(";")]


def _wrap(line: str) -> str:
    return textwrap.fill(line, MAX_WIDTH, subsequent_indent="      ", break_long_words=True)


def header_line(result: InspectResult) -> str:
    c = result.config
    return (
        f"{result.model}: {c.arch}, {c.n_layers} layers x {c.n_heads} heads ({c.n_kv_heads} kv), "
        f"d_model={c.d_model}, d_head={c.d_head}, fold_ln={result.fold_ln}"
    )


def format_table(result: InspectResult, *, wide: bool = False) -> str:
    """The terminal report: a header line, the per-head table, a legend (compact) and the notes."""
    table = result.table.drop(columns=[GD_REASON_KEY], errors="ignore")
    if wide:
        shown = [(c, c) for c in table.columns]
    else:
        shown = [(c, short) for c, short in COMPACT_COLUMNS if c in table]
    body = _render(table[[c for c, _ in shown]].set_axis([s for _, s in shown], axis=1))
    lines = [_wrap(header_line(result)), body]
    if not wide:
        lines += _legend(shown)
    if result.text_info:
        t = result.text_info
        without = t.get("sink_ratio_without_bos")
        lines.append(
            _wrap(
                f"text: {t['source']}, {t['windows']} windows x {t['window_len']} tokens ({t['tokenizer']}); "
                f"sink ({t['sink_definition']}, > {t['sink_threshold']}) in {t['sink_ratio']:.0%} of heads"
                + (f" ({without:.0%} without the BOS)" if without is not None else "")
                + f"; token 0 is {t['first_token']}"
            )
        )
    if "decomposition_content_share" in table:
        lines.append(_wrap(decomposition_line(table)))
    lines += [_wrap(f"note: {note}") for note in result.notes]
    return "\n".join(lines)


def decomposition_line(table: pd.DataFrame) -> str:
    """One line: the median over heads of each part's net energy share and of the content's rank."""
    from .logit_decomposition import LEVEL, PARTS

    shares = ", ".join(f"{p} {_cell(float(table[f'decomposition_{p}_share'].median()))}" for p in PARTS)
    rank = _cell(float(table["decomposition_content_rank"].median()))
    return (
        f"logit field taken apart (median over heads; energy shares net of overfit, columns decomposition_*): "
        f"{shares}; content-remainder rank {rank} (energy_threshold_rank, tau = {LEVEL})"
    )


def format_csv(result: InspectResult) -> str:
    """The per-head table as CSV (floats to 6 significant digits, NaN as an empty field). The reason
    Gavish–Donoho is empty is the same for every head, so it is said once, in the notes of the JSON and
    the table, not repeated on every row."""
    buffer = io.StringIO()
    table = result.table.drop(columns=[GD_REASON_KEY], errors="ignore")
    warning = (result.text_info or {}).get("text_warning")
    if warning:  # a CSV read on its own still says its realised columns are degenerate
        table = table.assign(text_warning=warning)
    table.to_csv(buffer, index=False, float_format="%.6g")
    return buffer.getvalue()


def format_json(result: InspectResult) -> str:
    return json.dumps(result.to_json(), allow_nan=False)
