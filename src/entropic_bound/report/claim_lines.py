"""One readable line of key evidence per claim, for the report's summary and the terminal table.

Each function reads the evidence dict its experiment writes and returns a short sentence with
rounded numbers. A function that meets evidence of another shape (a key renamed, an inconclusive
verdict with only a reason) raises, and :func:`entropic_bound.report.evidence.evidence_line`
falls back to the evidence's own ``summary`` or its first numbers.
"""

from __future__ import annotations

from collections.abc import Callable

from .format import number


def _pct(x) -> str:
    return "—" if x is None else f"{100 * float(x):.0f}%"


def c1(e: dict) -> str:
    return (
        f"measured / closed-form excess below r*: median {number(e['median_ratio'], 4)} "
        f"(10–90% range {number(e['q10'], 4)}–{number(e['q90'], 4)}) over {e['runs']} runs"
    )


def c2(e: dict) -> str:
    return (
        f"at r ≥ r*: {e['runs_reaching_floor']}/{e['runs_at_or_above_r_star']} runs reach the floor "
        f"(worst relative excess {number(e['max_rel_excess_at_or_above_r_star'])}); transition ratio "
        f"excess(r*−1)/excess(r*) median {number(e['median_transition_ratio'])}, min {number(e['min_transition_ratio'])}"
    )


def c3(e: dict) -> str:
    return (
        f"{e['estimator']} = r* in {_pct(e['rate_gd_small_init_identified'])} of identified GD small-init runs "
        f"(large init {_pct(e['rate_gd_large_init_identified'])}, Adam {_pct(e['rate_adam_small_init_identified'])}); "
        f"median relative error of A {number(e['median_rel_error_gd_small_identified'])}"
    )


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
            f"{teacher}: {_pct(t['frac_at_or_above_reaching_floor'])} of {t['runs_at_or_above']} runs at r ≥ r* "
            f"reach the floor, below r* relative excess ≥ {number(t['min_rel_excess_below'])}"
        )
    return "; ".join(parts)


def c6(e: dict) -> str:
    return (
        f"softmax / linear excess at r = r*−1: median {number(e['median_ratio_k0'])} normalised by the K = 0 "
        f"excess, {number(e['median_ratio_signal'])} by the signal ({e['pairs']} pairs); "
        f"{_pct(e['softmax_frac_reaching_floor_at_r_star'])} of softmax runs reach the floor at r = r*"
    )


def c7(e: dict) -> str:
    parts = [f"{t} {_pct(v['rate'])} of {v['runs']} runs" for t, v in e["by_teacher"].items()]
    return (
        f"{e['estimator']} within {number(e['tolerance'])} of r*: {', '.join(parts)} "
        f"(large init {_pct(e['rate_large_init'])})"
    )


def c8(e: dict) -> str:
    return (
        f"best under softmax: {e['best_under_softmax']} (mean error {number(e['best_error'])}); "
        f"energy effective rank error {number(e['energy_effective_rank_error_softmax'])}"
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


def c11(e: dict) -> str:
    return (
        f"Spearman ρ(rank, complexity) = {number(e['rho'])} (95% CI {number(e['ci_low'])} to "
        f"{number(e['ci_high'])}) over {e['corpora']} corpora"
    )


def c12(e: dict) -> str:
    return (
        f"median |ρ(rank, loss)| = {number(e['median_abs_rho_rank_loss'])} over {e['runs']} runs vs "
        f"|ρ(rank, complexity)| = {number(e['abs_rho_rank_complexity'])}"
    )


def c13(e: dict) -> str:
    return (
        f"{_pct(e['share_explained'])} of {e['heads']} heads explained by a structural prior "
        f"(sink {_pct(e['share_sink'])}, local {_pct(e['share_local'])}, positional {_pct(e['share_positional'])})"
    )


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
    "C1": c1,
    "C2": c2,
    "C3": c3,
    "C4": c4,
    "C5": c5,
    "C6": c6,
    "C7": c7,
    "C8": c8,
    "C9": c9,
    "C10": c10,
    "C11": c11,
    "C12": c12,
    "C13": c13,
    "X1": x1,
    "X2": x2,
}
