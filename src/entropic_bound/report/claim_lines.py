"""One readable line of key evidence per claim, for the report's summary and the terminal table.

Each line reads the evidence dict its experiment writes and returns a short sentence with
rounded numbers: a template over the evidence's keys where one sentence says it (:func:`template_line`),
a function where the evidence is nested. A line that meets evidence of another shape (a key renamed, an inconclusive
verdict with only a reason) raises, and :func:`entropic_bound.report.evidence.evidence_line`
falls back to the evidence's own ``summary`` or its first numbers.
"""

from __future__ import annotations

import string
from collections.abc import Callable

from .format import number


def _pct(x) -> str:
    return "—" if x is None else f"{100 * float(x):.0f}%"


class _EvidenceFormatter(string.Formatter):
    """``str.format`` over an evidence dict with the report's number styles as format specs:
    ``{key:n}`` → :func:`number`, ``{key:n4}`` → :func:`number` to 4 digits, ``{key:pct}`` → a whole
    percentage. A missing key raises ``KeyError``, which sends the caller to its fallback line."""

    def format_field(self, value, format_spec: str) -> str:
        if format_spec == "pct":
            return _pct(value)
        if format_spec == "n" or (format_spec[:1] == "n" and format_spec[1:].isdigit()):
            return number(value, int(format_spec[1:] or 3))
        return super().format_field(value, format_spec)


_FORMATTER = _EvidenceFormatter()


def fill(template: str, evidence: dict) -> str:
    """``template`` with its ``{key:spec}`` fields filled from ``evidence`` (see :class:`_EvidenceFormatter`)."""
    return _FORMATTER.vformat(template, (), evidence)


def template_line(template: str) -> Callable[[dict], str]:
    """A claim line that is one template over the evidence's top-level keys."""
    return lambda e: fill(template, e)


def c4(e: dict) -> str:
    parts = []
    for v, by_rung in e["full_rank"].items():
        rungs = ", ".join(f"{k} {number(x)}" for k, x in by_rung.items())
        parts.append(f"V {v}: {rungs}")
    return f"relative excess at full rank — {'; '.join(parts)}; jump holds: {number(e['jump_holds'])}"


def c5(e: dict) -> str:
    parts = []
    for teacher, t in e["by_teacher"].items():
        parts.append(
            f"{teacher}: "
            + fill(
                "{frac_at_or_above_reaching_floor:pct} of {runs_at_or_above} runs at r ≥ r* reach the floor, "
                "below r* relative excess ≥ {min_rel_excess_below:n}",
                t,
            )
        )
    return "; ".join(parts)


def c7(e: dict) -> str:
    parts = [f"{t} {_pct(v['rate'])} of {v['runs']} runs" for t, v in e["by_teacher"].items()]
    return (
        f"{e['estimator']} within {number(e['tolerance'])} of r*: {', '.join(parts)} "
        f"(large init {_pct(e['rate_large_init'])})"
    )


def c9(e: dict) -> str:
    parts = []
    for cell, v in e.items():
        if not isinstance(v, dict) or "rate_by_r_star" not in v:
            continue
        rates = list(v["rate_by_r_star"].values())
        text = (
            f"{cell.replace('_', ' ')} (N = {v['N']}): exact rate ≥ {number(min(rates))} on {len(rates)} r*"
        )
        if v.get("out_of_domain_flagged") is not None:
            text += f", outside the domain flagged {_pct(v['out_of_domain_flagged'])}"
        parts.append(text)
    if not parts:
        raise KeyError("rate_by_r_star")
    return "; ".join(parts)


def c10(e: dict) -> str:
    parts = []
    for setting, checks in e.items():
        if not isinstance(checks, dict):
            continue
        flags = {k: v for k, v in checks.items() if isinstance(v, bool)}
        if not flags:
            continue
        passed = [k.split("_")[0] for k, v in flags.items() if v]
        failed = [k.split("_")[0] for k, v in flags.items() if not v]
        parts.append(
            f"{setting.replace('_', ' ')}: checks {'/'.join(passed) or 'none'} hold, {'/'.join(failed) or 'none'} fail"
        )
    if not parts:
        raise KeyError("checks")
    return "; ".join(parts)


def x1(e: dict) -> str:
    rates = ", ".join(f"σ {s}: {number(r)}" for s, r in e["rate_by_sigma_at_N_max_all"].items())
    return (
        f"exact inside the domain: {number(e['exact_inside'])}; flagged outside: {number(e['flagged_outside'])}; "
        f"exact rate at N = {e['N']}: {rates}"
    )


def x2(e: dict) -> str:
    gaps = ", ".join(f"{pair} {number(p['gap_closed'])}" for pair, p in e["pairs"].items())
    lead = f"{e['reason']}; " if e.get("reason") else ""
    return f"{lead}gap closed by positions: {gaps}"


CLAIM_LINES: dict[str, Callable[[dict], str]] = {
    "C1": template_line(
        "measured / closed-form excess below r*: median {median_ratio:n4} "
        "(10–90% range {q10:n4}–{q90:n4}) over {runs} runs"
    ),
    "C2": template_line(
        "at r ≥ r*: {runs_reaching_floor}/{runs_at_or_above_r_star} runs reach the floor "
        "(worst relative excess {max_rel_excess_at_or_above_r_star:n}); transition ratio "
        "excess(r*−1)/excess(r*) median {median_transition_ratio:n}, min {min_transition_ratio:n}"
    ),
    "C3": template_line(
        "{estimator} = r* in {rate_gd_small_init_identified:pct} of identified GD small-init runs "
        "(large init {rate_gd_large_init_identified:pct}, Adam {rate_adam_small_init_identified:pct}); "
        "median relative error of A {median_rel_error_gd_small_identified:n}"
    ),
    "C4": c4,
    "C5": c5,
    "C6": template_line(
        "softmax / linear excess at r = r*−1: median {median_ratio_k0:n} normalised by the K = 0 "
        "excess, {median_ratio_signal:n} by the signal ({pairs} pairs); "
        "{softmax_frac_reaching_floor_at_r_star:pct} of softmax runs reach the floor at r = r*"
    ),
    "C7": c7,
    "C8": template_line(
        "best under softmax: {best_under_softmax} (mean error {best_error:n}); "
        "energy effective rank error {energy_effective_rank_error_softmax:n}"
    ),
    "C9": c9,
    "C10": c10,
    "C11": template_line(
        "Spearman ρ(rank, complexity) = {rho:n} (95% CI {ci_low:n} to {ci_high:n}) over {corpora} corpora"
    ),
    "C12": template_line(
        "median |ρ(rank, loss)| = {median_abs_rho_rank_loss:n} over {runs} runs vs "
        "|ρ(rank, complexity)| = {abs_rho_rank_complexity:n}"
    ),
    "C13": template_line(
        "{share_explained:pct} of {heads} heads explained by a structural prior "
        "(sink {share_sink:pct}, local {share_local:pct}, positional {share_positional:pct})"
    ),
    "X1": x1,
    "X2": x2,
}
