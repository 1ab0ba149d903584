"""The verdict tables and quoted numbers of docs/ written from the verdicts JSON, so the published
text cannot drift.

``python -m tools.docs_tables docs/paper-scale-verdicts.json`` rewrites the marked blocks
(``<!-- generated: NAME -->`` … ``<!-- end generated -->``) beside the JSON: docs/paper-scale.md's
``verdicts-table``; docs/claims.md's ``claims-index`` (one line per claim: its declared statement,
quick and paper verdicts, its page) and ``verdict-numbers``; and each claim page's
``claim-numbers`` (docs/claims/c1.md …: the claim's verdicts and every draw's decision). Numbers
quoted inline in prose are filled the same way (:mod:`tools.docs_values`). ``--check`` only says
whether they are current (exit 1 when not). Everything outside the markers is left as written.
Where ``quick-draws-verdicts.json`` lies beside the JSON (the verdicts of a ``reproduce --scale
quick --draws …`` run, cut to each claim's verdict and ``replication`` by :func:`draws_record`),
claims.md's ``fresh-draws`` block lists every draw's verdict and decision.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from entropic_bound.report.evidence import evidence_line
from entropic_bound.report.format import plural
from tools.docs_values import fill_values

END = "<!-- end generated -->"
#: What the paper-scale run on the pre-registered draws shows for a claim none of its draws has reached.
NOT_YET = "not yet trained"


def _cell(text: str) -> str:
    """``text`` on one line, safe in a table cell: ``|`` escaped, and ``*`` (as in r*) kept literal."""
    return " ".join(str(text).split()).replace("|", "\\|").replace("*", "\\*")


def _prose(text: str) -> str:
    return str(text).replace("*", "\\*")


def _robust(v: dict) -> str:
    settings = (v.get("robustness") or {}).get("settings") or []
    if not settings:
        return "—"
    return f"{'yes' if v['robustness'].get('robust') else 'no'} ({len(settings)})"


def _differs(v: dict) -> str:
    """The settings whose verdict differs from the default setting's, in words ('' when none). The
    map is the first draw's: when the draws disagree, the shown verdict is not that draw's, so the
    settings are compared with the first draw's default and the text says so."""
    settings = (v.get("robustness") or {}).get("settings") or []
    if not settings:
        return ""
    base = settings[0].get("verdict", v["verdict"])
    parts = []
    for s in settings[1:]:
        if s.get("verdict") != base:
            where = ", ".join(f"{k} = {_value(x)}" for k, x in (s.get("setting") or {}).items())
            parts.append(f"{where} {s['verdict']}")
    text = "; ".join(parts)
    if text and base != v["verdict"]:
        first = ((v.get("replication") or {}).get("draws") or [0])[0]
        text = f"against draw {first}'s {base}: {text}"
    return text


def _draws(v: dict) -> str:
    """The draws a verdict was decided on; a verdict stored without them predates draws and the
    interval rules (an earlier publication's, kept until its experiment is run again)."""
    rep = v.get("replication")
    if not rep:
        return "earlier run"
    return ", ".join(f"{d}: {w}" for d, w in zip(rep["draws"], rep["verdicts"], strict=True))


def _value(x) -> str:
    if isinstance(x, list):
        return "/".join(_value(i) for i in x)
    return f"{x:g}" if isinstance(x, float) else str(x)


def _decision_text(d: dict | None) -> str:
    """A decision record as ``statistic [lo, hi] vs threshold`` (``(narrow)`` marked); ``—`` without one."""
    if not isinstance(d, dict) or "interval" not in d or None in d["interval"]:
        return "—"
    lo, hi = d["interval"]
    mark = " (narrow)" if d.get("narrow") else ""
    return f"{d['statistic']:.3g} [{lo:.3g}, {hi:.3g}] vs {d['threshold']:.3g}{mark}"


