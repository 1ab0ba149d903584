"""The architecture registry: a miss lists the names, and a new family is one adapter class."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

from entropic_bound.errors import UnknownNameError
from entropic_bound.inspect import ARCHITECTURES, adapter, arch_config, kernel_spectra


def _opt_adapter() -> type:
    """The OPT adapter of tests/data/opt_adapter.py (the one the architecture guide adds)."""
    path = Path(__file__).resolve().parents[1] / "data" / "opt_adapter.py"
    spec = importlib.util.spec_from_file_location("opt_adapter", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Opt


def test_a_miss_lists_every_registered_architecture():
    assert adapter("bert").causal is False and adapter("llama").rope and adapter("gpt2").causal
    listed = re.escape(", ".join(sorted(ARCHITECTURES.declared())))
    with pytest.raises(UnknownNameError, match=rf"Unknown architecture 'lama'. Available: {listed}\."):
        adapter("lama")


@pytest.mark.parametrize("name", ARCHITECTURES.declared())
def test_every_adapter_declares_its_layout(name):
    a = adapter(name)
    assert "{i}" in a.anchor and a.fields.n_heads and a.fields.n_layers and a.fields.d_model
    assert ARCHITECTURES.summary(name)


def test_a_new_architecture_is_one_class(monkeypatch):
    monkeypatch.setitem(ARCHITECTURES._items, "opt", _opt_adapter())
    rng = np.random.default_rng(0)
    d, H = 12, 3
    w = {}
    for i in range(2):
        for name in ("q_proj", "k_proj"):
            w[f"model.decoder.layers.{i}.self_attn.{name}.weight"] = rng.normal(size=(d, d))
        w[f"model.decoder.layers.{i}.self_attn_layer_norm.weight"] = rng.normal(size=d)
    config = {"model_type": "opt", "num_attention_heads": H, "num_hidden_layers": 2, "hidden_size": d}
    cfg = arch_config(w, config)
    assert (cfg.arch, cfg.prefix, cfg.n_layers, cfg.d_head, cfg.causal) == ("opt", "model.", 2, 4, True)
    sv = kernel_spectra(w, cfg)["singular_values"]
    q = w["model.decoder.layers.1.self_attn.q_proj.weight"].T[:, 4:8]
    k = w["model.decoder.layers.1.self_attn.k_proj.weight"].T[:, 4:8]
    np.testing.assert_allclose(sv[1, 1], np.linalg.svd(q @ k.T, compute_uv=False)[:4], rtol=1e-10)
