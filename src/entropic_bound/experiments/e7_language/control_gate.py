"""C13's controls: does the instrument read each control model right, and at what rate.

A control corpus is built to need one kind of mixing: recall (``mqar-*``) content routing, lag copy
(``lagcopy-*``) positional routing, a Markov source (``markov_*``) a local band. Each control
**model** is one test of the categories C13 counts, the **symmetric joint ablation**: the heads the
instrument calls ``content`` are ablated *together* (each pattern replaced by its mean pattern) and

- a recall model passes when that costs at least ``c13_ablation_bits`` bits/token (the routing the
  task needs sits in the heads called content),
- a lag-copy or Markov model passes when it costs less (nothing called content carries the task).

Together, because a model may split its routing over two heads, each of which alone the other
covers (each single-head ablation under the floor), and the same test on both sides, so neither
kind of control is held to more. A model with no content head costs 0; with one, its own ablation;
with several, the stored subset (:func:`~entropic_bound.language_models.probes.heads.joint_ablation_bits`),
else it is not measured (a model stored before the subsets were) and not counted.

**The gate** is a rate, not "every model": the share of required control models that pass, with its
Wilson interval over those models, against one boundary ``c13_control_rate`` (½): confirmed above,
failed below, undecided when the interval holds ½. Above ½ the categories are read right on most
control models; at or below it, the instrument is right no more often than wrong on models whose
mechanism is known. More models narrow the interval, so more evidence can only decide the gate.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...language_models.corpora.catalogue import expected_mixing
from ...language_models.probes.structure import CATEGORIES
from ...stats.interval_decision import decide_by_interval, wilson
from .config import ABLATION_BITS

RECALL = ("content",)


def joint_content_bits(m: pd.DataFrame, joint: list[float] | None) -> float:
    """The loss (bits/token) one model's ``content`` heads carry together: 0 without one, the head's
    own ablation with one, the stored subset ``joint[mask]`` (bit ``layer · n_heads + head``) with
    several; NaN where that is not stored."""
    content = m[m["category"].to_numpy() == "content"]
    if not len(content):
        return 0.0
    if len(content) == 1:
        return float(content["content_ablation_bits"].iloc[0]) if "content_ablation_bits" in m else np.nan
    if joint is None:
        return float("nan")
    n_heads = int(m["head"].max()) + 1
    mask = sum(1 << (int(r.layer) * n_heads + int(r.head)) for r in content.itertuples())
    return float(joint[mask]) if mask < len(joint) else float("nan")


def joint_ablations(records: list[dict]) -> dict[str, list[float]]:
    """``{run_id: loss of every subset of heads ablated together}`` of the control models that store it."""
    curves = {r["run_id"]: (r.get("curves") or {}).get("joint_ablation_bits") for r in records}
    return {run: joint for run, joint in curves.items() if joint}


def model_passes(expected: tuple[str, ...], bits: float, floor: float) -> bool | None:
    """The symmetric test: recall passes when its content heads carry ≥ ``floor``, the others when
    theirs carry less; None where the joint ablation was not measured."""
    if not np.isfinite(bits):
        return None
    return bool(bits >= floor) if tuple(expected) == RECALL else bool(bits < floor)


def _category_shares(g: pd.DataFrame) -> dict[str, float]:
    """Mean over the source's models of each category's share of the model's heads."""
    per_model = [
        {c: float((m["category"] == c).mean()) for c in CATEGORIES}
        for _, m in g.groupby("run_id", sort=False)
    ]
    return {c: float(np.mean([p[c] for p in per_model])) for c in CATEGORIES}


def _answering(m: pd.DataFrame, bits: float) -> np.ndarray:
    """Heads whose content routing carries at least ``bits`` alone; False where not measured (NaN)."""
    ab = (
        m["content_ablation_bits"].to_numpy(float)
        if "content_ablation_bits" in m
        else np.full(len(m), np.nan)
    )
    return ab >= bits


def _best_scores(models: list[pd.DataFrame]) -> dict[str, list[float]]:
    """Per model, its largest head score: content TV and content share, over all rows and answer rows."""
    out = {}
    for key in ("content_tv", "content_tv_answers", "content_share", "content_share_answers"):
        best = [np.asarray(m[key], float) if key in m else np.array([np.nan]) for m in models]
        out[f"max_{key}"] = [float(np.nanmax(b)) if np.isfinite(b).any() else float("nan") for b in best]
    return out


