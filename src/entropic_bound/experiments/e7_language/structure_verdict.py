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

**Controls**: the recall models (``mqar-*``) must have a ``content`` head and a
head with a low-rank routing kernel (the instrument can see routing), the lag-copy models
(``lagcopy-*``) a ``positional``/``local`` head and no majority of content heads, the Markov
models (``markov_*``) a ``local`` head and no majority of content heads — in every learned model.
A head is ``content`` when its content share (content TV over the most its mean pattern allows,
:mod:`entropic_bound.language_models.probes.structure`) reaches ``c13_content_tv``; a recall head counts as ``content``
when its share over the answer rows (``content_share_answers``, the query rows that predict an
answer token) reaches it: on episode-aligned windows the
routing happens at those rows only, and the all-row mean dilutes it (see
:mod:`entropic_bound.language_models.probes.structure`); natural text has no answer rows and keeps the all-row score. A
control that is absent, not learned, or not as expected makes the verdict on natural text
**inconclusive**: the instrument has not shown it can tell the categories apart.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...language_models.corpora.catalogue import expected_mixing
from ...language_models.probes.structure import CATEGORIES, MIN_MOVED, STRUCTURAL
from ...stats.interval_decision import decide_by_interval
from ..framework.claim import Formats
from ..framework.verdict import Finding, decide
from .config import ABLATION_BITS
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


def _category_shares(g: pd.DataFrame) -> dict[str, float]:
    """Mean over the source's models of each category's share of the model's heads."""
    per_model = [
        {c: float((m["category"] == c).mean()) for c in CATEGORIES}
        for _, m in g.groupby("run_id", sort=False)
    ]
    return {c: float(np.mean([p[c] for p in per_model])) for c in CATEGORIES}


def _answering(m: pd.DataFrame, bits: float) -> np.ndarray:
    """Heads whose content routing carries at least ``bits``; False where the score is missing (NaN)."""
    ab = (
        m["content_ablation_bits"].to_numpy(float)
        if "content_ablation_bits" in m
        else np.full(len(m), np.nan)
    )
    return ab >= bits


def _model_agrees(m: pd.DataFrame, expected: tuple[str, ...], bits: float) -> bool:
    """Recall: a content head with a visible kernel whose routing carries loss (the answering head).
    Lag copy, Markov: a head of the expected structure, and no content head whose routing carries
    loss. A model stored before the ablation existed is read by heads alone (majority not content)."""
    content, measured = m["category"].to_numpy() == "content", "content_ablation_bits" in m
    measured = measured and np.isfinite(m["content_ablation_bits"].to_numpy(float)).all()
    kernel = m["routing_kernel"].to_numpy(bool)
    if expected == ("content",):
        return bool((content & kernel & (_answering(m, bits) if measured else True)).any())
    structural = bool(m["category"].isin(expected).any())
    if not measured:
        return structural and content.mean() <= 0.5
    return structural and not (content & _answering(m, bits)).any()


def _best_scores(models: list[pd.DataFrame]) -> dict[str, list[float]]:
    """Per model, its largest head score: content TV and content share, over all rows and answer rows."""
    out = {}
    for key in ("content_tv", "content_tv_answers", "content_share", "content_share_answers"):
        best = [np.asarray(m[key], float) if key in m else np.array([np.nan]) for m in models]
        out[f"max_{key}"] = [float(np.nanmax(b)) if np.isfinite(b).any() else float("nan") for b in best]
    return out


def control_report(
    controls: pd.DataFrame,
    names: list[str],
    ablation_bits: float = ABLATION_BITS,
    not_required: dict[str, float] | None = None,
) -> dict:
    """``{source: {expected, models, shares_by_category, kernel_share, logit_field_rank_90,
    answering_heads, agrees, required}}`` for every control corpus in the grid (``names``);
    ``answering_heads`` counts, per category, the heads whose content routing carries at least
    ``ablation_bits``; a control without a learned model disagrees. ``not_required``: ``{source:
    context recurrence}`` of Markov sources an in-context lookup can answer (:mod:`.local_controls`),
    reported but not required to agree."""
    out, not_required = {}, not_required or {}
    for name in names:
        expected = expected_mixing(name)
        g = controls[controls["source"] == name]
        models = [m for _, m in g.groupby("run_id", sort=False)]
        ranks = g["logit_field_rank_90"].to_numpy(float) if len(g) else np.array([])
        out[name] = {
            "expected": list(expected),
            "models": len(models),
            "shares_by_category": _category_shares(g) if len(g) else {},
            "kernel_share": float(g["routing_kernel"].mean()) if len(g) else float("nan"),
            **_best_scores(models),
            "logit_field_rank_90": [float(np.min(ranks)), float(np.median(ranks)), float(np.max(ranks))]
            if len(ranks)
            else [],
            "answering_heads": {
                c: int(((g["category"] == c).to_numpy() & _answering(g, ablation_bits)).sum())
                for c in CATEGORIES
            }
            if len(g)
            else {},
            "max_content_ablation_bits": [
                float(np.nanmax(m["content_ablation_bits"])) if "content_ablation_bits" in m else float("nan")
                for m in models
            ],
            "agrees": bool(models) and all(_model_agrees(m, expected, ablation_bits) for m in models),
            "required": name not in not_required,
            **({"context_recurrence": not_required[name]} if name in not_required else {}),
        }
    return out


