"""A huge text is streamed, Ray keeps quiet under --quiet, and the package ships what it declares."""

from __future__ import annotations

import re
import tracemalloc
from pathlib import Path

import pytest
import tomllib

from entropic_bound.inspect.text import text_chunks, token_windows

ROOT = Path(__file__).resolve().parents[2]


def test_inspect_text_reads_only_the_windows_it_uses(tmp_path):
    words = "the river runs past the old mill and under the stone bridge "
    big = tmp_path / "big.txt"
    with open(big, "w") as handle:
        for _ in range(400):  # 24 MB
            handle.write(words * 1000)
    tracemalloc.start()
    try:
        ids = token_windows(big, None, vocab_size=50_000, window_len=64, max_windows=8)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert ids.shape == (8, 64)
    assert ids.ravel().tolist() == list(words.encode() * 10)[: 8 * 64]  # the file's first tokens
    assert peak < 2**18  # a few small reads (8 × 64 tokens), not 24 MB (nor 30× that)


def test_pieces_end_before_whitespace_so_words_are_whole(tmp_path):
    text = " ".join(f"word{i}" for i in range(60_000))
    path = tmp_path / "t.txt"
    path.write_text(text)
    pieces = list(text_chunks(path))
    assert len(pieces) > 2 and "".join(pieces) == text
    assert all(p[0].isspace() for p in pieces[1:])


def test_ray_under_quiet_keeps_the_clusters_messages_in_a_log_file(tmp_path, capsys):
    pytest.importorskip("ray")
    import ray._private.worker as ray_worker

    from entropic_bound.sweep.ray_backend import RayBackend

    original = ray_worker.print_to_stdstream
    backend = RayBackend(workers=2, log_file=tmp_path / "out" / "ray-driver.log")
    assert backend.init_options() == {
        "num_cpus": 2,
        "include_dashboard": False,
        "logging_level": 40,
        "log_to_driver": False,
    }
    backend._route_cluster_messages()  # what _init does right after ray.init
    try:
        message = "A worker died or was killed while executing a task by an unexpected system error."
        ray_worker.print_to_stdstream(
            {"lines": [message], "pid": "raylet", "is_err": False}, ignore_prefix=False
        )
    finally:
        backend.close()
    assert capsys.readouterr() == ("", "")
    assert (tmp_path / "out" / "ray-driver.log").read_text() == f"(raylet) {message}\n"
    assert ray_worker.print_to_stdstream is original  # close() gives Ray its printer back


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_the_licence_ships_and_is_declared_as_an_spdx_string():
    project = _pyproject()["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "2026 entropic-bound developers" in text
    assert any(c.startswith("Programming Language :: Python :: 3") for c in project["classifiers"])
    # a project URL is a URL, not a path in the source tree (the docs ship in the sdist)
    assert all(url.startswith("https://") for url in project.get("urls", {}).values())


def test_no_extra_repeats_a_core_dependency():
    project = _pyproject()["project"]

    def name(requirement: str) -> str:
        return re.split(r"[<>=!~\[;\s]", requirement, maxsplit=1)[0].lower().replace("_", "-")

    core = {name(r) for r in project["dependencies"]}
    for extra, requirements in project["optional-dependencies"].items():
        if extra in ("test", "all"):
            continue
        assert not core & {name(r) for r in requirements}, extra


def test_the_sdist_carries_the_tests_and_the_docs():
    manifest = (ROOT / "MANIFEST.in").read_text().split()
    assert {"tests", "docs"} <= {manifest[i + 1] for i, word in enumerate(manifest) if word == "graft"}
