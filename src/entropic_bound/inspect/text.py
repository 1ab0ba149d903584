"""Text for the realised mixers: reading, tokenizing, cutting into windows, and the forward model.

Tokenization uses the checkpoint's own tokenizer files (``tokenizer.json``, ``vocab.txt``,
``vocab.json`` + ``merges.txt``, ``tokenizer.model``) through ``transformers.AutoTokenizer`` when the
folder has them, adding the model's special tokens (BERT's ``[CLS] … [SEP]``, a BOS; see
:mod:`.forward`) to each window. A model without a tokenizer is refused unless byte tokens are asked
for: token id = UTF-8 byte value mod ``vocab_size``, no special tokens. Those are real,
text-structured inputs, but not the tokens the model was trained on; the result states which
tokenizer was used.

The forward pass needs ``transformers``, loads the model with eager attention (the fused kernels
return no attention weights), and reads weights with ``safetensors`` only (GGUF: :mod:`.forward`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DataError, UserInputError
from ..text_bytes import not_text_reason

BUILTIN_TEXT = (
    "The river runs past the old mill and under the stone bridge, where the children of the village "
    "gather every evening to watch the boats come home. In the spring the water rises and the meadows "
    "turn green; in the autumn the leaves fall and drift slowly toward the sea. The miller keeps a "
    "small notebook in which he writes the height of the river each morning, the weather, and the "
    "names of the boats that pass. Over forty years the notebook has grown into a quiet history of "
    "the valley: floods and droughts, weddings announced from the bridge, a winter when the river "
    "froze so hard that the whole village walked across it to the church on the far bank. Nobody "
    "reads the notebook except the miller, but everyone knows it is there, and when an argument "
    "starts about the past, someone always says: ask the miller, he will have written it down."
)
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "tokenizer.model")


def _transformers():
    try:
        import transformers
    except ImportError:
        raise UserInputError(
            "Realised mixers need the optional 'transformers' package: pip install 'entropic-bound[hf]'."
        ) from None
    quiet_third_party()
    return transformers


def quiet_third_party() -> None:
    """Silence transformers' and huggingface_hub's logging and progress bars ("Loading weights")."""
    import transformers
    from huggingface_hub.utils import disable_progress_bars

    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    disable_progress_bars()


#: A text file is read at most this many characters at a time, and only until the windows are full.
CHUNK_CHARS = 1 << 16
#: Characters read per token the windows need (a token is rarely longer): small windows, small reads.
CHARS_PER_TOKEN = 8


def _open_text(path: Path):
    if not path.is_file():
        raise DataError(f"The text file '{path}' does not exist.")
    try:
        return open(path, encoding="utf-8", errors="replace")
    except OSError as exc:
        raise DataError(f"Cannot read the text file '{path}': {exc}.") from None


def text_chunks(text: str | Path, size: int = CHUNK_CHARS) -> Iterator[str]:
    """The text in pieces: a ``str`` whole; a file (a :class:`~pathlib.Path`, UTF-8) streamed
    ``size`` characters at a time, each piece ending before whitespace where it can, so
    no word is cut between two pieces and tokenising them one by one gives the tokens of the whole."""
    if isinstance(text, str):
        yield text
        return
    with _open_text(Path(text)) as handle:
        carry = ""
        while block := handle.read(size):
            block = carry + block
            cut = max(block.rfind(" "), block.rfind("\n"), block.rfind("\t"))
            if cut <= 0 and len(block) < 4 * size:  # no whitespace yet: a long word, read on
                carry = block
                continue
            cut = cut if cut > 0 else len(block)
            yield block[:cut]
            carry = block[cut:]
        if carry:
            yield carry


def check_text(text: str | Path) -> None:
    """Fail in one line on an empty text or a missing, unreadable or blank file (read only as far as
    its first non-blank character)."""
    if any(piece.strip() for piece in text_chunks(text)):
        return
    raise DataError("The text is empty." if isinstance(text, str) else f"The text file '{text}' is empty.")


def load_tokenizer(model_dir: Path | None) -> Any | None:
    """The checkpoint's own tokenizer, or None when the folder has no tokenizer files."""
    if model_dir is None or not any((model_dir / name).is_file() for name in TOKENIZER_FILES):
        return None
    try:
        return _transformers().AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    except (OSError, ValueError, KeyError, ImportError):
        return None  # unusable tokenizer files: use the byte fallback


