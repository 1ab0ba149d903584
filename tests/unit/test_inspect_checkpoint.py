"""Checkpoint resolution, lazy safetensors reading, and every refusal (one-line UserInputError)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors.numpy import save_file

from entropic_bound.errors import UserInputError
from entropic_bound.inspect import SafetensorsWeights, arch_config, kernel_spectra, open_checkpoint

CONFIG = {"model_type": "gpt2", "n_head": 2, "n_layer": 2, "n_embd": 8}


def tensors(rng):
    out = {}
    for i in range(2):
        out[f"h.{i}.attn.c_attn.weight"] = rng.normal(size=(8, 24)).astype(np.float32)
        out[f"h.{i}.ln_1.weight"] = rng.normal(size=8).astype(np.float32)
    return out


def write_folder(path, w, shards=1):
    path.mkdir()
    (path / "config.json").write_text(json.dumps(CONFIG))
    keys = sorted(w)
    if shards == 1:
        save_file(w, str(path / "model.safetensors"))
        return path
    weight_map = {}
    for s in range(shards):
        name = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        part = {k: w[k] for k in keys[s::shards]}
        save_file(part, str(path / name))
        weight_map.update({k: name for k in part})
    (path / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    return path


def test_sharded_folder_streams_the_same_tensors(tmp_path):
    w = tensors(np.random.default_rng(0))
    one = SafetensorsWeights(open_checkpoint(write_folder(tmp_path / "one", w)).files)
    ckpt = open_checkpoint(write_folder(tmp_path / "sharded", w, shards=3))
    assert len(ckpt.files) == 3 and ckpt.config == CONFIG
    sharded = SafetensorsWeights(ckpt.files)
    assert set(sharded) == set(w) and len(sharded) == len(w)
    for key in w:
        assert sharded[key].dtype == np.float64
        np.testing.assert_array_equal(sharded[key], w[key].astype(np.float64))
    np.testing.assert_array_equal(
        sharded.columns("h.1.attn.c_attn.weight", 3, 11), w["h.1.attn.c_attn.weight"][:, 3:11]
    )
    cfg = arch_config(sharded, ckpt.config)
    np.testing.assert_allclose(
        kernel_spectra(sharded, cfg)["singular_values"], kernel_spectra(one, cfg)["singular_values"]
    )


def test_single_file_reads_config_beside_it_or_none(tmp_path):
    w = tensors(np.random.default_rng(1))
    save_file(w, str(tmp_path / "weights.safetensors"))
    ckpt = open_checkpoint(tmp_path / "weights.safetensors")
    assert ckpt.config is None and ckpt.config_dir is None
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    assert open_checkpoint(tmp_path / "weights.safetensors").config_dir == tmp_path


@pytest.mark.parametrize("suffix", [".bin", ".pt", ".pth", ".ckpt"])
def test_pickle_checkpoints_are_refused(tmp_path, suffix):
    path = tmp_path / f"pytorch_model{suffix}"
    path.write_bytes(b"\x80\x04not really a pickle")
    with pytest.raises(UserInputError, match="Refusing to load the pickle checkpoint"):
        open_checkpoint(path)


def test_folder_with_only_a_pickle_is_refused(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    (tmp_path / "pytorch_model.bin").write_bytes(b"\x80\x04")
    with pytest.raises(UserInputError, match="pickle"):
        open_checkpoint(tmp_path)


def test_missing_path_and_missing_config(tmp_path):
    with pytest.raises(UserInputError, match="does not exist"):
        open_checkpoint(tmp_path / "nope")
    with pytest.raises(UserInputError, match="has no config.json"):
        open_checkpoint(tmp_path)


@pytest.mark.parametrize("damage", ["truncate", "garbage"])
def test_corrupt_or_truncated_files_are_reported(tmp_path, damage):
    save_file(tensors(np.random.default_rng(2)), str(tmp_path / "m.safetensors"))
    data = (tmp_path / "m.safetensors").read_bytes()
    bad = data[: len(data) // 2] if damage == "truncate" else b"garbage" * 20
    (tmp_path / "m.safetensors").write_bytes(bad)
    with pytest.raises(UserInputError, match="is not a valid safetensors file"):
        SafetensorsWeights(open_checkpoint(tmp_path / "m.safetensors").files)
