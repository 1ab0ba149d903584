"""C13's criterion (structure over content), decided with the model as unit and validated on controls.

Two halves, each a share of heads with the **model** as unit (:func:`.statistics.source_share`: a
share per model, every source weighted equally, cluster bootstrap over sources → models → heads):

1. **Structure**: the share of content-independent heads (category sink, local, positional or
   averaging) must lie above ``c13_share``.
2. **No single identifiable low-rank routing kernel**: a head *has* one when it routes by content
   (category ``content``), most of its centred log-attention variance depends on content (``1 − logit_field_position_explained ≥
   c13_kernel_content``) and one kernel explains most of it (``logit_field_explained ≥
   c13_kernel_explained``) whose rank for 90 % is low: at most ``c13_kernel_rank_fraction`` of the
   head's ``d_head`` (¼: 4 of E7's 16, 8 of MiniLM's or the recall control's 32 — a head's kernel
   ``W_Q W_Kᵀ`` has rank ≤ ``d_head``, so "low rank" is a share of it; Lee (2026) finds logit fields
   of 2–11 components in heads of 64); the share of such heads must lie below ``c13_kernel_share``.

**Two readings** of each share (:func:`reading`, :func:`weighing`): by head count, and weighted by
the loss each head's content routing carries (``content_ablation_bits`` clipped at 0; a model enters
when its heads carry at least ``c13_ablation_bits`` together, so a checkpoint without the ablation
is left out). ``c13_weighting`` (count) names the reading that decides; when the other decides the
opposite way the verdict is inconclusive ("weightings disagree"). Control corpora are never among
the heads decided on.

**Controls** (:mod:`.control_gate`): each control model is tested by the symmetric joint ablation
of its ``content`` heads (recall: they carry ≥ ``c13_ablation_bits``; lag copy, Markov: less), and
the share of control models that pass must clear ``c13_control_rate`` with its Wilson interval. A
gate that fails or is undecided makes the verdict on natural text **inconclusive**: the instrument
has not shown it can tell the categories apart. A head is ``content`` when its content share
reaches ``c13_content_tv``; a recall head when its share over the answer rows
(``content_share_answers``) does: on episode-aligned windows the routing happens at those rows only
(:mod:`entropic_bound.language_models.probes.structure`); natural text keeps the all-row score.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...language_models.probes.structure import CATEGORIES, MIN_MOVED, STRUCTURAL
from ...stats.interval_decision import decide_by_interval
from ..framework.claim import Formats
from ..framework.verdict import Finding, decide
from .config import ABLATION_BITS
from .control_gate import control_gate
from .statistics import source_share

HEAD_COLUMNS = (
    "source",
    "kind",
    "run_id",
    "layer",
    "head",
    "d_head",
    "category",
    "content_tv",
    "content_tv_answers",
    "content_tv_max",
    "content_share",
    "content_share_answers",
    "uniform_tv",
    "sink_score",
    "locality_mass",
    "band_explained",
    "logit_field_explained",
    "logit_field_rank_90",
    "logit_field_position_explained",
    "content_ablation_bits",
)


def routing_kernel(
    heads: pd.DataFrame, *, content: float, explained: float, rank_fraction: float
) -> np.ndarray:
    """Per head: True when a content-routing head (category ``content``) has a mostly content-dependent
    logit field that one low-rank kernel (rank for 90 % ≤ ``rank_fraction · d_head``) explains. A
    head held by structure (a local band, a sink) is not routed by its kernel even where content
    modulates it inside the band: trained Markov and lag-copy controls show rank-1 kernels in exactly
    such heads. A head of unknown ``d_head`` (a checkpoint stored before it was recorded) has none."""
    if "logit_field_explained" not in heads or not len(heads):
        return np.zeros(len(heads), dtype=bool)
    routing = heads["category"].to_numpy() == "content"
    content_share = 1.0 - heads["logit_field_position_explained"].to_numpy(float)
    ex, rank = heads["logit_field_explained"].to_numpy(float), heads["logit_field_rank_90"].to_numpy(float)
    bound = rank_fraction * (heads["d_head"].to_numpy(float) if "d_head" in heads else np.nan)
    with np.errstate(invalid="ignore"):
        return routing & (content_share >= content) & (ex >= explained) & (rank >= 1) & (rank <= bound)


def _combine(structure: bool | None, kernel_above: bool | None) -> bool | None:
    """Confirmed when structure dominates and few heads have a kernel; refuted when either fails."""
    if structure is False or kernel_above is True:
        return False
    return True if structure is True and kernel_above is False else None


def ablation_weights(heads: pd.DataFrame) -> np.ndarray:
    """Per head, the loss (bits/token) its content routing carries, negative rises clipped to 0 (a
    head whose mean pattern does as well carries none); NaN where it was not measured (a checkpoint)."""
    if "content_ablation_bits" not in heads:
        return np.full(len(heads), np.nan)
    return np.clip(heads["content_ablation_bits"].to_numpy(float), 0.0, None)


def _decision(half: dict, threshold: float, *, above: bool) -> dict:
    """The interval record of one half; its outcome is strict (an interval ending on the bar does
    not clear it), as :func:`.statistics.source_share` decides."""
    d = decide_by_interval(
        half["share"],
        (half["ci_low"], half["ci_high"]),
        threshold,
        higher_is_better=above,
        unit="source",  # the bootstrap's top level: models within a source are resampled beneath it
        units=half["sources"],
    ).to_dict()
    outcome = half["decision"] if above else (None if half["decision"] is None else not half["decision"])
    return {**d, "outcome": outcome}


def reading(
    heads: pd.DataFrame,
    *,
    weights,
    share: float,
    kernel_share: float,
    n_boot: int,
    seed: int,
    min_weight: float,
) -> dict:
    """Both halves of C13 under one weighting of the heads (None: by count) and the verdict they give
    before the controls' gate: ``{structure, kernel, outcome, decision}``."""
    w = {} if weights is None else {"weights": weights, "min_weight": min_weight}
    flags = {"structure": heads["category"].isin(STRUCTURAL), "kernel": heads["routing_kernel"]}
    bars = {"structure": share, "kernel": kernel_share}
    halves = {
        k: source_share(
            heads["source"], heads["run_id"], f, n_boot=n_boot, seed=seed + i, threshold=bars[k], **w
        )
        for i, (k, f) in enumerate(flags.items())
    }
    struct, kernel = halves["structure"], halves["kernel"]
    decision = {
        **_decision(struct, share, above=True),
        "kernel": _decision(kernel, kernel_share, above=False),
    }
    outcome = _combine(struct["decision"], kernel["decision"]) if struct["models"] else None
    return {"structure": struct, "kernel": kernel, "outcome": outcome, "decision": decision}


