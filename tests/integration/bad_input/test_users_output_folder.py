"""The output folder belongs to the user until proven ours."""

from __future__ import annotations

import json

import pytest
from bad_input_helpers import TINY_E1, snapshot

from entropic_bound.cli import main
from entropic_bound.errors import UserInputError
from entropic_bound.store.ownership import MANIFEST_NAME


def _users_folder(tmp_path):
    """A folder of the user's own: a folder with the user's temporaries, notes, a .git and a report."""
    u = tmp_path / "u"
    for rel, text in {
        ".session.tmp": "x",
        "notes/.chapter3.tmp": "y",
        ".git/.index.tmp": "z",
        "report.html": "my own report",
        "verdicts.json": "{}",
        "results/E1.csv": "a,b\n1,2\n",
    }.items():
        (u / rel).parent.mkdir(parents=True, exist_ok=True)
        (u / rel).write_text(text)
    return u


def test_a_folder_that_is_not_ours_is_refused_before_any_work_and_left_as_it_was(tmp_path, refused):
    u = _users_folder(tmp_path)
    before = snapshot(u)
    refused(["reproduce", "--out", u, *TINY_E1], str(u), "--force")
    assert snapshot(u) == before  # not even a store was created


def test_report_into_a_folder_that_is_not_ours_is_refused(tmp_path, our_output, refused):
    u = _users_folder(tmp_path)
    before = snapshot(u, our_output)
    refused(["report", "--out", u, "--store", our_output / "runs.sqlite"], str(u), "--force")
    assert snapshot(u, our_output) == before


def test_force_writes_the_projects_files_and_deletes_nothing(tmp_path, our_output, capsys):
    u = _users_folder(tmp_path)
    before = snapshot(u)
    assert main(["report", "--out", str(u), "--store", str(our_output / "runs.sqlite"), "--force"]) == 0
    after = snapshot(u)
    assert set(before) <= set(after)  # nothing deleted
    ours = {"report.html", "verdicts.json", "E1.csv"}
    unchanged = {k: v for k, v in before.items() if not k.endswith(tuple(ours))}
    assert {k: after[k] for k in unchanged} == unchanged  # the user's other files untouched
    assert json.loads((u / "verdicts.json").read_text())  # the project's verdicts now


def test_empty_and_missing_folders_are_fine_and_get_a_manifest(our_output):
    files = json.loads((our_output / MANIFEST_NAME).read_text())["files"]
    assert {"report.html", "verdicts.json", "results/E1.csv"} <= set(files)


def test_a_file_the_user_changed_since_is_not_overwritten(copy_of_ours, refused):
    out = copy_of_ours()
    (out / "verdicts.json").write_text('{"edited": "by hand"}\n')
    before = snapshot(out)
    refused(["report", "--out", out], "verdicts.json", "changed since", "--force")
    assert snapshot(out) == before
    assert main(["report", "--out", str(out), "--force"]) == 0
    assert "edited" not in (out / "verdicts.json").read_text()


def test_a_rerun_keeps_the_users_own_files_in_our_folder(copy_of_ours):
    out = copy_of_ours()
    (out / "notes.md").write_text("mine")
    (out / "figures" / ".draft.tmp").write_text("mine too")
    assert main(["report", "--out", str(out)]) == 0
    assert (out / "notes.md").read_text() == "mine" and (
        out / "figures" / ".draft.tmp"
    ).read_text() == "mine too"


def test_a_folder_written_before_manifests_is_ours_by_its_store(copy_of_ours):
    out = copy_of_ours()
    (out / MANIFEST_NAME).unlink()
    assert main(["report", "--out", str(out)]) == 0
    assert (out / MANIFEST_NAME).is_file()


def test_export_into_a_folder_that_is_not_ours_is_refused_and_force_deletes_nothing(
    our_output, tmp_path, refused
):
    tables = tmp_path / "tables"
    tables.mkdir()
    (tables / "E1.csv").write_text("my,own\n1,2\n")
    (tables / "notes.md").write_text("mine")
    before = snapshot(tables)
    store = our_output / "runs.sqlite"
    refused(["export", "--store", store, "--out", tables], str(tables), "--force")
    assert snapshot(tables) == before
    assert main(["export", "--store", str(store), "--out", str(tables), "--force"]) == 0
    assert (tables / "notes.md").read_text() == "mine" and "run_id" in (tables / "E1.csv").read_text()


def test_an_interrupted_export_folder_is_still_ours(our_output, tmp_path):
    store, out = str(our_output / "runs.sqlite"), tmp_path / "exp"
    assert main(["export", "--store", store, "--out", str(out)]) == 0
    (out / "E1.csv").unlink()  # as if killed before this file
    assert main(["export", "--store", store, "--out", str(out)]) == 0
    assert (out / "E1.csv").is_file()


def test_two_runs_writing_one_folder_of_ours_accept_each_others_files(tmp_path):
    from entropic_bound.store.ownership import claim_output_folder

    claim_output_folder(tmp_path / "o").write_text("report.html", "first")
    a, b = claim_output_folder(tmp_path / "o"), claim_output_folder(tmp_path / "o")
    a.write_text("report.html", "from a")
    a.write_text("figures/new.png", "a's figure")
    b.write_text("report.html", "from b")  # a's content is in the manifest on disk, not in b's copy
    b.write_text("figures/new.png", "b's figure")
    (tmp_path / "o" / "report.html").write_text("edited by hand")
    with pytest.raises(UserInputError, match="changed since"):
        claim_output_folder(tmp_path / "o")


def test_whichever_of_two_runs_writes_last_its_file_is_ours_next_time(tmp_path):
    from entropic_bound.store.ownership import claim_output_folder

    claim_output_folder(tmp_path / "o").write_text("report.html", "first")
    a, b = claim_output_folder(tmp_path / "o"), claim_output_folder(tmp_path / "o")
    b.write_text("report.html", "from b")
    a.write_text("report.html", "from a")
    b.write_text("verdicts.json", "{}")  # b saves the manifest last, listing its own report.html first
    claim_output_folder(tmp_path / "o").write_text("report.html", "third run")


def test_predict_rewrites_its_own_plot_refuses_a_changed_one_and_force_overwrites(tmp_path, capsys):
    import numpy as np

    rng = np.random.default_rng(0)
    data = tmp_path / "d.npz"
    np.savez(data, X=rng.standard_normal((40, 4, 3)), Y=rng.standard_normal((40, 4, 3)))
    plot = tmp_path / "p.png"
    argv = ["predict", str(data), "--teacher", "linear-qk", "--plot", str(plot)]
    assert main(argv) != 2 and plot.read_bytes().startswith(b"\x89PNG")
    assert main(argv) != 2  # ours, unchanged since: rewritten
    plot.write_bytes(b"mine")
    capsys.readouterr()
    assert main(argv) == 2 and "was changed since entropic-bound wrote it" in capsys.readouterr().err
    assert plot.read_bytes() == b"mine"
    assert main([*argv, "--force"]) != 2 and plot.read_bytes().startswith(b"\x89PNG")


def test_zoo_writes_beside_runs_output_by_default_not_into_the_repository():
    from entropic_bound.cli.zoo_cmd import DEFAULT_OUT
    from entropic_bound.names import DEFAULT_OUT as RUN_OUT

    assert DEFAULT_OUT.startswith(f"{RUN_OUT}/") and not DEFAULT_OUT.startswith("docs/")
