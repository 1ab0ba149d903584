"""The architecture registry: a miss lists the names, and a new family is one adapter class."""

from __future__ import annotations

import re

import numpy as np
import pytest

from entropic_bound.errors import UnknownNameError
from entropic_bound.inspect import ARCHITECTURES, adapter, arch_config, kernel_spectra
from entropic_bound.inspect.architectures import Architecture, ConfigFields, LayerWeights
from entropic_bound.inspect.architectures.base import linear_layer


class Opt(Architecture):
    """OPT-like decoder, written here as a user would add it: one class, nothing else touched."""

    anchor = "decoder.layers.{i}.self_attn.q_proj.weight"
    fields = ConfigFields("num_attention_heads", "num_hidden_layers", "hidden_size")

    def read_layer(self, weights, cfg, layer) -> LayerWeights:
        base = f"{cfg.prefix}decoder.layers.{layer}."
        attn = base + "self_attn."
        return linear_layer(weights, attn + "q_proj", attn + "k_proj", base + "self_attn_layer_norm")


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
    monkeypatch.setitem(ARCHITECTURES._items, "opt", Opt)
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
