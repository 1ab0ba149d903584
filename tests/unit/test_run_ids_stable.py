"""Every run id of every experiment at both scales is what the store holds, and the typed training
config an executor hands the trainer is exactly the one those ids hash.

The digests below are those of the runs a store holds, so a refactor that changes one breaks
resuming; a change that means to alter a grid (new runs are new ids; the store keeps the old ones) updates the
digest of that experiment and says why in its commit.
"""

from __future__ import annotations

import hashlib

import pytest

from entropic_bound.experiments.framework.params import to_params
from entropic_bound.registry import EXPERIMENTS
from entropic_bound.results import RunSpec

RUN_ID_DIGESTS = {
    "E1/quick": "948350d95a9e6ec7",
    "E1/paper": "8595c8940e5d7bb1",
    "E2/quick": "4be37f659d21c2a5",
    # 5 seeds (C3: >= 50 data sets with room per init group over two draws); seeds 0-2 keep the ids of f51f704ba9f20303
    "E2/paper": "99e1665b7c98905a",
    "E3/quick": "454b057194dcad5e",
    # 8 seeds per X2 setting (x2_seeds; the ladder keeps 3): the ids of seeds 0-2 are those of aa52261343a18ae4
    "E3/paper": "08af847584a1a5cf",
    # 18 seeds x 2 r* teacher draws per kind at c = 2, V known, ranks 1, r*-1, r*, r*+1 (C5 decided at quick)
    "E4/quick": "351bf31328c2ac43",
    # 10 seeds (c6_seeds 10): >= 60 teacher draws per condition of C5 and C6; seeds 0-2 keep their ids
    "E4/paper": "56fab2856f67523b",
    "E5/quick": "e3d496cb3a6284b3",
    "E5/paper": "1fd695fbd2d9f64d",
    # 40 teacher draws per decided cell (decisive_seeds 20, sized by power); with decisive_seeds=0 the
    # ids are exactly the earlier grid's 2cb8f22becdfe062
    "E6/quick": "702a173dc4fa6941",
    # 36 teacher draws per decisive cell (decisive_seeds 18); with decisive_seeds=0 the ids are
    # exactly the earlier grid's 1f39aaf67c1b74ff (tests/unit/experiments/test_e6_decisive_draws.py)
    "E6/paper": "5bf12b7be9194a63",
    "E7/quick": "4ee77fe7f3bb2159",  # the recall control is mqar-p2r (own init, steps)
    # 25 natural corpora from Debian text packages (75 new runs; the other 80 ids are exactly those of
    # e51c6dd28dd15bf5: PyTorch-like init, mqar-p4r among the controls, seven docstring corpora)
    "E7/paper": "3ae04bcc4f34051f",
}


def run_id_digest(specs: list[RunSpec]) -> str:
    return hashlib.sha256(",".join(sorted(s.run_id for s in specs)).encode()).hexdigest()[:16]


def bound(key: str):
    name, scale = key.split("/")
    cls = EXPERIMENTS.get(name)
    return cls(cls.configure(scale))


@pytest.mark.parametrize("key", sorted(RUN_ID_DIGESTS))
def test_run_ids_are_unchanged(key):
    # SmolLM2's runs exist only where its optional package is installed; every other id is pinned
    specs = [
        s for s in bound(key).specs() if not str(s.params.get("probe.checkpoint", "")).startswith("smollm2")
    ]
    assert run_id_digest(specs) == RUN_ID_DIGESTS[key]


# E6 trains nothing; E7 trains language models with its own config (and has runs that train none)
@pytest.mark.parametrize(
    "key", [k for k in sorted(RUN_ID_DIGESTS) if k[:2] in ("E1", "E2", "E3", "E4", "E5")]
)
def test_the_trainer_gets_the_training_config_the_run_id_hashes(key):
    exp = bound(key)
    for spec in exp.specs():
        typed = exp.train_config(spec)
        assert type(typed) is type(exp.cfg.train)
        hashed = {k: v for k, v in spec.params.items() if k.startswith("train.")}
        assert RunSpec(exp.name, to_params(typed, "train"), spec.seed).params == hashed


def test_e7_paper_keeps_the_ids_of_the_corpora_it_had():
    # the Debian text corpora only add runs: a store of the earlier grid resumes with nothing retrained
    from entropic_bound.language_models.corpora.debian_texts import DEBIAN_TEXTS

    specs = [
        s
        for s in bound("E7/paper").specs()
        if not str(s.params.get("probe.checkpoint", "")).startswith("smollm2")
        and s.params.get("corpus.name") not in DEBIAN_TEXTS
    ]
    assert run_id_digest(specs) == "e51c6dd28dd15bf5"
