"""A model argument → a local checkpoint path: a folder or file as given, else a Hugging Face model id
resolved through the local cache only (``huggingface_hub``, ``local_files_only=True``; never the network).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import DataError, UserInputError


def _looks_like_path(model: str) -> bool:
    """A string that cannot be a Hub id (``name`` or ``owner/name``) is meant as a local path."""
    return (
        model.startswith((".", "/", "~"))
        or model.count("/") > 1
        or "\\" in model
        or model.lower().endswith(
            (".safetensors", ".gguf", ".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle")
        )
    )


def _from_cache(repo_id: str, cache_dir: str | Path | None) -> Path:
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.utils import HFValidationError, LocalEntryNotFoundError, disable_progress_bars
    except ImportError:
        raise UserInputError(
            f"'{repo_id}' is not a folder, and reading a Hugging Face model id needs the optional "
            "'huggingface_hub' package: pip install 'entropic-bound[hf]'."
        ) from None
    disable_progress_bars()
    try:
        folder = snapshot_download(repo_id, cache_dir=cache_dir, local_files_only=True)
    except HFValidationError:
        raise DataError(
            f"'{repo_id}' is neither a local folder nor a valid Hugging Face model id (owner/name)."
        ) from None
    except (LocalEntryNotFoundError, OSError):
        raise DataError(
            f"'{repo_id}' is not a local folder and not in the Hugging Face cache (never downloaded here): "
            f"run 'hf download {repo_id}' first (or set HF_HUB_CACHE), or pass a model folder."
        ) from None
    return Path(folder)


def resolve_model(model: str | Path, *, cache_dir: str | Path | None = None) -> Path:
    """``model`` as a local path: itself when it exists or looks like a path, else the cached snapshot
    folder of the Hugging Face model id ``model``. Raises :class:`DataError` (one line) when neither."""
    path = Path(model).expanduser()
    if path.exists() or isinstance(model, Path) or _looks_like_path(str(model)):
        return path  # a missing path is reported by open_checkpoint
    return _from_cache(str(model), cache_dir)
