"""The abuse suite's fixtures; its helpers live in ``abuse_helpers`` (a module name of its own, so it
never collides with another folder's ``conftest`` when the whole suite runs)."""

from abuse_helpers import copy_of_ours, our_output, refused  # noqa: F401  (fixtures)
