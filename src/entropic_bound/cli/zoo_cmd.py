"""``entropic-bound zoo``: measure every released model and its random-weight control, write the page.

Parsing only: the measurement and the page are :mod:`entropic_bound.zoo.page`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import UserInputError
from ..names import DEFAULT_OUT as RUN_OUT

#: Beside run's output, never into a checkout: the repository's docs/model-zoo.md is regenerated only
#: when a maintainer names it (``--out docs/model-zoo.md --force``).
DEFAULT_OUT = f"{RUN_OUT}/model-zoo.md"


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "zoo",
        help="the model-zoo table: static vs realised ranks and sinks of every released model (Markdown + PNG)",
        description="Inspect every released model (minilm; smollm2, gemma3-270m, mpnet and the Qwen2.5-Coder ladder where installed) and its -random control on "
        "16 windows of 64 tokens of tinyshakespeare, and write a Markdown table of the per-head distributions "
        "beside the published figures they compare with, each head's logit field taken apart, the share of sink "
        "heads on Gu et al.'s three inputs (natural text, random tokens, one token repeated), a per-layer "
        "figure and a figure of the ranks and sink shares against parameter count.",
    )
    p.add_argument(
        "--out", default=DEFAULT_OUT, metavar="FILE", help=f"the Markdown page (default {DEFAULT_OUT})"
    )
    p.add_argument(
        "--figure",
        metavar="PNG",
        help="the per-layer figure (default: figures/model-zoo-per-layer.png beside --out); the figure "
        "against model size, model-zoo-size.png, goes beside it",
    )
    p.add_argument(
        "--models", nargs="+", metavar="NAME", help="short names to measure (default: all, each with -random)"
    )
    p.add_argument("--threads", type=int, default=1, help="BLAS and torch threads (default 1, as inspect)")
    p.add_argument(
        "--force", action="store_true", help="overwrite a page or figure entropic-bound did not write"
    )
    p.set_defaults(func=handler)


def handler(args: argparse.Namespace) -> int:
    from ..inspect.released import RELEASED_MODELS, is_released_name
    from ..zoo.page import build_zoo, size_figure_path
    from .inspect_cmd import limit_threads

    if args.threads < 1:
        raise UserInputError(f"The '--threads' option must be an int >= 1. Got {args.threads} instead.")
    for name in args.models or ():
        if not is_released_name(name):
            known = ", ".join(RELEASED_MODELS)
            raise UserInputError(f"Unknown released model '{name}'. Available: {known} (each with -random).")
    out = Path(args.out)
    if out.is_dir():
        raise UserInputError(f"The '--out' option needs a file path. Got the folder '{out}' instead.")
    figure = Path(args.figure) if args.figure else out.parent / "figures" / "model-zoo-per-layer.png"
    # checked before minutes of measuring: the page goes into an existing folder (its figures/ beside it
    # is made; the default folder too, as run's), as predict's --plot does
    for option, folder in (("--out", out.parent), ("--figure", figure.parent if args.figure else out.parent)):
        if not folder.is_dir() and not (option == "--out" and args.out == DEFAULT_OUT):
            raise UserInputError(
                f"The '{option}' option expects a file in an existing folder. Found no folder '{folder}'."
            )
    write = _claimed_writer(
        {out: "--out", figure: "--figure", size_figure_path(figure): "--figure"}, args.force
    )
    limit_threads(args.threads)
    command = "entropic-bound zoo" + ("" if args.out == DEFAULT_OUT else f" --out {args.out}")
    if args.models:
        command += " --models " + " ".join(args.models)
    skipped = build_zoo(
        out,
        figure,
        command,
        args.models,
        on_model=lambda n: print(f"measuring {n}", file=sys.stderr),
        write=write,
    )
    for line in skipped:
        print(line, file=sys.stderr)
    print(f"wrote {out}, {figure} and {size_figure_path(figure)}")
    return 0


def _claimed_writer(paths: dict[Path, str], force: bool):
    """``write(path, bytes)`` for the page and the figure, each refused before any measuring when it
    holds a file entropic-bound did not write (unless ``force``)."""
    from ..store.ownership import claim_output_file

    claimed = {path: claim_output_file(path, force=force, option=option) for path, option in paths.items()}
    return lambda path, data: claimed[path].write_bytes(path.name, data)