def verdicts_table(verdicts: dict[str, dict]) -> str:
    """The paper-scale verdict table: claim, experiment, verdict, robustness, what differs and the evidence."""
    rows = [
        "| claim | exp | verdict | draws | robust | where it differs / the evidence |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for claim, v in verdicts.items():
        word = v["verdict"] if v["verdict"] != "refuted" else "**refuted**"
        differs = _differs(v)
        text = (f"differs: {differs}. " if differs else "") + evidence_line(claim, v.get("evidence") or {})
        rows.append(f"| {claim} | {v['experiment']} | {word} | {_draws(v)} | {_robust(v)} | {_cell(text)} |")
    return "\n".join(rows)


def _pooled(v: dict) -> str:
    pooled = (v.get("replication") or {}).get("pooled") or {}
    if not pooled.get("interval") or None in pooled["interval"]:
        return "—"
    lo, hi = pooled["interval"]
    unit = str(pooled.get("unit", "unit")).split(" (")[0]
    return f"{pooled['statistic']:.3g} [{lo:.3g}, {hi:.3g}] over {pooled['units']} {plural(unit)}"


def _agreement(v: dict) -> str:
    test = (v.get("replication") or {}).get("heterogeneity") or {}
    if "p" not in test:
        return "—"
    return f"Q p = {test['p']:.2g}" + (" (disagree)" if test.get("disagree") else "")


def fresh_table(judged: dict[str, dict], expected: dict[str, str]) -> str:
    """The paper scale on the pre-registered draws: per claim its pooled verdict and interval, each
    draw's verdict, the agreement test, and the CPU of the experiment that decides it."""
    rows = [
        "| claim | exp | verdict (pooled) | pooled statistic [95 % interval] | per draw | agreement "
        "| CPU of its experiment |",
        "| --- | --- | --- | --- | --- | --- | ---: |",
    ]
    for claim in expected:
        if claim not in judged:
            rows.append(f"| {claim} | — | {NOT_YET} | — | — | — | — |")
            continue
        v = judged[claim]
        word = v["verdict"] if v["verdict"] != "refuted" else "**refuted**"
        cpu = f"{v['cpu_seconds'] / 60:.1f} min" if v.get("cpu_seconds") is not None else "—"
        rows.append(
            f"| {claim} | {v['experiment']} | {word} | {_cell(_pooled(v))} | {_draws(v)} | {_agreement(v)} | {cpu} |"
        )
    return "\n".join(rows)


def numbers_table(verdicts: dict[str, dict], quick: dict[str, dict] | None = None) -> str:
    """Per claim: the paper-scale verdict, its interval decision, and the quoted numbers (paper; quick
    from the stored quick evidence when given)."""
    head = "| claim | paper verdict | decision (statistic [interval] vs threshold) | paper numbers |"
    rows = [
        head + (" quick numbers |" if quick else ""),
        "| --- | --- | --- | --- |" + (" --- |" if quick else ""),
    ]
    for claim, v in verdicts.items():
        evidence = v.get("evidence") or {}
        row = f"| {claim} | {v['verdict']} | {_decision_text(evidence.get('decision'))} | {_cell(evidence_line(claim, evidence))} |"
        if quick:
            row += f" {_cell(evidence_line(claim, quick[claim])) if claim in quick else '—'} |"
        rows.append(row)
    return "\n".join(rows)


def draws_record(verdicts: dict[str, dict]) -> dict[str, dict]:
    """The part of a verdicts JSON the fresh-draws table reads: per claim its experiment, scale,
    verdict and ``replication`` (every draw's verdict and decision)."""
    keep = ("experiment", "scale", "verdict", "replication")
    return {claim: {k: v[k] for k in keep if k in v} for claim, v in verdicts.items()}


def _draw_cell(draw: int, verdict: str, decision: dict | None) -> str:
    text = _decision_text(decision)
    n = (decision or {}).get("units")
    unit = str((decision or {}).get("unit", "unit")).split(" (")[0]  # its name, not its definition
    units = f" over {n} {unit if n == 1 else plural(unit)}" if n else ""
    return f"draw {draw}: {verdict}" + ("" if text == "—" else f", {text}{units}")


def _per_draw(v: dict) -> str:
    rep = v.get("replication") or {}
    decisions = rep.get("decisions") or [None] * len(rep.get("draws", ()))
    cells = zip(rep.get("draws", ()), rep.get("verdicts", ()), decisions, strict=True)
    return _cell("; ".join(_draw_cell(d, word, dec) for d, word, dec in cells)) or "—"


def draws_table(verdicts: dict[str, dict]) -> str:
    """Per claim: the combined verdict and, per draw, its verdict and interval decision."""
    rows = [
        "| claim | verdict | per draw: verdict, statistic [interval] vs threshold |",
        "| --- | --- | --- |",
    ]
    rows += [f"| {claim} | {v['verdict']} | {_per_draw(v)} |" for claim, v in verdicts.items()]
    return "\n".join(rows)


def claim_page(claim: str) -> str:
    """The page of ``claim`` under docs/claims/, relative to docs/."""
    return f"claims/{claim.lower()}.md"


def claims_index(verdicts: dict[str, dict], fresh: dict[str, dict], judged: dict[str, dict]) -> str:
    """One line per claim: its id, statement as declared, quick verdict, paper verdicts on draws 0–1
    and on the pre-registered draws 5–6 (``judged``), and its page."""
    rows = [
        "| claim | statement (as the claim declares it) | quick, draws 0–2 | paper, draws 0–1 "
        "| paper, fresh draws 5–6 (today's rules) | page |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for claim, v in verdicts.items():
        quick = fresh.get(claim, {}).get("verdict", "—")
        preregistered = judged.get(claim, {}).get("verdict", NOT_YET)
        link = f"[{claim}]({claim_page(claim)})"
        rows.append(
            f'| <a id="{claim.lower()}"></a>{claim} | {_cell(v["statement"])} | {quick} | {v["verdict"]} '
            f"| {preregistered} | {link} |"
        )
    return "\n".join(rows)


def claim_numbers(claim: str, verdicts: dict, fresh: dict, quick: dict | None, judged: dict) -> str:
    """A claim page's numbers: its verdicts per scale with every draw's decision, and the evidence
    line of the paper and (draw 0) quick runs."""
    v = verdicts[claim]
    rows = [
        "| run | verdict | per draw: verdict, statistic [interval] vs threshold |",
        "| --- | --- | --- |",
        f"| paper scale, draws 0–1 (docs/paper-scale-verdicts.json) | {v['verdict']} | {_per_draw(v)} |",
    ]
    if claim in judged:
        rows.append(
            f"| paper scale, fresh draws 5–6 (docs/paper-draws-5-6-verdicts.json) | {judged[claim]['verdict']} "
            f"| {_per_draw(judged[claim])} |"
        )
    else:
        rows.append(f"| paper scale, fresh draws 5–6 | {NOT_YET} | — |")
    if claim in fresh:
        rows.append(
            f"| quick, draws 0–2 (docs/quick-draws-verdicts.json) | {fresh[claim]['verdict']} | {_per_draw(fresh[claim])} |"
        )
    rows += ["", f"Paper evidence: {_prose(evidence_line(claim, v.get('evidence') or {}))}."]
    if quick and claim in quick:
        rows += [
            "",
            f"Quick evidence (draw 0, tests/data/quick_evidence.json): {_prose(evidence_line(claim, quick[claim]))}.",
        ]
    return "\n".join(rows)


def expected_verdicts(preregistration: str) -> dict[str, str]:
    """``{claim: the expectation written before the draws}`` from the table of docs/preregistration.md."""
    written = re.sub(r"<!-- generated: .*?" + re.escape(END), "", preregistration, flags=re.S)
    rows = re.findall(r"^\| (C\d+|X\d+) \| [^|]+ \| .+ \| ([^|]+) \|$", written, re.M)
    return {claim: expected.strip() for claim, expected in rows}


def rule_outcome(v: dict, expected: str) -> str:
    """Whether a pre-registered rule stands on its draws: rejected when the claim stays inconclusive
    although a decision was expected (a: the sizing), when the draws disagree (b: the pooling), or
    when nothing is left to detect (c: a filter or gate); a decision either way leaves it standing."""
    if v["verdict"] != "inconclusive":
        return "stands"
    evidence, rep = v.get("evidence") or {}, v.get("replication") or {}
    if rep.get("reason") == "draws disagree":
        return "rejected (b): the draws disagree"
    if "nothing to detect" in str(evidence.get("reason", "")):
        return "rejected (c): nothing to detect"
    if expected.startswith("inconclusive"):
        return "stands (no decision was expected)"
    power = evidence.get("power") or {}
    sizes = (
        f"; {power['units_now']} {power['unit']}s, {power['units_needed']} needed"
        if power.get("available")
        else ""
    )
    return f"rejected (a): undecided at the planned grid{sizes}"


def preregistered_table(verdicts: dict[str, dict], expected: dict[str, str]) -> str:
    """Per pre-registered claim: what was expected, the verdict on the pooled draws, each draw's
    verdict, and whether the rule stands."""
    rows = [
        "| claim | expected | verdict (pooled) | per draw: verdict, statistic [interval] vs threshold | the rule |",
        "| --- | --- | --- | --- | --- |",
    ]
    for claim, hope in expected.items():
        if claim not in verdicts:
            rows.append(f"| {claim} | {_cell(hope)} | {NOT_YET} | — | — |")
            continue
        v = verdicts[claim]
        rows.append(
            f"| {claim} | {_cell(hope)} | {v['verdict']} | {_per_draw(v)} | {rule_outcome(v, hope)} |"
        )
    return "\n".join(rows)


def replace_block(text: str, name: str, block: str) -> str:
    """``text`` with the generated block ``name`` replaced by ``block`` (ValueError when it has none)."""
    start = f"<!-- generated: {name} -->"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise ValueError(f"no '{start}' … '{END}' block")
    return pattern.sub(lambda _: f"{start}\n{block}\n{END}", text, count=1)


def regenerated(verdicts_path: Path, quick_path: Path | None = None) -> dict[Path, str]:
    """``{doc path: its text with every generated block and inline value rewritten}`` for the docs
    beside ``verdicts_path``."""
    verdicts = json.loads(verdicts_path.read_text())
    quick = json.loads(quick_path.read_text()) if quick_path and quick_path.exists() else None
    docs = verdicts_path.parent
    fresh_path = docs / "quick-draws-verdicts.json"
    fresh = json.loads(fresh_path.read_text()) if fresh_path.exists() else {}
    preregistered, draws_5_6 = docs / "preregistration.md", docs / "paper-draws-5-6-verdicts.json"
    judged = json.loads(draws_5_6.read_text()) if draws_5_6.exists() else {}
    scale, claims = docs / "paper-scale.md", docs / "claims.md"
    claims_text = replace_block(claims.read_text(), "verdict-numbers", numbers_table(verdicts, quick))
    claims_text = replace_block(claims_text, "claims-index", claims_index(verdicts, fresh, judged))
    if "<!-- generated: paper-draws -->" in claims_text:
        claims_text = replace_block(claims_text, "paper-draws", draws_table(verdicts))
    if fresh:
        claims_text = replace_block(claims_text, "fresh-draws", draws_table(fresh))
    scale_text = replace_block(scale.read_text(), "verdicts-table", verdicts_table(verdicts))
    if "<!-- generated: fresh-verdicts-table -->" in scale_text and preregistered.exists():
        expected = expected_verdicts(preregistered.read_text())
        scale_text = replace_block(scale_text, "fresh-verdicts-table", fresh_table(judged, expected))
    texts = {scale: scale_text, claims: claims_text}
    for claim in verdicts:
        page = docs / claim_page(claim)
        if not page.exists():
            raise ValueError(f"{claim} has no page {claim_page(claim)}")
        texts[page] = replace_block(
            page.read_text(), "claim-numbers", claim_numbers(claim, verdicts, fresh, quick, judged)
        )
    if preregistered.exists():
        text = preregistered.read_text()
        texts[preregistered] = replace_block(
            text, "draws-5-6", preregistered_table(judged, expected_verdicts(text))
        )
    sources = {"paper": verdicts, "fresh": fresh, "quick": quick or {}}
    return {path: fill_values(text, sources) for path, text in texts.items()}


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    paths = [a for a in args if a != "--check"]
    if len(paths) not in (1, 2) or not Path(paths[0]).is_file():
        print(
            "docs_tables: expected VERDICTS_JSON [QUICK_EVIDENCE_JSON] [--check], an existing file",
            file=sys.stderr,
        )
        return 2
    quick = Path(paths[1]) if len(paths) == 2 else Path("tests/data/quick_evidence.json")
    try:
        docs = regenerated(Path(paths[0]), quick)
    except (ValueError, json.JSONDecodeError, KeyError) as err:
        print(f"docs_tables: {paths[0]}: {err}", file=sys.stderr)
        return 2
    stale = [p for p, text in docs.items() if p.read_text() != text]
    if check:
        for p in stale:
            print(f"stale: {p}")
        return 1 if stale else 0
    for p in stale:
        p.write_text(docs[p])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
