"""E5 — attention rank recovery (C7, C8): config.py, experiment.py, analysis.py, plots.py, claims.py."""
