"""Tables in the report: previews of at most ``PREVIEW_ROWS`` rows that link to the full CSV, and
small key/value tables (settings, provenance). A column whose name does not say what it holds
(:mod:`.glossary`) has its meaning as the header's tooltip and in a legend above the rows. No table is wider than the page: headers break after
``_`` and ``.``, long cells wrap (CSS in ``html.py``), and a table with more than ``MAX_COLUMNS``
columns is shown transposed (one row per column), which a 10-row preview keeps narrow."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd

from .format import number
from .glossary import column_meaning

PREVIEW_ROWS = 10
MAX_COLUMNS = 16  # ≈ 1,288 px of page / ~80 px per wrapped numeric column


def breakable(text) -> str:
    """Escaped ``text`` that may break after ``_``, ``.`` or ``/`` (``exact_energy_threshold_rank_90``,
    ``softmax_log_attention``): long names wrap instead of widening their column."""
    escaped = html.escape(str(text))
    for ch in "_./":
        escaped = escaped.replace(ch, ch + "<wbr>")
    return escaped


def _cell(value) -> str:
    if value is None or value is pd.NA:
        return "—"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return number(float(value), digits=4)
    return breakable(value)


def dataframe_html(df: pd.DataFrame, max_rows: int = PREVIEW_ROWS) -> str:
    """The first ``max_rows`` rows of ``df`` as an HTML table; transposed when it has many columns."""
    shown = df.head(max_rows)
    if shown.shape[1] > MAX_COLUMNS:
        head = "<tr><th>column</th>" + "".join(f"<th>row {i + 1}</th>" for i in range(len(shown))) + "</tr>"
        rows = [
            f"<tr>{_header(c)}" + "".join(f"<td>{_cell(v)}</td>" for v in shown[c]) + "</tr>"
            for c in shown.columns
        ]
        return f"<div class=scroll><table class='data transposed'>{head}{''.join(rows)}</table></div>"
    head = "".join(_header(c) for c in df.columns)
    rows = []
    for values in shown.itertuples(index=False):
        rows.append("<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in values) + "</tr>")
    return f"<div class=scroll><table class=data><tr>{head}</tr>{''.join(rows)}</table></div>"


def _header(column) -> str:
    meaning = column_meaning(str(column))
    title = f" title='{html.escape(meaning, quote=True)}'" if meaning else ""
    return f"<th{title}>{breakable(column)}</th>"


def column_legend(columns) -> str:
    """A line naming what each column of ``columns`` found in the glossary holds (none: nothing)."""
    known = [(c, column_meaning(str(c))) for c in columns]
    items = [f"<b>{html.escape(str(c))}</b>: {html.escape(m)}" for c, m in known if m]
    return f"<p class='small legend'>Columns. {'; '.join(items)}.</p>" if items else ""


def table_preview(df: pd.DataFrame, csv_href: str, title: str, anchor: str) -> str:
    """A titled preview, collapsed to one line (name, size, the full CSV) until opened; opened, it
    shows the legend of its columns and the first rows."""
    shown = min(len(df), PREVIEW_ROWS)
    note = (
        f"all {len(df)} rows"
        if shown == len(df)
        else f"first {shown} of {len(df)} rows; every row is in the CSV"
    )
    if df.shape[1] > MAX_COLUMNS:
        note += f" (shown transposed: {df.shape[1]} columns, one per row)"
    link = f'<a href="{html.escape(csv_href)}">{html.escape(csv_href)}</a>'
    return (
        f"<details class=table id='{html.escape(anchor)}'><summary><b>{html.escape(title)}</b> "
        f"<span class=small>{len(df)} rows × {df.shape[1]} columns</span></summary>"
        f"<p class=small>{note}: {link}</p>{column_legend(df.columns)}{dataframe_html(df, PREVIEW_ROWS)}</details>"
    )


def key_value_html(rows: list[tuple[str, ...]], header: tuple[str, ...] | None = None) -> str:
    """A small table of already-readable strings (settings, provenance)."""
    head = "<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr>" if header else ""
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<div class=scroll><table class=kv>{head}{body}</table></div>"
