"""E3 — the student ladder B0-B3 (C4, X2): config.py, experiment.py, analysis.py, plots.py, claims.py."""