def special_tokens(tokenizer: Any) -> tuple[list[int], list[int]]:
    """The ids a tokenizer puts before and after one sequence (BERT ``[CLS]``/``[SEP]``, Llama BOS)."""
    plain = tokenizer("a", add_special_tokens=False)["input_ids"]
    full = tokenizer("a", add_special_tokens=True)["input_ids"]
    for start in range(len(full) - len(plain) + 1):
        if full[start : start + len(plain)] == plain:
            return list(full[:start]), list(full[start + len(plain) :])
    return [], []


def token_windows(
    text: str | Path,
    tokenizer: Any | None,
    *,
    vocab_size: int,
    window_len: int,
    max_windows: int,
    prefix: list[int] | None = None,
    suffix: list[int] | None = None,
) -> np.ndarray:
    """Cut ``text`` into up to ``max_windows`` non-overlapping windows: ``(windows, n)`` int64.

    Every window has the same length ``n`` (= ``window_len``, or all the text when shorter), the
    ``prefix`` and ``suffix`` ids included (default: the tokenizer's own special tokens); a trailing
    partial window is dropped. A file is read and tokenised only until the windows are full, so memory
    is bounded by ``max_windows × window_len`` whatever its size.
    """
    own = special_tokens(tokenizer) if tokenizer is not None else ([], [])
    prefix = own[0] if prefix is None else prefix
    suffix = own[1] if suffix is None else suffix
    body = window_len - len(prefix) - len(suffix)
    if body < 2:
        raise UserInputError(
            f"The window length must leave at least 2 text tokens. Got window_len={window_len}."
        )
    needed = body * max_windows
    ids: list[int] = []
    for piece in text_chunks(text, min(CHUNK_CHARS, max(1024, CHARS_PER_TOKEN * needed))):
        if tokenizer is not None:
            ids += tokenizer(piece, add_special_tokens=False)["input_ids"]
        else:
            ids += [b % vocab_size for b in piece.encode("utf-8")]
        if len(ids) >= needed:
            break
    del ids[needed:]
    if len(ids) < 2:
        raise DataError(f"The text has {len(ids)} token(s); realised mixers need at least 2.")
    body = min(body, len(ids))
    chunks = [ids[s : s + body] for s in range(0, len(ids) - body + 1, body)][:max_windows]
    chunks = [prefix + list(c) + suffix for c in chunks]
    return np.asarray(chunks, dtype=np.int64)


def load_hf_model(model_dir: Path) -> Any:
    """A ``transformers`` model from the folder ``model_dir`` (safetensors only, eager attention, float32)."""
    transformers = _transformers()
    try:
        model = transformers.AutoModel.from_pretrained(
            str(model_dir), attn_implementation="eager", use_safetensors=True, local_files_only=True
        )
    except (OSError, ValueError, KeyError, RuntimeError) as exc:
        raise DataError(
            f"transformers could not load '{model_dir}': {' '.join(str(exc).split())[:300]}"
        ) from None
    return model.float().eval()


def max_positions(config: dict) -> int | None:
    """The longest input the model accepts, from its config (None if unstated)."""
    for key in ("max_position_embeddings", "n_positions", "n_ctx"):
        if isinstance(config.get(key), int):
            return config[key]
    return None


#: Bytes of a text file read to tell text from a binary file.
SNIFF_BYTES = 1 << 16


def text_problem(text: str | Path, windows: int, tokens: int, window_len: int) -> str:
    """Why the realised statistics of ``text`` say little ('' when they can be read): the text is not
    text (a binary file), or it fills less than one window of ``window_len`` tokens (the sink score,
    locality and logit field of a few tokens are degenerate: every head looks like a sink)."""
    if isinstance(text, Path):
        with open(text, "rb") as handle:
            problem = not_text_reason(handle.read(SNIFF_BYTES))
        if problem:
            return f"not text: the file {problem}; the statistics need UTF-8 text"
    if windows == 1 and tokens < window_len:
        return (
            f"too short: {tokens} tokens, fewer than one window of --window-len {window_len} tokens that "
            "the statistics need; give a longer --text"
        )
    return ""
