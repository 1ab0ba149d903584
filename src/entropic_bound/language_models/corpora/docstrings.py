"""Natural-language corpora read from the English prose that installed packages ship: their docstrings.

C11 and C12 are decided on natural-language corpora (the paper's Appendix B), and the exact
test needs several of them. Every package here is a dependency of entropic-bound (or the standard
library), so each corpus exists wherever the project installs, with no download. A corpus is the
docstrings of the package's own ``.py`` files (tests and vendored copies left out), files in sorted
order and, within a file, in :func:`ast.walk` order, each docstring cleaned of what is not prose:
doctest lines (``>>>``, ``...``), reStructuredText directives (``.. x::``) and heading rules are
removed, every line is stripped of its indentation and runs of blank lines are collapsed.

:data:`PACKAGE_TEXTS` names, for each corpus, the package it reads and that package's licence (the
licences are also listed in ``lm/data/SOURCES.md``); :func:`source_version` names the version the
text was read from (in the corpus's ``source`` line). Run ids do not carry it, so that they stay
the same on every machine; a store's provenance records the versions of the core packages, and
another version of a package has somewhat other docstrings.
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import os
import re
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from ...errors import DataError
from .text_windows import gather, rotated

#: folders whose files are not the package's own prose (tests, vendored copies, caches)
SKIPPED_PARTS = frozenset(
    {"site-packages", "dist-packages", "test", "tests", "testing", "idle_test", "__pycache__"}
    | {"_vendor", "vendor", "vendored", "_vendored", "externals", "extern"}
)
_RULE = set("*=-~^#+`'\"")


@dataclass(frozen=True)
class PackageText:
    """A docstring corpus: the import name of the package it reads (``None``: the standard
    library), the distribution whose version identifies it, and the licence of that text."""

    package: str | None
    distribution: str | None
    licence: str


#: corpus name → the package whose docstrings it is (all natural language)
PACKAGE_TEXTS: dict[str, PackageText] = {
    "stdlib_docstrings": PackageText(None, None, "PSF-2.0 (Python Software Foundation License)"),
    "numpy_docstrings": PackageText("numpy", "numpy", "BSD-3-Clause"),
    "scipy_docstrings": PackageText("scipy", "scipy", "BSD-3-Clause"),
    "pandas_docstrings": PackageText("pandas", "pandas", "BSD-3-Clause"),
    "torch_docstrings": PackageText("torch", "torch", "BSD-3-Clause (PyTorch)"),
    "matplotlib_docstrings": PackageText("matplotlib", "matplotlib", "Matplotlib License (PSF-based)"),
    "transformers_docstrings": PackageText("transformers", "transformers", "Apache-2.0"),
}


def package_root(text: PackageText) -> Path:
    """The folder of the package's sources (the standard library's for ``package=None``)."""
    if text.package is None:
        return Path(sysconfig.get_paths()["stdlib"])
    spec = importlib.util.find_spec(text.package)
    if spec is None or not spec.submodule_search_locations:
        raise DataError(f"The package '{text.package}' is not installed; its docstring corpus needs it.")
    return Path(list(spec.submodule_search_locations)[0])


def source_version(name: str) -> str | None:
    """What identifies corpus ``name``'s text: ``python X.Y`` or ``<distribution> <version>``."""
    text = PACKAGE_TEXTS[name]
    if text.distribution is None:
        return f"python {sys.version_info.major}.{sys.version_info.minor}"
    return f"{text.distribution} {importlib.metadata.version(text.distribution)}"


def source_files(root: Path) -> list[Path]:
    """``root``'s ``.py`` files sorted by relative path, :data:`SKIPPED_PARTS` folders left out."""
    files = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIPPED_PARTS]
        files.extend(Path(folder) / n for n in names if n.endswith(".py"))
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def prose(docstring: str) -> str:
    """The prose lines of one (cleaned) docstring: no doctest, directive or heading-rule lines, no
    indentation, blank runs collapsed."""
    keep = []
    for line in docstring.splitlines():
        s = line.strip()
        if s.startswith((">>>", "...", ".. ")) or (s and set(s) <= _RULE):
            continue
        keep.append(s)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(keep)).strip()


def file_docstrings(path: Path) -> list[str]:
    """The prose of every docstring in one source file (module, classes, functions); none when the
    file does not parse under the running Python."""
    try:
        tree = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError, UnicodeDecodeError):
        return []
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    found = (ast.get_docstring(node) for node in ast.walk(tree) if isinstance(node, kinds))
    return [p for p in (prose(d) for d in found if d) if p]


def docstring_bytes(name: str, n_bytes: int, window_seed: int | None = None) -> tuple[bytes, str]:
    """The first ``n_bytes`` UTF-8 bytes of corpus ``name``'s docstrings, from the first file or
    from one drawn from ``window_seed`` (wrapping around), and a line saying where they come from
    (files read out of the package's)."""
    root = package_root(PACKAGE_TEXTS[name])
    files = rotated(source_files(root), window_seed)
    data, read = gather(files, n_bytes, lambda _, path: [t.encode("utf-8") for t in file_docstrings(path)])
    if not data:
        raise DataError(f"The corpus '{name}' found no docstrings under {root}.")
    return data, f"docstrings of {read} of {len(files)} files under {root} ({source_version(name)})"
