"""The quick defaults decide C1, C2, C4, C5, C8, C9 and X1 as confirmed (C5's kinds hold 36 teacher
draws, C9's and X1's cells 40, enough for a share of 1 to clear 0.9) and C6, C10 as refuted, each
with its boundary (slow).

Full quick runs of E1, E3, E4 and E6 (about 2 CPU minutes together). The fast tests asserting the
same verdicts are tests/unit/test_verdicts_on_quick_rows.py (on the rows these runs store) and the
tiny variants in test_cli_e1_e2.py (C1, C2), test_cli_e3.py (C4) and test_cli_e6.py (C9, X1).
"""

import json

import pytest

from entropic_bound.cli import main

# C5: 36 teacher draws per kind; C9, X1: 40 per decided cell; every share 1 clears 0.9
CONFIRMED = {"E1": ("C1", "C2"), "E3": ("C4",), "E4": ("C5",), "E6": ("C8", "C9", "X1")}
INCONCLUSIVE = {"E1": (), "E3": (), "E4": (), "E6": ()}
# C6: the compression ratio's interval lies above 0.8; C10: the softmax mixer's rise lies below 0.5
REFUTED = {"E1": (), "E3": (), "E4": ("C6",), "E6": ("C10",)}


@pytest.mark.slow
@pytest.mark.parametrize("experiment", sorted(CONFIRMED))
def test_quick_defaults_confirm(experiment, tmp_path):
    assert main(["run", experiment, "--scale", "quick", "--out", str(tmp_path), "--quiet"]) == 0
    verdicts = json.loads((tmp_path / "verdicts.json").read_text())
    for claim in CONFIRMED[experiment]:
        assert verdicts[claim]["verdict"] == "confirmed", verdicts[claim]["evidence"]
    for claim in REFUTED[experiment]:
        assert verdicts[claim]["verdict"] == "refuted", verdicts[claim]["evidence"]
    for claim in INCONCLUSIVE[experiment]:
        decision = verdicts[claim]["evidence"]["decision"]
        assert verdicts[claim]["verdict"] == "inconclusive" and decision["narrow"], decision
    for v in verdicts.values():
        rob = v["robustness"]
        assert len(rob["settings"]) >= 2 and rob["settings"][0]["verdict"] == v["verdict"]
        assert rob["robust"] == (len({s["verdict"] for s in rob["settings"]}) == 1) and rob["holds_when"]
