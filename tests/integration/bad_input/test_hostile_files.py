"""Hostile inputs end in one line and exit 2, and write nothing."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest
from bad_input_helpers import TINY_E1, snapshot

from entropic_bound.cli import main


def _forged_npy(path, shape=(100_000, 100_000, 100)):
    """A 200-byte .npy whose header declares ``shape`` float64 (7 TiB for the default)."""
    with open(path, "wb") as handle:
        np.lib.format.write_array_header_1_0(handle, {"descr": "<f8", "fortran_order": False, "shape": shape})
        handle.write(b"\0" * 64)


def _teacher_data(rng, N=64, n=4, d=6):
    X = rng.normal(size=(N, n, d))
    K, V = rng.normal(size=(d, d)), rng.normal(size=(d, d))
    scores = np.einsum("bid,de,bje->bij", X, K, X)
    return X, scores @ (X @ V), V


@pytest.fixture
def arrays(tmp_path):
    X, Y, V = _teacher_data(np.random.default_rng(0))
    np.save(tmp_path / "x.npy", X)
    np.save(tmp_path / "y.npy", Y)
    np.save(tmp_path / "huge_x.npy", X * 1e160)
    np.savez(tmp_path / "huge.npz", X=X * 1e160, Y=Y, V=V)
    _forged_npy(tmp_path / "forged.npy")
    with zipfile.ZipFile(tmp_path / "forged.npz", "w") as archive:
        archive.writestr("X.npy", (tmp_path / "forged.npy").read_bytes())
        archive.writestr("Y.npy", (tmp_path / "y.npy").read_bytes())
    return tmp_path


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--x", "forged.npy", "--y", "y.npy"], ["forged.npy", "header declares", "GiB"]),
        (["forged.npz"], ["forged.npz", "X.npy", "header declares"]),
        (["--x", "huge_x.npy", "--y", "y.npy"], ["'X'", "rescale"]),
        (["huge.npz", "--v-known"], ["'X'", "rescale"]),
    ],
    ids=["forged-npy", "forged-npz-member", "huge-values", "huge-values-v-known"],
)
@pytest.mark.parametrize("teacher", ["linear-qk", "softmax"])
def test_hostile_arrays_are_one_line(arrays, args, needles, teacher, refused):
    before = snapshot(arrays)
    argv = ["predict", *[str(arrays / a) if a.endswith((".npy", ".npz")) else a for a in args]]
    refused([*argv, "--teacher", teacher], *needles)
    assert snapshot(arrays) == before


def test_an_untested_teacher_class_is_null_not_false(arrays, capsys):
    """n ≤ d with V unknown: the class is not tested, so whether it was rejected is unknown."""
    argv = ["predict", "--x", str(arrays / "x.npy"), "--y", str(arrays / "y.npy")]
    status = main([*argv, "--teacher", "linear-qk", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert status == (0 if result["identifiable"] else 3)  # 3: r* not identifiable (documented)
    fit = result["fit"]
    assert fit["statistic"] is None and fit["teacher_rejected"] is None, fit


CONFIGS = {
    "non-utf8": (b"\xff\xfeE1.train.steps: 10\n", ["not UTF-8"]),
    "deeply-nested": (b"a: " + b"[" * 5_000 + b"]" * 5_000 + b"\n", ["nested too deeply"]),
    "duplicate-keys": (b"E1.train.steps: 10\nE1.train.steps: 20\n", ["duplicate key", "line 2"]),
    "nested-duplicate": (b"E1:\n  train:\n    steps: 10\n    steps: 20\n", ["duplicate key 'steps'"]),
}


@pytest.mark.parametrize("case", CONFIGS)
def test_hostile_configs_are_one_line_before_any_work(case, tmp_path, refused):
    text, needles = CONFIGS[case]
    (tmp_path / "c.yaml").write_bytes(text)
    before = snapshot(tmp_path)
    refused(["reproduce", "--out", tmp_path / "out", "--config", tmp_path / "c.yaml", *TINY_E1], *needles)
    assert snapshot(tmp_path) == before  # no output folder, no store


def test_inspect_output_paths_are_checked_before_the_inspection(tmp_path, refused):
    (tmp_path / "a_folder").mkdir()
    (tmp_path / "a_file.png").write_text("mine")
    model = tmp_path / "no-model-needed"  # the paths are refused before the model is even opened
    before = snapshot(tmp_path)
    refused(["inspect", model, "--csv", tmp_path / "a_folder"], "--csv", "a_folder")
    refused(["inspect", model, "--out", tmp_path / "a_file.png"], "--out", "a_file.png")
    refused(["inspect", model, "--csv", tmp_path / "a_file.png" / "t.csv"], "--csv", "is a file")
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("shard", ["/etc/passwd", "../outside.safetensors", "sub/../../outside.safetensors"])
def test_a_shard_index_naming_files_outside_the_model_folder_is_refused(
    shard, tmp_path, refused, monkeypatch
):
    import safetensors

    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"model_type": "gpt2", "n_head": 2}))
    index = {"weight_map": {"h.0.attn.c_attn.weight": "model-1.safetensors", "wte.weight": shard}}
    (model / "model.safetensors.index.json").write_text(json.dumps(index))
    (model / "model-1.safetensors").write_bytes(b"")
    (tmp_path / "outside.safetensors").write_bytes(b"")
    opened = []
    monkeypatch.setattr(safetensors, "safe_open", lambda *a, **k: opened.append(a) or 1 / 0)
    refused(["inspect", model], "outside the model folder", shard)
    assert opened == []
