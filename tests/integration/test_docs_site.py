"""The documentation site builds with `mkdocs build --strict`, and a broken link fails that build."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _build(root: Path, site: Path) -> subprocess.CompletedProcess:
    cmd = [
        sys.executable,
        "-m",
        "mkdocs",
        "build",
        "--strict",
        "-f",
        str(root / "mkdocs.yml"),
        "-d",
        str(site),
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def _copy(tmp_path: Path) -> Path:
    copy = tmp_path / "repo"
    copy.mkdir()
    shutil.copy(ROOT / "mkdocs.yml", copy / "mkdocs.yml")
    shutil.copytree(ROOT / "docs", copy / "docs")
    return copy


def test_the_site_builds_strict_with_every_page_in_the_nav(tmp_path):
    done = _build(ROOT, tmp_path / "site")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "index.html").exists()
    for page in ("getting-started", "tutorial", "cli", "claims", "paper-scale", "benchmarks", "architecture"):
        assert (tmp_path / "site" / page / "index.html").exists(), page
    assert (tmp_path / "site" / "tutorial.ipynb").exists()  # the notebook is served beside its page


@pytest.mark.parametrize(
    "page, link, named",
    [
        ("getting-started.md", "[a page that does not exist](no-such-page.md)", "no-such-page.md"),
        ("index.md", "[C99](claims.md#c99)", "c99"),  # a missing anchor on a page that exists
    ],
)
def test_a_broken_link_fails_the_build(tmp_path, page, link, named):
    copy = _copy(tmp_path)
    path = copy / "docs" / page
    path.write_text(path.read_text() + f"\nSee {link}.\n")
    done = _build(copy, tmp_path / "site")
    assert done.returncode != 0
    assert named in done.stderr