def _combine(structure: bool | None, kernel_above: bool | None, controls_ok: bool) -> bool | None:
    """Confirmed when structure dominates and few heads have a kernel; refuted when either fails."""
    if not controls_ok:
        return None
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
        half["share"], (half["ci_low"], half["ci_high"]), threshold, higher_is_better=above, unit="model"
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
    outcome = _combine(struct["decision"], kernel["decision"], True) if struct["models"] else None
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


def c13_on_heads(
    heads: pd.DataFrame,
    *,
    share: float,
    kernel_share: float,
    controls: dict,
    info: dict,
    n_boot: int,
    seed: int,
) -> Finding:
    """C13 from a per-head table (``source, kind, run_id, category, routing_kernel`` and the scores)
    and the control report (:func:`control_report`)."""
    criterion = (
        f"over {'+'.join(info['sources'])} heads, the model as unit (a share per model, every source weighted "
        f"equally, cluster bootstrap over sources, models, heads): (1) share of content-independent heads (sink, "
        f"local, positional, averaging; content share < {info['content_tv']:g}) and (2) share of heads with one "
        f"identifiable routing kernel (content-dependent logit variance >= {info['kernel_content']:g}, one kernel "
        f"of rank (90%) <= {info['kernel_rank_fraction']:g} d_head explains >= {info['kernel_explained']:g} of it). Confirmed if (1)'s "
        f"interval lies above {share:g} and (2)'s below {kernel_share:g}; refuted if (1)'s lies below or (2)'s above; "
        "inconclusive otherwise, or when the controls do not come out as expected (recall: a content head with a "
        "visible kernel whose routing carries loss; lag-copy: positional/local, Markov: local, and in neither a "
        "content head whose routing carries loss — loss rise when the head's pattern is replaced by its mean; "
        f"a content head moves >= {info.get('min_moved', MIN_MOVED):g} of its attention mass; the Markov sources "
        f"required are those whose context recurs earlier in the window for < {info.get('local_max_recurrence', 1.0):g} "
        "of targets, the others are reported). Two readings of each share: by head count and weighted by the loss "
        "each head's content routing carries (mean-pattern ablation, clipped at 0; trained models whose heads carry "
        f">= {info.get('ablation_bits', ABLATION_BITS):g} bits/token together; a checkpoint has no ablation); the "
        f"{info.get('weighting', 'count')} reading decides, and when the other decides the opposite way the verdict "
        "is inconclusive (weightings disagree). Control corpora are never among the heads decided on"
    )
    required = [c for c in controls.values() if c.get("required", True)]
    controls_ok = bool(required) and all(c["agrees"] for c in required)
    evidence = {"heads": int(len(heads)), **info, "controls": controls, "controls_agree": controls_ok}
    common = {"share": share, "kernel_share": kernel_share, "n_boot": n_boot, "seed": seed}
    min_weight = info.get("ablation_bits", ABLATION_BITS)
    count = reading(heads, weights=None, min_weight=0.0, **common)
    ablation = reading(heads, weights=ablation_weights(heads), min_weight=min_weight, **common)
    main = info.get("weighting", "count")
    outcome, evidence["weighting"] = weighing(count, ablation, main)
    chosen = count if main == "count" else ablation
    struct, kernel = chosen["structure"], chosen["kernel"]
    evidence.update(
        unit="model",
        models=struct["models"],
        share_structural=struct["share"],
        ci_low=struct["ci_low"],
        ci_high=struct["ci_high"],
        pooled_share_structural=struct.get("pooled_share", float("nan")),
        kernel_share=kernel["share"],
        kernel_ci=[kernel["ci_low"], kernel["ci_high"]],
        decision=chosen["decision"],
    )
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
    if not len(heads):
        return Finding("inconclusive", criterion, evidence)
    if evidence["weighting"]["opposite"]:
        evidence["reason"] = (
            "weightings disagree: by count and by the loss heads carry the verdict is opposite"
        )
    ok = outcome if controls_ok else None
    return Finding(decide(ok), criterion, evidence)


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
    agree = "controls agree" if e["controls_agree"] else "controls do NOT agree"
    ctl = "; ".join(
        f"{k}{'' if v.get('required', True) else ' (not required: copyable)'}: {'ok' if v['agrees'] else 'no'} "
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
