"""inspect on a text too short for one window, or not text at all: a warning on the console and a
mark in the JSON and the CSV beside the degenerate realised statistics."""

from __future__ import annotations

import json

import numpy as np
import pytest
from inspect_helpers import minilm  # noqa: F401

from entropic_bound.cli import main
from entropic_bound.inspect.text import text_problem


def test_the_rule_too_short_is_fewer_tokens_than_one_window(tmp_path):
    assert text_problem("hello there", windows=1, tokens=4, window_len=64).startswith("too short: 4 tokens")
    assert text_problem("x " * 500, windows=8, tokens=64, window_len=64) == ""
    binary = tmp_path / "r.bin"
    binary.write_bytes(np.random.default_rng(0).bytes(4096))
    assert text_problem(binary, windows=8, tokens=64, window_len=64).startswith("not text")


@pytest.mark.parametrize("kind", ["short", "binary"])
def test_console_json_and_csv_say_the_text_is_unfit(tmp_path, capsys, minilm, kind):  # noqa: F811
    text = tmp_path / "s.txt"
    text.write_bytes(b"hello there\n" if kind == "short" else np.random.default_rng(0).bytes(4096))
    assert main(["inspect", str(minilm), "--text", str(text), "--json"]) == 0
    out, err = capsys.readouterr()
    expected = "too short" if kind == "short" else "not text"
    assert err.startswith(f"warning: the --text is {expected}")
    assert json.loads(out)["text"]["text_warning"].startswith(expected)
    assert main(["inspect", str(minilm), "--text", str(text), "--csv", str(tmp_path / "h.csv")]) == 0
    header, first = (tmp_path / "h.csv").read_text().splitlines()[:2]
    assert header.endswith(",text_warning") and expected in first


def test_a_text_long_enough_has_no_mark(tmp_path, capsys, minilm):  # noqa: F811
    text = tmp_path / "t.txt"
    text.write_text("The quick brown fox jumps over the lazy dog. " * 40)
    assert main(["inspect", str(minilm), "--text", str(text), "--json"]) == 0
    out, err = capsys.readouterr()
    assert "warning" not in err and "text_warning" not in json.loads(out)["text"]
