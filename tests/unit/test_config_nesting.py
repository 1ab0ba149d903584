"""Experiment configs nested by role (``task.*``, ``train.*``, ``verdict.*``): old flat keys.

``tests/data/flat_configs.json`` holds the configs E1–E7 stored (``store.put_experiment``) at quick
and paper scale before the nesting; a store holding them must still load into the same configs.
"""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from entropic_bound.config import keys
from entropic_bound.config_keys import check_keys
from entropic_bound.errors import ConfigError
from entropic_bound.pipeline import configure
from entropic_bound.registry import EXPERIMENTS

FLAT = json.loads((Path(__file__).resolve().parents[1] / "data" / "flat_configs.json").read_text())


#: Fields whose scale defaults differ from those the flat configs were stored with (E2's N = 3 and
#: rule-chosen C3 estimator, E3's longer paper X2, E4's C6 pair seeds, whose default a stored
#: config without the field takes; E7's learnable recall control mqar-p2r and its own init and
#: steps; at paper scale, the main models' PyTorch-like init and 3,000 steps, with which the natural
#: corpora reach their k-gram reference; quick E7's ensembles of 8, a scheduling setting that
#: changes no number): every other field must still load identically.
CHANGED_SINCE = {
    "E2": ("sample_counts", "verdict"),
    "E3": ("x2_train",),
    "E4": ("c6_seeds",),
    "E7": ("task", "recall_model", "recall_train"),
    "E7/paper": ("model", "train"),
    "E7/quick": ("ensemble_size",),
}


@pytest.mark.parametrize("key", sorted(FLAT))
def test_a_config_stored_flat_loads_into_the_same_nested_config(key):
    name, scale = key.split("/")
    assert not {"task", "model", "verdict"} & set(FLAT[key])  # the old, flat layout
    loaded, current = EXPERIMENTS.get(name).from_dict(FLAT[key]), configure(name, scale).cfg
    changed = {f: getattr(current, f) for f in CHANGED_SINCE.get(name, ()) + CHANGED_SINCE.get(key, ())}
    assert replace(loaded, **changed) == current


@pytest.mark.parametrize(
    "name, old, new",
    [
        ("E1", "eps_floor", "verdict.eps_floor"),
        ("E1", "n", "task.n"),
        ("E2", "c3_rate", "verdict.c3_rate"),
        ("E3", "task_seed", "task.seed"),
        ("E3", "teacher_c", "task.c"),
        ("E3", "n_mix", "n_mixer"),
        ("E4", "c", "task.c"),
        ("E5", "c7_estimator", "verdict.c7_estimator"),
        ("E6", "sigma_ref", "task.sigma_ref"),
        ("E7", "c13_share", "verdict.c13_share"),
        ("E7", "corpus_tokens", "task.tokens"),
        ("E7", "corpus_seed", "task.seed"),
        ("E7", "d_model", "model.d_model"),
        ("E7", "robustness_grid", "verdict.robustness_grid"),
        ("E7", "verdict.c13_kernel_max_rank", "verdict.c13_kernel_rank_fraction"),  # retired
    ],
)
def test_an_old_key_in_an_override_names_its_new_key(name, old, new):
    with pytest.raises(ConfigError, match=rf"Unknown config key '{old}'.*Did you mean '{new}'\?"):
        configure(name, "quick", {old: 1})


def test_every_renamed_key_points_at_a_key_the_config_has():
    for name in EXPERIMENTS.names():
        cls = EXPERIMENTS.get(name)
        known = set(keys(cls.default_config("quick")))
        assert set(cls.renamed_keys.values()) | set(cls.retired_keys.values()) <= known, name
        assert not (set(cls.renamed_keys) | set(cls.retired_keys)) & known, name


def test_a_store_holding_a_retired_key_still_reads_with_the_new_key_at_its_default():
    """A config stored before E7's absolute kernel-rank bound became a share of d_head."""
    from entropic_bound.config import to_dict

    cls = EXPERIMENTS.get("E7")
    stored = to_dict(configure("E7", "paper").cfg)
    stored["verdict"] = {**stored["verdict"], "c13_kernel_max_rank": 2}
    del stored["verdict"]["c13_kernel_rank_fraction"]
    assert cls.from_dict(stored) == configure("E7", "paper").cfg
    with pytest.raises(ConfigError, match="it is now 'verdict.c13_kernel_rank_fraction'"):
        check_keys("E7", {"verdict.c13_kernel_max_rank": 4})  # the CLI's fast check (no torch) too