def _summary(r: dict) -> dict:
    """A reading as the evidence shows it: both shares, both intervals, the models, the verdict."""
    st, k = r["structure"], r["kernel"]
    return {
        "share_structural": st["share"],
        "ci": [st["ci_low"], st["ci_high"]],
        "kernel_share": k["share"],
        "kernel_ci": [k["ci_low"], k["ci_high"]],
        "models": st["models"],
        "sources": st["sources"],
        "models_left_out": st["models_left_out"],
        "model_shares": {s: v["model_shares"] for s, v in st["by_source"].items()},
        "verdict": decide(r["outcome"]),
    }


def weighing(count: dict, ablation: dict, main: str) -> tuple[bool | None, dict]:
    """The main reading's outcome and the ``weighting`` record. The main reading decides; when the
    other decides the opposite way the claim is inconclusive ("weightings disagree"); when the other
    is undecided the main stands, and the record says they do not agree."""
    readings = {"count": count, "ablation": ablation}
    other = "ablation" if main == "count" else "count"
    ours, theirs = readings[main]["outcome"], readings[other]["outcome"]
    opposite = ours is not None and theirs is not None and ours != theirs
    record = {
        "main": main,
        "other": other,
        "count": _summary(count),
        "ablation": _summary(ablation),
        "agree": ours == theirs,
        "opposite": opposite,
    }
    return (None if opposite else ours), record


