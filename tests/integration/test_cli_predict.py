"""``entropic-bound predict`` end to end: JSON on good files, exit 2 and one stderr line on bad ones."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys

import numpy as np
import pytest

from entropic_bound.cli import main


def _data(N=48, n=16, d=32, d_v=32, r=3, sigma=1e-3, teacher="linear-qk", seed=0):
    rng = np.random.default_rng(seed)
    K = rng.standard_normal((d, r)) @ rng.standard_normal((r, d)) / d
    V = np.linalg.qr(rng.standard_normal((d, d_v)))[0]
    X = rng.standard_normal((N, n, d))
    L = X @ K @ X.transpose(0, 2, 1)
    if teacher == "softmax":
        L = np.exp(L - L.max(-1, keepdims=True))
        L /= L.sum(-1, keepdims=True)
    Y = L @ X @ V + sigma * rng.standard_normal((N, n, d_v))
    return X, Y, V


def _run(capsys, *argv):
    code = main(["predict", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_subprocess_linear_v_known(tmp_path):
    X, Y, V = _data()
    path = tmp_path / "data.npz"
    np.savez(path, X=X, Y=Y, V=V)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "entropic_bound",
            "predict",
            str(path),
            "--teacher",
            "linear-qk",
            "--v-known",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["r_hat"] == 3 and result["method"] == "linear_v_known" and result["identifiable"] is True
    for key in (
        "estimates",
        "singular_values",
        "reason",
        "noise_level",
        "margin",
        "timing_s",
        "estimator_params",
    ):
        assert key in result
    assert result["noise_level"] == pytest.approx(1e-3, rel=0.1)


@pytest.mark.parametrize(
    "teacher, method", [("linear-qk", "linear_v_unknown"), ("softmax", "softmax_log_attention")]
)
def test_json_npy_inputs(tmp_path, capsys, teacher, method):
    X, Y, V = _data(teacher=teacher)
    for name, arr in (("x", X), ("y", Y), ("v", V)):
        np.save(tmp_path / f"{name}.npy", arr)
    v_args = ["--v", tmp_path / "v.npy"] if method == "softmax_log_attention" else []
    code, out, err = _run(
        capsys, "--x", tmp_path / "x.npy", "--y", tmp_path / "y.npy", *v_args, "--teacher", teacher, "--json"
    )
    assert code == 0, err
    result = json.loads(out)
    assert result["method"] == method and result["r_hat"] == 3 and result["identifiable"]


def test_non_identifiable_is_a_result_not_an_error(tmp_path, capsys):
    X, Y, V = _data(d_v=8, teacher="softmax")  # n = 16 > d_v: attention not recoverable
    np.savez(tmp_path / "d.npz", X=X, Y=Y, V=V)
    code, out, _ = _run(
        capsys, tmp_path / "d.npz", "--teacher", "softmax", "--method", "softmax_log_attention", "--json"
    )
    result = json.loads(out)
    assert (
        code == 3  # a result (the JSON is printed), with its own exit status
        and result["identifiable"] is False
        and result["r_hat"] == -1
        and "not recoverable" in result["reason"]
        and "n ≤ min(d, d_v) = 8" in result["to_identify"]
    )


def test_not_identifiable_table_says_why_and_what_would_identify_it(tmp_path, capsys):
    X, Y, V = _data(N=24, d=8, d_v=8, n=6, teacher="softmax", sigma=0.05)
    np.savez(tmp_path / "d.npz", X=X, Y=Y)  # no V: only the paper's linearised estimators apply
    code, out, _ = _run(capsys, tmp_path / "d.npz", "--teacher", "softmax")
    assert code == 3 and "NOT identifiable" in out and "to identify it: give V" in out
    assert "nan" not in out and "singular values: \n" not in out + "\n"
    X, Y, V = _data(N=24, d=8, d_v=4, n=6, teacher="softmax", sigma=0.05)
    np.savez(tmp_path / "v.npz", X=X, Y=Y, V=V)  # V given but n > d_v: nothing fitted at all
    code, out, _ = _run(
        capsys, tmp_path / "v.npz", "--teacher", "softmax", "--method", "softmax_log_attention"
    )
    assert code == 3 and "no r_hat" in out and "singular values" not in out and "nan" not in out
    # V was given: the advice names the measured cause, the sequence length, not V
    assert "to identify it: sequences of n ≤ min(d, d_v) = 4 tokens (these have n = 6)" in out


def test_exit_2_when_the_method_has_no_more_equations_than_unknowns(tmp_path, capsys):
    X, Y, V = _data(N=3, n=4, d=6, d_v=6, teacher="softmax")  # 3·4·3 = 36 log-ratio equations, d² = 36
    np.savez(tmp_path / "d.npz", X=X, Y=Y, V=V)
    code, out, err = _run(capsys, tmp_path / "d.npz", "--teacher", "softmax")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "more equations than unknowns" in err


def test_table_output_and_estimator_choice(tmp_path, capsys):
    X, Y, V = _data()
    np.savez(tmp_path / "d.npz", X=X, Y=Y, V=V)
    code, out, _ = _run(capsys, tmp_path / "d.npz", "--teacher", "linear-qk")
    assert code == 0 and "r_hat = 3 (identifiable)" in out and "noise_calibrated_rank" in out
    code, out, _ = _run(
        capsys, tmp_path / "d.npz", "--teacher", "linear-qk", "--estimator", "largest_gap_rank", "--json"
    )
    assert code == 0 and json.loads(out)["r_hat"] == 3


def _bad_cases(tmp):
    X, Y, V = _data()
    cases = {}

    def npz(name, **arrays):
        np.savez(tmp / f"{name}.npz", **arrays)
        return [tmp / f"{name}.npz", "--teacher", "linear-qk"]

    cases["missing Y"] = (npz("noY", X=X), "Missing Y")
    cases["X wrong rank"] = (npz("rankX", X=X[0], Y=Y), "'X' must be 3-D")
    cases["V wrong rank"] = (npz("rankV", X=X, Y=Y, V=V[0]), "'V' must be 2-D")
    cases["N mismatch"] = (npz("N", X=X, Y=Y[:-1]), "must agree in (N, n)")
    cases["n mismatch"] = (npz("n", X=X, Y=Y[:, :-1]), "must agree in (N, n)")
    cases["d mismatch"] = (npz("d", X=X, Y=Y, V=V[:-1]), "V must be (d, d_v)")
    cases["d_v mismatch"] = (npz("dv", X=X, Y=Y, V=V[:, :-1]), "V must be (d, d_v)")
    cases["NaN"] = (npz("nan", X=np.where(X > 3, np.nan, X), Y=Y), "must be finite")
    cases["inf"] = (npz("inf", X=X, Y=np.where(Y > 0.5, np.inf, Y)), "must be finite")
    cases["too few samples"] = (npz("few", X=X[:2], Y=Y[:2], V=V), "more equations than unknowns")
    cases["object array"] = (npz("obj", X=X.astype(object), Y=Y), "Found an object array")
    cases["v-known without V"] = (npz("noV", X=X, Y=Y) + ["--v-known"], "--v-known expects an array V")
    cases["missing file"] = ([tmp / "nope.npz", "--teacher", "linear-qk"], "Found no such file")
    with open(tmp / "pickled.npz", "wb") as f:
        pickle.dump({"X": X, "Y": Y}, f)
    cases["pickled file"] = ([tmp / "pickled.npz", "--teacher", "linear-qk"], "pickles are not loaded")
    cases["unknown teacher"] = (npz("ok", X=X, Y=Y) + ["--teacher", "liner"], "invalid choice")
    cases["unknown estimator"] = (
        npz("ok2", X=X, Y=Y) + ["--estimator", "stabel_rank"],
        "Did you mean 'stable_rank'",
    )
    cases["no data"] = (["--teacher", "linear-qk"], "Got neither")
    np.save(tmp / "x.npy", X)
    cases["--x without --y"] = (
        ["--x", tmp / "x.npy", "--teacher", "linear-qk"],
        f"Got --x {tmp / 'x.npy'} without --y Y.npy.",
    )
    cases["--v alone"] = (["--v", tmp / "x.npy", "--teacher", "softmax"], "without --x X.npy and --y Y.npy")
    (tmp / "make.py").write_text("import numpy as np\nnp.savez('d.npz', X=X, Y=Y)\n")
    cases["a text file"] = (
        [tmp / "make.py", "--teacher", "softmax"],
        "Expected a NumPy .npz archive (np.savez) or .npy array (np.save)",
    )
    cases["method of the other teacher"] = (
        npz("m", X=X, Y=Y, V=V) + ["--teacher", "softmax", "--method", "linear_v_known"],
        "Method 'linear_v_known' fits the linear-qk teacher, not --teacher softmax. Expected one of "
        "softmax_log_attention, softmax_linearised",
    )
    cases["plot not a png"] = (npz("p1", X=X, Y=Y) + ["--plot", tmp / "s.jpg"], "ending in .png")
    cases["plot in no folder"] = (npz("p2", X=X, Y=Y) + ["--plot", tmp / "no" / "s.png"], "Found no folder")
    cases["plot is a folder"] = (npz("p3", X=X, Y=Y) + ["--plot", tmp / "dir.png"], "Got the directory")
    (tmp / "dir.png").mkdir()
    return cases


def test_each_bad_input_exits_2_with_one_line(tmp_path, capsys):
    for name, (argv, fragment) in _bad_cases(tmp_path).items():
        code, out, err = _run(capsys, *argv)
        assert code == 2, (name, out, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in err, (name, err)
        assert fragment in lines[0], (name, lines[0])
        if name == "a text file":  # says what it found, not NumPy's pickle advice
            assert "Found a text file" in lines[0] and "pickle" not in lines[0], lines[0]


def test_bad_input_subprocess_has_no_traceback(tmp_path):
    np.savez(tmp_path / "d.npz", X=np.zeros((2, 3)), Y=np.zeros((2, 3, 4)))
    proc = subprocess.run(
        [sys.executable, "-m", "entropic_bound", "predict", str(tmp_path / "d.npz"), "--teacher", "softmax"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "must be 3-D" in proc.stderr


def _softmax_teacher_file(tmp_path):
    import torch

    from entropic_bound.tasks import SoftmaxTeacherTask

    teacher = SoftmaxTeacherTask(n=16, d=32, d_v=32, r_star=3, sigma=0.01).teacher(
        torch.Generator().manual_seed(0)
    )
    batch = teacher.sample(200, torch.Generator().manual_seed(1))
    np.savez(tmp_path / "soft.npz", X=batch.X.numpy(), Y=batch.Y.numpy(), V=teacher.V.numpy())
    return tmp_path / "soft.npz"


@pytest.mark.parametrize("teacher, rejected", [("linear-qk", True), ("softmax", False)])
def test_json_fit_key_flags_the_wrong_teacher(tmp_path, capsys, teacher, rejected):
    path = _softmax_teacher_file(tmp_path)
    code, out, err = _run(capsys, path, "--teacher", teacher, "--v-known", "--json")
    assert code == (3 if rejected else 0), err  # a rejected class: r_hat is not to be trusted
    result = json.loads(out)
    assert ("to_identify" in result) is rejected
    assert not rejected or "more samples would not help" in result["to_identify"]
    fit = result["fit"]
    assert set(fit) >= {"teacher_rejected", "statistic", "threshold", "reason"}
    assert fit["teacher_rejected"] is rejected and isinstance(fit["statistic"], float)
    assert isinstance(fit["threshold"], float) and "\n" not in fit["reason"]
    assert (fit["statistic"] > fit["threshold"]) is rejected
    assert result["cut"]["chosen"] in ("null", "gap") and "null_rank" in result["cut"]
    code, out, _ = _run(capsys, path, "--teacher", teacher, "--v-known")
    assert ("WARNING: the linear-qk teacher does not fit" in out) is rejected
    assert ("NOT identifiable from these data under the linear-qk teacher" in out) is rejected


def test_the_teacher_definitions_are_stated_once_and_are_what_the_tasks_compute(capsys):
    """`list` (the registry's summaries) and `predict --help` show the same definitions, and the
    tasks' teachers compute exactly them (with the 1/√d and the linear teacher's 1/n)."""
    import torch

    from entropic_bound.registry import TASKS
    from entropic_bound.tasks import LinearQKTeacherTask, SoftmaxTeacherTask
    from entropic_bound.tasks.names import LINEAR_QK_TEACHER, SOFTMAX_TEACHER

    assert TASKS.summary("linear_qk_teacher").startswith(LINEAR_QK_TEACHER)
    assert TASKS.summary("softmax_teacher").startswith(SOFTMAX_TEACHER)
    with pytest.raises(SystemExit):
        main(["predict", "--help"])
    predict_help = " ".join(capsys.readouterr().out.split())
    assert f"linear-qk: {LINEAR_QK_TEACHER}" in predict_help and f"softmax: {SOFTMAX_TEACHER}" in predict_help
    assert main(["list"]) == 0
    listed = capsys.readouterr().out
    assert LINEAR_QK_TEACHER in listed and SOFTMAX_TEACHER in listed
    n, d = 6, 8
    for task, mixer in (
        (LinearQKTeacherTask, lambda L: L / (np.sqrt(d) * n)),
        (SoftmaxTeacherTask, lambda L: torch.softmax(torch.from_numpy(L / np.sqrt(d)), -1).numpy()),
    ):
        teacher = task(n=n, d=d, d_v=d, r_star=2, sigma=0.0).teacher(torch.Generator().manual_seed(0))
        batch = teacher.sample(4, torch.Generator().manual_seed(1))
        X, K, V = batch.X.numpy(), teacher.truth["K"], teacher.V.numpy()
        expected = mixer(X @ K @ X.transpose(0, 2, 1)) @ X @ V
        np.testing.assert_allclose(batch.Y.numpy(), expected, rtol=1e-6, atol=1e-9)


def test_every_method_belongs_to_one_teacher_and_the_defaults_to_theirs():
    from entropic_bound.cli.predict_cmd import TEACHER_METHODS
    from entropic_bound.predict import PREDICTORS, default_method

    owned = [m for methods in TEACHER_METHODS.values() for m in methods]
    assert sorted(owned) == sorted(PREDICTORS.names()) and len(set(owned)) == len(owned)
    for teacher, methods in TEACHER_METHODS.items():
        for n, v_known in ((4, True), (4, False), (40, True)):
            assert default_method(teacher, n, 8, 8, v_known) in methods


def test_plot_draws_the_spectrum_with_the_cut_and_r_hat(tmp_path, capsys):
    from matplotlib.text import Text

    from entropic_bound.plotting import display_scale, make_legible
    from entropic_bound.predict import predict_r_star
    from entropic_bound.predict.plot import spectrum_figure

    X, Y, V = _data(N=64, n=6, d=8, d_v=8, teacher="softmax", sigma=1e-2)
    np.savez(tmp_path / "d.npz", X=X, Y=Y, V=V)
    code, out, err = _run(capsys, tmp_path / "d.npz", "--teacher", "softmax", "--plot", tmp_path / "s.png")
    assert code == 0, err
    png = (tmp_path / "s.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10_000
    pred = predict_r_star(X, Y, teacher="softmax", V=V)
    fig = spectrum_figure(pred)
    fig.draw_without_rendering()
    texts = " ".join(t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text")))
    assert f"r_hat = {pred.r_hat}" in texts and f"τ = {pred.threshold:.3g}" in texts
    assert f"r_gap = {pred.cut['gap_rank']}" in texts
    ax = fig.axes[0]
    assert ax.get_yscale() == "log" and len(ax.lines[0].get_xdata()) == len(pred.singular_values)
    make_legible(fig)
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    assert min(sizes) * display_scale(fig) >= 8.0  # points as the figure is shown
    fig.draw_without_rendering()
    box = fig.bbox  # no text runs off the picture (the title names the method on its own line)
    labels = [ax.title, ax.xaxis.label, ax.yaxis.label, *ax.get_legend().get_texts()]
    for text in labels:
        extent = text.get_window_extent()
        assert box.x0 - 1 <= extent.x0 and extent.x1 <= box.x1 + 1, text.get_text()
