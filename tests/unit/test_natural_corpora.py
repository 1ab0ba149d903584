"""Every natural corpus of E7's paper grid, generated from the catalogue: it loads, tokenises and yields
the paper's token budget on draw 0 and on a drawn window, and it is prose, not code. And the Debian
texts: their cleaning, their sources and licences, and the install steps that bring their packages."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from entropic_bound.errors import DataError
from entropic_bound.experiments.e7_language.config import PAPER_CORPORA, SCALE_SETTINGS
from entropic_bound.language_models.corpora import debian_texts
from entropic_bound.language_models.corpora.catalogue import VOCAB, corpus_role, load_corpus
from entropic_bound.language_models.corpora.debian_texts import DEBIAN_PACKAGES, DEBIAN_TEXTS
from entropic_bound.language_models.corpora.prose_cleaning import prose

ROOT = Path(__file__).resolve().parents[2]
PAPER_TASK = SCALE_SETTINGS["paper"]["task"]
NATURAL = [c for c in PAPER_CORPORA if corpus_role(c).kind == "natural"]
#: the one natural text shorter than the paper's budget: all it has, a later draw's window a rotation
WHOLE_TEXT = {"pydoc_prose": 253_867}
#: ASCII characters that make up much of code and little of prose
CODE_MARKS = set("{}[]()=;_<>#$\\|")


def code_share(data: bytes) -> float:
    """Share of the non-blank characters that are :data:`CODE_MARKS`."""
    chars = [c for c in data.decode("utf-8", errors="ignore") if not c.isspace()]
    return sum(c in CODE_MARKS for c in chars) / len(chars)


def test_the_paper_grid_has_the_natural_corpora_c11_and_c12_need():
    # C11 at rho = -0.42 needs ~24 corpora, C12 ~52 learned natural runs (3 seeds a corpus)
    assert len(NATURAL) >= 30 + 1  # 30 besides the word shuffle of tinyshakespeare
    assert set(DEBIAN_TEXTS) <= set(NATURAL)
    assert PAPER_TASK.tokens == 400_000 and PAPER_TASK.val_fraction == 0.1


@pytest.mark.parametrize("name", NATURAL)
def test_natural_corpus_yields_the_paper_budget_of_prose(name):
    n = WHOLE_TEXT.get(name, PAPER_TASK.tokens)
    corpus = load_corpus(name, PAPER_TASK.tokens, seed=0)
    assert corpus.kind == "natural" and corpus.tokens.shape == (n,) and corpus.tokens.dtype == np.int64
    assert 0 <= corpus.tokens.min() and corpus.tokens.max() < VOCAB
    held_out = int(n * PAPER_TASK.val_fraction)
    assert held_out > SCALE_SETTINGS["paper"]["model"].n_ctx + 2
    assert corpus.source and set(corpus.compression) == {"lzma", "bz2"}
    assert 0.5 < corpus.compression["lzma"] < 4.0  # prose, neither repeated nor random bytes
    assert code_share(corpus.tokens.astype(np.uint8).tobytes()) < 0.07


@pytest.mark.parametrize("name", sorted(DEBIAN_TEXTS))
def test_debian_corpus_window_of_a_later_draw_is_full_and_elsewhere(name):
    first = load_corpus(name, PAPER_TASK.tokens, seed=0)
    later = load_corpus(name, PAPER_TASK.tokens, seed=0, window_seed=12345)
    assert later.tokens.shape == (PAPER_TASK.tokens,) and not np.array_equal(first.tokens, later.tokens)
    assert DEBIAN_TEXTS[name].package in first.source


def test_code_is_told_from_prose():
    code = load_corpus("stdlib_code", PAPER_TASK.tokens, seed=0)
    assert code_share(code.tokens.astype(np.uint8).tobytes()) > 0.07


def test_a_missing_package_is_named_with_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setattr(debian_texts, "DPKG", tmp_path)
    (tmp_path / "info").mkdir()
    debian_texts.installed_files.cache_clear()
    try:
        with pytest.raises(DataError, match="'fortunes-de' is not installed.*apt-get install fortunes-de"):
            load_corpus("fortunes_de", 1_000, seed=0)
    finally:
        debian_texts.installed_files.cache_clear()


def test_roff_keeps_the_text_of_font_and_heading_macros_and_drops_the_rest():
    page = (
        '.\\" a comment\n.TH LS 1\n.SH NAME\nls \\- list files\n.SH "SEE ALSO"\n.BR dir (1),\n'
        ".nf\nls -l | sort\n.fi\nThe \\fBsort\\fR order \\(em by name.\n.PP\n"
    )
    assert prose(page, "roff") == "NAME\nls - list files\nSEE ALSO\ndir(1),\nThe sort order — by name."


def test_pod_drops_verbatim_blocks_and_keeps_the_text_of_codes():
    pod = "=head1 NAME\n\nSee L<perlfaq|perlfaq1> and C<< $x >> E<gt> 0.\n\n    my $x = 1;\n\n=cut\n"
    assert prose(pod, "pod") == "NAME\n\nSee perlfaq and $x > 0."


def test_html_info_and_fortune_forms():
    page = "<head><title>t</title></head><p>One &amp; two</p><pre>code()</pre><h2>Three</h2>"
    assert prose(page, "html") == "One & two\nThree"
    info = "\x1f\nFile: x.info,  Node: Top\n\nIntro.\n* Menu:\n* ls::\n     Print all.\n"
    assert prose(info, "info") == "Intro.\nPrint all."
    cookies = "\x1b[32mA poem\x1b[m\n%\n┌──┐\nA joke\n%\n"
    assert prose(cookies, "fortune") == "A poem\n\nA joke"


def test_every_debian_corpus_is_listed_with_its_package_and_licence_in_the_sources_file():
    listed = (
        resources.files("entropic_bound.language_models.corpora").joinpath("data", "SOURCES.md").read_text()
    )
    for name, text in DEBIAN_TEXTS.items():
        assert f"`{name}`" in listed and f"`{text.package}`" in listed and text.licence in listed, name


def test_the_package_list_names_every_corpus_package():
    assert (ROOT / "debian-packages.txt").read_text().split() == list(DEBIAN_PACKAGES)


@pytest.mark.parametrize("install", [".ci/run", "README.md", "docs/getting-started.md"])
def test_the_install_steps_bring_every_corpus_package(install):
    assert "apt-get install" in (ROOT / install).read_text()
    assert "$(cat debian-packages.txt)" in (ROOT / install).read_text()
