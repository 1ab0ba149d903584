"""docs/tutorial.ipynb runs top to bottom with the installed package, and is stored without bulky outputs."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

NOTEBOOK = Path(__file__).resolve().parents[2] / "docs" / "tutorial.ipynb"


def _execute(nb, cwd: Path) -> None:
    NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}
    ).execute()


def test_the_tutorial_notebook_executes():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    _execute(nb, NOTEBOOK.parent)
    outputs = "".join(str(o) for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "'C1': 'confirmed'" in outputs  # the last cells read the paper-scale verdicts


def test_the_stored_notebook_has_no_outputs():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")


def test_a_failing_cell_fails_the_execution():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("assert False, 'a cell that fails'")])
    try:
        _execute(nb, NOTEBOOK.parent)
    except CellExecutionError as exc:
        assert "a cell that fails" in str(exc)
    else:
        raise AssertionError("a failing cell did not fail the notebook")
