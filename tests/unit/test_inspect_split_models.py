"""Models split over numbered pip packages: the parts found through their distributions, a bad set
refused in one line (exit 2), the joined bytes read in place, and a tiny Qwen2 GGUF split that way read
back equal to the transformers model it was written from (the Qwen2 adapter's grouped heads included)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")

from gguf_files import write_tiny_llama_gguf  # noqa: E402
from split_packages import FILE, PACKAGE, install_parts, split_bytes, state_arrays, tiny_qwen2  # noqa: E402

from entropic_bound.cli import main  # noqa: E402
from entropic_bound.errors import DataError  # noqa: E402
from entropic_bound.inspect import arch_config, head_kernels, released  # noqa: E402
from entropic_bound.inspect.chunks import ChunkSet, check_order, concatenated, find_parts  # noqa: E402
from entropic_bound.inspect.in_memory import module_checkpoint  # noqa: E402
from entropic_bound.inspect.source import open_released  # noqa: E402


@pytest.fixture(scope="module")
def model():
    return tiny_qwen2()


@pytest.fixture(scope="module")
def gguf_bytes(tmp_path_factory, model):
    path = tmp_path_factory.mktemp("qwen2") / "tiny-qwen2.gguf"
    write_tiny_llama_gguf(path, state_arrays(model), heads=6, kv_heads=2, arch="qwen2")
    return path.read_bytes()


@pytest.fixture
def split_model(tmp_path, monkeypatch):
    """Registers the short name ``tiny-split``: parts installed by the test into ``tmp_path``."""
    chunks = ChunkSet(PACKAGE, FILE, 0)

    def install(parts, versions=None):
        install_parts(tmp_path, parts, versions)
        spec = released.ReleasedModel(
            PACKAGE.format(i=1), "pip install eb-tiny-split", "MIT", "tiny Qwen2", readers=("gguf",),
            chunks=ChunkSet(chunks.package, chunks.file, len(parts)),
        )  # fmt: skip
        monkeypatch.setitem(released.RELEASED_MODELS, "tiny-split", spec)
        monkeypatch.syspath_prepend(str(tmp_path))
        importlib.invalidate_caches()

    return install


def one_line_error(capsys, *argv) -> str:
    assert main(["inspect", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("entropic-bound: error: ") and err.count("\n") == 1, err
    return err


def test_the_joined_parts_read_as_the_whole_file_without_a_copy(tmp_path, gguf_bytes):
    parts = split_bytes(gguf_bytes)
    paths = []
    for i, blob in enumerate(parts, start=1):
        paths.append(tmp_path / f"part{i:02d}.bin")
        paths[-1].write_bytes(blob)
    joined = concatenated(paths)
    assert len(parts) > 2 and joined.tobytes() == gguf_bytes
    assert not joined.flags.writeable and not joined.flags.owndata  # a view of the mapped parts
    odd = [tmp_path / "odd01.bin", tmp_path / "odd02.bin"]  # not page-sized: read into memory instead
    odd[0].write_bytes(gguf_bytes[:1000])
    odd[1].write_bytes(gguf_bytes[1000:])
    assert concatenated(odd).tobytes() == gguf_bytes


def test_part_files_out_of_order_are_refused(tmp_path):
    names = [tmp_path / f"part0{i}.bin" for i in (1, 3, 2)]
    with pytest.raises(DataError, match="numbered 1 to 3 in order; got part01.bin, part03.bin, part02.bin"):
        check_order(names)
    assert check_order(sorted(names)) == tuple(sorted(names))


def test_a_split_qwen2_reads_back_as_the_model_it_was_written_from(split_model, gguf_bytes, model):
    split_model(split_bytes(gguf_bytes))
    ckpt = open_released("tiny-split")
    assert ckpt.kind == "gguf" and len(ckpt.files) == len(split_bytes(gguf_bytes))
    want = state_arrays(model)
    assert set(ckpt.weights) == set(want)
    for key, value in want.items():  # rows in transformers' order: llama.cpp permutes none for Qwen2
        assert np.array_equal(ckpt.weights[key], value.astype(np.float64)), key
    cfg = arch_config(ckpt.weights, ckpt.config)
    assert (cfg.arch, cfg.n_layers, cfg.n_heads, cfg.n_kv_heads, cfg.d_head) == ("qwen2", 2, 6, 2, 8)


def test_transformers_gguf_loader_reads_the_split_file_as_the_original(split_model, gguf_bytes, model):
    from entropic_bound.inspect.forward import load_model_of

    split_model(split_bytes(gguf_bytes))
    loaded = load_model_of(open_released("tiny-split"))
    got, want = state_arrays(loaded), state_arrays(model)
    assert set(got) == set(want)
    for key in want:
        assert np.array_equal(got[key], want[key]), key


def test_qwen2_heads_are_transformers_grouped_query_heads(model):
    """Per head, ``(x W_Q + b_Q)(y W_K + b_K)ᵀ`` from the adapter equals the logits transformers forms
    with its own projections and ``repeat_kv`` (key head j serves query heads j·g … j·g + g − 1)."""
    import torch
    from transformers.models.qwen2.modeling_qwen2 import repeat_kv

    from entropic_bound.inspect.arch import read_layer
    from entropic_bound.inspect.kernels import split_heads

    ckpt = module_checkpoint(model)
    cfg = arch_config(ckpt.weights, ckpt.config)
    x = torch.randn(1, 5, cfg.d_model, generator=torch.Generator().manual_seed(1))
    for layer in range(cfg.n_layers):
        attn = model.model.layers[layer].self_attn
        with torch.no_grad():
            q = attn.q_proj(x).view(1, 5, cfg.n_heads, cfg.d_head).transpose(1, 2)  # (1, H, n, d_head)
            k = attn.k_proj(x).view(1, 5, cfg.n_kv_heads, cfg.d_head).transpose(1, 2)
            logits = (q @ repeat_kv(k, cfg.n_heads // cfg.n_kv_heads).transpose(-1, -2))[0].double().numpy()
        heads = split_heads(read_layer(ckpt.weights, cfg, layer), cfg)
        xs = x[0].double().numpy()
        for h in range(cfg.n_heads):
            ours = (xs @ heads.W_Q[h] + heads.b_Q[h]) @ (xs @ heads.W_K[h] + heads.b_K[h]).T
            np.testing.assert_allclose(ours, logits[h], rtol=1e-5, atol=1e-5)
    kernels = list(head_kernels(ckpt.weights, cfg))
    assert [k.kv_head for k in kernels[: cfg.n_heads]] == [0, 0, 0, 1, 1, 1]


def test_a_missing_part_is_one_line(split_model, gguf_bytes, capsys):
    parts = split_bytes(gguf_bytes)
    split_model([parts[0], None, *parts[2:]])
    err = one_line_error(capsys, "tiny-split")
    assert "incomplete: eb-tiny-split-part2 is not installed" in err and "--no-deps" in err


def test_parts_of_two_releases_are_one_line(split_model, gguf_bytes, capsys):
    parts = split_bytes(gguf_bytes)
    split_model(parts, ["1.0"] * (len(parts) - 1) + ["2.0"])
    assert "come from different releases" in one_line_error(capsys, "tiny-split")


def test_parts_of_two_models_are_one_line(split_model, gguf_bytes, tmp_path, capsys):
    parts = split_bytes(gguf_bytes)
    other = tmp_path / "other.gguf"
    write_tiny_llama_gguf(other, state_arrays(tiny_qwen2(1, layers=3)), heads=6, kv_heads=2, arch="qwen2")
    split_model([parts[0], *split_bytes(other.read_bytes())[1:]])
    err = one_line_error(capsys, "tiny-split")
    assert "parts of different models or releases are mixed" in err


def test_no_part_installed_means_not_installed(split_model, capsys):
    split_model([])
    assert released.locate("tiny-split") is None and not released.available("tiny-split")
    assert find_parts(ChunkSet("eb-absent-part{i}", FILE, 3)) is None


def test_e7_probes_a_split_model_by_its_name(split_model, gguf_bytes):
    from entropic_bound.language_models.probes.checkpoint import checkpoint_mixers, resolve_checkpoint

    split_model(split_bytes(gguf_bytes))
    assert resolve_checkpoint("tiny-split") == ("tiny-split", "1.0")
    assert resolve_checkpoint("tiny-split-random") == ("tiny-split", "1.0+reinit0")
    mixers, inputs, causal, d_head = checkpoint_mixers(
        "tiny-split", "abc " * 40, window_len=16, max_windows=2
    )
    assert mixers.shape == (2, 2, 6, 16, 16) and inputs.shape == (2, 2, 16, 48) and causal and d_head == 8
