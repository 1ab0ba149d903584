"""The bad-input catalogue: every CLI command refuses each mistake with exit code 2, one line on
stderr (no traceback), and writes nothing (the working folder is byte-for-byte unchanged)."""

from __future__ import annotations

import hashlib
import json
import pickle
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
import torch

from entropic_bound.cli import main

TINY_E1 = [
    "--set",
    "ranks=[1,2]",
    "--set",
    "task.r_stars=[1]",
    "--set",
    "task.spectra=[flat]",
    "--set",
    "v_settings=[known]",
    "--set",
    "task.n=4",
    "--set",
    "task.d=2",
    "--set",
    "train.steps=5",
]


@pytest.fixture(scope="module")
def valid_store(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("valid") / "out"
    assert main(["run", "E1", "--out", str(out), "--quiet", *TINY_E1]) == 0
    return out / "runs.sqlite"


def _npz(path: Path, **arrays) -> str:
    np.savez(path, **arrays)
    return str(path)


def _xy(N=6, n=4, d=3, d_v=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((N, n, d)), rng.standard_normal((N, n, d_v))


def _copy_store(src: Path, dst: Path) -> str:
    shutil.copy(src, dst)
    return str(dst)


def _newer_store(src: Path, dst: Path) -> str:
    _copy_store(src, dst)
    conn = sqlite3.connect(dst)
    conn.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    conn.commit()
    conn.close()
    return str(dst)


def _read_only_store(src: Path, dst: Path) -> str:
    _copy_store(src, dst)
    dst.chmod(0o444)
    return str(dst)


def _write(path: Path, text: str | bytes) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(path)


def _own_corpus(w: Path, name: str, content: str | bytes) -> list[str]:
    """``run E7`` on one own corpus file holding ``content``."""
    return ["run", "E7", "--out", f"{w}/o", "--set", f"task.corpus_paths=[{_write(w / name, content)}]"]


def _corrupt_checkpoint(folder: Path) -> str:
    folder.mkdir()
    (folder / "config.json").write_text(
        json.dumps({"model_type": "gpt2", "n_layer": 1, "n_head": 2, "n_embd": 8})
    )
    header = json.dumps(
        {"h.0.attn.c_attn.weight": {"dtype": "F32", "shape": [8, 24], "data_offsets": [0, 768]}}
    )
    raw = len(header).to_bytes(8, "little") + header.encode() + b"\0" * 100  # 100 of the 768 promised bytes
    (folder / "model.safetensors").write_bytes(raw)
    return str(folder)


@dataclass
class Case:
    argv: Callable[[Path, Path], list[str]]  # (working folder, a valid store) → arguments
    message: str  # a fragment the one-line error must contain (case-insensitive)
    xfail: str = ""
    marks: list = field(default_factory=list)


CASES: dict[str, Case] = {
    # -- run / reproduce: configs ----------------------------------------------------------------
    "run-unknown-experiment": Case(lambda w, s: ["run", "E9", "--out", f"{w}/o"], "E9"),
    "run-unknown-device": Case(
        lambda w, s: ["run", "E1", "--out", f"{w}/o", "--device", "tpu"], "'cpu', 'cuda'"
    ),
    "reproduce-cuda-without-gpu": Case(
        lambda w, s: ["reproduce", "--only", "E7", "--out", f"{w}/o", "--device", "cuda"],
        "no cuda device",
        marks=[pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is visible here")],
    ),
    "run-experiment-typo": Case(lambda w, s: ["run", "E11", "--out", f"{w}/o"], "did you mean 'E1'"),
    "run-config-key-typo": Case(
        lambda w, s: ["run", "E1", "--out", f"{w}/o", "--set", "trian.lr=1e-3"], "did you mean 'train"
    ),
    "run-wrong-type": Case(
        lambda w, s: ["run", "E1", "--out", f"{w}/o", "--set", "train.lr=fast"], "train.lr"
    ),
    "run-rank-above-n": Case(lambda w, s: ["run", "E1", "--out", f"{w}/o", "--set", "ranks=[1,40]"], "ranks"),
    "run-r-star-above-n": Case(
        lambda w, s: ["run", "E1", "--out", f"{w}/o", "--set", "task.r_stars=[17]"], "r_stars"
    ),
    "run-negative-noise": Case(
        lambda w, s: ["run", "E1", "--out", f"{w}/o", "--set", "task.sigma=-0.1"], "sigma"
    ),
    "run-zero-samples": Case(
        lambda w, s: ["run", "E2", "--out", f"{w}/o", "--set", "sample_counts=[0,4]"], "sample_counts"
    ),
    "run-choice-typo": Case(
        lambda w, s: ["run", "E1", "--out", f"{w}/o", "--set", "task.spectra=[flatt]"], "flat"
    ),
    "run-assignment-without-equals": Case(
        lambda w, s: ["run", "E1", "--out", f"{w}/o", "--set", "train.lr"], "train.lr"
    ),
    "run-missing-config-file": Case(
        lambda w, s: ["run", "E1", "--out", f"{w}/o", "--config", f"{w}/none.yaml"], "none.yaml"
    ),
    "run-config-is-a-folder": Case(lambda w, s: ["run", "E1", "--out", f"{w}/o", "--config", str(w)], "work"),
    "run-config-bad-yaml": Case(
        lambda w, s: [
            "run",
            "E1",
            "--out",
            f"{w}/o",
            "--config",
            _write(w / "bad.yaml", "train: [lr: 1\n  steps"),
        ],
        "bad.yaml",
    ),
    "run-config-not-a-mapping": Case(
        lambda w, s: ["run", "E1", "--out", f"{w}/o", "--config", _write(w / "list.yaml", "- 1\n- 2\n")],
        "list.yaml",
    ),
    "run-draws-empty": Case(lambda w, s: ["run", "E1", "--out", f"{w}/o", "--draws", ""], "--draws"),
    "run-draws-not-an-int": Case(lambda w, s: ["run", "E1", "--out", f"{w}/o", "--draws", "a"], "'a'"),
    "run-draws-negative": Case(lambda w, s: ["run", "E1", "--out", f"{w}/o", "--draws", "0,-1"], "'-1'"),
    "run-draws-twice": Case(
        lambda w, s: ["run", "E1", "--out", f"{w}/o", "--draws", "1,1"], "each draw once"
    ),
    "run-draws-and-a-draw-override": Case(
        lambda w, s: ["run", "E1", "--out", f"{w}/o", "--draws", "0,1", "--set", "draw=2"], "not both"
    ),
    "run-negative-draw-override": Case(
        lambda w, s: ["run", "E1", "--out", f"{w}/o", "--set", "draw=-1"], "draw"
    ),
    "reproduce-draws-not-an-int": Case(
        lambda w, s: ["reproduce", "--only", "E1", "--out", f"{w}/o", "--draws", "0,x"], "--draws"
    ),
    "run-zero-workers": Case(lambda w, s: ["run", "E1", "--out", f"{w}/o", "--workers", "0"], "workers"),
    "run-bad-scale": Case(lambda w, s: ["run", "E1", "--out", f"{w}/o", "--scale", "huge"], "huge"),
    "run-unknown-flag": Case(lambda w, s: ["run", "E1", "--out", f"{w}/o", "--sett", "x=1"], "--sett"),
    "run-override-of-another-experiment": Case(
        lambda w, s: ["run", "E1", "--out", f"{w}/o", "--set", "E2.train.lr=0.1"],
        "is for E2, but this command runs E1",
    ),
    "run-override-of-no-experiment": Case(
        lambda w, s: ["run", "E1", "--out", f"{w}/o", "--set", "E9.x=1"],
        "names no experiment (experiments: E1,",
    ),
    "reproduce-only-empty": Case(
        lambda w, s: ["reproduce", "--only", "", "--out", f"{w}/o"], "must name at least one experiment"
    ),
    "reproduce-only-commas": Case(
        lambda w, s: ["reproduce", "--only", ",", "--out", f"{w}/o"], "must name at least one experiment"
    ),
    "reproduce-unknown-experiment": Case(
        lambda w, s: ["reproduce", "--only", "E1,E9", "--out", f"{w}/o"], "E9"
    ),
    "reproduce-override-without-experiment": Case(
        lambda w, s: ["reproduce", "--only", "E1", "--out", f"{w}/o", "--set", "train.lr=1e-3"], "E1.train.lr"
    ),
    "reproduce-e7-unknown-key": Case(
        lambda w, s: ["reproduce", "--only", "E7", "--out", f"{w}/o", "--set", "E7.checkpoints=minilm"],
        "Unknown config key 'checkpoints'",
    ),
    "run-e7-binary-corpus": Case(
        lambda w, s: _own_corpus(w, "x.bin", np.random.default_rng(0).bytes(4096)),
        "not UTF-8 text",
    ),
    "run-e7-short-corpus": Case(
        lambda w, s: _own_corpus(w, "s.txt", "hi"),
        "at least 1000 bytes",
    ),
    "run-e7-control-byte-corpus": Case(
        lambda w, s: _own_corpus(w, "z.txt", "ab" * 600 + chr(0) * 200),
        "control bytes",
    ),
    # -- run: the output folder and the store ----------------------------------------------------
    "run-out-is-a-file": Case(
        lambda w, s: ["run", "E1", "--out", _write(w / "file", "x"), *TINY_E1], "not a folder"
    ),
    "run-store-newer-schema": Case(
        lambda w, s: ["run", "E1", "--out", f"{w}/o", "--store", _newer_store(s, w / "new.sqlite"), *TINY_E1],
        "newer",
    ),
    "run-store-read-only": Case(
        lambda w, s: [
            "run",
            "E1",
            "--out",
            f"{w}/o",
            "--store",
            _read_only_store(s, w / "ro.sqlite"),
            *TINY_E1,
        ],
        "read-only",
    ),
    "run-store-not-sqlite": Case(
        lambda w, s: [
            "run",
            "E1",
            "--out",
            f"{w}/o",
            "--store",
            _write(w / "junk.sqlite", b"not a database at all" * 50),
            *TINY_E1,
        ],
        "not a run store",
    ),
    "run-store-is-a-folder": Case(
        lambda w, s: ["run", "E1", "--out", f"{w}/o", "--store", str(w), *TINY_E1], "is a folder"
    ),
    # -- report / export / list ------------------------------------------------------------------
    "list-unknown-experiment": Case(lambda w, s: ["list", "E9"], "Available: E1, E2"),
    "report-missing-store": Case(
        lambda w, s: ["report", "--store", f"{w}/none.sqlite", "--out", f"{w}/o"], "does not exist"
    ),
    "report-newer-schema": Case(
        lambda w, s: ["report", "--store", _newer_store(s, w / "new.sqlite"), "--out", f"{w}/o"], "newer"
    ),
    "report-out-is-a-file": Case(
        lambda w, s: ["report", "--store", _copy_store(s, w / "s.sqlite"), "--out", _write(w / "file", "x")],
        "not a folder",
    ),
    "report-unknown-experiment": Case(
        lambda w, s: ["report", "--store", _copy_store(s, w / "s.sqlite"), "--out", f"{w}/o", "--only", "E9"],
        "Unknown experiment 'E9'",
    ),
    "export-missing-store": Case(
        lambda w, s: ["export", "--store", f"{w}/none.sqlite", "--out", f"{w}/o"], "none.sqlite"
    ),
    "export-out-is-a-file": Case(
        lambda w, s: ["export", "--store", _copy_store(s, w / "s.sqlite"), "--out", _write(w / "file", "x")],
        "file",
    ),
    "export-bad-format": Case(
        lambda w, s: [
            "export",
            "--store",
            _copy_store(s, w / "s.sqlite"),
            "--out",
            f"{w}/o",
            "--format",
            "xlsx",
        ],
        "xlsx",
    ),
    "list-extra-argument": Case(lambda w, s: ["list", "everything"], "everything"),
    # -- predict ---------------------------------------------------------------------------------
    "predict-missing-file": Case(
        lambda w, s: ["predict", f"{w}/none.npz", "--teacher", "linear-qk"], "none.npz"
    ),
    "predict-nan-data": Case(
        lambda w, s: ["predict", _npz(w / "d.npz", X=_nan(_xy()[0]), Y=_xy()[1]), "--teacher", "linear-qk"],
        "finite",
    ),
    "predict-inf-data": Case(
        lambda w, s: ["predict", _npz(w / "d.npz", X=_xy()[0], Y=_inf(_xy()[1])), "--teacher", "linear-qk"],
        "finite",
    ),
    "predict-shape-mismatch": Case(
        lambda w, s: ["predict", _npz(w / "d.npz", X=_xy()[0], Y=_xy(n=5)[1]), "--teacher", "linear-qk"], "Y"
    ),
    "predict-wrong-ndim": Case(
        lambda w, s: ["predict", _npz(w / "d.npz", X=_xy()[0][0], Y=_xy()[1]), "--teacher", "linear-qk"], "X"
    ),
    "predict-pickled-npz": Case(
        lambda w, s: [
            "predict",
            _npz(w / "d.npz", X=np.array([{"a": 1}], dtype=object), Y=_xy()[1]),
            "--teacher",
            "linear-qk",
        ],
        "pickle",
    ),
    "predict-pickle-file": Case(
        lambda w, s: ["predict", _write(w / "d.npz", pickle.dumps({"X": 1})), "--teacher", "linear-qk"],
        "d.npz",
    ),
    "predict-missing-teacher": Case(
        lambda w, s: ["predict", _npz(w / "d.npz", X=_xy()[0], Y=_xy()[1])], "--teacher"
    ),
    "predict-v-known-without-v": Case(
        lambda w, s: [
            "predict",
            _npz(w / "d.npz", X=_xy()[0], Y=_xy()[1]),
            "--teacher",
            "linear-qk",
            "--v-known",
        ],
        "V",
    ),
    # -- inspect ---------------------------------------------------------------------------------
    "zoo-unknown-model": Case(lambda w, s: ["zoo", "--out", f"{w}/z.md", "--models", "gpt5"], "gpt5"),
    "zoo-out-in-no-folder": Case(
        lambda w, s: ["zoo", "--out", f"{w}/none/z.md", "--models", "minilm"], "none"
    ),
    "zoo-figure-in-no-folder": Case(
        lambda w, s: ["zoo", "--out", f"{w}/z.md", "--figure", f"{w}/none/z.png", "--models", "minilm"],
        "none",
    ),
    "inspect-missing-model": Case(lambda w, s: ["inspect", f"{w}/no-model"], "no-model"),
    "inspect-corrupt-safetensors": Case(
        lambda w, s: ["inspect", _corrupt_checkpoint(w / "ckpt")], "safetensors"
    ),
    "inspect-out-is-a-file": Case(
        lambda w, s: ["inspect", _corrupt_checkpoint(w / "ckpt"), "--out", _write(w / "file", "x")], "file"
    ),
    # -- files and folders the user owns: refused unless --force ----------------------------------
    "inspect-csv-users-file": Case(
        lambda w, s: ["inspect", "minilm", "--csv", _write(w / "r.csv", "mine\n")],
        "not written by entropic-bound",
    ),
    "inspect-out-users-folder": Case(
        lambda w, s: ["inspect", "minilm", "--out", str(Path(_write(w / "figs" / "a.txt", "mine")).parent)],
        "holds no entropic-bound output",
    ),
    "predict-plot-users-file": Case(
        lambda w, s: [
            "predict",
            _npz(w / "d.npz", X=_xy()[0], Y=_xy()[1]),
            "--teacher",
            "linear-qk",
            "--plot",
            _write(w / "p.png", "mine"),
        ],
        "not written by entropic-bound",
    ),
    "zoo-out-users-file": Case(
        lambda w, s: ["zoo", "--out", _write(w / "z.md", "mine"), "--models", "minilm"],
        "not written by entropic-bound",
    ),
    # -- bench train -----------------------------------------------------------------------------
    "bench-unknown-student": Case(lambda w, s: ["bench", "train", "--student", "lineer_qk"], "linear_qk"),
    "bench-zero-models": Case(
        lambda w, s: ["bench", "train", "--student", "linear_qk", "--models", "0"], "models"
    ),
    "bench-rank-above-d": Case(
        lambda w, s: ["bench", "train", "--student", "linear_qk", "--d", "4", "--rank", "9"], "rank"
    ),
}


def _nan(a: np.ndarray) -> np.ndarray:
    a = a.copy()
    a[0, 0, 0] = np.nan
    return a


def _inf(a: np.ndarray) -> np.ndarray:
    a = a.copy()
    a[-1, -1, -1] = np.inf
    return a


def _snapshot(folder: Path) -> dict[str, str]:
    """Every path under ``folder`` → a hash of its content (folders → 'dir'), modes included.
    SQLite's shared-memory index and an empty write-ahead log (made by any reader of a WAL store)
    are not writes and are left out."""
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.name.endswith("-shm") or (p.name.endswith("-wal") and p.stat().st_size == 0):
            continue
        key = str(p.relative_to(folder))
        out[key] = "dir" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest() + oct(p.stat().st_mode)
    return out


def _params():
    for name, case in CASES.items():
        marks = list(case.marks)
        if case.xfail:
            marks.append(pytest.mark.xfail(strict=True, reason=case.xfail))
        yield pytest.param(name, marks=marks, id=name)


def test_the_catalogue_covers_every_command():
    commands = {name.split("-")[0] for name in CASES}
    assert len(CASES) >= 25
    assert commands == {"run", "reproduce", "report", "export", "list", "predict", "inspect", "bench", "zoo"}


@pytest.mark.parametrize("name", list(_params()))
def test_bad_input_is_refused_in_one_line_and_writes_nothing(name, tmp_path, valid_store, capsys):
    case = CASES[name]
    work = tmp_path / "work"
    work.mkdir()
    argv = case.argv(work, valid_store)
    before = _snapshot(work)
    rc = main(argv)
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert rc == 2, (rc, err)
    assert len(err.splitlines()) == 1 and err.startswith("entropic-bound: error: "), err
    assert "Traceback" not in err and case.message.lower() in err.lower(), err
    assert _snapshot(work) == before, "the command wrote something before failing"


def test_a_locked_store_is_refused_after_the_timeout(tmp_path, valid_store, capsys, monkeypatch):
    """Another process holds the write lock: the run waits (here 0.2 s), then fails in one line."""
    import entropic_bound.store.run_store as store_module

    init = store_module.RunStore.__init__
    monkeypatch.setattr(
        store_module.RunStore,
        "__init__",
        lambda self, path, readonly=False, timeout=5.0: init(self, path, readonly=readonly, timeout=0.2),
    )
    store = Path(_copy_store(valid_store, tmp_path / "locked.sqlite"))
    holder = sqlite3.connect(store, isolation_level=None)
    holder.execute("PRAGMA journal_mode=WAL")
    holder.execute("BEGIN IMMEDIATE")  # the write lock, as a running sweep holds it while committing
    try:
        before = store.read_bytes()
        rc = main(["run", "E1", "--out", str(tmp_path / "o"), "--store", str(store), "--quiet", *TINY_E1])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and "locked" in err and "Traceback" not in err, err
    assert store.read_bytes() == before and not (tmp_path / "o").exists()
