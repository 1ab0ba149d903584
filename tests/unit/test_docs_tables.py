"""The verdict tables in docs/ are the verdicts JSON's: regenerated in memory, they equal the files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tools import docs_tables

ROOT = Path(__file__).resolve().parents[2]
VERDICTS = ROOT / "docs" / "paper-scale-verdicts.json"
QUICK = ROOT / "tests" / "data" / "quick_evidence.json"


def _copy_docs(to: Path, *names: str) -> None:
    for name in names:
        source = ROOT / "docs" / name
        if source.is_dir():
            shutil.copytree(source, to / name)
        else:
            (to / name).write_text(source.read_text())


def test_docs_tables_match_the_verdicts_json():
    for path, text in docs_tables.regenerated(VERDICTS, QUICK).items():
        assert path.read_text() == text, (
            f"{path.name} is stale: python -m tools.docs_tables {VERDICTS.relative_to(ROOT)}"
        )


def test_a_changed_verdict_changes_the_table_and_the_check_fails(tmp_path):
    verdicts = json.loads(VERDICTS.read_text())
    _copy_docs(tmp_path, "paper-scale.md", "claims.md", "claims", "quick-draws-verdicts.json")
    verdicts["C5"]["verdict"] = "refuted"
    changed = tmp_path / "paper-scale-verdicts.json"
    changed.write_text(json.dumps(verdicts))
    assert docs_tables.main([str(changed), str(QUICK), "--check"]) == 1
    assert docs_tables.main([str(changed), str(QUICK)]) == 0
    assert "| C5 | E4 | **refuted** |" in (tmp_path / "paper-scale.md").read_text()
    assert "| C1 | E1 | confirmed | 0: confirmed, 1: confirmed |" in (tmp_path / "paper-scale.md").read_text()
    assert docs_tables.main([str(changed), str(QUICK), "--check"]) == 0


def test_a_doc_without_its_block_is_a_one_line_error(tmp_path, capsys):
    with pytest.raises(ValueError, match="verdicts-table"):
        docs_tables.replace_block("no markers here", "verdicts-table", "x")
    assert docs_tables.main([str(tmp_path / "missing.json")]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_the_fresh_draws_table_lists_every_draw_and_follows_its_json(tmp_path):
    fresh = json.loads((ROOT / "docs" / "quick-draws-verdicts.json").read_text())
    table = docs_tables.draws_table(fresh)
    assert all(f"| {claim} |" in table for claim in fresh)
    assert "draw 2: confirmed" in table.split("| C1 |")[1].split("\n")[0]
    _copy_docs(tmp_path, "paper-scale.md", "claims.md", "claims", "paper-scale-verdicts.json")
    fresh["C1"]["replication"]["verdicts"][2] = "refuted"
    (tmp_path / "quick-draws-verdicts.json").write_text(json.dumps(fresh))
    assert docs_tables.main([str(tmp_path / "paper-scale-verdicts.json"), str(QUICK), "--check"]) == 1
    assert docs_tables.main([str(tmp_path / "paper-scale-verdicts.json"), str(QUICK)]) == 0
    assert "draw 2: refuted" in (tmp_path / "claims.md").read_text()


def test_the_robustness_map_is_read_against_the_first_draws_default():
    """The map is the first draw's; when the draws disagree the shown verdict is not that draw's, so
    a setting agreeing with that draw's default is not listed and the text names the draw."""
    settings = [
        {"setting": {}, "verdict": "confirmed"},
        {"setting": {"c13_min_moved": 0.05}, "verdict": "inconclusive"},
        {"setting": {"c13_content_tv": 0.35}, "verdict": "confirmed"},
    ]
    disagree = {
        "verdict": "inconclusive",
        "robustness": {"settings": settings},
        "replication": {"draws": [0, 1], "verdicts": ["confirmed", "inconclusive"], "agree": False},
    }
    assert docs_tables._differs(disagree) == "against draw 0's confirmed: c13_min_moved = 0.05 inconclusive"
    agree = {**disagree, "verdict": "confirmed"}
    assert docs_tables._differs(agree) == "c13_min_moved = 0.05 inconclusive"


