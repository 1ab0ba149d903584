"""Natural-language corpora read from texts that Debian packages install: fortunes, manual pages, manuals.

C11 is a correlation over natural corpora (the unit is the corpus) and C12's interval resamples
corpora, so both need many corpora of different registers and languages. Each corpus here is the
prose of one Debian package's text files, read where the package installed them, nothing shipped or
downloaded: the package's own file list (``/var/lib/dpkg/info/<package>.list``) names the files, a
glob picks the text files among them, and :mod:`.prose_cleaning` keeps the prose of each (``form``).
Files are read in sorted order, each cleaned file followed by a blank line; a later draw starts at
a drawn line of a drawn file and wraps around (:mod:`.text_windows`), so a text of one file moves too.

:data:`DEBIAN_TEXTS` names, for each corpus, its package, language, register and licence (also
listed in ``data/SOURCES.md``); :func:`source_version` gives the installed version (in the corpus's
``source`` line; run ids do not carry it, so they are the same on every machine). A corpus whose
package is not installed fails naming the package to install; ``.ci/run`` and the README install
every one (:data:`DEBIAN_PACKAGES`).
"""

from __future__ import annotations

import fnmatch
import gzip
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ...errors import DataError
from .prose_cleaning import prose
from .text_windows import gather, rotated, text_window

DPKG = Path("/var/lib/dpkg")


@dataclass(frozen=True)
class DebianText:
    """A corpus: the Debian ``package`` whose installed files it reads, the globs (``fnmatch`` on the
    absolute path) that pick its text files, those to leave out (ASCII art, duplicate encodings),
    the markup ``form`` of the files (:data:`.prose_cleaning.FORMS`), its language (ISO 639-1),
    register and licence."""

    package: str
    files: tuple[str, ...]
    form: str
    language: str
    register: str
    licence: str
    exclude: tuple[str, ...] = ()


def _fortunes(package: str, where: str, language: str, licence: str, exclude=()) -> DebianText:
    register = "quotations, jokes, verse and dialogue (fortune cookies)"
    return DebianText(package, (where,), "fortune", language, register, licence, tuple(exclude))


def _manpages(package: str, where: str, language: str, licence: str) -> DebianText:
    return DebianText(package, (where,), "roff", language, "manual pages (translated)", licence)


_L10N = "GPL-3.0-or-later (manpages-l10n translations)"

#: corpus name → the Debian text it reads (every one natural language)
DEBIAN_TEXTS: dict[str, DebianText] = {
    "fortunes_en": _fortunes(
        "fortunes",
        "/usr/share/games/fortunes/*",
        "en",
        "BSD-4-Clause-UC (fortune-mod, Regents of the University of California)",
        exclude=("*/ascii-art",),
    ),
    "fortunes_de": _fortunes(
        "fortunes-de", "/usr/share/games/fortunes/de/*", "de", "GPL-2.0-or-later", exclude=("*/asciiart",)
    ),
    "fortunes_cs": _fortunes("fortunes-cs", "/usr/share/games/fortunes/cs/*", "cs", "GPL-3.0-or-later"),
    "fortunes_es": _fortunes("fortunes-es", "/usr/share/games/fortunes/es/*", "es", "GPL-2.0-or-later"),
    "fortunes_it": _fortunes(
        "fortunes-it",
        "/usr/share/games/fortunes/it/*",
        "it",
        "public domain (freeware)",
        exclude=("*/banner",),
    ),
    "fortunes_pl": _fortunes(
        "fortunes-pl",
        "/usr/share/games/fortunes/pl/*",
        "pl",
        "GPL-2.0-or-later",
        exclude=("*.u8",),  # empty markers of the UTF-8 files
    ),
    "fortunes_ru": _fortunes("fortunes-ru", "/usr/share/games/fortunes/ru/*", "ru", "GPL-2.0-or-later"),
    "fortunes_pt": _fortunes(
        "fortunes-mario",
        "/usr/share/games/fortunes/mario.*",
        "pt",
        "GPL-2.0-or-later",
        exclude=("*.arteascii",),
    ),
    "fortunes_zh": _fortunes("fortunes-zh", "/usr/share/games/fortunes/*", "zh", "GPL-3.0-or-later"),
    "manpages_en": DebianText(
        "manpages",
        ("/usr/share/man/man*",),
        "roff",
        "en",
        "manual pages (Linux man-pages project)",
        "GPL-2.0-or-later and per-page free licences (Linux man-pages)",
    ),
    "manpages_de": _manpages("manpages-de", "/usr/share/man/de/*", "de", _L10N),
    "manpages_fr": _manpages("manpages-fr", "/usr/share/man/fr/*", "fr", _L10N),
    "manpages_es": _manpages("manpages-es", "/usr/share/man/es/*", "es", _L10N),
    "manpages_it": _manpages("manpages-it", "/usr/share/man/it/*", "it", _L10N),
    "manpages_pl": _manpages("manpages-pl", "/usr/share/man/pl/*", "pl", _L10N),
    "manpages_ru": _manpages("manpages-ru", "/usr/share/man/ru/*", "ru", _L10N),
    "manpages_nl": _manpages("manpages-nl", "/usr/share/man/nl/*", "nl", _L10N),
    "manpages_pt": _manpages("manpages-pt-br", "/usr/share/man/pt_BR/*", "pt", _L10N),
    "manpages_ja": _manpages(
        "manpages-ja",
        "/usr/share/man/ja/*",
        "ja",
        "the licences of the translated pages, DFSG-free (JM project)",
    ),
    "manpages_zh": _manpages(
        "manpages-zh",
        "/usr/share/man/zh_CN/*",
        "zh",
        "GFDL-1.2-or-later and GPL-2.0-or-later (CMPP translations)",
    ),
    "perl_pod": DebianText(
        "perl-doc",
        ("/usr/share/perl/*/pod/*.pod",),
        "pod",
        "en",
        "technical documentation and FAQs (Perl's manuals, perlfaq)",
        "GPL-1.0-or-later or Artistic-1.0 (Perl)",
    ),
    "coreutils_info": DebianText(
        "coreutils",
        ("/usr/share/info/coreutils.info*",),
        "info",
        "en",
        "technical documentation (the GNU Coreutils manual)",
        "GFDL-1.3, no invariant sections",
    ),
    "debian_reference": DebianText(
        "debian-reference-en",
        ("*/debian-reference.en.txt.gz",),
        "plain",
        "en",
        "technical documentation (the Debian Reference)",
        "GPL-2.0-or-later",
    ),
    "jargon_file": DebianText(
        "jargon-text",
        ("*/jargon.txt.gz",),
        "plain",
        "en",
        "lexicon of hacker slang with essays (the Jargon File 4.4.7)",
        "public domain",
    ),
    "anarchist_faq": DebianText(
        "anarchism",
        ("*/anarchism/html/*.html", "*/anarchism/*.html"),
        "html",
        "en",
        "political essays in question-and-answer form (An Anarchist FAQ)",
        "GPL-2.0",
    ),
}