def _criterion(info: dict, share: float, kernel_share: float, control_rate: float) -> str:
    return (
        f"over {'+'.join(info['sources'])} heads, the model as unit clustered by source (a share per model, every "
        f"source weighted equally, cluster bootstrap over sources, models, heads): (1) share of content-independent "
        f"heads (sink, local, positional, averaging; content share < {info['content_tv']:g}) and (2) share of heads "
        f"with one identifiable routing kernel (content-dependent logit variance >= {info['kernel_content']:g}, one "
        f"kernel of rank (90%) <= {info['kernel_rank_fraction']:g} d_head explains >= {info['kernel_explained']:g} "
        f"of it). Confirmed if (1)'s interval lies above {share:g} and (2)'s below {kernel_share:g} (one boundary "
        "each: 'dominate' is a majority of the heads); refuted if (1)'s lies below or (2)'s above; inconclusive "
        "otherwise, or when the controls' gate does not pass: each required control model's content heads ablated "
        f"together (mean pattern) must cost >= {info.get('ablation_bits', ABLATION_BITS):g} bits/token for recall "
        "and less for lag copy and Markov (the Markov sources required are those whose context recurs earlier in "
        f"the window for < {info.get('local_max_recurrence', 1.0):g} of targets; a content head moves >= "
        f"{info.get('min_moved', MIN_MOVED):g} of its mass), and the share of control models that pass must have "
        f"its Wilson interval above {control_rate:g}. Two readings of each share: by head count and weighted by the "
        "loss each head's content routing carries (trained models whose heads carry >= "
        f"{info.get('ablation_bits', ABLATION_BITS):g} bits/token together; a checkpoint has no ablation); the "
        f"{info.get('weighting', 'count')} reading decides, and when the other decides the opposite way the verdict "
        "is inconclusive (weightings disagree). Control corpora are never among the heads decided on"
    )


def c13_on_heads(
    heads: pd.DataFrame,
    *,
    share: float,
    kernel_share: float,
    controls: dict,
    info: dict,
    n_boot: int,
    seed: int,
    control_rate: float = 0.5,
) -> Finding:
    """C13 from a per-head table (``source, kind, run_id, category, routing_kernel`` and the scores)
    and the control report (:func:`.control_gate.control_report`), gated at ``control_rate``."""
    gate = control_gate(controls, control_rate)
    evidence = {"heads": int(len(heads)), **info, "controls": controls, "controls_gate": gate}
    evidence["controls_agree"] = gate["outcome"] is True
    common = {"share": share, "kernel_share": kernel_share, "n_boot": n_boot, "seed": seed}
    min_weight = info.get("ablation_bits", ABLATION_BITS)
    count = reading(heads, weights=None, min_weight=0.0, **common)
    ablation = reading(heads, weights=ablation_weights(heads), min_weight=min_weight, **common)
    main = info.get("weighting", "count")
    outcome, evidence["weighting"] = weighing(count, ablation, main)
    chosen = count if main == "count" else ablation
    struct, kernel = chosen["structure"], chosen["kernel"]
    evidence.update(
        unit="source, then model",
        sources=struct["sources"],
        models=struct["models"],
        share_structural=struct["share"],
        ci_low=struct["ci_low"],
        ci_high=struct["ci_high"],
        pooled_share_structural=struct.get("pooled_share", float("nan")),
        kernel_share=kernel["share"],
        kernel_ci=[kernel["ci_low"], kernel["ci_high"]],
        decision=chosen["decision"],
    )
    evidence["decisions"] = {
        "structure": {k: v for k, v in chosen["decision"].items() if k != "kernel"},
        "kernel": chosen["decision"]["kernel"],
        "controls": gate["decision"],
    }
    evidence["by_category"] = {c: int((heads["category"] == c).sum()) for c in CATEGORIES}
    evidence["by_source"] = {
        s: {
            **v,
            "kernel_share": kernel["by_source"][s]["share"],
            **_field_summary(heads[heads["source"] == s]),
        }
        for s, v in struct["by_source"].items()
    }
    evidence["head_table"] = heads[[c for c in HEAD_COLUMNS if c in heads]].to_dict("records")
    criterion = _criterion(info, share, kernel_share, control_rate)
    if not len(heads):
        evidence["reason"] = "no heads of the decided sources were measured"
        return Finding("inconclusive", criterion, evidence)
    ok = outcome if gate["outcome"] is True else None
    if ok is None:
        evidence["reason"] = _reason(evidence, gate, share, kernel_share)
    return Finding(decide(ok), criterion, evidence)


