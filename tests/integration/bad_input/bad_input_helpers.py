"""The bad-input suite: files, folders and databases the project did not make.

Every case checks the same three things: nothing deleted, nothing modified (checksums, sizes and
mtimes of every file under the folders involved are unchanged), and one line on stderr with exit
status 2, never a traceback. Read-only folders mean nothing to root, so as root the commands that
need one run as the unprivileged user ``nobody`` (``setpriv``), in a world-readable scratch folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from entropic_bound.cli import main

SRC = Path(__file__).resolve().parents[3] / "src"
TINY_E1 = [
    "--only",
    "E1",
    "--quiet",
    *("--set", "E1.task.r_stars=2"),
    *("--set", "E1.task.spectra=flat"),
    *("--set", "E1.v_settings=known"),
    *("--set", "E1.ranks=1,2,3"),
    *("--set", "E1.train.steps=50"),
]


def snapshot(*roots: Path) -> dict[str, tuple]:
    """Every file and folder under ``roots``: path → (sha256, size, mtime_ns, mode) for a file,
    ("dir", mode) for a folder; a missing root is recorded as missing."""
    state: dict[str, tuple] = {}
    for root in roots:
        if not root.exists():
            state[str(root)] = ("missing",)
            continue
        for path in [root, *sorted(root.rglob("*"))]:
            st = path.lstat()
            if path.is_dir():
                state[str(path)] = ("dir", st.st_mode)
            else:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                state[str(path)] = (digest, st.st_size, st.st_mtime_ns, st.st_mode)
    return state


def assert_one_line(stderr: str, *needles: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("entropic-bound: error: "), stderr
    assert "Traceback" not in stderr and all(n in lines[0] for n in needles), stderr
    return lines[0]


@pytest.fixture
def refused(capsys):
    """``refused(argv, *needles)``: the command exits 2 with one error line holding ``needles``."""

    def check(argv: list[str], *needles: str) -> str:
        capsys.readouterr()
        assert main([str(a) for a in argv]) == 2
        return assert_one_line(capsys.readouterr().err, *needles)

    return check


@pytest.fixture(scope="session")
def our_output(tmp_path_factory) -> Path:
    """A tiny ``reproduce`` output folder (store, report, manifest), written once; copy it to use it."""
    out = tmp_path_factory.mktemp("ours") / "out"
    assert main(["reproduce", "--out", str(out), *TINY_E1]) == 0
    return out


@pytest.fixture
def copy_of_ours(our_output, tmp_path):
    def make(name: str = "out") -> Path:
        dest = tmp_path / name
        shutil.copytree(our_output, dest)
        return dest

    return make


_RUN_MANY = """
import contextlib, io, json, sys
from entropic_bound.cli import main
results = []
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main(argv)
    results.append((status, err.getvalue()))
print(json.dumps(results))
"""


class Unprivileged:
    """Runs the CLI where permission bits hold: as ``nobody`` under root, as is otherwise."""

    def __init__(self) -> None:
        self.as_root = os.geteuid() == 0
        if self.as_root and not shutil.which("setpriv"):
            pytest.skip("read-only folders need a non-root user, and setpriv is not installed")
        self.scratch = Path(tempfile.mkdtemp(prefix="eb-bad-input-", dir="/tmp"))
        os.chmod(self.scratch, 0o777)

    def run(self, *argvs: list[str]) -> list[tuple[int, str]]:
        """Run each command line in one unprivileged process (one start-up); ``(status, stderr)`` each."""
        prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if self.as_root else []
        env = {
            **os.environ,
            "PYTHONPATH": str(SRC),
            "HOME": str(self.scratch),
            "MPLCONFIGDIR": str(self.scratch),
        }
        done = subprocess.run(
            [
                *prefix,
                sys.executable,
                "-c",
                _RUN_MANY,
                json.dumps([[str(a) for a in argv] for argv in argvs]),
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=self.scratch,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        return [tuple(r) for r in json.loads(done.stdout.strip().splitlines()[-1])]

    def share(self, path: Path) -> None:
        """Let ``nobody`` read (and, for folders, enter) ``path``."""
        for p in [path, *path.rglob("*")]:
            os.chmod(p, 0o755 if p.is_dir() else 0o644)
        os.chmod(self.scratch, 0o777)  # the scratch folder itself stays writable to all

    def close(self) -> None:
        for p in [self.scratch, *self.scratch.rglob("*")]:
            if p.is_dir():
                os.chmod(p, 0o755)
        shutil.rmtree(self.scratch, ignore_errors=True)
