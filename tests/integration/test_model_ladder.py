"""The released size ladder read from its packages: Qwen2.5-Coder 0.5B (in CI) and 1.5B (the optional
``ladder-large`` install) as GGUF files split over packages, and all-mpnet-base-v2 as a zipped folder.
Fast tests read small real pieces (the header, one layer, the zip's directory); the whole models are
slow-marked. Each test is skipped, with the install line, where its packages are absent."""

from __future__ import annotations

import json

import numpy as np
import pytest

from entropic_bound.inspect import released

LADDER = {  # short name → (layers, query heads, key heads, d_model, query/key storage)
    "qwen2.5-coder-0.5b": (24, 14, 2, 896, "Q5_0"),
    "qwen2.5-coder-1.5b": (28, 12, 2, 1536, "Q4_K"),
}


def parts_or_skip(name: str):
    parts = released.locate(name)
    if parts is None:
        extra = " (the ladder-large extra)" if name.endswith("1.5b") else ""
        pytest.skip(
            f"{name}: its packages are not installed{extra}: {released.RELEASED_MODELS[name].install}"
        )
    return parts


@pytest.mark.parametrize("name", sorted(LADDER))
def test_the_header_and_one_layer_of_each_qwen(name):
    pytest.importorskip("gguf")
    from entropic_bound.inspect import arch_config, read_layer
    from entropic_bound.inspect.kernels import kernel_singular_values, split_heads
    from entropic_bound.inspect.source import open_released

    parts_or_skip(name)
    ckpt = open_released(name)
    layers, heads, kv_heads, d_model, storage = LADDER[name]
    cfg = arch_config(ckpt.weights, ckpt.config)
    assert (cfg.arch, cfg.n_layers, cfg.n_heads, cfg.n_kv_heads, cfg.d_model) == (
        "qwen2",
        layers,
        heads,
        kv_heads,
        d_model,
    )
    q_key, k_key = "model.layers.0.self_attn.q_proj.weight", "model.layers.0.self_attn.k_proj.weight"
    assert ckpt.weights.storage(q_key) == storage == ckpt.weights.storage(k_key)
    lw = read_layer(ckpt.weights, cfg, 0)
    assert lw.W_Q.shape == (d_model, heads * cfg.d_head) and lw.W_K.shape == (d_model, kv_heads * cfg.d_head)
    assert lw.b_Q is not None and np.linalg.norm(lw.b_K) > 0  # Qwen2's query/key biases
    sv = kernel_singular_values(*split_heads(lw, cfg)[:2])  # (heads, d_head)
    assert sv.shape == (heads, cfg.d_head) and np.all(np.isfinite(sv)) and np.all(sv[:, 0] > 0)


def test_mpnet_ships_a_zipped_folder_transformers_reads_offline(monkeypatch):
    import zipfile

    import transformers

    from entropic_bound.inspect.chunks import concatenated
    from entropic_bound.inspect.zipped import ArrayFile, _folder_members

    parts = parts_or_skip("mpnet")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with zipfile.ZipFile(ArrayFile(concatenated(parts))) as archive:
        members = _folder_members(archive)
        config = json.loads(archive.read(members["config.json"]))
        assert b"license: apache-2.0" in archive.read(members["README.md"])
    assert {"model.safetensors", "tokenizer.json", "vocab.txt"} <= set(members)
    assert type(transformers.AutoConfig.for_model(**config)).__name__ == "MPNetConfig"
    assert (config["num_hidden_layers"], config["num_attention_heads"], config["hidden_size"]) == (
        12,
        12,
        768,
    )


def inspect_json(capsys, *argv) -> dict:
    """``entropic-bound inspect ... --json`` in this process, on one thread (the CLI's default: two
    threads on a shared core slow the fits many times over)."""
    from entropic_bound.cli import main

    assert main(["inspect", *map(str, argv), "--json", "--threads", "1"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.slow
def test_mpnet_loads_offline_and_is_inspected(monkeypatch, capsys, tmp_path):
    parts_or_skip("mpnet")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    (tmp_path / "text.txt").write_text("The quick brown fox jumps over the lazy dog. " * 8)
    out = inspect_json(capsys, "mpnet", "--text", tmp_path / "text.txt", "--max-windows", 1)
    assert (out["arch"], out["n_layers"], out["n_heads"], out["d_head"]) == ("mpnet", 12, 12, 64)
    assert out["text"]["tokenizer"].startswith("MPNet") and all(
        h["sink_score"] is not None for h in out["heads"]
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(LADDER))
def test_each_qwen_whole_with_its_noise_floor(name, capsys):
    parts_or_skip(name)
    out = inspect_json(capsys, name)
    layers, heads, *_ = LADDER[name]
    assert len(out["heads"]) == layers * heads and out["quantisation"]["floor_types_without_quantiser"] == []
    assert all(0 <= h["rank_above_quant_floor"] <= out["d_head"] for h in out["heads"])


@pytest.mark.slow
@pytest.mark.parametrize("name", ["qwen2.5-coder-0.5b", "mpnet"])
def test_the_random_controls_run_on_text(name, capsys, tmp_path):
    parts_or_skip(name)
    (tmp_path / "text.txt").write_text("def add(a, b):\n    return a + b\n" * 6)
    out = inspect_json(capsys, f"{name}-random", "--text", tmp_path / "text.txt", "--max-windows", 1)
    assert out["quantisation"] == {"quantised": False}  # the control lives in memory, in float32
    assert all(h["mixer_energy_effective_rank"] is not None for h in out["heads"])


CHILD = """
import sys
from entropic_bound.cli import main
code = main(["inspect", "qwen2.5-coder-1.5b", "--json", "--threads", "1"])
status = open("/proc/self/status").read()
print(status.split("VmHWM:")[1].split()[0], file=sys.stderr)  # this process's peak resident kB
sys.exit(code)
"""


@pytest.mark.slow
def test_the_largest_rung_is_inspected_in_under_4_gb():
    """The 1.5B model's static inspection, noise floor included, in a fresh process: its peak resident
    memory (memory-mapped file pages included) stays under 4 GB, read layer by layer. (The child reads
    its own high-water mark: a parent's rusage would count whatever the test process held at the fork.)"""
    import subprocess
    import sys
    from pathlib import Path

    parts_or_skip("qwen2.5-coder-1.5b")
    if not Path("/proc/self/status").is_file():
        pytest.skip("reads the peak resident memory from /proc (Linux)")
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, check=True)
    peak_kb = int(done.stderr.strip().splitlines()[-1])
    assert len(json.loads(done.stdout)["heads"]) == 28 * 12 and peak_kb < 4 * 1024**2, peak_kb
