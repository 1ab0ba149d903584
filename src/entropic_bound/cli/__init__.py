"""The ``entropic-bound`` command line: argument parsing only; the work is in the library.

Each sub-command lives in its own module with ``add_parser(subparsers)``, which sets
``func(args) -> int`` on its parser. User mistakes (:class:`UserInputError`, bad flags) print one
line ``entropic-bound: error: …`` and exit with status 2, never a traceback.

Faults of a long run end the same way. SIGTERM (a cluster pre-empting the job) is raised as
:class:`Terminated` at the next Python instruction, so the store transaction in progress rolls back
or has committed; the command prints one line and exits 143 (128 + SIGTERM), and rerunning it
resumes. A full disk anywhere (the store, the report, a figure) is one line and exit 2.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import signal
import sys
import threading
from collections.abc import Iterator, Sequence

from ..atomic import NO_SPACE
from ..errors import UserInputError

# One module per sub-command, in the order ``--help`` lists them.
COMMAND_MODULES = ("list_cmd", "run_cmd", "report_cmd", "predict_cmd", "inspect_cmd", "zoo_cmd", "bench_cmd")

PROG = "entropic-bound"
RESUMES = "finished runs are in the store and the same command resumes"


class Terminated(BaseException):
    """SIGTERM arrived. A BaseException, like KeyboardInterrupt, so no ``except Exception`` eats it."""


def _raise_terminated(signum, frame) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM during the unwinding ends us at once
    raise Terminated()


@contextlib.contextmanager
def _sigterm_raises() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated`; the previous handler is restored after.
    Only the main thread can install handlers; elsewhere (a thread running ``main``) nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


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
    with _sigterm_raises():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
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
    except OSError as exc:
        if exc.errno not in NO_SPACE:
            raise
        where = f" '{exc.filename}'" if exc.filename else ""
        return fail(f"Cannot write{where}: no space left on the device; free space and rerun: {RESUMES}.")
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; {RESUMES}.", file=sys.stderr)
        return 130
    except Terminated:
        print(f"{PROG}: terminated (SIGTERM); {RESUMES}.", file=sys.stderr)
        return 128 + signal.SIGTERM


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
