"""Test helpers: a file split into numbered pip "packages" (a dist-info folder with METADATA and RECORD
each, so ``importlib.metadata`` finds them on ``sys.path`` as it finds installed ones), and a tiny
Qwen2 built by transformers from a random config."""

from __future__ import annotations

import mmap
from pathlib import Path

import numpy as np

PACKAGE, FILE = "eb-tiny-split-part{i}", "eb_tiny_split_part{i}/data/part{i:02d}.bin"


def split_bytes(blob: bytes, pages_per_part: int = 16) -> list[bytes]:
    """``blob`` cut into parts of ``pages_per_part`` memory pages (the last part the rest)."""
    size = pages_per_part * mmap.PAGESIZE
    return [blob[start : start + size] for start in range(0, len(blob), size)]


def install_parts(site: Path, parts: list[bytes | None], versions: list[str] | None = None) -> None:
    """Write ``parts[i - 1]`` as package ``i`` into ``site`` (None: that package is not installed)."""
    for i, blob in enumerate(parts, start=1):
        if blob is None:
            continue
        name, version, relative = (
            PACKAGE.format(i=i),
            (versions or ["1.0"] * len(parts))[i - 1],
            FILE.format(i=i),
        )
        (site / relative).parent.mkdir(parents=True, exist_ok=True)
        (site / relative).write_bytes(blob)
        info = site / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        (info / "RECORD").write_text(f"{relative},,\n{info.name}/METADATA,,\n")


def tiny_qwen2(seed: int = 0, *, heads: int = 6, kv_heads: int = 2, d: int = 48, layers: int = 2):
    """A transformers ``Qwen2ForCausalLM`` from a small random config (query/key biases drawn nonzero)."""
    import torch
    import transformers

    torch.manual_seed(seed)
    config = transformers.Qwen2Config(
        hidden_size=d,
        intermediate_size=64,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        num_hidden_layers=layers,
        vocab_size=300,
        max_position_embeddings=64,
        tie_word_embeddings=False,
    )
    model = transformers.Qwen2ForCausalLM(config).eval()
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if name.endswith("bias") or "norm" in name:
                parameter.add_(torch.randn(parameter.shape) * 0.1)  # biases and gains away from 0 and 1
    return model


def state_arrays(model) -> dict[str, np.ndarray]:
    """The model's tensors as float32 arrays under transformers' names."""
    return {k: v.detach().float().numpy() for k, v in model.state_dict().items()}
