"""E7 — small language models (C11-C13): config.py, experiment.py, analysis.py, plots.py, claims.py."""
