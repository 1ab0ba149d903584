"""E1 — the linear surrogate (C1, C2): config.py, experiment.py, analysis.py, plots.py, claims.py."""
