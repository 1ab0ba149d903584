"""The HTML report: verdict summary first, then one section per experiment.

Layout, top to bottom: the verdict table (claim, verdict, one line of key evidence), the claim
boundaries when verdicts carry them, a table of contents, then each experiment — its claims with
their full evidence in a collapsible block, its settings in words, its figures (files in
``figures/`` beside the page, shown at most at their natural size, a click opens the full image)
and previews of its tables, each folded to one line until opened (the full tables are the CSVs in
``results/``). The terms the page uses, then provenance, close it. Nothing is wider than the window: tables wrap (headers break after ``_``; very wide tables are
shown transposed, ``tables.py``) and keep a scrolling box only as a last resort.
"""

from __future__ import annotations

import html
import struct
from datetime import datetime, timezone
from pathlib import Path

from ..provenance import provenance
from .boundary_view import boundary_table_html
from .evidence import evidence_html, evidence_line
from .format import (
    AT_THE_BAR,
    AT_THE_BAR_MEANS,
    at_the_bar,
    draws_text,
    next_step,
    number,
    scale_line,
    settings,
)
from .glossary import TERMS
from .overrides import non_standard_line
from .sequential_view import draws_cell
from .tables import key_value_html, table_preview

COLOURS = {"confirmed": "#1a7f37", "refuted": "#cf222e", "inconclusive": "#9a6700"}

STYLE = """
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;max-width:1320px;margin:1.5em auto;
padding:0 16px;color:#1f2328;line-height:1.45;font-size:15px}
h1{margin:0 0 .2em}h2{margin:1.6em 0 .4em;border-bottom:1px solid #d0d7de;padding-bottom:.2em}
h3{margin:1.2em 0 .3em}h4{margin:1em 0 .2em}p{max-width:110ch;margin:.4em 0}
table{border-collapse:collapse;font-size:.88em}td,th{border:1px solid #d0d7de;padding:3px 7px;vertical-align:top;
text-align:left}th{background:#f6f8fa;font-weight:600}
.scroll{max-width:100%;overflow-x:auto;margin:.4em 0}
table.data,table.kv,table.summary{max-width:100%}td,th{overflow-wrap:break-word}table.kv td{overflow-wrap:anywhere}
.v{font-weight:600;color:#fff;padding:1px 7px;border-radius:4px;white-space:nowrap;font-size:.9em}
.small{font-size:.86em;color:#57606a}
figure{margin:.8em 0}figure img{max-width:100%;height:auto;border:1px solid #eee;display:block}
figcaption{font-size:.85em;color:#57606a}
details{margin:.3em 0}summary{cursor:pointer;color:#0969da}
nav ol{columns:2;margin:.3em 0}
ul.settings{columns:2;column-gap:2.5em;font-size:.88em;padding-left:1.2em;margin:.3em 0}
ul.settings li{break-inside:avoid}td.outcomes{font-size:.85em;line-height:1.5}span.outcome{display:inline-block;margin-right:1.2em;white-space:nowrap}
.claim{border-left:4px solid #d0d7de;padding-left:.8em;margin:.8em 0}
table.kv th{white-space:nowrap}code{font-size:.9em;background:#f6f8fa;padding:0 3px}
details.table{margin:.2em 0}details.table>summary{color:#1f2328}p.legend{max-width:none}
dl.terms{font-size:.88em;columns:2;column-gap:2.5em}dl.terms dt{font-weight:600;break-after:avoid}
dl.terms dd{margin:0 0 .5em 1em;break-inside:avoid}
"""


def badge(verdict: str) -> str:
    colour = COLOURS.get(verdict, "#57606a")
    return f'<span class="v" style="background:{colour}">{html.escape(verdict)}</span>'


def _num(x) -> str:
    """A number to 3 significant digits; '—' where a decision has none."""
    return f"{x:.3g}" if isinstance(x, (int, float)) else "—"


def narrow_marker(v: dict) -> str:
    """The "interval at the bar" tag and the decision's interval when the verdict's interval touches its
    threshold ('' otherwise)."""
    if not at_the_bar(v):
        return ""
    decision = v["evidence"]["decision"]
    lo, hi = decision.get("interval") or (None, None)
    title = f"interval {_num(lo)}–{_num(hi)} touches the threshold {_num(decision.get('threshold'))}"
    return f" <span class=small title='{html.escape(title)}'>{AT_THE_BAR}</span>"


