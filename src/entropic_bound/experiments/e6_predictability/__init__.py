"""E6 — predicting r* from data (C9, C10, X1): config.py, experiment.py, analysis.py, plots.py, claims.py."""
