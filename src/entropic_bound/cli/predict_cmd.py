"""``predict``: the intrinsic rank r* from data alone (no training), with the evidence for it.

entropic-bound predict DATA.npz --teacher linear-qk|softmax [--v-known] [--json]
                       [--estimator NAME] [--method NAME] [--plot FILE.png]
entropic-bound predict --x X.npy --y Y.npy [--v V.npy] --teacher ...

The teachers are those of ``entropic-bound list`` (:mod:`entropic_bound.tasks.names`).

Exit status: 0 when r* is identifiable, 3 when these data (or this method) cannot identify it —
the output then says why and what would make it identifiable — and 2 for a user mistake.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from ..errors import DataError, UserInputError
from ..store.ownership import claim_output_file
from ..tasks.names import PREDICT_TEACHERS

# The parser's names, spelled here so that `--help` does not import the predictors (torch, scipy);
# tests/unit/test_cli_imports.py checks them against entropic_bound.predict.
TEACHERS = tuple(PREDICT_TEACHERS)
NOT_IDENTIFIABLE = 3  # the exit status when r* is not identifiable (documented in --help and README)
# The methods that fit each teacher's class (the library also runs the others, as E6's controls do).
TEACHER_METHODS = {
    "linear-qk": ("linear_v_known", "linear_v_unknown"),
    "softmax": ("softmax_log_attention", "softmax_linearised"),
}
METHODS = tuple(sorted(m for methods in TEACHER_METHODS.values() for m in methods))
TEACHER_HELP = (
    "; ".join(f"{name}: {definition}" for name, definition in PREDICT_TEACHERS.items())
    + " (linear_qk also accepted). r* = rank K*: the fitted kernel absorbs any scale, the 1/√d and 1/n included"
)


def add_parser(sub) -> None:
    p = sub.add_parser(
        "predict",
        help="predict r* from data (X, Y[, V]) without training",
        epilog=f"exit status: 0 identifiable; {NOT_IDENTIFIABLE} r* not identifiable from these data, "
        "or the data reject the teacher class (the reason and what would make it identifiable are "
        "printed, and 'to_identify' in --json); 2 a user mistake (a bad file, no more equations than "
        "unknowns)",
    )
    p.add_argument(
        "data",
        nargs="?",
        metavar="DATA.npz",
        help="archive with X (N, n, d), Y (N, n, d_v), optional V (d, d_v)",
    )
    p.add_argument("--x", metavar="X.npy", help="X (N, n, d) as .npy (instead of DATA.npz)")
    p.add_argument("--y", metavar="Y.npy", help="Y (N, n, d_v) as .npy")
    p.add_argument("--v", metavar="V.npy", help="V (d, d_v) as .npy (the V-known setting)")
    p.add_argument(
        "--teacher",
        required=True,
        choices=TEACHERS,
        type=lambda name: name.replace("_", "-"),  # linear_qk, the student's spelling, is accepted too
        help=TEACHER_HELP,
    )
    p.add_argument("--v-known", action="store_true", help="require V (error if the data hold none)")
    p.add_argument(
        "--method",
        metavar="NAME",
        help="predictor (default: per setting): "
        + "; ".join(f"{t}: {', '.join(ms)}" for t, ms in TEACHER_METHODS.items()),
    )
    p.add_argument(
        "--estimator", metavar="NAME", help="take r_hat from this estimate (default: noise_calibrated_rank)"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--plot",
        metavar="FILE.png",
        help="also draw the singular values (log scale) with the cut τ, r_gap and r_hat to this PNG",
    )
    p.add_argument(
        "--force", action="store_true", help="overwrite a --plot file entropic-bound did not write"
    )
    p.set_defaults(func=_predict)


def _load(args):
    from ..predict import load_npy, load_npz

    if args.data and (args.x or args.y or args.v):
        raise UserInputError("Give either DATA.npz or --x/--y[/--v]. Got both.")
    if args.data:
        return load_npz(args.data)
    if not (args.x and args.y):
        given = [f"--{k} {getattr(args, k)}" for k in ("x", "y", "v") if getattr(args, k)]
        missing = " and ".join(f"--{k} {k.upper()}.npy" for k in ("x", "y") if not getattr(args, k))
        got = f"Got {', '.join(given)} without {missing}." if given else "Got neither."
        raise UserInputError(f"Expected DATA.npz or both --x X.npy and --y Y.npy. {got}")
    V = load_npy(args.v, "V") if args.v else None
    return load_npy(args.x, "X"), load_npy(args.y, "Y"), V


def _check_method(method: str | None, teacher: str) -> None:
    """A method must fit the named teacher's class: another one would answer for a class not asked about."""
    if method is None or method in TEACHER_METHODS[teacher]:
        return
    from ..predict import PREDICTORS

    PREDICTORS.get(method)  # unknown name → one line with the choices
    owner = next(t for t, methods in TEACHER_METHODS.items() if method in methods)
    raise UserInputError(
        f"Method '{method}' fits the {owner} teacher, not --teacher {teacher}. Expected one of "
        f"{', '.join(TEACHER_METHODS[teacher])} (or no --method)."
    )