def _summary_table(verdicts: list[dict]) -> str:
    head = "<tr><th>claim</th><th>verdict</th><th>draws</th><th>key evidence</th><th>experiment</th></tr>"
    rows = []
    for v in verdicts:
        claim = html.escape(v["claim"])
        rows.append(
            f"<tr><td><a href='#claim-{claim}'><b>{claim}</b></a><br><span class=small>"
            f"{html.escape(v.get('statement', ''))}</span></td><td>{badge(v['verdict'])}{narrow_marker(v)}</td>"
            f"<td class=small>{html.escape(draws_cell(v))}</td>"
            f"<td>{html.escape(evidence_line(v['claim'], v.get('evidence') or {}))}{_next_step_html(v)}</td>"
            f"<td><a href='#{html.escape(v['experiment'])}'>{html.escape(v['experiment'])}</a></td></tr>"
        )
    legend = f"<p class=small><b>{AT_THE_BAR}</b>: {html.escape(AT_THE_BAR_MEANS)}.</p>"
    return (
        f"<p>{html.escape(scale_line(verdicts))}</p>"
        f"<div class=scroll><table class=summary>{head}{''.join(rows)}</table></div>{legend}"
    )


def _next_step_html(v: dict) -> str:
    step = next_step(v)
    return f"<div class='small next'>→ {html.escape(step)}</div>" if step else ""


def _png_size(path: Path) -> tuple[int, int] | None:
    """Width and height from a PNG header (to reserve the image's box before it loads)."""
    head = path.read_bytes()[:24] if path.is_file() else b""
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return struct.unpack(">II", head[16:24])


def _figure(out_dir: Path, rel: str, name: str) -> str:
    src = html.escape(rel)
    size = _png_size(out_dir / rel)
    dims = f" width={size[0]} height={size[1]}" if size else ""
    return (
        f"<figure id='fig-{html.escape(name)}'><a href='{src}' title='open full size'>"
        f"<img src='{src}' alt='{html.escape(name)}'{dims}></a>"
        f"<figcaption>{html.escape(name)} (click for full size)</figcaption></figure>"
    )


def _claim_block(v: dict) -> str:
    claim = html.escape(v["claim"])
    return (
        f"<div class=claim id='claim-{claim}'><h3>{claim} {badge(v['verdict'])}</h3>"
        f"<p>{html.escape(v.get('statement', ''))}</p>"
        f"<p><b>Criterion.</b> {html.escape(v.get('criterion', ''))}</p>"
        f"<p><b>Draws.</b> {html.escape(_draws_line(v.get('replication')))}</p>"
        f"<p><b>Key evidence.</b> {html.escape(evidence_line(v['claim'], v.get('evidence') or {}))}</p>"
        f"<details class=evidence><summary>full evidence for {claim}</summary>"
        f"{evidence_html(v.get('evidence') or {})}</details></div>"
    )


def _draws_line(replication: dict | None) -> str:
    """Which draws decided the claim (pooled), each one's own verdict and the heterogeneity test."""
    if not replication:
        return "1 draw."
    decisions = replication.get("decisions") or [None] * len(replication["draws"])
    pairs = ", ".join(
        f"draw {d}: {v}{_interval_text(dec)}"
        for d, v, dec in zip(replication["draws"], replication["verdicts"], decisions, strict=True)
    )
    test = replication.get("heterogeneity")
    rule = "decided on the pooled units of every draw"
    if test:
        rule += f"; Cochran's Q = {number(test['q'])} on {test['df']} df, p = {number(test['p'])}"
    return f"{draws_text(replication)} ({pairs}); {rule}; the evidence below is the pooled decision's."


def _interval_text(decision: dict | None) -> str:
    """`` (0.91, 95% interval 0.84-0.97)`` for a draw's decision record, empty without one."""
    if not decision or "interval" not in decision:
        return ""
    lo, hi = decision["interval"]
    return f" ({number(decision['statistic'])}, interval {number(lo)} to {number(hi)})"


def _settings_block(r) -> str:
    rows = settings(r.experiment.cfg)
    items = "".join(
        f"<li>{html.escape(doc)}: <b>{html.escape(value)}</b> <code>{html.escape(key)}</code></li>"
        for key, doc, value in rows
    )
    return (
        f"<details class=settings><summary>settings of {html.escape(r.experiment.name)} in words "
        f"({len(rows)} values; the code name is what <code>--set</code> takes)</summary>"
        f"<ul class=settings>{items}</ul></details>"
    )