def _reason(e: dict, gate: dict, share: float, kernel_share: float) -> str:
    """Why C13 is inconclusive, in words: the weightings, the controls' gate, or an interval on its bar."""
    if e["weighting"]["opposite"]:
        return "weightings disagree: by count and by the loss heads carry the verdict is opposite"
    if gate["outcome"] is False:
        lo, hi = gate["decision"]["interval"]
        return (
            f"controls fail: {gate['passed']} of {gate['models']} control models read right, Wilson interval "
            f"[{lo:.2f}, {hi:.2f}] below {gate['decision']['threshold']:g}: the instrument cannot tell the categories apart"
        )
    if gate["outcome"] is None:
        return gate["reason"]
    d = e["decision"]
    half, bar, lo, hi = (
        ("structural share", share, *d["interval"])
        if d["outcome"] is None
        else ("one-kernel share", kernel_share, *d["kernel"]["interval"])
    )
    return (
        f"the {half}'s interval [{lo:.2f}, {hi:.2f}] holds its boundary {bar:g} over {e['sources']} sources "
        f"({e['models']} models): more sources (natural corpora, released models) decide it"
    )


def _field_summary(g: pd.DataFrame) -> dict:
    """A source's logit-field fit: median rank and explained share over its heads (NaN-safe)."""
    if "logit_field_rank_90" not in g or not len(g):
        return {}
    rank, ex = g["logit_field_rank_90"].to_numpy(float), g["logit_field_explained"].to_numpy(float)
    return {
        "logit_field_rank_90_median": float(np.nanmedian(rank)) if np.isfinite(rank).any() else float("nan"),
        "logit_field_rank_90_range": [float(np.nanmin(rank)), float(np.nanmax(rank))]
        if np.isfinite(rank).any()
        else [],
        "logit_field_explained_median": float(np.nanmedian(ex)) if np.isfinite(ex).any() else float("nan"),
        **_ablation_summary(g),
    }


def _ablation_summary(g: pd.DataFrame) -> dict:
    """A trained source's content-ablation losses (bits/token) over its heads; {} for a checkpoint."""
    ab = g["content_ablation_bits"].to_numpy(float) if "content_ablation_bits" in g else np.array([])
    if not np.isfinite(ab).any():
        return {}
    return {
        "content_ablation_bits_median": float(np.nanmedian(ab)),
        "content_ablation_bits_max": float(np.nanmax(ab)),
    }


def _agreement(w: dict) -> str:
    if w["opposite"]:
        return " — the weightings disagree (opposite verdicts): inconclusive"
    return "" if w["agree"] else f" — not the {w['main']} reading's verdict, which decides"


def c13_sentence(e: dict, fmt: Formats) -> str:
    sources = ", ".join(
        f"{k.split(':')[-1]} {fmt.pct(v['share'])} (rank {fmt.number(v.get('logit_field_rank_90_median'))})"
        for k, v in e["by_source"].items()
    )
    agree = _gate_words(e)
    ctl = "; ".join(
        f"{k}{'' if v.get('required', True) else ' (not required: copyable)'}: {_control_words(v)} "
        f"({', '.join(f'{c} {fmt.pct(p)}' for c, p in v['shares_by_category'].items() if p)})"
        for k, v in e["controls"].items()
    )
    w = e.get("weighting")
    other = ""
    if w:
        o = w[w["other"]]
        other = (
            f"; weighted by {'the loss heads carry' if w['other'] == 'ablation' else 'head count'}: "
            f"{fmt.pct(o['share_structural'])} (CI {fmt.pct(o['ci'][0])}–{fmt.pct(o['ci'][1])}, {o['models']} models), "
            f"{o['verdict']}{_agreement(w)}"
        )
    return (
        f"{fmt.pct(e['share_structural'])} content-independent (per model, {e['models']} models; 95% CI "
        f"{fmt.pct(e['ci_low'])}–{fmt.pct(e['ci_high'])}); {fmt.pct(e['kernel_share'])} with one low-rank routing "
        f"kernel; by source: {sources}; {agree} ({ctl or 'none in the grid'}){other}"
    )


def _gate_words(e: dict) -> str:
    """The controls' gate in words (evidence stored before the gate: whether every control agreed)."""
    g = e.get("controls_gate")
    if g is None:
        return "controls agree" if e["controls_agree"] else "controls do NOT agree"
    verb = "pass" if e["controls_agree"] else "do NOT pass"
    return f"controls {verb}: {g['passed']} of {g['models']} control models read right"


def _control_words(v: dict) -> str:
    """One control: models read right of those measured ("ok"/"no" for evidence stored before)."""
    if "passes" not in v:
        return "ok" if v["agrees"] else "no"
    return f"{sum(p is True for p in v['passes'])}/{sum(p is not None for p in v['passes'])} read right"
