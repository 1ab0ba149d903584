"""``analyse`` from a notebook: a loaded transformers model (and a TransformerLens ``HookedTransformer``)
gives the frame of its path, every short name of the CLI works in Python, and windows start with the
tokenizer's BOS where the model has one."""

from __future__ import annotations

import numpy as np
import pytest
from inspect_helpers import word_tokenizer

from entropic_bound.inspect import analyse


def test_analyse_of_a_loaded_model_equals_analyse_of_its_path(minilm, tiny):
    transformers = pytest.importorskip("transformers")
    from entropic_bound.inspect import BUILTIN_TEXT

    model = transformers.AutoModel.from_pretrained(minilm)  # default attention: switched to eager inside
    tokenizer = transformers.AutoTokenizer.from_pretrained(minilm)
    options = {"text": BUILTIN_TEXT, "window_len": 32, "max_windows": 4}
    from_path, from_model = analyse(minilm, **options), analyse(model, tokenizer=tokenizer, **options)
    assert from_path.equals(from_model) and {"sink_score", "logit_field_explained"} <= set(from_model)
    assert from_model.attrs["text"]["first_token"].startswith("'[CLS]'")
    assert model.config._attn_implementation != "eager"  # the caller's model is left as it was
    gpt2 = transformers.GPT2LMHeadModel.from_pretrained(tiny / "gpt2")  # with its language-model head
    tiny_options = {"text": BUILTIN_TEXT, "byte_tokens": True, "window_len": 16}
    assert analyse(gpt2, **tiny_options).equals(analyse(tiny / "gpt2", **tiny_options))


def test_every_short_name_of_the_cli_works_in_python(minilm):
    by_name, by_path = analyse("minilm"), analyse(minilm)
    assert by_name.equals(by_path) and by_name.attrs["model"] == "minilm"
    control = analyse("minilm-random")
    assert len(control) == 72 and not np.allclose(control["sv_1"], by_path["sv_1"])
    assert analyse("minilm-random")["sv_1"].equals(control["sv_1"])  # one fixed seed


def test_windows_start_with_the_bos_and_the_sink_is_also_measured_without_it(tiny):
    transformers = pytest.importorskip("transformers")
    text = "the quick brown fox jumps over the lazy dog " * 20
    llama = transformers.LlamaForCausalLM.from_pretrained(tiny / "llama")
    frame = analyse(llama, tokenizer=word_tokenizer(text, "<s>"), text=text, window_len=12, max_windows=4)
    info = frame.attrs["text"]
    assert info["bos_added"] and info["first_token"].startswith("'<s>' (id 1), BOS put in front")
    assert frame["sink_score_without_bos"].between(0, 1).all()
    assert info["sink_ratio_without_bos"] == frame["sink_head_without_bos"].mean()
    plain = analyse(llama, tokenizer=word_tokenizer(text, None), text=text, window_len=12, max_windows=4)
    assert not plain.attrs["text"]["bos_added"] and "sink_score_without_bos" not in plain
    assert plain.attrs["text"]["first_token"].startswith("the window's first text token")


def test_a_hooked_transformer_gives_the_frame_of_the_gpt2_it_was_converted_from(tiny):
    transformers = pytest.importorskip("transformers")
    lens = pytest.importorskip("transformer_lens")
    try:  # TransformerLens 4 removed the class (TransformerBridge replaces it); 3.x has it
        HookedTransformer, HookedTransformerConfig = lens.HookedTransformer, lens.HookedTransformerConfig
    except ImportError:
        pytest.skip("this TransformerLens has no HookedTransformer")
    from transformer_lens.pretrained.weight_conversions import convert_gpt2_weights

    from entropic_bound.inspect import BUILTIN_TEXT

    gpt2 = transformers.GPT2LMHeadModel.from_pretrained(tiny / "gpt2")
    cfg = HookedTransformerConfig(
        n_layers=2, d_model=32, n_ctx=64, d_head=8, n_heads=4, d_vocab=300, d_mlp=128, act_fn="gelu_new"
    )
    hooked = HookedTransformer(cfg)
    hooked.load_state_dict(convert_gpt2_weights(gpt2, cfg), strict=False)
    options = {"text": BUILTIN_TEXT, "byte_tokens": True, "window_len": 16, "fold_ln": True}
    lens_frame, hf_frame = analyse(hooked, **options), analyse(tiny / "gpt2", **options)
    assert lens_frame.attrs["arch"] == "hooked_transformer" and len(lens_frame) == 8
    static = ["sv_1", "sv_8", "frobenius_norm", "b_Q_norm", "b_K_norm", "energy_effective_rank"]
    np.testing.assert_allclose(lens_frame[static], hf_frame[static], rtol=1e-9)
    realised = ["sink_score", "locality_mass", "logit_field_explained", "mixer_energy_effective_rank"]
    np.testing.assert_allclose(lens_frame[realised], hf_frame[realised], atol=1e-5)
