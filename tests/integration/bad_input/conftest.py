"""The bad-input suite's fixtures; its helpers live in ``bad_input_helpers`` (a module name of its own, so it
never collides with another folder's ``conftest`` when the whole suite runs)."""

from bad_input_helpers import copy_of_ours, our_output, refused  # noqa: F401  (fixtures)
