"""E6 — predicting r* from data (C8, C9, C10, X1): config.py, experiment.py, analysis.py, plots.py, claims.py."""