def _check_plot_path(path: str | None) -> None:
    """Refuse a --plot path that cannot take a PNG before any work is done."""
    if path is None:
        return
    folder = os.path.dirname(os.path.abspath(path))
    if not path.lower().endswith(".png"):
        raise UserInputError(f"--plot expects a file name ending in .png. Got '{path}'.")
    if os.path.isdir(path):
        raise UserInputError(f"--plot expects a file name ending in .png. Got the directory '{path}'.")
    if not os.path.isdir(folder):
        raise UserInputError(f"--plot expects a file in an existing folder. Found no folder '{folder}'.")
    if not os.access(folder, os.W_OK):
        raise UserInputError(f"--plot expects a file in a writable folder. Cannot write to '{folder}'.")


def _predict(args) -> int:
    from ..predict import predict_r_star

    _check_method(args.method, args.teacher)
    _check_plot_path(args.plot)
    plot_file = claim_output_file(args.plot, force=args.force, option="--plot") if args.plot else None
    X, Y, V = _load(args)
    if args.v_known and V is None:
        raise DataError("--v-known expects an array V (d, d_v) in the data (or --v V.npy). Found none.")
    pred = predict_r_star(X, Y, teacher=args.teacher, V=V, method=args.method, estimator=args.estimator)
    if pred.too_few_samples:  # a sample-count problem the user can fix: an error, not a verdict
        raise DataError(f"Expected more equations than unknowns for '{pred.method}'. Found {pred.reason}")
    trusted = pred.identifiable and not _teacher_rejected(pred)
    if args.json:
        advice = {} if trusted else {"to_identify": to_identify(pred, args.teacher)}
        print(json.dumps({**pred.to_dict(), **advice}))
    else:
        _print_table(pred, args.teacher)
    if args.plot:
        _write_plot(pred, plot_file, args.plot)
    return 0 if trusted else NOT_IDENTIFIABLE


def _teacher_rejected(pred) -> bool:
    """The held-out test rejected the teacher class: r_hat is the rank of a kernel of the wrong class."""
    return bool(pred.fit.get("teacher_rejected"))


def _write_plot(pred, plot_file, path: str) -> None:
    import sys

    from ..plotting import to_png
    from ..predict.plot import spectrum_figure

    if not pred.singular_values:
        print(
            f"--plot: nothing was fitted ({pred.reason}), so there is no spectrum to draw.", file=sys.stderr
        )
        return
    png = to_png(spectrum_figure(pred))
    plot_file.write_bytes(Path(path).name, png)


