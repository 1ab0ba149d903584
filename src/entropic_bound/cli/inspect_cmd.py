"""``entropic-bound inspect MODEL``: per-head kernel ranks (and realised mixers) of a real checkpoint."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import UserInputError

SUMMARY_COLUMNS = [
    "layer",
    "head",
    "kv_head",
    "numerical_rank",
    "energy_effective_rank",
    "stable_rank",
    "largest_gap_rank",
    "sv_1",
    "sink_score",
    "locality_mass",
    "positional_prior_explained",
    "mixer_energy_effective_rank",
]


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "inspect",
        help="per-head static kernel ranks and realised mixers of a safetensors checkpoint",
        description="Rank of every head's static kernel W_Q^h W_K^hT (from the factors, float64) in a Hugging "
        "Face-format checkpoint (bert, gpt2, llama); with --text, realised-mixer ranks, sink, locality and "
        "positional-prior scores from a forward pass. Weights are read with safetensors only.",
    )
    p.add_argument(
        "model", metavar="MODEL", help="model folder (config.json + *.safetensors) or a .safetensors file"
    )
    p.add_argument("--arch", help="architecture: bert, gpt2 or llama (default: config.json's model_type)")
    p.add_argument("--n-heads", type=int, help="query heads per layer (default: from config.json)")
    p.add_argument("--n-kv-heads", type=int, help="key/value heads per layer (default: from config.json)")
    p.add_argument(
        "--fold-ln", action="store_true", help="fold the preceding LayerNorm/RMSNorm scale into W_Q and W_K"
    )
    p.add_argument(
        "--text",
        metavar="FILE",
        nargs="?",
        const="",
        default=None,
        help="realised mixers on this text file (no FILE: a built-in sample)",
    )
    p.add_argument("--window", type=int, default=2, help="locality window ±w tokens (default 2)")
    p.add_argument("--window-len", type=int, default=64, help="tokens per text window (default 64)")
    p.add_argument("--max-windows", type=int, default=8, help="text windows at most (default 8)")
    p.add_argument("--top-k", type=int, default=8, help="top singular values in the table/CSV (default 8)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the result as JSON")
    out.add_argument("--csv", metavar="OUT", help="write the per-head table to this CSV file")
    p.add_argument("--out", metavar="DIR", help="write figures (PNG) to this folder")
    p.set_defaults(func=handler)


def _check_ints(args: argparse.Namespace) -> None:
    for name, low in (("window", 0), ("window_len", 3), ("max_windows", 1), ("top_k", 1)):
        value = getattr(args, name)
        if value < low:
            flag = "--" + name.replace("_", "-")
            raise UserInputError(f"The '{flag}' option must be an int >= {low}. Got {value} instead.")


def _progress(quiet: bool):
    """A rich progress bar on stderr (terminals only); returns ``(callback, stop)``."""
    if quiet or not sys.stderr.isatty():
        return None, lambda: None
    from rich.console import Console
    from rich.progress import Progress

    bar = Progress(console=Console(stderr=True), transient=True)
    bar.start()
    task = bar.add_task("kernel spectra", total=None)

    def on_layer(layer: int, n_layers: int) -> None:
        bar.update(task, total=n_layers, completed=layer + 1, description=f"layer {layer + 1}/{n_layers}")

    return on_layer, bar.stop


def _write_figures(result, out: Path) -> list[Path]:
    import matplotlib.pyplot as plt

    from ..inspect.plots import head_heatmap, spectra_figure, spectra_table

    out.mkdir(parents=True, exist_ok=True)
    figures = {
        "energy_effective_rank_heatmap.png": head_heatmap(
            result.table, "energy_effective_rank", title="static kernel energy effective rank"
        ),
        "kernel_spectra.png": spectra_figure(spectra_table(result.singular_values)),
    }
    if "sink_score" in result.table:
        figures["sink_score_heatmap.png"] = head_heatmap(
            result.table, "sink_score", title="attention-sink score"
        )
        figures["locality_mass_heatmap.png"] = head_heatmap(
            result.table, "locality_mass", title="locality mass"
        )
    paths = []
    for name, fig in figures.items():
        fig.savefig(out / name, dpi=110)
        plt.close(fig)
        paths.append(out / name)
    return paths


def handler(args: argparse.Namespace) -> int:
    from ..inspect import inspect_model

    _check_ints(args)
    on_layer, stop = _progress(args.json)
    try:
        result = inspect_model(
            args.model,
            arch=args.arch,
            n_heads=args.n_heads,
            n_kv_heads=args.n_kv_heads,
            fold_ln=args.fold_ln,
            text=args.text or None,
            realised=args.text is not None,
            window=args.window,
            window_len=args.window_len,
            max_windows=args.max_windows,
            top_k=args.top_k,
            on_layer=on_layer,
        )
    finally:
        stop()
    if args.json:
        print(json.dumps(result.to_json(), allow_nan=False))
    elif args.csv:
        Path(args.csv).parent.mkdir(parents=True, exist_ok=True)
        result.table.to_csv(args.csv, index=False)
        print(f"wrote {len(result.table)} rows to {args.csv}")
    else:
        cols = [c for c in SUMMARY_COLUMNS if c in result.table]
        c = result.config
        print(
            f"{result.model}: {c.arch}, {c.n_layers} layers x {c.n_heads} heads "
            f"({c.n_kv_heads} kv), d_model={c.d_model}, d_head={c.d_head}, fold_ln={result.fold_ln}"
        )
        print(result.table[cols].to_string(index=False, float_format=lambda x: f"{x:.3f}"))
        for note in result.notes:
            print(f"note: {note}")
    if args.out:
        paths = _write_figures(result, Path(args.out))
        if not args.json:
            print(f"wrote {len(paths)} figures to {args.out}")
    return 0
