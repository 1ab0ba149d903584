"""A verdict's evidence as people read it: one line of key numbers, and the whole of it as nested tables.

The one line comes, in order of preference, from the verdict's own ``evidence["summary"]`` (an
experiment may write its own), from the claim's formatter in :mod:`.claim_lines`, or from the
evidence's first few top-level numbers. A formatter that meets evidence of another shape falls
back silently, so evidence may grow or change without breaking the report.
"""

from __future__ import annotations

import html
from typing import Any

from .format import number, value_text, words

# A records table nested in the evidence's key/value table has less room than a table preview.
WIDE_RECORDS = 10

# Keys that describe bookkeeping rather than the finding; left out of the fallback line.
_BOOKKEEPING = {"excluded_diverged", "estimator", "summary", "n_diverged", "diverged"}


def evidence_line(claim: str, evidence: dict, max_items: int = 4) -> str:
    """One readable line of the numbers that decided ``claim``."""
    summary = evidence.get("summary")
    if isinstance(summary, str) and summary.strip():
        return summary.strip()
    from .claim_lines import CLAIM_LINES  # imports every experiment (and torch): only when a line is drawn

    line = CLAIM_LINES.get(claim)
    if line is not None:
        try:
            return line(evidence)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            pass  # evidence of another shape: fall back to its first numbers
    return _generic_line(evidence, max_items)


def _generic_line(evidence: dict, max_items: int) -> str:
    reason = evidence.get("reason") or evidence.get("note")
    items = [str(reason)] if isinstance(reason, str) else []
    for key, value in evidence.items():
        if (
            key in _BOOKKEEPING
            or key in ("reason", "note")
            or isinstance(value, (dict, list))
            or value is None
        ):
            continue
        items.append(f"{words(key)} {number(value)}")
        if len(items) == max_items:
            break
    return "; ".join(items) or "no numbers recorded"


# -- the whole evidence, as HTML ---------------------------------------------------------------


def evidence_html(evidence: Any) -> str:
    """Every entry of ``evidence``, nested dicts as nested key/value tables, lists of records as tables."""
    if isinstance(evidence, dict):
        if not evidence:
            return "<i>none</i>"
        rows = "".join(
            f"<tr><th scope=row>{html.escape(words(k))}</th><td>{evidence_html(v)}</td></tr>"
            for k, v in evidence.items()
        )
        return f"<div class=scroll><table class=kv>{rows}</table></div>"
    if isinstance(evidence, list):
        if evidence and all(isinstance(v, dict) for v in evidence):
            return _records_html(evidence)
        if any(isinstance(v, (dict, list)) for v in evidence):
            return "<ol>" + "".join(f"<li>{evidence_html(v)}</li>" for v in evidence) + "</ol>"
        return html.escape(value_text(evidence, digits=4))
    return html.escape(number(evidence, digits=4))


def _records_html(records: list[dict]) -> str:
    columns: list[str] = []
    for rec in records:
        columns += [k for k in rec if k not in columns]
    if len(columns) > WIDE_RECORDS >= len(records):  # wide and short: one row per key fits the page
        rows = "".join(
            f"<tr><th>{html.escape(words(c))}</th>"
            + "".join(f"<td>{evidence_html(rec.get(c))}</td>" for rec in records)
            + "</tr>"
            for c in columns
        )
        return f"<div class=scroll><table>{rows}</table></div>"
    head = "".join(f"<th>{html.escape(words(c))}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{evidence_html(rec.get(c))}</td>" for c in columns) + "</tr>"
        for rec in records
    )
    return f"<div class=scroll><table><tr>{head}</tr>{body}</table></div>"
