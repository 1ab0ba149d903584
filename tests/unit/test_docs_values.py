"""Numbers marked in prose are the verdicts JSON's: each field reads what it names, and nothing else."""

from __future__ import annotations

import pytest
from tools.docs_values import fill_values, number

RECORD = {
    "verdict": "inconclusive",
    "statement": "the rank r* tracks progress",
    "evidence": {"rho": -0.0516, "ci": [-0.142, 0.046], "runs": 30},
    "replication": {
        "draws": [0, 1],
        "verdicts": ["refuted", "inconclusive"],
        "decisions": [
            {"statistic": 0.0516, "interval": [0.0, 0.142], "threshold": 0.3, "units": 10},
            {"statistic": 0.203, "interval": [0.0776, 0.33], "threshold": 0.3},
        ],
    },
}


def _filled(field: str, source: str = "paper") -> str:
    text = fill_values(
        f"a <!-- value: {source} C12 {field} -->old<!-- end value --> b", {source: {"C12": RECORD}}
    )
    return text.split("-->", 1)[1].split("<!--", 1)[0]


@pytest.mark.parametrize(
    "field, text",
    [
        ("verdict", "inconclusive"),
        ("statement", "the rank r\\* tracks progress"),  # r* stays literal in Markdown
        ("draws", "0: refuted, 1: inconclusive"),
        ("draw 1", "0.203 [0.0776, 0.33]"),
        ("draw 0 verdict", "refuted"),
        ("draw 1 high", "0.33"),
        ("draw 0 units", "10"),
        ("evidence rho", "−0.0516"),
        ("evidence ci", "[−0.142, 0.046]"),
    ],
)
def test_each_field_reads_what_it_names(field, text):
    assert _filled(field) == text


def test_a_field_the_json_lacks_names_its_marker():
    with pytest.raises(ValueError, match="paper C12 draw 1 units"):
        _filled("draw 1 units")
    with pytest.raises(ValueError, match="no draw 5"):
        _filled("draw 5")
    assert number(2.4e-06) == "2.4e-06" and number(-0.5) == "−0.5" and number(7) == "7"
