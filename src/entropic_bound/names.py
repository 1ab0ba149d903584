"""The root package's names, shared by the CLI and the library, kept in a module that imports nothing
heavy."""

SCALES = ("quick", "paper")
#: the draws a scale trains when the command names none: the paper scale decides on two draws
SCALE_DRAWS = {"quick": (0,), "paper": (0, 1)}
DEFAULT_OUT = "eb-out"
STORE_NAME = "runs.sqlite"
