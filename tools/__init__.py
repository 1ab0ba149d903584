"""Tools for this repository, not shipped in the package: the docs' generated tables and the report's
measurement in a real browser."""