def to_identify(pred, teacher: str) -> str:
    """What would make r* identifiable, for a prediction that is not (by the measured cause: the
    teacher class rejected, V missing, sequences too long, or the samples)."""
    if _teacher_rejected(pred):
        other = " or ".join(t for t in TEACHER_METHODS if t != teacher.replace("_", "-"))
        return (
            f"data of a {teacher} teacher: these reject the class (held-out test above), so more samples "
            f"would not help; if the data come from another class, name it (--teacher {other})"
        )
    (_, n, d), d_v, has_v = pred.shapes["X"], pred.shapes["Y"][2], pred.shapes["V"] is not None
    if pred.method == "softmax_linearised":
        if has_v:
            return (
                f"sequences of n ≤ d_v = {d_v} tokens (these have n = {n}): then softmax_log_attention "
                "recovers the attention per sample and identifies K exactly"
            )
        return (
            "give V (d, d_v) with the data (--v V.npy or V in DATA.npz) and sequences with n ≤ d_v: then "
            "softmax_log_attention recovers the attention per sample and identifies K exactly"
        )
    if pred.method == "softmax_log_attention":
        if not has_v:
            return f"give V (--v V.npy) and sequences of n ≤ min(d, d_v) = {min(d, d_v)} tokens"
        if n > min(d, d_v):
            return f"sequences of n ≤ min(d, d_v) = {min(d, d_v)} tokens (these have n = {n})"
        return "more samples, less noise, or less saturated attention (a smaller logit scale)"
    if pred.method == "linear_v_unknown":
        if "lower bound" in pred.reason:
            return "sequences with n ≥ d tokens (then pinv(X_i) eliminates V), or give V (--v V.npy)"
        if "confirmed" in pred.reason:
            return "n > d tokens per sequence (residual degrees of freedom calibrate the cut), or give V"
        return "sequences whose X_i have full column rank (n ≥ d), or give V (--v V.npy)"
    return "more samples" if has_v else "more samples, or V (--v V.npy) if it is known"


def _print_table(pred, teacher: str) -> None:
    from rich.console import Console
    from rich.table import Table

    from ..predict import ESTIMATE_KEYS

    console = Console(width=110)
    table = Table(title=f"predict r* — {pred.method}", title_justify="left")
    table.add_column("estimate")
    table.add_column("value", justify="right")
    for key in ESTIMATE_KEYS:
        if key in pred.estimates:
            table.add_row(key, f"{pred.estimates[key]:.3g}")
    fitted = bool(pred.singular_values)  # nothing fitted: no threshold, margin or spectrum to show
    if math.isfinite(pred.noise_level):
        table.add_row("noise σ̂ (Y)", f"{pred.noise_level:.3g}")
    if fitted:
        table.add_row("threshold / kernel noise", f"{pred.threshold:.3g} / {pred.kernel_noise:.3g}")
        table.add_row("margin", f"{pred.margin:.3g}")
    table.add_row("time", f"{pred.timing_s:.2f} s")
    console.print(table)
    if fitted:
        shown = max(pred.r_hat + 2, 4)
        top = ", ".join(f"{v:.3g}" for v in pred.singular_values[:shown])
        console.print(f"singular values: {top}{' …' if len(pred.singular_values) > shown else ''}")
    if _teacher_rejected(pred):
        console.print(
            f"r* is NOT identifiable from these data under the {teacher} teacher (r_hat = {pred.r_hat}, "
            "not to be trusted): the data reject the class (WARNING below)",
            highlight=False,
        )
        console.print(f"to identify it: {to_identify(pred, teacher)}", highlight=False)
    elif pred.identifiable:
        console.print(f"r_hat = {pred.r_hat} (identifiable): {pred.reason}", highlight=False)
    else:
        r_hat = f"r_hat = {pred.r_hat}, not to be trusted" if fitted else "no r_hat"
        console.print(f"r* is NOT identifiable from these data ({r_hat}): {pred.reason}", highlight=False)
        console.print(f"to identify it: {to_identify(pred, teacher)}", highlight=False)
    if pred.cut:
        console.print(
            f"cut: null threshold gives {pred.cut['null_rank']}, largest gap {pred.cut['gap_rank']}; "
            f"chose the {pred.cut['chosen']} ({pred.cut['why']})",
            highlight=False,
        )
    fit = pred.fit
    if fit.get("teacher_rejected"):
        console.print(
            f"WARNING: the {teacher} teacher does not fit these data (held-out {fit['test']} test "
            f"{fit['statistic']:.3g} > {fit['threshold']:.3g}): {fit['reason']} r_hat assumes a class the data reject.",
            style="bold red",
            highlight=False,
        )
    elif fit:
        console.print(f"teacher class check: {fit['reason']}", highlight=False)
