"""E7's corpora: natural text, code and synthetic sources of known complexity, their windows and complexity estimates."""
