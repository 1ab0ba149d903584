"""The HTML report: one self-contained page, verdict table at the top, figures inline."""

from __future__ import annotations

import base64
import html
import json
from datetime import datetime, timezone
from pathlib import Path

from ..provenance import provenance
from .boundaries import boundary_table

COLOURS = {"confirmed": "#1a7f37", "refuted": "#cf222e", "inconclusive": "#9a6700"}

STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;max-width:1100px;margin:2em auto;
padding:0 1em;color:#1f2328;line-height:1.45}
table{border-collapse:collapse;margin:1em 0;font-size:0.9em}td,th{border:1px solid #d0d7de;padding:4px 8px;
vertical-align:top;text-align:left}th{background:#f6f8fa}.v{font-weight:600;color:#fff;padding:2px 8px;
border-radius:4px}img{max-width:100%;border:1px solid #eee;margin:0.5em 0}code,pre{font-size:0.85em;
background:#f6f8fa}pre{padding:0.6em;overflow-x:auto}details{margin:0.5em 0}.small{font-size:0.85em;color:#57606a}
"""


def _badge(verdict: str) -> str:
    return (
        f'<span class="v" style="background:{COLOURS.get(verdict, "#57606a")}">{html.escape(verdict)}</span>'
    )


def _short(value):
    """Floats to 4 significant digits, recursively (display only; verdicts.json keeps full precision)."""
    if isinstance(value, float):
        return float(f"{value:.4g}")
    if isinstance(value, dict):
        return {k: _short(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_short(v) for v in value]
    return value


def _evidence_text(evidence: dict, limit: int = 6) -> str:
    items = []
    for k, v in list(evidence.items())[:limit]:
        if isinstance(v, float):
            v = f"{v:.4g}"
        elif isinstance(v, (dict, list)):
            v = json.dumps(_short(v), default=str)[:160]
        items.append(f"<code>{html.escape(str(k))}</code> = {html.escape(str(v))}")
    return "<br>".join(items)


def _verdict_table(reports) -> str:
    rows = [
        "<tr><th>claim</th><th>experiment (scale)</th><th>verdict</th><th>criterion</th><th>evidence</th></tr>"
    ]
    for r in reports:
        for v in r.analysis.verdicts:
            rows.append(
                f"<tr><td><b>{html.escape(v.claim)}</b><br><span class=small>{html.escape(v.statement)}</span></td>"
                f"<td>{html.escape(v.experiment)} ({html.escape(r.scale)})</td><td>{_badge(v.verdict)}</td>"
                f"<td>{html.escape(v.criterion)}</td><td class=small>{_evidence_text(v.evidence)}</td></tr>"
            )
    return "<table>" + "".join(rows) + "</table>"


def _boundaries(reports) -> str:
    table = boundary_table([v for r in reports for v in r.analysis.verdicts], badge=_badge)
    return "<h2>Claim boundaries</h2>" + table if table else ""


def _figure(path: Path, name: str) -> str:
    data = base64.b64encode(path.read_bytes()).decode()
    return f'<figure><img alt="{html.escape(name)}" src="data:image/png;base64,{data}"><figcaption class=small>{html.escape(name)}</figcaption></figure>'


def _section(r, out_dir: Path, config: dict) -> str:
    a = r.analysis
    parts = [
        f"<h2 id='{r.experiment.name}'>{html.escape(r.experiment.name_with_title)}</h2>",
        f"<p class=small>scale: <b>{html.escape(r.scale)}</b>; runs analysed: {len(a.results)}</p>",
    ]
    parts += [f"<p>{html.escape(n)}</p>" for n in a.notes]
    for v in a.verdicts:
        parts.append(
            f"<h3>{html.escape(v.claim)} {_badge(v.verdict)}</h3><p>{html.escape(v.statement)}</p>"
            f"<p><b>Criterion.</b> {html.escape(v.criterion)}</p>"
            f"<details><summary>evidence</summary><pre>{html.escape(json.dumps(v.to_dict()['evidence'], indent=1))}</pre></details>"
        )
    for name, rel in r.figure_files.items():
        parts.append(_figure(out_dir / rel, name))
    for name, table in a.tables.items():
        table_html = table.to_html(index=False, float_format=lambda x: f"{x:.4g}", border=0)
        parts.append(f"<h4>{html.escape(name)}</h4><div style='overflow-x:auto'>{table_html}</div>")
    parts.append(
        f"<details><summary>config</summary><pre>{html.escape(json.dumps(config, indent=1))}</pre></details>"
        f"<p class=small>All rows: <code>results/{html.escape(r.experiment.name)}.csv</code></p>"
    )
    return "\n".join(parts)


def render_report(reports, *, out_dir: Path, store_path: str, configs: dict) -> str:
    """The page; figures are read from ``out_dir`` (where the writer just put them) and inlined."""
    prov = provenance()
    sections = [_section(r, Path(out_dir), configs[r.experiment.name]) for r in reports]
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    body = (
        "<h1>entropic-bound report</h1>"
        f"<p class=small>generated {when} from <code>{html.escape(store_path)}</code>; "
        f"git {html.escape(str(prov.get('git_commit')))}; "
        f"versions {html.escape(json.dumps(prov.get('versions', {}), default=str))}</p>"
        "<h2>Verdicts</h2>"
        + (_verdict_table(reports) if reports else "<p>No experiment in the store yet.</p>")
        + _boundaries(reports)
        + "".join(sections)
    )
    return f"<!doctype html><html><head><meta charset=utf-8><title>entropic-bound report</title><style>{STYLE}</style></head><body>{body}</body></html>"
