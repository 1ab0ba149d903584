"""Fixtures every test folder shares."""

import pytest


@pytest.fixture(scope="session", autouse=True)
def _one_worker_by_default():
    """The CLI trains on every CPU by default; in-process CLI calls in the tests train in their own
    process unless they pass --workers (a spawned pool costs every run two more torch imports).
    Session-scoped, so module- and session-scoped fixtures that run the CLI see it too."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("entropic_bound.pipeline.default_workers", lambda: 1)
        yield
