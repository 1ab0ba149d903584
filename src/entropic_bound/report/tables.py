"""Tables in the report: previews of at most ``PREVIEW_ROWS`` rows that link to the full CSV, and
small key/value tables (settings, provenance). Every table sits in its own scrolling box so the
page never grows wider than the window."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd

from .format import number

PREVIEW_ROWS = 10


def _cell(value) -> str:
    if value is None or value is pd.NA:
        return "—"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return number(float(value), digits=4)
    return html.escape(str(value))


def dataframe_html(df: pd.DataFrame, max_rows: int = PREVIEW_ROWS) -> str:
    """The first ``max_rows`` rows of ``df`` as an HTML table inside a scrolling box."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    rows = []
    for values in df.head(max_rows).itertuples(index=False):
        rows.append("<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in values) + "</tr>")
    return f"<div class=scroll><table class=data><tr>{head}</tr>{''.join(rows)}</table></div>"


def table_preview(df: pd.DataFrame, csv_href: str, title: str, anchor: str) -> str:
    """A titled preview with a link to the full CSV (which holds every row)."""
    shown = min(len(df), PREVIEW_ROWS)
    note = (
        f"all {len(df)} rows"
        if shown == len(df)
        else f"first {shown} of {len(df)} rows; every row is in the CSV"
    )
    link = f'<a href="{html.escape(csv_href)}">{html.escape(csv_href)}</a>'
    return (
        f"<h4 id='{html.escape(anchor)}'>{html.escape(title)}</h4>"
        f"<p class=small>{note}: {link}</p>{dataframe_html(df, PREVIEW_ROWS)}"
    )


def key_value_html(rows: list[tuple[str, ...]], header: tuple[str, ...] | None = None) -> str:
    """A small table of already-readable strings (settings, provenance)."""
    head = "<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr>" if header else ""
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<div class=scroll><table class=kv>{head}{body}</table></div>"
