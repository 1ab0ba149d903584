"""The ``entropic-bound`` command line: argument parsing only; the work is in the library.

Each sub-command lives in its own module with ``add_parser(subparsers)``, which sets
``func(args) -> int`` on its parser. User mistakes (:class:`UserInputError`, bad flags) print one
line ``entropic-bound: error: …`` and exit with status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from ..errors import UserInputError

# One module per sub-command, in the order ``--help`` lists them.
COMMAND_MODULES = ("list_cmd", "run_cmd", "report_cmd", "predict_cmd", "inspect_cmd", "bench_cmd")

PROG = "entropic-bound"


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit code 2."""

    def error(self, message: str) -> NoReturn:  # type: ignore[name-defined]  # noqa: F821
        raise UserInputError(f"{message} (see '{self.prog} --help')")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Measure the intrinsic rank r* a task needs from a transformer.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.endswith(name):
                continue  # a sub-command not built yet
            raise
        module.add_parser(sub)
    return parser


def fail(message: str) -> int:
    one_line = " ".join(str(message).split())
    print(f"{PROG}: error: {one_line}", file=sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.version:
            from .. import __version__

            print(__version__)
            return 0
        if not getattr(args, "func", None):
            parser.print_help()
            return 0
        return int(args.func(args) or 0)
    except UserInputError as exc:
        return fail(str(exc))
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; finished runs are in the store and a rerun resumes.", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
