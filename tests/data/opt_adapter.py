"""An OPT adapter written as a user would add a family to ``inspect``: one class, nothing else touched.

The unit tests register it by hand (tests/unit/test_inspect_architectures.py); the guide test copies
it into a copy of the package as ``inspect/architectures/opt.py`` beside its registry line
(tests/integration/test_extension_guides.py).
"""

from entropic_bound.inspect.architectures.base import Architecture, ConfigFields, LayerWeights, linear_layer


class Opt(Architecture):
    """OPT decoders (pre-LN): ``decoder.layers.{i}.self_attn.{q,k}_proj``."""

    anchor = "decoder.layers.{i}.self_attn.q_proj.weight"
    fields = ConfigFields("num_attention_heads", "num_hidden_layers", "hidden_size")

    def read_layer(self, weights, cfg, layer) -> LayerWeights:
        base = f"{cfg.prefix}decoder.layers.{layer}."
        attn = base + "self_attn."
        return linear_layer(weights, attn + "q_proj", attn + "k_proj", base + "self_attn_layer_norm")
