"""E4 — attention teachers (C5, C6): config.py, experiment.py, analysis.py, plots.py, claims.py."""