def test_the_preregistered_rules_are_judged_by_the_three_rejection_criteria():
    """A decision either way leaves a rule standing; an undecided claim rejects it by what left it so."""
    paper = json.loads(VERDICTS.read_text())
    expected = docs_tables.expected_verdicts((ROOT / "docs" / "preregistration.md").read_text())
    assert set(expected) == set(paper) and expected["C11"].startswith("inconclusive")
    assert docs_tables.rule_outcome(paper["C1"], expected["C1"]) == "stands"
    assert docs_tables.rule_outcome(paper["C6"], expected["C6"]) == "stands"  # a refutation decides too
    assert paper["C13"]["replication"]["reason"] == "draws disagree"
    assert docs_tables.rule_outcome(paper["C13"], expected["C13"]).startswith("rejected (b)")
    assert docs_tables.rule_outcome(paper["C11"], expected["C11"]).startswith("stands")
    undecided = {**paper["C5"], "replication": {}, "evidence": {**paper["C5"]["evidence"], "reason": ""}}
    assert docs_tables.rule_outcome(undecided, expected["C5"]).startswith("rejected (a)")
    empty = {**undecided, "evidence": {"reason": "nothing to detect: no data set with room"}}
    assert docs_tables.rule_outcome(empty, expected["C3"]) == "rejected (c): nothing to detect"
    table = docs_tables.preregistered_table({"C1": paper["C1"]}, expected)
    assert "| C1 | confirmed (median 1.002) | confirmed | draw 0: confirmed" in table
    assert "| C2 | confirmed (worst 2.4e-4, median 751) | not yet trained |" in table


def test_every_claim_has_a_page_whose_numbers_and_prose_values_follow_the_json(tmp_path):
    """A republished JSON rewrites the claim page's block, the index and the numbers marked in prose."""
    _copy_docs(tmp_path, "paper-scale.md", "claims.md", "claims", "quick-draws-verdicts.json")
    verdicts = json.loads(VERDICTS.read_text())
    assert {p.stem.upper() for p in (ROOT / "docs" / "claims").glob("*.md")} == set(verdicts)
    verdicts["C12"]["replication"]["decisions"][2]["interval"] = [0.31, 0.42]
    verdicts["C12"]["verdict"] = "refuted"
    changed = tmp_path / "paper-scale-verdicts.json"
    changed.write_text(json.dumps(verdicts))
    assert docs_tables.main([str(changed), str(QUICK), "--check"]) == 1
    assert docs_tables.main([str(changed), str(QUICK)]) == 0
    page = (tmp_path / "claims" / "c12.md").read_text()
    assert "draw 2: inconclusive, 0.203 [0.31, 0.42] vs 0.3" in page
    index = (tmp_path / "claims.md").read_text()
    assert (
        "C12 | the static kernel rank tracks optimisation progress (loss), not task complexity | inconclusive | refuted |"
        in index
    )
    assert "[0.31, 0.42]<!-- end value -->" in (tmp_path / "paper-scale.md").read_text()
    assert docs_tables.main([str(changed), str(QUICK), "--check"]) == 0


def test_a_prose_value_the_json_does_not_hold_is_a_one_line_error(tmp_path, capsys):
    _copy_docs(
        tmp_path,
        "paper-scale.md",
        "claims.md",
        "claims",
        "paper-scale-verdicts.json",
        "quick-draws-verdicts.json",
    )
    page = tmp_path / "claims" / "c1.md"
    page.write_text(page.read_text() + "\n<!-- value: paper C1 draw 7 -->1<!-- end value -->\n")
    assert docs_tables.main([str(tmp_path / "paper-scale-verdicts.json"), str(QUICK), "--check"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no draw 7" in err


def test_the_pre_registered_draws_table_reads_their_json_and_says_what_is_not_trained():
    judged = json.loads((ROOT / "docs" / "paper-draws-5-6-verdicts.json").read_text())
    expected = docs_tables.expected_verdicts((ROOT / "docs" / "preregistration.md").read_text())
    table = docs_tables.fresh_table(judged, expected)
    assert all(f"| {claim} |" in table for claim in expected)
    for claim, v in judged.items():
        row = table.split(f"| {claim} |")[1].split("\n")[0]
        p = v["replication"]["heterogeneity"]
        assert (f"Q p = {p['p']:.2g}" in row) if p else "| — |" in row
        assert f"{v['cpu_seconds'] / 60:.1f} min" in row
    missing = [claim for claim in expected if claim not in judged]
    assert all(f"| {claim} | — | {docs_tables.NOT_YET} |" in table for claim in missing)
    judged["C1"]["verdict"] = "refuted"
    assert "| C1 | E1 | **refuted** |" in docs_tables.fresh_table(judged, expected)
