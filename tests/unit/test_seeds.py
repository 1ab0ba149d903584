"""A draw travels as data: ``RunSpec.draw`` keeps every run id, ``Seeds`` every seed.

The literal integers and ids below were computed before the draw became a field of the run spec
and seeds an object (from ``derive_seed(f"{name}/{purpose}", *salted(draw, *parts))``,
``drawn_seed(draw, seed)`` and the run ids of params carrying ``{"draw": d}``): they pin that every
stored number and every published store of a later draw is still found.
"""

from __future__ import annotations

import pickle

import pytest

from entropic_bound.errors import ConfigError
from entropic_bound.experiments.framework.draws import Seeds
from entropic_bound.results import RunResult, RunSpec
from entropic_bound.store import RunStore
from entropic_bound.sweep.backends import ProcessBackend

PARAMS = {"rank": 2, "lr": 0.1}


@pytest.mark.parametrize(
    ("draw", "teacher", "corpus", "moved", "moved_zero"),
    [
        (0, 7223123414392747113, 5133113699667565535, 12345, 0),
        (3, 783372132624151219, 7509446318040892736, 8146837326990458009, 7208662223593068323),
    ],
)
def test_seeds_are_the_integers_of_before(draw, teacher, corpus, moved, moved_zero):
    assert Seeds("E1", draw).seed("teacher", "task", 0) == teacher
    assert Seeds("E7", draw).seed("corpus", "markov", 7) == corpus
    assert Seeds("E7", draw).moved(12345) == moved and Seeds("E2", draw).moved(0) == moved_zero


def test_a_text_window_moves_only_off_draw_zero():
    assert Seeds("E7").window("tinyshakespeare") is None
    assert Seeds("E7", 3).window("tinyshakespeare") == 9178208431390005435


def test_a_runs_own_seed_names_its_draw_through_its_run_id():
    zero, two = RunSpec("E3", PARAMS, 0), RunSpec("E3", PARAMS, 0, draw=2)
    assert Seeds("E3", 2).of_run("init", two.run_id) != Seeds("E3").of_run("init", zero.run_id)
    assert Seeds("E3", 2).of_run("init", zero.run_id) == Seeds("E3").of_run("init", zero.run_id)


def test_run_ids_of_draw_zero_and_two_are_those_of_before():
    zero, two = RunSpec("E1", PARAMS, 0), RunSpec("E1", PARAMS, 0, draw=2)
    assert zero.run_id == "46a0c39a8500e4a4" and two.run_id == "2ee9383c754cb20e"
    assert two.params == PARAMS and two.key()["params"] == {**PARAMS, "draw": 2}
    # a store's record holds the draw among its params: it comes back as the field
    assert (
        RunSpec("E1", {**PARAMS, "draw": 2}, 0) == two and RunSpec("E1", {**PARAMS, "draw": 2}, 0).draw == 2
    )
    assert RunSpec("E1", {**PARAMS, "draw": 0}, 0).run_id == zero.run_id


@pytest.mark.parametrize("bad", [-1, 1.5, True, "2"])
def test_a_bad_draw_is_refused(bad):
    with pytest.raises(ConfigError, match="draw"):
        RunSpec("E1", PARAMS, 0, draw=bad)


def test_two_different_draws_in_one_spec_are_refused():
    with pytest.raises(ConfigError, match="two draws"):
        RunSpec("E1", {**PARAMS, "draw": 1}, 0, draw=2)


def test_a_specs_draw_survives_the_store(tmp_path):
    spec = RunSpec("E1", PARAMS, 0, draw=2)
    with RunStore(tmp_path / "runs.sqlite") as store:
        assert store.put(RunResult(spec, "ok", {"x": 1.0}), provenance={})
        [rec] = store.records("E1")
        assert rec["run_id"] == spec.run_id and rec["params"] == {**PARAMS, "draw": 2}
        back = RunSpec(rec["experiment"], rec["params"], rec["seed"])
        assert back.draw == 2 and back.run_id == spec.run_id
        assert store.table("E1")["draw"].tolist() == [2]  # the exported column, as before


def test_a_specs_draw_survives_a_process_backend():
    spec = RunSpec("E1", PARAMS, 0, draw=2)
    assert pickle.loads(pickle.dumps(spec)).draw == 2
    [(index, [back])] = list(ProcessBackend(1).map_groups(list, [[spec]]))
    assert index == 0 and back.draw == 2 and back.run_id == spec.run_id