def _source_report(g: pd.DataFrame, expected: tuple[str, ...], joint: dict, bits: float) -> dict:
    """One control source: per model the joint content ablation and the test, and the head scores."""
    models = [m for _, m in g.groupby("run_id", sort=False)]
    joint_bits = [joint_content_bits(m, joint.get(str(m["run_id"].iloc[0]))) for m in models]
    passes = [model_passes(expected, b, bits) for b in joint_bits]
    ranks = g["logit_field_rank_90"].to_numpy(float) if len(g) else np.array([])
    return {
        "models": len(models),
        "joint_content_bits": joint_bits,
        "passes": passes,
        "agrees": bool(models) and all(p is True for p in passes),
        "shares_by_category": _category_shares(g) if len(g) else {},
        "kernel_share": float(g["routing_kernel"].mean()) if len(g) else float("nan"),
        **_best_scores(models),
        "logit_field_rank_90": [float(np.min(ranks)), float(np.median(ranks)), float(np.max(ranks))]
        if len(ranks)
        else [],
        "answering_heads": {
            c: int(((g["category"] == c).to_numpy() & _answering(g, bits)).sum()) for c in CATEGORIES
        }
        if len(g)
        else {},
        "max_content_ablation_bits": [
            float(np.nanmax(m["content_ablation_bits"])) if "content_ablation_bits" in m else float("nan")
            for m in models
        ],
    }


def control_report(
    controls: pd.DataFrame,
    names: list[str],
    ablation_bits: float = ABLATION_BITS,
    not_required: dict[str, float] | None = None,
    joint: dict[str, list[float]] | None = None,
) -> dict:
    """``{source: {expected, models, joint_content_bits, passes, agrees, required, ...}}`` for every
    control corpus in the grid (``names``): per model the loss its content heads carry together
    (``joint``: ``{run_id: subset losses}``) and whether that is the source's expectation;
    ``agrees`` when every model passes (a control without a learned model does not). Beside it the
    head scores (categories, kernels, ``answering_heads``: per category the heads that alone carry
    ``ablation_bits``). ``not_required``: ``{source: context recurrence}`` of the Markov sources an
    in-context lookup can answer (:mod:`.local_controls`), reported but not in the gate."""
    out, not_required, joint = {}, not_required or {}, joint or {}
    for name in names:
        expected = expected_mixing(name)
        g = controls[controls["source"] == name]
        out[name] = {
            "expected": list(expected),
            **_source_report(g, expected, joint, ablation_bits),
            "required": name not in not_required,
            **({"context_recurrence": not_required[name]} if name in not_required else {}),
        }
    return out


def control_gate(controls: dict, boundary: float) -> dict:
    """The controls' gate from :func:`control_report`: the share of the required control models that
    pass, its Wilson interval over them, and the decision against ``boundary`` (``outcome`` True:
    the instrument reads the controls right; False: it does not; None: undecided, or a kind of
    control — recall, or lag copy/Markov — has no measured model, so one side is untested)."""
    required = [c for c in controls.values() if c.get("required", True)]
    tested = {"recall": [0, 0], "structural": [0, 0]}
    for c in required:
        side = tested["recall" if tuple(c["expected"]) == RECALL else "structural"]
        side[0] += sum(p is True for p in c["passes"])
        side[1] += sum(p is not None for p in c["passes"])
    passed, n = sum(s[0] for s in tested.values()), sum(s[1] for s in tested.values())
    rate = passed / n if n else float("nan")
    decision = decide_by_interval(
        rate, wilson(passed, n) if n else (np.nan, np.nan), boundary, unit="control model", units=n
    )
    both = all(s[1] for s in tested.values())
    gate = {"rate": rate, "passed": passed, "models": n, "by_side": tested, "decision": decision.to_dict()}
    gate["outcome"] = decision.outcome if both else None
    if gate["outcome"] is None:
        gate["reason"] = _gate_reason(gate, boundary, both)
    return gate


def _gate_reason(gate: dict, boundary: float, both: bool) -> str:
    if not both:
        missing = [k for k, s in gate["by_side"].items() if not s[1]]
        return f"no measured {' or '.join(missing)} control model: the instrument is untested on that side"
    lo, hi = gate["decision"]["interval"]
    return (
        f"controls: {gate['passed']} of {gate['models']} control models read right, Wilson interval "
        f"[{lo:.2f}, {hi:.2f}] holds the boundary {boundary:g}: more control models (seeds) decide it"
    )
