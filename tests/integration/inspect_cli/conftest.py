"""The inspect suite's fixtures; its helpers live in ``inspect_helpers`` (a module name of its own, so it
never collides with another folder's ``conftest`` when the whole suite runs)."""

from inspect_helpers import minilm, smollm2, tiny  # noqa: F401  (fixtures)
