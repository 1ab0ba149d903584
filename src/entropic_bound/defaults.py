"""Names shared by the CLI and the library, kept in a module that imports nothing heavy."""

SCALES = ("quick", "paper")
DEFAULT_OUT = "eb-out"
STORE_NAME = "runs.sqlite"