def _section(r, verdicts: list[dict], out_dir: Path) -> str:
    name = r.experiment.name
    a = r.analysis
    results_href = f"results/{name}.csv"
    parts = [
        f"<section><h2 id='{html.escape(name)}'>{html.escape(r.experiment.name_with_title)}</h2>",
        f"<p class=small>scale <b>{html.escape(r.scale)}</b>; {len(a.results)} runs analysed; every run: "
        f"<a href='{html.escape(results_href)}'>{html.escape(results_href)}</a></p>",
    ]
    parts += [_claim_block(v) for v in verdicts if v["experiment"] == name]
    parts.append(_settings_block(r))
    parts += [f"<p class=small>{html.escape(n)}</p>" for n in a.notes]
    parts += [_figure(out_dir, rel, fig) for fig, rel in r.figure_files.items()]
    for table_name, table in a.tables.items():
        href = f"results/{name}_{table_name}.csv"
        parts.append(table_preview(table, href, f"{name}: {table_name}", f"{name}-{table_name}"))
    parts.append("</section>")
    return "\n".join(parts)


def _toc(reports, has_boundaries: bool) -> str:
    items = ["<li><a href='#verdicts'>Verdicts</a></li>"]
    if has_boundaries:
        items.append("<li><a href='#boundaries'>Claim boundaries</a></li>")
    for r in reports:
        claims = ", ".join(r.experiment.claims)
        items.append(
            f"<li><a href='#{html.escape(r.experiment.name)}'>{html.escape(r.experiment.name_with_title)}</a>"
            + (f" <span class=small>({html.escape(claims)})</span>" if claims else "")
            + "</li>"
        )
    items.append("<li><a href='#terms'>Terms</a></li>")
    items.append("<li><a href='#provenance'>Provenance</a></li>")
    return f"<nav id=contents><h2>Contents</h2><ol>{''.join(items)}</ol></nav>"


def _provenance(store_path: str) -> str:
    prov = provenance()
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    rows = [("generated", when), ("run store", store_path), ("git commit", str(prov.get("git_commit")))]
    rows += [(k, str(v)) for k, v in (prov.get("versions") or {}).items()]
    return f"<h2 id=provenance>Provenance</h2>{key_value_html(rows)}"


def _terms() -> str:
    """The terms the claim lines, boundaries and tables use, defined once (:mod:`.glossary`)."""
    items = "".join(f"<dt>{html.escape(t)}</dt><dd>{html.escape(m)}</dd>" for t, m in TERMS.items())
    return f"<h2 id=terms>Terms</h2><dl class=terms>{items}</dl>"


def _non_standard(verdicts: list[dict]) -> list[str]:
    """The one line saying which verdicts come from a non-default config (none: nothing)."""
    line = non_standard_line({v["claim"]: v for v in verdicts})
    return [f"<p class=nonstandard><b>{html.escape(line)}</b></p>"] if line else []


def render_report(reports, *, out_dir: Path, store_path: str, verdicts: list[dict]) -> str:
    """The page. ``verdicts`` are the verdict dicts in claim order (as in verdicts.json, with ``claim``)."""
    counts = {k: sum(v["verdict"] == k for v in verdicts) for k in COLOURS}
    tally = ", ".join(f"{n} {k}" for k, n in counts.items() if n)
    boundaries = boundary_table_html(verdicts)
    body = [
        "<h1>entropic-bound report</h1>",
        f"<p class=small>{len(reports)} experiment(s), {len(verdicts)} claim(s): {tally or 'none'}.</p>",
        *_non_standard(verdicts),
        "<h2 id=verdicts>Verdicts</h2>",
        _summary_table(verdicts) if verdicts else "<p>No experiment in the store yet.</p>",
    ]
    if boundaries:
        body += [
            "<h2 id=boundaries>Claim boundaries</h2>",
            "<p class=small>Each claim decided again under every setting along the axis that matters.</p>",
            boundaries,
        ]
    body.append(_toc(reports, bool(boundaries)))
    body += [_section(r, verdicts, Path(out_dir)) for r in reports]
    body.append(_terms())
    body.append(_provenance(store_path))
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        "<meta name=viewport content='width=device-width,initial-scale=1'>"
        f"<title>entropic-bound report</title><style>{STYLE}</style></head><body>"
        + "\n".join(body)
        + "</body></html>"
    )