#: the Debian packages the corpora read (what ``.ci/run`` and the README install)
DEBIAN_PACKAGES = tuple(sorted({t.package for t in DEBIAN_TEXTS.values()}))


@cache
def installed_files(package: str) -> tuple[str, ...]:
    """The paths ``package`` installed, from dpkg's file list; fails naming the package when absent."""
    lists = sorted((DPKG / "info").glob(f"{package}.list")) + sorted(
        (DPKG / "info").glob(f"{package}:*.list")
    )
    if not lists:
        raise DataError(
            f"The Debian package '{package}' is not installed; its natural-language corpus needs it "
            f"(apt-get install {package}; the README's install step lists every corpus package)."
        )
    return tuple(line for line in lists[0].read_text().splitlines() if line)


def text_files(text: DebianText) -> list[Path]:
    """The package's text files the corpus reads: matched by a glob, not excluded, regular files
    (no links, no fortune index ``.dat``), sorted by path."""
    picked = []
    for path in installed_files(text.package):
        if not any(fnmatch.fnmatch(path, g) for g in text.files) or path.endswith(".dat"):
            continue
        if any(fnmatch.fnmatch(path, g) for g in text.exclude):
            continue
        p = Path(path)
        if p.is_file() and not p.is_symlink():
            picked.append(p)
    return sorted(picked)


def file_prose(path: Path, form: str) -> str:
    """The prose of one installed file (gzip-compressed ones read through)."""
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    try:
        return prose(data.decode("utf-8"), form)
    except UnicodeDecodeError as e:
        raise DataError(f"The corpus file '{path}' is not UTF-8 text ({e.reason}).") from None


@cache
def source_version(package: str) -> str:
    """``<package> <version>`` as dpkg records the installed package."""
    installed_files(package)
    for stanza in (DPKG / "status").read_text(errors="replace").split("\n\n"):
        fields = dict(line.split(": ", 1) for line in stanza.splitlines() if ": " in line[:40])
        if fields.get("Package") == package and "installed" in fields.get("Status", ""):
            return f"{package} {fields.get('Version', '?')}"
    return f"{package} (version not recorded)"


def debian_bytes(name: str, n_bytes: int, window_seed: int | None = None) -> tuple[bytes, str]:
    """The first ``n_bytes`` UTF-8 bytes of corpus ``name``'s prose, from its first file or from one
    drawn from ``window_seed`` (wrapping around), and a line saying where they come from."""
    text = DEBIAN_TEXTS[name]
    files = rotated(text_files(text), window_seed)

    def pieces(i: int, path: Path) -> list[bytes]:
        chunk = file_prose(path, text.form).encode("utf-8")
        if i == 0:  # a later draw opens at a drawn line of its first file (one-file texts too)
            chunk = text_window(chunk, len(chunk), window_seed)
        return [chunk] if chunk else []

    data, read = gather(files, n_bytes, pieces)
    if not data:
        raise DataError(f"The corpus '{name}' found no text in the package '{text.package}'.")
    return data, f"{text.form} prose of {read} of {len(files)} files of {source_version(text.package)}"
