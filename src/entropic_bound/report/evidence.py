"""A verdict's evidence as people read it: one line of key numbers, and the whole of it as nested tables.

The one line comes, in order of preference, from the verdict's own ``evidence["summary"]`` (an
experiment may write its own), from the claim's template in :data:`CLAIM_LINES` (plain
``str.format`` fields naming evidence keys, every number rounded), or from the evidence's first
few top-level numbers. A template whose keys are missing falls back silently, so evidence may grow
or change without breaking the report.
"""

from __future__ import annotations

import html
from typing import Any

from .format import number, value_text, words

# One template per claim; fields are evidence keys (rounded to 3 significant digits when shown).
CLAIM_LINES = {
    "C1": "measured / closed-form excess: median {median_ratio} (10th–90th percentile {q10}–{q90}), {runs} runs",
    "C2": "worst relative excess at r ≥ r*: {max_rel_excess_at_or_above_r_star}; "
    "transition ratio excess(r*−1)/excess(r*): median {median_transition_ratio}, min {min_transition_ratio}",
    "C3": "GD from small init recovers r*: {rate_gd_small_init_identified} of identified runs "
    "(large init {rate_gd_large_init_identified}, Adam {rate_adam_small_init_identified}); estimator {estimator}",
}

# Keys that describe bookkeeping rather than the finding; left out of the fallback line.
_BOOKKEEPING = {"excluded_diverged", "estimator", "summary", "n_diverged", "diverged"}


class _Rounded(dict):
    def __missing__(self, key):
        raise KeyError(key)

    def __getitem__(self, key):
        return value_text(dict.__getitem__(self, key))


def evidence_line(claim: str, evidence: dict, max_items: int = 4) -> str:
    """One readable line of the numbers that decided ``claim``."""
    summary = evidence.get("summary")
    if isinstance(summary, str) and summary.strip():
        return summary.strip()
    template = CLAIM_LINES.get(claim)
    if template:
        try:
            return template.format_map(_Rounded(evidence))
        except (KeyError, IndexError, ValueError):
            pass
    return _generic_line(evidence, max_items)


def _generic_line(evidence: dict, max_items: int) -> str:
    items = []
    for key, value in evidence.items():
        if key in _BOOKKEEPING or isinstance(value, (dict, list)) or value is None:
            continue
        items.append(f"{words(key)} {number(value)}")
        if len(items) == max_items:
            break
    if not items:
        reason = evidence.get("reason") or evidence.get("note")
        return str(reason) if reason else "no numbers recorded"
    return "; ".join(items)


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
    head = "".join(f"<th>{html.escape(words(c))}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{evidence_html(rec.get(c))}</td>" for c in columns) + "</tr>"
        for rec in records
    )
    return f"<div class=scroll><table><tr>{head}</tr>{body}</table></div>"
